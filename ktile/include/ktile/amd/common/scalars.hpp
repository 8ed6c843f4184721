// ktile / AMD: element types and how one value becomes another.
//
// kt::bf16 and kt::half are clang's __bf16 and _Float16 (conversions from float round to nearest
// even in hardware or in LLVM's expansion; NaN stays NaN); kt::fp8e4m3 is fp8.hpp's. In register
// tiles every element type is kept in a plain arithmetic `storage_t` that an ext_vector_type can
// hold: bool and fp8 as unsigned char.
//
// This file gives the element types, as_float and round_float; cast_to / wrap_to / constant_as,
// the same on every vendor, are in ktile/common/conversions.hpp, included at the end.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ktile/amd/common/fp8.hpp"

namespace kt {

using bf16 = __bf16;
using half = _Float16;

namespace detail {

// ---- element kinds ----------------------------------------------------------------------------
template <class T> struct is_float_elem : std::integral_constant<bool,
    std::is_same<T, float>::value || std::is_same<T, bf16>::value ||
    std::is_same<T, half>::value || std::is_same<T, fp8e4m3>::value> {};
template <class T> struct is_bool_elem : std::is_same<T, bool> {};
template <class T> struct is_int_elem : std::integral_constant<bool,
    std::is_integral<T>::value && !std::is_same<T, bool>::value> {};

template <class T> struct is_tile_elem : std::integral_constant<bool,
    std::is_same<T, float>::value || std::is_same<T, bf16>::value || std::is_same<T, half>::value ||
    std::is_same<T, fp8e4m3>::value || std::is_same<T, int32_t>::value || std::is_same<T, int8_t>::value ||
    std::is_same<T, bool>::value> {};

// ---- how an element is held in a register -------------------------------------------------------------
template <class T> struct storage_of { using type = T; };
template <> struct storage_of<int8_t> { using type = signed char; };
template <> struct storage_of<int32_t> { using type = int; };
template <> struct storage_of<bool> { using type = unsigned char; };
template <> struct storage_of<fp8e4m3> { using type = unsigned char; };
template <class T> using storage_t = typename storage_of<T>::type;

template <class T> __host__ __device__ __forceinline__ storage_t<T> to_storage(T x) {
  if constexpr (std::is_same<T, bool>::value) return x ? 1 : 0;
  else if constexpr (std::is_same<T, fp8e4m3>::value) return x.bits;
  else return x;
}
template <class T> __host__ __device__ __forceinline__ T from_storage(storage_t<T> s) {
  if constexpr (std::is_same<T, bool>::value) return s != 0;
  else if constexpr (std::is_same<T, fp8e4m3>::value) return fp8e4m3{s};
  else return s;
}

// ---- reading an element into the computation's domain -----------------------------------------------
template <class T> __host__ __device__ __forceinline__ float as_float(T x) {
  if constexpr (std::is_same<T, fp8e4m3>::value) return fp8_to_float(x.bits);
  else return static_cast<float>(x);   // ints round to nearest even, bool is 0 / 1
}

// ---- rounding a float to a float element --------------------------------------------------------------
template <class T> __host__ __device__ __forceinline__ T round_float(float f) {
  if constexpr (std::is_same<T, fp8e4m3>::value) return fp8e4m3{float_to_fp8(f)};
  else {
    static_assert(is_float_elem<T>::value, "kt: round_float to a non-float element");
    return static_cast<T>(f);
  }
}

}  // namespace detail
}  // namespace kt

#include "ktile/common/conversions.hpp"   // cast_to, wrap_to, constant_as over as_float / round_float

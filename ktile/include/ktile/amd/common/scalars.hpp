// ktile / AMD: element types and how one value becomes another.
//
// kt::bf16 and kt::half are clang's __bf16 and _Float16 (conversions from float round to nearest
// even in hardware or in LLVM's expansion; NaN stays NaN); kt::fp8e4m3 is fp8.hpp's. In register
// tiles every element type is kept in a plain arithmetic `storage_t` that an ext_vector_type can
// hold: bool and fp8 as unsigned char.
//
// Two roundings, as the interpreter has them (ktile/interpret/values.py):
//   cast_to<T>(x)   a conversion (kt::cast, kt::fill, pads): floats round to nearest even,
//                   float -> int truncates and saturates (NaN -> 0), int -> int saturates,
//                   anything -> bool is `!= 0`;
//   wrap_to<T>(i)   an integer arithmetic result: two's-complement wraparound.
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

template <class T> __host__ __device__ __forceinline__ int64_t as_int(T x) {
  static_assert(!is_float_elem<T>::value, "kt: integer arithmetic on a float element");
  return static_cast<int64_t>(x);
}

template <class T> __host__ __device__ __forceinline__ bool as_bool(T x) {
  if constexpr (is_float_elem<T>::value) return as_float(x) != 0.0f;   // NaN is true
  else return x != 0;
}

// ---- rounding a float to a float element --------------------------------------------------------------
template <class T> __host__ __device__ __forceinline__ T round_float(float f) {
  if constexpr (std::is_same<T, fp8e4m3>::value) return fp8e4m3{float_to_fp8(f)};
  else {
    static_assert(is_float_elem<T>::value, "kt: round_float to a non-float element");
    return static_cast<T>(f);
  }
}

template <class I> __host__ __device__ __forceinline__ I saturate_int(int64_t v) {
  constexpr int64_t lo = std::is_same<I, int8_t>::value ? -128 : (std::is_same<I, int32_t>::value ? INT32_MIN : INT64_MIN);
  constexpr int64_t hi = std::is_same<I, int8_t>::value ? 127 : (std::is_same<I, int32_t>::value ? INT32_MAX : INT64_MAX);
  return static_cast<I>(v < lo ? lo : (v > hi ? hi : v));
}

// float -> integer: truncate toward zero, saturate, NaN -> 0 (the interpreter's nan_to_num).
template <class I, class F> __host__ __device__ __forceinline__ I float_to_int(F f) {
  if (f != f) return I(0);
  if (f >= F(9.2233720368547758e18)) return saturate_int<I>(INT64_MAX);
  if (f <= F(-9.2233720368547758e18)) return saturate_int<I>(INT64_MIN);
  return saturate_int<I>(static_cast<int64_t>(f));
}

}  // namespace detail

// A conversion with kt.cast's meaning (see the file comment).
template <class To, class From>
__host__ __device__ __forceinline__ To cast_to(From x) {
  using namespace detail;
  if constexpr (std::is_same<To, From>::value) return x;
  else if constexpr (is_bool_elem<To>::value) return as_bool(x);
  else if constexpr (is_float_elem<To>::value) return round_float<To>(as_float(x));
  else if constexpr (is_float_elem<From>::value) return float_to_int<To>(as_float(x));
  else return saturate_int<To>(static_cast<int64_t>(x));
}

// An integer arithmetic result at the destination's width: wraps as C++ unsigned arithmetic.
template <class To>
__host__ __device__ __forceinline__ To wrap_to(int64_t v) {
  if constexpr (std::is_same<To, bool>::value) return v != 0;
  else return static_cast<To>(static_cast<typename std::make_unsigned<To>::type>(static_cast<uint64_t>(v)));
}

// A compile-time double (kt::fill's value, a load's pad) converted once to T: float types
// through float32, as the interpreter rounds a constant (float64 -> float32 -> T).
template <class T>
__host__ __device__ __forceinline__ T constant_as(double v) {
  if constexpr (detail::is_float_elem<T>::value) return detail::round_float<T>(static_cast<float>(v));
  else if constexpr (detail::is_bool_elem<T>::value) return v != 0.0;
  else return detail::float_to_int<T>(v);
}

}  // namespace kt

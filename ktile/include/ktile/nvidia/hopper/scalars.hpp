// ktile / NVIDIA Hopper: element types and how one value becomes another.
//
// kt::bf16, kt::half and kt::fp8e4m3 are CUDA's own types. Every tile stores its elements in
// pairs (two adjacent elements of one row or column, see register_tile.hpp): `pair_t<T>` is
// that unit — one 32-bit register for 16-bit types, the packed operand an MMA reads.
//
// Two roundings, as the interpreter has them (ktile/interpret/values.py):
//   cast_to<T>(x)   a conversion (kt::cast, kt::fill, pads): floats round to nearest even,
//                   float -> int truncates and saturates (NaN -> 0), int -> int saturates,
//                   anything -> bool is `!= 0`;
//   wrap_to<T>(i)   an integer arithmetic result: two's-complement wraparound.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

namespace kt {

using bf16 = __nv_bfloat16;
using half = __half;
using fp8e4m3 = __nv_fp8_e4m3;   // OCP e4m3fn: no infinities, saturating at 448

namespace detail {

// ---- element kinds ----------------------------------------------------------------------------
template <class T> struct is_float_elem : std::integral_constant<bool,
    std::is_same<T, float>::value || std::is_same<T, bf16>::value ||
    std::is_same<T, half>::value || std::is_same<T, fp8e4m3>::value> {};
template <class T> struct is_bool_elem : std::is_same<T, bool> {};
template <class T> struct is_int_elem : std::integral_constant<bool,
    std::is_integral<T>::value && !std::is_same<T, bool>::value> {};

// ---- the pair unit ------------------------------------------------------------------------------
struct alignas(2) fp8_pair { fp8e4m3 x, y; };
struct alignas(2) bool_pair { bool x, y; };

template <class T> struct pair_of {
  static_assert(sizeof(T) == 0, "kt: no register tiles of this element type on sm_90a "
                                "(use bf16, half, fp8e4m3, float, int32_t, int8_t or bool)");
};
template <> struct pair_of<float> { using type = float2; };
template <> struct pair_of<bf16> { using type = __nv_bfloat162; };
template <> struct pair_of<half> { using type = __half2; };
template <> struct pair_of<int32_t> { using type = int2; };
template <> struct pair_of<int8_t> { using type = char2; };
template <> struct pair_of<fp8e4m3> { using type = fp8_pair; };
template <> struct pair_of<bool> { using type = bool_pair; };
template <class T> using pair_t = typename pair_of<T>::type;

// One element of a pair; `e` is a constant once loops are unrolled.
template <class P> __device__ __forceinline__ auto& elem(P& p, int e) { return e ? p.y : p.x; }
template <class P> __device__ __forceinline__ const auto& elem(const P& p, int e) { return e ? p.y : p.x; }

// ---- reading an element into the computation's domain -------------------------------------------
template <class T> __host__ __device__ __forceinline__ float as_float(T x) {
  if constexpr (std::is_same<T, bf16>::value) return __bfloat162float(x);
  else if constexpr (std::is_same<T, half>::value) return __half2float(x);
  else if constexpr (std::is_same<T, fp8e4m3>::value) return static_cast<float>(x);
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

// ---- rounding a float to a float element --------------------------------------------------------
template <class T> __host__ __device__ __forceinline__ T round_float(float f) {
  if constexpr (std::is_same<T, float>::value) return f;
  else if constexpr (std::is_same<T, bf16>::value) return __float2bfloat16_rn(f);
  else if constexpr (std::is_same<T, half>::value) return __float2half_rn(f);
  else {
    static_assert(std::is_same<T, fp8e4m3>::value, "kt: round_float to a non-float element");
    fp8e4m3 out;
    out.__x = __nv_cvt_float_to_fp8(f, __NV_SATFINITE, __NV_E4M3);
    return out;
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

// A compile-time double (kt::fill's value, a load's pad) converted once to T.
template <class T>
__host__ __device__ __forceinline__ T constant_as(double v) {
  if constexpr (detail::is_float_elem<T>::value) return detail::round_float<T>(static_cast<float>(v));
  else if constexpr (detail::is_bool_elem<T>::value) return v != 0.0;
  else return detail::float_to_int<T>(v);   // from the double, as the interpreter does
}

}  // namespace kt

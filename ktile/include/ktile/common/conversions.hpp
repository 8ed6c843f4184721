// ktile: one value becoming another with kt.cast's meaning — the vendor-neutral half of each
// vendor's scalars.hpp (nvidia/hopper/scalars.hpp, amd/common/scalars.hpp), which includes this
// file after it has declared, in namespace kt / kt::detail:
//   the element types bf16, half, fp8e4m3; the traits is_float_elem, is_bool_elem;
//   as_float(x)       an element read as a float (the vendor's conversion intrinsics);
//   round_float<T>(f) a float rounded to float element T, to nearest even.
// The roundings are the interpreter's (ktile/interpret/values.py):
//   cast_to<T>(x)   a conversion (kt::cast, kt::fill, pads): floats round to nearest even,
//                   float -> int truncates and saturates (NaN -> 0), int -> int saturates,
//                   anything -> bool is `!= 0`;
//   wrap_to<T>(i)   an integer arithmetic result: two's-complement wraparound.
// Everything here is __host__ __device__ __forceinline__ (CUDA and HIP define them; a
// device-only prelude must define them too).
#pragma once

#include <cstdint>
#include <type_traits>

namespace kt {
namespace detail {

template <class T> __host__ __device__ __forceinline__ int64_t as_int(T x) {
  static_assert(!is_float_elem<T>::value, "kt: integer arithmetic on a float element");
  return static_cast<int64_t>(x);
}

template <class T> __host__ __device__ __forceinline__ bool as_bool(T x) {
  if constexpr (is_float_elem<T>::value) return as_float(x) != 0.0f;   // NaN is true
  else return x != 0;
}

template <class I> __host__ __device__ __forceinline__ I saturate_int(int64_t v) {
  constexpr int64_t lo = std::is_same<I, int8_t>::value ? -128 : (std::is_same<I, int32_t>::value ? INT32_MIN : INT64_MIN);
  constexpr int64_t hi = std::is_same<I, int8_t>::value ? 127 : (std::is_same<I, int32_t>::value ? INT32_MAX : INT64_MAX);
  return static_cast<I>(v < lo ? lo : (v > hi ? hi : v));
}

// float -> integer: truncate toward zero, saturate, NaN -> 0 (the interpreter's nan_to_num).
template <class I, class F> __host__ __device__ __forceinline__ I float_to_int(F f) {
  if constexpr (std::is_same<I, int8_t>::value) {
    // clamped in F to int8's range (NaN to -128, replaced by 0 after), then a 32-bit
    // conversion: no 64-bit one and no branch per element (compare + select; flat tiles on
    // sm_90a take maps.hpp's packed conversion instead, not this)
    const F c = f >= F(-128) ? (f <= F(127) ? f : F(127)) : F(-128);
    const int32_t v = static_cast<int32_t>(c);
    return static_cast<I>(f != f ? 0 : v);
  }
  if (f != f) return I(0);
  if (f >= F(9.2233720368547758e18)) return saturate_int<I>(INT64_MAX);
  if (f <= F(-9.2233720368547758e18)) return saturate_int<I>(INT64_MIN);
  return saturate_int<I>(static_cast<int64_t>(f));
}

}  // namespace detail

// A conversion with kt.cast's meaning (see above).
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
  else return detail::float_to_int<T>(v);   // from the double, as the interpreter does
}

}  // namespace kt

// ktile / NVIDIA Hopper: element types and how one value becomes another.
//
// kt::bf16, kt::half and kt::fp8e4m3 are CUDA's own types. Every tile stores its elements in
// pairs (two adjacent elements of one row or column, see register_tile.hpp): `pair_t<T>` is
// that unit — one 32-bit register for 16-bit types, the packed operand an MMA reads.
//
// This file gives the element types, as_float and round_float; cast_to / wrap_to / constant_as,
// the same on every vendor, are in ktile/common/conversions.hpp, included at the end.
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

// Two floats rounded to a pair of e4m3 in one conversion (F2FP packs both): the PTX
// instruction round_float issues for one element (cvt.rn.satfinite.e4m3x2.f32, its other half
// 0), each half rounded and saturated on its own, so the bits are round_float's: nearest even,
// finite values past 448 (and ±inf) to ±448, NaN to 0x7f. `x` is the low byte, `y` the high.
__host__ __device__ __forceinline__ uint16_t round_fp8_pair_bits(float x, float y) {
  return __nv_cvt_float2_to_fp8x2(float2{x, y}, __NV_SATFINITE, __NV_E4M3);
}

}  // namespace detail
}  // namespace kt

#include "ktile/common/conversions.hpp"   // cast_to, wrap_to, constant_as over as_float / round_float

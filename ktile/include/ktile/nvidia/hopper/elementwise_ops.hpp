// ktile / NVIDIA Hopper: the math shim under the elementwise functors
// (ktile/common/elementwise_ops.hpp, the same on every vendor): CUDA's full-precision functions
// (no fast-math: division, sqrt and 1/sqrt are IEEE; sigmoid's reciprocal of [1, 2] is
// rcp.approx), the NaN-propagating max / min
// instructions, and the functors' qualifiers (device only: max_nan is inline PTX).
// sin and cos are common/math_double.hpp's, as on AMD, not CUDA's sinf / cosf: those keep a
// 32-byte local array for their Payne-Hanek reduction of huge arguments, which the stack gate
// refuses. Correctly rounded for |x| < 7e15, NaN beyond (docs/language.md).
#pragma once

#include <cmath>

#include "ktile/common/math_double.hpp"
#include "ktile/common/scalar_ops.hpp"
#include "ktile/nvidia/hopper/scalars.hpp"

#define KT_ELEMENT_FN __device__ __forceinline__

namespace kt::detail::math {

KT_ELEMENT_FN float exp_f(float x) { return ::expf(x); }
KT_ELEMENT_FN float exp2_f(float x) { return ::exp2f(x); }
KT_ELEMENT_FN float log_f(float x) { return ::logf(x); }
KT_ELEMENT_FN float log2_f(float x) { return ::log2f(x); }
KT_ELEMENT_FN float sqrt_f(float x) { return ::sqrtf(x); }
KT_ELEMENT_FN float sin_f(float x) { return sin_cos_f(x, false); }
KT_ELEMENT_FN float cos_f(float x) { return sin_cos_f(x, true); }
KT_ELEMENT_FN float tanh_f(float x) { return ::tanhf(x); }
KT_ELEMENT_FN float pow_f(float x, float y) { return ::powf(x, y); }
KT_ELEMENT_FN float abs_f(float x) { return ::fabsf(x); }
KT_ELEMENT_FN float rint_f(float x) { return ::rintf(x); }     // cvt.rni: ties to even
KT_ELEMENT_FN float floor_f(float x) { return ::floorf(x); }   // cvt.rmi
KT_ELEMENT_FN float ceil_f(float x) { return ::ceilf(x); }     // cvt.rpi
KT_ELEMENT_FN float trunc_f(float x) { return ::truncf(x); }   // cvt.rzi
// CUDA's float erff (the one torch's gelu calls): a float polynomial, 2 ulp at most (CUDA
// Math API, table of single-precision functions), no double and no division.
KT_ELEMENT_FN float erf_f(float x) { return ::erff(x); }

// 1/d for d in [1, 2] (sigmoid's denominator): one MUFU.RCP, 1 ulp at most (PTX ISA,
// rcp.approx.f32); .ftz costs nothing here, as neither d nor 1/d is subnormal.
KT_ELEMENT_FN float rcp_unit_f(float d) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
  return r;
}

// 1/sqrt(x) in one MUFU.RSQ (hk.rsqrt_fast: the norms' factor): rsqrt.approx.f32, within
// 2^-22.9 relative over the whole range (PTX ISA), subnormal x kept (no .ftz), no slow-path
// branch where hk.rsqrt's IEEE sqrt and division take two.
KT_ELEMENT_FN float rsqrt_approx_f(float x) {
  float r;
  asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// 2^x in one MUFU.EX2 (hk.exp2_fast: attention's softmax): ex2.approx.ftz.f32, within 2^-22
// relative (PTX ISA), results under 2^-126 (x < -126) flushed to +0, 2^-inf = +0; exp2f adds a
// compare and two multiplies a value to keep subnormal results.
KT_ELEMENT_FN float exp2_approx_f(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

// NaN-propagating max / min on the hardware's own instruction.
KT_ELEMENT_FN float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
KT_ELEMENT_FN float min_nan(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

}  // namespace kt::detail::math

#include "ktile/common/elementwise_ops.hpp"

// ktile / AMD: float math without device libraries (ktile compiles with -nogpulib: no ocml).
//
// exp, exp2, log, log2 and sqrt are LLVM's own AMDGPU expansions of its intrinsics (about 1 ulp;
// sqrt and division correctly rounded: no fast-math). What LLVM would turn into a library call
// is computed in double precision and rounded once to float, so the float result is the
// correctly rounded one in all but the rarest cases: sin and cos (common/math_double.hpp's,
// shared with sm_90a: reduction by a three-part pi/2, for |x| < 7e15), tanh (through expm1)
// and pow (C99 powf's special cases, then exp(y·log|x|)). Slow on RDNA, whose double rate is
// low; correct first. erf (gelu's) is float32 polynomials instead, as cheap as on sm_90a.
// Plain C++: the same code compiles for the host.
#pragma once

#include <cstdint>

#include "ktile/common/math_double.hpp"   // exp_d expm1_d log_d sin_cos_f

namespace kt::detail::math {

// erf in float32, no double and no division (gelu's path): within 1 ulp of the correctly rounded
// float for every normal float when exp_f is (checked exhaustively on the host), 2 ulp with the
// device's exp. |x| < 1: erf(x) = x + x·P(x²), P a least-squares fit (1e-9 relative);
// 1 <= |x| < 3.92: erf(x) = 1 - e^(q(|x|) - x²), q a fit of ln erfc(z) + z² in z - 2.5 (6e-9);
// beyond, erf(x) rounds to ±1.
__host__ __device__ __forceinline__ float erf_f(float x) {
  const float a = __builtin_fabsf(x);
  if (a < 1.0f) {
    const float t = x * x;
    float p = 7.847261440e-05f;
    p = __builtin_fmaf(p, t, -8.008191944e-04f);
    p = __builtin_fmaf(p, t, 5.188099574e-03f);
    p = __builtin_fmaf(p, t, -2.685369179e-02f);
    p = __builtin_fmaf(p, t, 1.128358245e-01f);
    p = __builtin_fmaf(p, t, -3.761262596e-01f);
    p = __builtin_fmaf(p, t, 1.283791671e-01f);
    return __builtin_fmaf(x, p, x);
  }
  if (!(a < 3.92f)) return a != a ? x : __builtin_copysignf(1.0f, x);
  const float s = a - 2.5f;
  float q = -6.582514800e-08f;
  q = __builtin_fmaf(q, s, 1.614053417e-06f);
  q = __builtin_fmaf(q, s, -1.297614835e-05f);
  q = __builtin_fmaf(q, s, 7.739445573e-05f);
  q = __builtin_fmaf(q, s, -4.207069287e-04f);
  q = __builtin_fmaf(q, s, 2.165160375e-03f);
  q = __builtin_fmaf(q, s, -1.085816510e-02f);
  q = __builtin_fmaf(q, s, 5.610635877e-02f);
  q = __builtin_fmaf(q, s, -3.526807427e-01f);
  q = __builtin_fmaf(q, s, -1.556815267e+00f);
  return __builtin_copysignf(1.0f - __builtin_expf(__builtin_fmaf(-a, a, q)), x);
}

// ---- float functions ------------------------------------------------------------------------------------
__host__ __device__ __forceinline__ float exp_f(float x) { return __builtin_expf(x); }
__host__ __device__ __forceinline__ float exp2_f(float x) { return __builtin_exp2f(x); }
__host__ __device__ __forceinline__ float log_f(float x) { return __builtin_logf(x); }
__host__ __device__ __forceinline__ float log2_f(float x) { return __builtin_log2f(x); }
__host__ __device__ __forceinline__ float sqrt_f(float x) { return __builtin_sqrtf(x); }

__host__ __device__ __forceinline__ float sin_f(float x) { return sin_cos_f(x, false); }
__host__ __device__ __forceinline__ float cos_f(float x) { return sin_cos_f(x, true); }

// tanh: (e^2a - 1) / (e^2a + 1) in double through expm1; |x| >= 9.5 rounds to ±1 in float.
__host__ __device__ __forceinline__ float tanh_f(float x) {
  const double a = __builtin_fabs(static_cast<double>(x));
  if (a != a) return x;
  if (a >= 9.5) return __builtin_copysignf(1.0f, x);
  const double e = expm1_d(2.0 * a);
  return __builtin_copysignf(static_cast<float>(e / (e + 2.0)), x);
}

// ---- pow: C99 powf ---------------------------------------------------------------------------------------
// Whether float y is an integer, and an odd one (|y| >= 2^24 is always an even integer).
__host__ __device__ __forceinline__ bool is_integer_f(float y) { return __builtin_floorf(y) == y; }
__host__ __device__ __forceinline__ bool is_odd_integer_f(float y) {
  return is_integer_f(y) && __builtin_fabsf(y) < 16777216.0f && (static_cast<int32_t>(y) & 1) != 0;
}

// pow at a zero or infinite base, or an infinite exponent (C99 F.9.4.4).
__host__ __device__ __forceinline__ float pow_special_f(float x, float y) {
  const float ax = __builtin_fabsf(x), inf = __builtin_huge_valf();
  if (__builtin_isinf(y)) {
    if (ax == 1.0f) return 1.0f;
    return (ax < 1.0f) == (y < 0.0f) ? inf : 0.0f;
  }
  const bool odd = is_odd_integer_f(y);
  if (x == 0.0f) return y < 0.0f ? (odd ? __builtin_copysignf(inf, x) : inf) : (odd ? x : 0.0f);
  const float magnitude = y < 0.0f ? 0.0f : inf;   // x is ±inf
  return (x < 0.0f && odd) ? -magnitude : magnitude;
}

__host__ __device__ __forceinline__ float pow_f(float x, float y) {
  if (y == 0.0f || x == 1.0f) return 1.0f;
  if (x != x || y != y) return __builtin_nanf("");
  if (x == 0.0f || __builtin_isinf(x) || __builtin_isinf(y)) return pow_special_f(x, y);
  if (x < 0.0f && !is_integer_f(y)) return __builtin_nanf("");
  const double magnitude = exp_d(static_cast<double>(y) * log_d(__builtin_fabs(static_cast<double>(x))));
  const float r = static_cast<float>(magnitude);
  return (x < 0.0f && is_odd_integer_f(y)) ? -r : r;
}

}  // namespace kt::detail::math

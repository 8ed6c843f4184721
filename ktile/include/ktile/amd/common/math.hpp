// ktile / AMD: float math without device libraries (ktile compiles with -nogpulib: no ocml).
//
// exp, exp2, log, log2 and sqrt are LLVM's own AMDGPU expansions of its intrinsics (about 1 ulp;
// sqrt and division correctly rounded: no fast-math). What LLVM would turn into a library call
// is computed in double precision and rounded once to float, so the float result is the
// correctly rounded one in all but the rarest cases: sin and cos (common/math_double.hpp's,
// shared with sm_90a: reduction by a three-part pi/2, for |x| < 7e15), tanh (through expm1),
// erf (gelu's exact form, evaluated in double as the interpreter does) and pow (C99 powf's
// special cases, then exp(y·log|x|)). Plain C++: the same code compiles for the host. Slow on
// RDNA, whose double rate is low; correct first.
#pragma once

#include <cstdint>

#include "ktile/common/math_double.hpp"   // exp_d expm1_d log_d sin_cos_f

namespace kt::detail::math {

constexpr double two_over_sqrt_pi = 1.1283791670955126;

// erf in double (the interpreter's math.erf, to about 1e-14): the all-positive series
// erf(z) = 2/sqrt(pi) · e^(-z²) · sum 2^n z^(2n+1) / (2n+1)!!, no cancellation. |z| >= 4 is
// ±1 to within 2e-8, which rounds to ±1 in float (the only use: gelu).
__host__ __device__ __forceinline__ double erf_d(double z) {
  const double a = __builtin_fabs(z);
  if (!(a < 4.0)) return a != a ? z : __builtin_copysign(1.0, z);
  const double two_z2 = 2.0 * z * z;
  double term = z, sum = z;
  for (int n = 1; n < 200 && __builtin_fabs(term) > 1e-17 * __builtin_fabs(sum); ++n) {
    term *= two_z2 / (2 * n + 1);
    sum += term;
  }
  return two_over_sqrt_pi * exp_d(-z * z) * sum;
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

// gelu, the exact erf form as the interpreter computes it: erf(x / sqrt 2) in double rounded
// to float, the rest in float.
__host__ __device__ __forceinline__ float gelu_f(float x) {
  const float e = static_cast<float>(erf_d(static_cast<double>(x) * 0.7071067811865476));
  return 0.5f * x * (1.0f + e);
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

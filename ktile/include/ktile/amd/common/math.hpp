// ktile / AMD: float math without device libraries (ktile compiles with -nogpulib: no ocml).
//
// exp, exp2, log, log2 and sqrt are LLVM's own AMDGPU expansions of its intrinsics (about 1 ulp;
// sqrt and division correctly rounded: no fast-math). What LLVM would turn into a library call
// is computed here in double precision and rounded once to float, so the float result is the
// correctly rounded one in all but the rarest cases: sin and cos (reduction by a three-part
// pi/2, for |x| < 7e15), tanh (through expm1), erf (gelu's exact form, evaluated in double
// as the interpreter does) and pow (C99 powf's special cases, then exp(y·log|x|)). Plain C++:
// the same code compiles for the host. Slow on RDNA, whose double rate is low; correct first.
#pragma once

#include <cstdint>

namespace kt::detail::math {

// ---- double-precision building blocks --------------------------------------------------------------
constexpr double inv_ln2 = 1.4426950408889634;
constexpr double ln2_hi = 0.6931471805599453, ln2_lo = 2.3190468138462996e-17;
constexpr double two_over_pi = 0.6366197723675814;
constexpr double pio2_1 = 1.5707963267948966, pio2_2 = 6.123233995736766e-17, pio2_3 = -1.4973849048591698e-33;
constexpr double two_over_sqrt_pi = 1.1283791670955126;

// sum_{n=0..N} x^n / n! (Horner), the Taylor polynomial of e^x.
template <int N> __host__ __device__ __forceinline__ double exp_taylor(double x) {
  double p = 1.0;
  for (int n = N; n >= 1; --n) p = __builtin_fma(p, x / n, 1.0);
  return p;
}

// e^x in double, to a few ulps (|x| <= 0.35 after reduction by k·ln2: degree 13 leaves 4e-18).
__host__ __device__ __forceinline__ double exp_d(double x) {
  if (x != x) return x;
  if (x > 709.0) return __builtin_huge_val();
  if (x < -745.0) return 0.0;
  const double k = __builtin_rint(x * inv_ln2);
  const double r = __builtin_fma(-k, ln2_lo, __builtin_fma(-k, ln2_hi, x));
  return __builtin_ldexp(exp_taylor<13>(r), static_cast<int>(k));
}

// e^x - 1 in double without cancellation near 0.
__host__ __device__ __forceinline__ double expm1_d(double x) {
  if (__builtin_fabs(x) >= 0.35) return exp_d(x) - 1.0;
  double p = 1.0;
  for (int n = 15; n >= 2; --n) p = __builtin_fma(p, x / n, 1.0);
  return x * p;
}

// ln x in double for finite x > 0: x = m·2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2·atanh(s),
// s = (m - 1) / (m + 1), |s| <= 0.172 (terms to s^23 leave 1e-19).
__host__ __device__ __forceinline__ double log_d(double x) {
  int e;
  double m = __builtin_frexp(x, &e);
  if (m < 0.7071067811865476) { m *= 2.0; e -= 1; }
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  double p = 1.0 / 23.0;
  for (int n = 21; n >= 1; n -= 2) p = __builtin_fma(p, z, 1.0 / n);
  const double ln_m = 2.0 * s * p;
  return __builtin_fma(static_cast<double>(e), ln2_hi, __builtin_fma(static_cast<double>(e), ln2_lo, ln_m));
}

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

// sin / cos: x - k·pi/2 in double (three parts of pi/2, fused), then Taylor polynomials on
// |r| <= pi/4 (degree 17 / 18 leave 1e-19), the quadrant from k mod 4. Correctly rounded while
// k = rint(x·2/pi) is exact, |x| < 2^52·pi/2 (7e15); beyond that (and for inf) NaN, not a
// wrong number: reducing larger floats needs Payne-Hanek (docs/amd-headers.md).
__host__ __device__ __forceinline__ float sin_cos_f(float x, bool cosine) {
  if (!(__builtin_fabsf(x) < 7.0e15f)) return __builtin_nanf("");
  const double xd = x;
  const double k = __builtin_rint(xd * two_over_pi);
  const double r = __builtin_fma(-k, pio2_3, __builtin_fma(-k, pio2_2, __builtin_fma(-k, pio2_1, xd)));
  const double z = r * r;
  double s = 1.0, c = 1.0;   // sin r = r·(1 - z/(2·3)·(1 - ...)), cos r = 1 - z/(1·2)·(1 - ...)
  for (int n = 17; n >= 3; n -= 2) s = 1.0 - z / (n * (n - 1)) * s;
  for (int n = 18; n >= 2; n -= 2) c = 1.0 - z / (n * (n - 1)) * c;
  s *= r;
  const int quadrant = static_cast<int>(k - 4.0 * __builtin_floor(k * 0.25)) + (cosine ? 1 : 0);
  const double v = (quadrant & 1) ? c : s;
  return static_cast<float>((quadrant & 2) ? -v : v);
}
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

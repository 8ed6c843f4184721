// ktile: float math computed in double precision from plain C++ (fma, rint, ldexp, frexp and
// fabs builtins that clang and nvcc both lower to instructions), so that it is the same on every
// vendor, on the host too (wave emulation), and needs no device library and no stack.
//
//   exp_d, expm1_d, log_d   double -> double, to a few ulps of a double: a float function
//                           evaluated through them and rounded once is the correctly rounded
//                           float in all but the rarest cases;
//   sin_cos_f               sin or cos of a float, correctly rounded for |x| < 7e15 and NaN
//                           beyond (the functions' table gives the interpreter the same range).
//
// Each vendor's math shim (amd/common/math.hpp, nvidia/hopper/elementwise_ops.hpp) includes
// this file; the elementwise functors (common/elementwise_ops.hpp) may call any of these.
#pragma once

namespace kt::detail::math {

// ---- double-precision building blocks --------------------------------------------------------------
constexpr double inv_ln2 = 1.4426950408889634;
constexpr double ln2_hi = 0.6931471805599453, ln2_lo = 2.3190468138462996e-17;
constexpr double two_over_pi = 0.6366197723675814;
constexpr double pio2_1 = 1.5707963267948966, pio2_2 = 6.123233995736766e-17, pio2_3 = -1.4973849048591698e-33;

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

}  // namespace kt::detail::math

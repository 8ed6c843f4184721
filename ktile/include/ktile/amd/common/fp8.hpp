// ktile / AMD: kt::fp8e4m3, the OCP float8 e4m3fn element (1 sign, 4 exponent bits of bias 7,
// 3 mantissa bits; no infinities; S.1111.111 is NaN; largest finite 448).
//
// Conversions are exact integer and float arithmetic, the same on every family and on the host,
// and round as the interpreter's `_round_fp8_e4m3` (ktile/dtypes.py): nearest even, saturating
// at ±448 (infinities too), NaN to NaN. Only gfx950 and gfx1201 multiply fp8 tiles; every family
// holds them.
#pragma once

#include <cstdint>

namespace kt {

struct fp8e4m3 {
  uint8_t bits;
};

namespace detail {

constexpr uint8_t fp8_nan = 0x7f;
constexpr uint8_t fp8_max = 0x7e;   // 448

__host__ __device__ __forceinline__ float fp8_to_float(uint8_t code) {
  const bool negative = (code & 0x80) != 0;
  const int exponent = (code >> 3) & 15, mantissa = code & 7;
  float magnitude;
  if (exponent == 15 && mantissa == 7) return __builtin_nanf("");
  if (exponent == 0) magnitude = static_cast<float>(mantissa) * 0x1p-9f;
  else magnitude = (1.0f + static_cast<float>(mantissa) * 0.125f) * __builtin_bit_cast(float, (exponent - 7 + 127) << 23);
  return negative ? -magnitude : magnitude;
}

// |f| rounded to nearest even on the e4m3 grid, as a code without its sign.
__host__ __device__ __forceinline__ uint8_t fp8_magnitude_code(float a) {
  if (a >= 448.0f) return fp8_max;
  if (a < 0x1p-6f) return static_cast<uint8_t>(__builtin_rintf(a * 512.0f));   // subnormal steps of 2^-9
  const int exponent = static_cast<int>((__builtin_bit_cast(uint32_t, a) >> 23) & 0xff) - 127;   // -6 .. 8
  const float to_steps = __builtin_bit_cast(float, static_cast<uint32_t>(127 + 3 - exponent) << 23);
  const int steps = static_cast<int>(__builtin_rintf(a * to_steps));   // 8 .. 16 eighths of 2^exponent
  return static_cast<uint8_t>(((exponent + 7) << 3) + (steps - 8));    // 16 eighths carries into the exponent
}

__host__ __device__ __forceinline__ uint8_t float_to_fp8(float f) {
  const uint8_t sign = (__builtin_bit_cast(uint32_t, f) >> 31) ? 0x80 : 0x00;
  if (f != f) return static_cast<uint8_t>(sign | fp8_nan);
  return static_cast<uint8_t>(sign | fp8_magnitude_code(__builtin_fabsf(f)));
}

}  // namespace detail
}  // namespace kt

// ktile wave emulation: element values on the host — what an MMA multiplies, and the one
// conversion the host's runtime library may lack.
#pragma once

#include <cstdint>
#include <cstring>

// float -> bf16 is a call to __truncsfbf2 on x86-64 without AVX512-BF16, which libgcc has only
// from GCC 13 on (Debian 12 ships 12). Round to nearest even, NaN kept quiet; weak, so a runtime
// library that has it wins.
extern "C" __attribute__((weak)) __bf16 __truncsfbf2(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t h = (f != f) ? static_cast<uint16_t>((u >> 16) | 0x40) : static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  __bf16 r;
  std::memcpy(&r, &h, 2);
  return r;
}

namespace kt::emulation {

// An MMA operand element as a number: 16-bit floats widen exactly; signed char is int8; unsigned
// char is an OCP fp8 e4m3fn code (1 sign, 4 exponent bits of bias 7, 3 mantissa bits, S.1111.111 NaN).
inline float operand_value(__bf16 x) { return static_cast<float>(x); }
inline float operand_value(_Float16 x) { return static_cast<float>(x); }
inline int32_t operand_value(signed char x) { return x; }
inline float operand_value(unsigned char code) {
  const int exponent = (code >> 3) & 15, mantissa = code & 7;
  if (exponent == 15 && mantissa == 7) return __builtin_nanf("");
  const float magnitude = exponent == 0 ? static_cast<float>(mantissa) / 512.0f
                                        : static_cast<float>(8 + mantissa) / 8.0f * __builtin_ldexpf(1.0f, exponent - 7);
  return (code & 0x80) ? -magnitude : magnitude;
}

// sum + a·b: the product is exact in float for every 8- and 16-bit float operand; int32 wraps.
inline float accumulate(float sum, float a, float b) { return sum + a * b; }
inline int32_t accumulate(int32_t sum, int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(a * b));
}

}  // namespace kt::emulation

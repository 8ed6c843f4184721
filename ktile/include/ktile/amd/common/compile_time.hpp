// ktile / AMD: loops whose index is a compile-time constant, and reinterpreting bits.
//
// A lane's registers are addressed by indices that must be constants when the code is
// generated: an index the compiler cannot resolve puts the register array in scratch memory
// (a spill, trap 2). `static_for<N>(f)` calls f(std::integral_constant<int, 0..N-1>) — a
// constant by construction, not by the unroller's grace — so every register index below
// (`constexpr int P = p;`) is one.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace kt::detail {

template <class F, int... I>
__host__ __device__ __forceinline__ void static_for_each(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}

template <int N, class F>
__host__ __device__ __forceinline__ void static_for(F&& f) {
  static_assert(N >= 0, "kt: static_for counts from 0 to a non-negative bound");
  static_for_each(f, std::make_integer_sequence<int, N>{});
}

// The bits of a value of up to 4 bytes in a 32-bit word (zero-extended), and back.
template <class T> __host__ __device__ __forceinline__ uint32_t bits32(const T& v) {
  static_assert(sizeof(T) <= 4 && std::is_trivially_copyable<T>::value, "kt: bits32 holds values of up to 4 bytes");
  if constexpr (sizeof(T) == 4) return __builtin_bit_cast(uint32_t, v);
  else if constexpr (sizeof(T) == 2) return __builtin_bit_cast(uint16_t, v);
  else return __builtin_bit_cast(uint8_t, v);
}
template <class T> __host__ __device__ __forceinline__ T from_bits32(uint32_t bits) {
  static_assert(sizeof(T) <= 4 && std::is_trivially_copyable<T>::value, "kt: from_bits32 gives values of up to 4 bytes");
  if constexpr (sizeof(T) == 4) return __builtin_bit_cast(T, bits);
  else if constexpr (sizeof(T) == 2) return __builtin_bit_cast(T, static_cast<uint16_t>(bits));
  else return __builtin_bit_cast(T, static_cast<uint8_t>(bits));
}

// The widest power of two dividing n, capped at `cap` (the widest access for a run of n bytes).
constexpr int widest_pow2_dividing(int n, int cap) {
  int w = 1;
  while (w < cap && n % (2 * w) == 0) w *= 2;
  return w;
}

}  // namespace kt::detail

// ktile: the scalar core of kt::rand — uniform [0, 1) float32 draws, bit-exact with Triton's
// tl.rand(seed, offsets) and ktile/ops/rand/reference.py. Vendor-neutral: each vendor's
// rand.hpp applies rand_at to a tile's offsets.
//
// Philox-4x32-10 on counter (offset, 0, 0, 0) — int32 offsets: the high counter word is 0 —
// under key (low, high word of the seed as uint64); the first output word becomes a float by
// folding negatives (x -> ~x as int32) and scaling by 0x1.fffffep-32 (so 1.0 is never drawn).
// The high halves of the 32×32 products are detail::mul_hi, which the vendor's rand.hpp
// defines before including this file (CUDA's __umulhi; on AMD the 64-bit product shifted,
// v_mul_hi_u32).
#pragma once

#include <cstdint>
#include <type_traits>

namespace kt {
namespace detail {

constexpr uint32_t philox_round_a = 0xD2511F53u;   // multiplier of counter word 0
constexpr uint32_t philox_round_b = 0xCD9E8D57u;   // multiplier of counter word 2
constexpr uint32_t philox_key_a = 0x9E3779B9u;     // Weyl increment of key word 0
constexpr uint32_t philox_key_b = 0xBB67AE85u;     // Weyl increment of key word 1
constexpr int philox_rounds = 10;

// The first word of Philox-4x32-10 of counter (c0, c1, 0, 0) under key (k0, k1).
__host__ __device__ __forceinline__ uint32_t philox_first_word(uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1) {
  uint32_t c2 = 0, c3 = 0;
  for (int round = 0; round < philox_rounds; ++round) {
    const uint32_t hi_b = mul_hi(philox_round_b, c2), lo_b = philox_round_b * c2;
    const uint32_t hi_a = mul_hi(philox_round_a, c0), lo_a = philox_round_a * c0;
    c0 = hi_b ^ c1 ^ k0;
    c1 = lo_b;
    c2 = hi_a ^ c3 ^ k1;
    c3 = lo_a;
    k0 += philox_key_a;
    k1 += philox_key_b;
  }
  return c0;
}

// Triton's uint_to_uniform_float for 32-bit words.
__host__ __device__ __forceinline__ float uniform_float(uint32_t word) {
  int32_t s = static_cast<int32_t>(word);
  s = s < 0 ? ~s : s;
  return static_cast<float>(s) * 0x1.fffffep-32f;
}

template <class O> __host__ __device__ __forceinline__ float rand_at(uint32_t k0, uint32_t k1, O offset) {
  static_assert(std::is_same<O, int32_t>::value, "kt::rand: offsets are int32 (as the frontend makes them)");
  return uniform_float(philox_first_word(static_cast<uint32_t>(offset), 0u, k0, k1));
}

}  // namespace detail
}  // namespace kt

// ktile: the scalar core of kt::rand and kt::rand4 — uniform [0, 1) float32 draws, bit-exact
// with Triton's tl.rand(seed, offsets) (rand) and tl.rand4x(seed, offsets >> 2)[offsets & 3]
// (rand4), and ktile/ops/rand/reference.py. Vendor-neutral: each vendor's rand.hpp applies
// rand_at / rand4_at / rand4_quad to a tile's offsets.
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

// The four words of Philox-4x32-10 of counter (c0, c1, 0, 0) under key (k0, k1), in w[0..3].
__host__ __device__ __forceinline__ void philox_words(uint32_t (&w)[4], uint32_t c0, uint32_t c1, uint32_t k0, uint32_t k1) {
  uint32_t c2 = 0, c3 = 0;
#pragma unroll
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
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

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

// hk.rand4's draw at one offset o: word o & 3 of the call at counter o >> 2 (arithmetic).
__host__ __device__ __forceinline__ float rand4_at(uint32_t k0, uint32_t k1, int32_t offset) {
  uint32_t w[4];
  philox_words(w, static_cast<uint32_t>(offset >> 2), 0u, k0, k1);
  const int k = offset & 3;
  return uniform_float(k == 0 ? w[0] : k == 1 ? w[1] : k == 2 ? w[2] : w[3]);
}

// The round keys of a key (k0, k1), computed once for many calls: the rounds then take them
// from registers (uniform ones where the seed is), not adding the Weyl increments per call.
struct philox_keys {
  uint32_t k0[philox_rounds], k1[philox_rounds];
};

__host__ __device__ __forceinline__ philox_keys philox_schedule(uint32_t k0, uint32_t k1) {
  philox_keys ks;
#pragma unroll
  for (int round = 0; round < philox_rounds; ++round) {
    ks.k0[round] = k0 + static_cast<uint32_t>(round) * philox_key_a;
    ks.k1[round] = k1 + static_cast<uint32_t>(round) * philox_key_b;
  }
  return ks;
}

__host__ __device__ __forceinline__ void philox_words(uint32_t (&w)[4], uint32_t c0, uint32_t c1, const philox_keys& ks) {
  uint32_t c2 = 0, c3 = 0;
#pragma unroll
  for (int round = 0; round < philox_rounds; ++round) {
    const uint32_t hi_b = mul_hi(philox_round_b, c2), lo_b = philox_round_b * c2;
    const uint32_t hi_a = mul_hi(philox_round_a, c0), lo_a = philox_round_a * c0;
    c0 = hi_b ^ c1 ^ ks.k0[round];
    c1 = lo_b;
    c2 = hi_a ^ c3 ^ ks.k1[round];
    c3 = lo_a;
  }
  w[0] = c0;
  w[1] = c1;
  w[2] = c2;
  w[3] = c3;
}

// hk.rand4's draws at four offsets, r[k] at o[k]: one Philox call when they are a run
// 4g, 4g + 1, 4g + 2, 4g + 3 (what a lane's four adjacent elements of a row hold in a kernel
// that draws at each element's flat index), else one call per offset in a rolled loop (any
// offsets stay right; the loop keeps one copy of the rounds in the code).
// Four offsets that one call serves: a run 4g, 4g + 1, 4g + 2, 4g + 3.
__host__ __device__ __forceinline__ bool rand4_run(const int32_t (&o)[4]) {
  return (o[0] & 3) == 0 && o[1] == o[0] + 1 && o[2] == o[0] + 2 && o[3] == o[0] + 3;
}

__host__ __device__ __forceinline__ void rand4_quad(float (&r)[4], uint32_t k0, uint32_t k1, const philox_keys& ks, const int32_t (&o)[4]) {
  if (rand4_run(o)) {
    uint32_t w[4];
    philox_words(w, static_cast<uint32_t>(o[0] >> 2), 0u, ks);
#pragma unroll
    for (int k = 0; k < 4; ++k) r[k] = uniform_float(w[k]);
    return;
  }
  r[0] = r[1] = r[2] = r[3] = 0.0f;
#pragma unroll 1
  for (int k = 0; k < 4; ++k) {
    const int32_t at = k == 0 ? o[0] : k == 1 ? o[1] : k == 2 ? o[2] : o[3];
    const float f = rand4_at(k0, k1, at);
    r[0] = k == 0 ? f : r[0];
    r[1] = k == 1 ? f : r[1];
    r[2] = k == 2 ? f : r[2];
    r[3] = k == 3 ? f : r[3];
  }
}

__host__ __device__ __forceinline__ void rand4_quad(float (&r)[4], uint32_t k0, uint32_t k1, const int32_t (&o)[4]) {
  rand4_quad(r, k0, k1, philox_schedule(k0, k1), o);
}

}  // namespace detail
}  // namespace kt

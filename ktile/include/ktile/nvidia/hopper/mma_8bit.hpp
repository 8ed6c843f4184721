// ktile / NVIDIA Hopper: MMAs of 8-bit tiles (int8_t -> int32, fp8e4m3 -> float) with
// `mma.sync.aligned.m16n8k32`.
//
// 8-bit tiles keep the common pair layout (register_tile.hpp), so that casts and elementwise
// ops with other tiles stay lane-local. The k32 fragment wants 4 consecutive k per register
// (a0..a3 = row g, k 4t..4t+3), which the pair layout spreads over two lanes of the quad: each
// operand is regrouped once per kt::mma call, 2 shuffles and a byte permute per register.
// Not yet optimal: an int8 GEMM pays those shuffles on every call (see docs/hopper.md).
#pragma once

#include "ktile/nvidia/hopper/register_tile.hpp"

namespace kt {
namespace detail {

// Two k-adjacent subtiles (k 0..15, 16..31) of an operand whose pairs run along k, as the four
// k32 fragment registers {(half 0, k 0..15), (half 1, k 0..15), (half 0, k 16..31), (half 1, ..)}
// where "half" is the subtile's m (or n) half: pair p has m-half p & 1 and k-half p >> 1.
// One k32 register: the subtile's m-half `half`, its k 4t..4t+3 gathered from the two quad
// lanes that hold them (k 2u.. of a subtile sits in lane u % 4, k-half u / 4).
template <class P> __device__ __forceinline__ uint32_t k32_register(const P (&sub)[4], int half) {
  const int t = lane_in_group(), quad = lane_id() & ~3;
  const uint32_t word = bits_of<uint32_t>(sub[half]) | (bits_of<uint32_t>(sub[half + 2]) << 16);
  const uint32_t lo = __shfl_sync(full_warp, word, quad | ((2 * t) & 3));
  const uint32_t hi = __shfl_sync(full_warp, word, quad | ((2 * t + 1) & 3));
  return __byte_perm(lo, hi, t < 2 ? 0x5410u : 0x7632u);   // low halves (k-half 0) or high (1)
}

// Two k-adjacent subtiles (k 0..15, 16..31) of an operand whose pairs run along k, as the four
// k32 fragment registers {(half 0, k 0..15), (half 1, k 0..15), (half 0, k 16..31), (half 1, ..)}
// where "half" is the subtile's m (or n) half: pair p has m-half p & 1 and k-half p >> 1.
template <class P> __device__ __forceinline__ void k32_fragment(uint32_t (&out)[4], const P (&s0)[4], const P (&s1)[4]) {
  out[0] = k32_register(s0, 0);
  out[1] = k32_register(s0, 1);
  out[2] = k32_register(s1, 0);
  out[3] = k32_register(s1, 1);
}

// The accumulator element of an 8-bit MMA.
template <class T> using acc8_t = std::conditional_t<std::is_same<T, int8_t>::value, int32_t, float>;

template <class T> __device__ __forceinline__ void mma_m16n8k32(pair_t<acc8_t<T>>& d01, pair_t<acc8_t<T>>& d23,
                                                                const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same<T, int8_t>::value) {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+r"(d01.x), "+r"(d01.y), "+r"(d23.x), "+r"(d23.y)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d01.x), "+f"(d01.y), "+f"(d23.x), "+f"(d23.y)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

template <bool TA, bool TB, class D, class A, class B>
__device__ __forceinline__ void mma_tiles_8bit(D& d, const A& a, const B& b) {
  using T = typename A::elem_type;
  static_assert(std::is_same<T, int8_t>::value || std::is_same<T, fp8e4m3>::value,
                "kt::mma: sm_90a's 8-bit MMAs take int8_t or fp8e4m3 tiles");
  static_assert(std::is_same<typename D::elem_type, acc8_t<T>>::value,
                "kt::mma: int8_t operands accumulate in int32_t, fp8e4m3 operands in float");
  constexpr int M = D::rows, N = D::cols, K = TA ? A::rows : A::cols;
  static_assert(K % 32 == 0, "kt::mma: 8-bit MMAs on sm_90a (m16n8k32) need K to be a multiple of 32");
#pragma unroll
  for (int k = 0; k < K / 32; ++k) {
    uint32_t af[M / 16][4], bf[N / 16][4];
#pragma unroll
    for (int m = 0; m < M / 16; ++m) {
      if constexpr (TA) k32_fragment(af[m], a.tiles[2 * k][m], a.tiles[2 * k + 1][m]);
      else k32_fragment(af[m], a.tiles[m][2 * k], a.tiles[m][2 * k + 1]);
    }
#pragma unroll
    for (int n = 0; n < N / 16; ++n) {
      if constexpr (TB) k32_fragment(bf[n], b.tiles[n][2 * k], b.tiles[n][2 * k + 1]);
      else k32_fragment(bf[n], b.tiles[2 * k][n], b.tiles[2 * k + 1][n]);
    }
#pragma unroll
    for (int m = 0; m < M / 16; ++m)
#pragma unroll
      for (int n = 0; n < N / 16; ++n) {
        mma_m16n8k32<T>(d.tiles[m][n][0], d.tiles[m][n][1], af[m], bf[n][0], bf[n][2]);
        mma_m16n8k32<T>(d.tiles[m][n][2], d.tiles[m][n][3], af[m], bf[n][1], bf[n][3]);
      }
  }
}

}  // namespace detail
}  // namespace kt

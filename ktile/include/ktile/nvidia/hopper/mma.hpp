// ktile / NVIDIA Hopper: kt::mma_AB / ABt / AtB / AtBt — d = c + op(a)·op(b) over a warp's
// register tiles, as a loop of `mma.sync.aligned.m16n8k16` (bf16 / fp16 -> fp32) or, for 8-bit
// operands, `m16n8k32` (i8 -> s32, e4m3 -> fp32; mma_8bit.hpp).
//
// The tile layouts are the fragments (register_tile.hpp), so no operand is moved: A is read in
// the row layout when it is M×K (AB, ABt) and in the col layout when it is K×M (AtB, AtBt) —
// either way its subtile (m, k) pairs 0..3 are a0a1 .. a6a7; B in the col layout when K×N (AB,
// AtB), the row layout when N×K (ABt, AtBt), pairs {0, 2} / {1, 3} being b0b1, b2b3 of its two
// n8 halves; the row-layout accumulator's pairs {0, 1} / {2, 3} are c0c1, c2c3 of those halves.
// The layouts each variant needs are the ones the frontend requires, checked here again.
#pragma once

#include "ktile/nvidia/hopper/mma_8bit.hpp"

namespace kt {
namespace detail {

template <class T> __device__ __forceinline__ void mma_m16n8k16(float2& d01, float2& d23, const uint32_t (&a)[4],
                                                                uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same<T, bf16>::value) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d01.x), "+f"(d01.y), "+f"(d23.x), "+f"(d23.y)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d01.x), "+f"(d01.y), "+f"(d23.x), "+f"(d23.y)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// One 16×16 accumulator subtile += A subtile (16×16) · B subtile (16×16): two n8 MMAs.
template <class T, class P, class D>
__device__ __forceinline__ void mma_subtile(D (&d)[4], const P (&a)[4], const P (&b)[4]) {
  uint32_t ar[4] = {bits_of<uint32_t>(a[0]), bits_of<uint32_t>(a[1]), bits_of<uint32_t>(a[2]), bits_of<uint32_t>(a[3])};
  mma_m16n8k16<T>(d[0], d[1], ar, bits_of<uint32_t>(b[0]), bits_of<uint32_t>(b[2]));
  mma_m16n8k16<T>(d[2], d[3], ar, bits_of<uint32_t>(b[1]), bits_of<uint32_t>(b[3]));
}

template <bool TA, bool TB, class D, class A, class B, class C>
__device__ __forceinline__ void mma_tiles(D& d, const A& a, const B& b, const C& c) {
  using T = typename A::elem_type;
  static_assert(std::is_same<T, typename B::elem_type>::value, "kt::mma: operands a and b must have the same element type");
  static_assert(std::is_same<D, C>::value, "kt::mma: the result has the accumulator's type");
  static_assert(std::is_same<typename A::frag, frag_a>::value, "kt::mma: operand a must be a frag_a tile (run the fragments pass)");
  static_assert(std::is_same<typename B::frag, frag_b>::value, "kt::mma: operand b must be a frag_b tile (run the fragments pass)");
  static_assert(std::is_same<typename D::frag, frag_acc>::value, "kt::mma: the accumulator must be a frag_acc tile (run the fragments pass)");
  static_assert(std::is_same<typename A::layout, std::conditional_t<TA, col, row>>::value,
                "kt::mma: operand a must be in the row layout for A, the col layout for At");
  static_assert(std::is_same<typename B::layout, std::conditional_t<TB, row, col>>::value,
                "kt::mma: operand b must be in the col layout for B, the row layout for Bt");
  static_assert(std::is_same<typename D::layout, row>::value, "kt::mma: the accumulator must be a row-layout tile");
  constexpr int M = TA ? A::cols : A::rows, K = TA ? A::rows : A::cols;
  constexpr int N = TB ? B::rows : B::cols, KB = TB ? B::cols : B::rows;
  static_assert(K == KB, "kt::mma: the inner dimensions of a and b differ");
  static_assert(D::rows == M && D::cols == N, "kt::mma: the accumulator's shape is not the product's");
  if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
  if constexpr (sizeof(T) == 1) {
    mma_tiles_8bit<TA, TB>(d, a, b);
  } else {
    static_assert(std::is_same<T, bf16>::value || std::is_same<T, half>::value,
                  "kt::mma: sm_90a multiplies bf16, half, int8_t or fp8e4m3 tiles");
    static_assert(std::is_same<typename D::elem_type, float>::value, "kt::mma: 16-bit operands accumulate in float");
#pragma unroll
    for (int k = 0; k < K / 16; ++k)
#pragma unroll
      for (int m = 0; m < M / 16; ++m)
#pragma unroll
        for (int n = 0; n < N / 16; ++n)
          mma_subtile<T>(d.tiles[m][n], TA ? a.tiles[k][m] : a.tiles[m][k], TB ? b.tiles[n][k] : b.tiles[k][n]);
  }
}

}  // namespace detail

template <class D, class A, class B, class C>
__device__ __forceinline__ void mma_AB(D& d, const A& a, const B& b, const C& c) { detail::mma_tiles<false, false>(d, a, b, c); }
template <class D, class A, class B, class C>
__device__ __forceinline__ void mma_ABt(D& d, const A& a, const B& b, const C& c) { detail::mma_tiles<false, true>(d, a, b, c); }
template <class D, class A, class B, class C>
__device__ __forceinline__ void mma_AtB(D& d, const A& a, const B& b, const C& c) { detail::mma_tiles<true, false>(d, a, b, c); }
template <class D, class A, class B, class C>
__device__ __forceinline__ void mma_AtBt(D& d, const A& a, const B& b, const C& c) { detail::mma_tiles<true, true>(d, a, b, c); }

}  // namespace kt

// ktile / AMD: kt::mma_AB / ABt / AtB / AtBt — d = c + op(a)·op(b) over a wave's register tiles,
// as a loop of the family's 16x16xK matrix instruction (isa.hpp: WMMA on RDNA, MFMA on CDNA).
//
// The operands are issued exchanged: the hardware is given b as its A and a as its B, so it
// computes Dᵀ = Bᵀ·Aᵀ, and its accumulator registers — lane l on the hardware's column l % 16,
// elements down the hardware's rows — hold D with lane l on row l % 16 and elements along D's
// columns. That makes every AMD tile layout "lane = row" (lane_layout.hpp), operands and
// accumulators alike. Both operands are "lane = the non-K index, elements along K" on every
// family, so the exchange costs nothing. An operand's lane layout holds the M×K (or N×K) matrix
// as a kt::row tile: A in the row layout (AB, ABt) is that tile; At in the col layout (AtB,
// AtBt) is the row tile of its transpose, the same registers. So the four variants issue the
// same instructions on the same base tiles: a's (m, k), b's (n, k), d's (m, n).
#pragma once

#include "ktile/amd/common/register_tile.hpp"

namespace kt {
namespace detail {

template <bool TA, bool TB, class D, class A, class B, class C>
__device__ __forceinline__ void mma_tiles(D& d, const A& a, const B& b, const C& c) {
  using T = typename A::elem_type;
  using S = storage_t<T>;
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
  static_assert(isa::mma_operand<S>::exists, "kt::mma: this AMD target has no matrix instruction for these operands "
                                             "(see the target table's mma_shapes)");
  static_assert(std::is_same<typename D::elem_type, std::conditional_t<std::is_same<T, int8_t>::value, int32_t, float>>::value,
                "kt::mma: int8_t operands accumulate in int32_t, others in float");
  constexpr int M = TA ? A::cols : A::rows, K = TA ? A::rows : A::cols;
  constexpr int N = TB ? B::rows : B::cols, KB = TB ? B::cols : B::rows;
  static_assert(K == KB, "kt::mma: the inner dimensions of a and b differ");
  static_assert(D::rows == M && D::cols == N, "kt::mma: the accumulator's shape is not the product's");
  constexpr int step = isa::mma_operand<S>::k;
  static_assert(K % step == 0, "kt::mma: K must be a multiple of the matrix instruction's K (the fragments pass checks it)");
  static_assert(A::lanes::width == step && B::lanes::width == step,
                "kt::mma: the operand fragment's base width must be the instruction's K (layouts.hpp and isa.hpp disagree)");
  static_assert(std::is_same<typename D::lanes, acc_layout>::value, "kt::mma: the accumulator must be in the family's accumulator layout");
  if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
  static_for<K / step>([&](auto kc) {
    constexpr int k = decltype(kc)::value;
    static_for<M / 16>([&](auto mc) {
      constexpr int m = decltype(mc)::value;
      static_for<N / 16>([&](auto nc) {
        constexpr int n = decltype(nc)::value;
        isa::mma(d.block(m, n).v, b.block(n, k).v, a.block(m, k).v);   // exchanged: Dᵀ = Bᵀ·Aᵀ
      });
    });
  });
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

// ktile / AMD: kt::mma_ABt_shared<WARPS>(d, a, b, c) — d = c + a·bᵀ where a is this wave's M×K
// register tile and b the block's N×K shared tile (the DSL's `acc += a @ s.T`).
//
// AMD matrix instructions take both operands from VGPRs, so each wave reads B itself: 16 rows
// at a time (one 16-column block of d), as the kt::row frag_b tile a shared load would give,
// then the ordinary kt::mma_ABt into that column block. Reading B in 16-row parts keeps its
// registers to one part (a 256×64 bf16 B whole would take 256 VGPRs a lane on wave32). The
// compiler would otherwise issue every part's reads first and the MMAs after (gfx1100 spilled
// 141 VGPRs of a 16×128 · 128×64 product so): each part's result is bound (kt::bind, an asm
// with side effects) and each part's reads follow a compiler memory barrier, so one part's
// MMAs finish before the next part's reads. The reads are plain LDS loads the compiler waits
// for itself. WARPS is accepted for the
// sm_90a headers' sake (whole warpgroups issue wgmma there) and unused here.
#pragma once

#include "ktile/amd/common/block.hpp"
#include "ktile/amd/common/mma.hpp"
#include "ktile/amd/common/shared_access.hpp"
#include "ktile/amd/common/sync.hpp"

namespace kt {

template <int WARPS, class D, class A, class T, int SR, int SC, class C>
__device__ __forceinline__ void mma_ABt_shared(D& d, const A& a, const st<T, SR, SC>& b, const C& c) {
  using Part = rt<T, 16, SC, row, frag_b>;                              // B rows 16n..16n+15
  using Slice = rt<typename D::elem_type, D::rows, 16, row, frag_acc>;  // d columns 16n..16n+15
  static_assert(WARPS >= 1, "kt::mma_ABt_shared: WARPS is the block's wave count");
  static_assert(std::is_same<typename A::elem_type, T>::value, "kt::mma_ABt_shared: a and the shared b must have the same element type");
  static_assert(std::is_same<D, C>::value, "kt::mma_ABt_shared: the result has the accumulator's type");
  static_assert(A::cols == SC, "kt::mma_ABt_shared: a's columns and the shared tile's columns (K) differ");
  static_assert(D::rows == A::rows && D::cols == SR, "kt::mma_ABt_shared: the accumulator is not a's rows x the shared tile's rows");
  static_assert(std::is_same<typename Slice::block_type, typename D::block_type>::value,
                "kt::mma_ABt_shared: a 16-column slice of the accumulator holds its blocks as the accumulator does");
  if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
  detail::static_for<SR / 16>([&](auto nc) {
    constexpr int n = decltype(nc)::value;
    Part part;
    isa::memory_order();   // this part's reads stay after the previous part's
    lds_load(part, b, n, 0);
    Slice slice;
    detail::static_for<D::rows / 16>([&](auto mc) { slice.block(decltype(mc)::value, 0) = d.block(decltype(mc)::value, n); });
    mma_ABt(slice, a, part, slice);
    bind(slice);
    detail::static_for<D::rows / 16>([&](auto mc) { d.block(decltype(mc)::value, n) = slice.block(decltype(mc)::value, 0); });
  });
}

// acc + (this wave's rows of the shared a)·bᵀ (`acc += sa @ sb.T`): the wave loads its rows
// [w·M, (w+1)·M) of a, then multiplies as above. AMD has no shared-operand MMA.
template <int WARPS, class D, class T, int AR, int AC, int SR, int SC, class C>
__device__ __forceinline__ void mma_ABt_shared(D& d, const st<T, AR, AC>& a, const st<T, SR, SC>& b, const C& c) {
  static_assert(AR == WARPS * D::rows, "kt::mma_ABt_shared: a shared a holds the accumulator's rows for every wave");
  rt<T, D::rows, AC, row, frag_a> rows;
  lds_load(rows, a, static_cast<int>(warp_id()), 0);
  mma_ABt_shared<WARPS>(d, rows, b, c);
}

}  // namespace kt

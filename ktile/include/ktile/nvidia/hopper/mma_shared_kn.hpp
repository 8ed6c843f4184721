// ktile / NVIDIA Hopper: kt::mma_AB_shared<WARPS>(d, a, b, c) — d = c + a·b where a is this
// warp's M×K register tile and b the block's K×N shared tile, N contiguous (the DSL's
// `acc += a @ s`; attention's O += P·V with V [keys, D] as it lies in global memory).
//
// The four warps of each warpgroup issue `wgmma.mma_async.m64nNk16` with imm-trans-b 1: B read
// N-major (PTX ISA, "Shared Memory Matrix Layout"; allowed for .f16 / .bf16). A and D are as in
// mma_shared.hpp. The shared tile's layout (shared_tile.hpp) is column blocks of W bytes (the
// swizzle width: 128, 64 or 32), each an R×W-byte region whose row r is K index r: exactly
// the N-major swizzled atom (W bytes of N by 8 rows of K, repeated down K). So the descriptor
// is: start >> 4; leading byte offset R·W (between column blocks, i.e. N atoms); stride byte
// offset 8·W (between 8-row groups along K); the swizzle mode. K step k (rows 16k..) starts
// at byte 16k·W; columns n0.. (a whole number of atoms) at (n0·sizeof(T) / W)·R·W.
//
// The verify pass refuses other operand types, targets and layouts at the author's line; the
// static_asserts below repeat it for a module translated without it. Like mma_ABt_shared the
// op does not wait: its group stays in flight until a kt::wgmma_wait<N>() the waits pass derives.
#pragma once

#include "ktile/nvidia/hopper/mma_shared.hpp"
#include "ktile/nvidia/hopper/wgmma_kn_instructions.hpp"

namespace kt {
namespace detail {

// The N-major descriptor of shared tile S at `shared_address` (fields as matrix_descriptor's).
template <class S> __device__ __forceinline__ uint64_t kn_descriptor(uint32_t shared_address) {
  constexpr uint64_t leading = (static_cast<uint64_t>(S::rows) * S::swizzle_bytes) >> 4;
  constexpr uint64_t stride = (8u * S::swizzle_bytes) >> 4;
  const uint64_t start = (shared_address & 0x3FFFF) >> 4;
  return start | (leading << 16) | (stride << 32) | (swizzle_mode<S::swizzle_bytes>() << 62);
}

// The byte offset, inside K×N shared tile S, of K step k (16 rows) at columns n0...
template <class S> __host__ __device__ constexpr uint32_t kn_step_offset(int n0, int k) {
  constexpr int atom = S::swizzle_bytes;
  const int col_byte = n0 * static_cast<int>(sizeof(typename S::elem_type));
  return static_cast<uint32_t>((col_byte / atom) * S::rows * atom + 16 * k * atom);
}

// All of B's columns for one (m, k), widest instructions first: A from a's registers.
template <int N0, class S, class D, class A>
__device__ __forceinline__ void wgmma_columns_kn(D& d, const A& a, int m, int k, uint64_t base) {
  if constexpr (N0 < S::cols) {
    constexpr int W = wgmma_width(S::cols - N0);
    static_assert(N0 * sizeof(typename S::elem_type) % S::swizzle_bytes == 0,
                  "kt::mma_AB_shared: each wgmma starts on a swizzle atom's columns");
    const uint64_t desc = base + (kn_step_offset<S>(N0, k) >> 4);
    const uint32_t ar[4] = {bits_of<uint32_t>(a.tiles[m][k][0]), bits_of<uint32_t>(a.tiles[m][k][1]),
                            bits_of<uint32_t>(a.tiles[m][k][2]), bits_of<uint32_t>(a.tiles[m][k][3])};
    wgmma_piece<W>(d, m, N0, [&](float (&regs)[W / 2]) { wgmma_rs_kn<typename S::elem_type, W>::issue(regs, ar, desc); });
    wgmma_columns_kn<N0 + W, S>(d, a, m, k, base);
  }
}

template <bool PROXY_FENCE, class D, class A, class S>
__device__ __forceinline__ void wgmma_AB(D& d, const A& a, const S& b) {
  const uint64_t base = kn_descriptor<S>(b.address(0));
  if constexpr (PROXY_FENCE) fence_proxy_async();
  bind_accumulator(d);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < A::width; ++k)
#pragma unroll
    for (int m = 0; m < A::height; ++m) wgmma_columns_kn<0, S>(d, a, m, k, base);
  wgmma_commit();
}

}  // namespace detail

// PROXY_FENCE false: the shared b was written only by TMA (as mma_ABt_shared's).
template <int WARPS, bool PROXY_FENCE = true, class D, class A, class T, int SR, int SC, class C>
__device__ __forceinline__ void mma_AB_shared(D& d, const A& a, const st<T, SR, SC>& b, const C& c) {
  using S = st<T, SR, SC>;
  static_assert(WARPS % 4 == 0, "kt::mma_AB_shared: B read N-major is a warpgroup MMA: the block (or role) is whole warpgroups");
  static_assert(std::is_same<T, bf16>::value || std::is_same<T, half>::value,
                "kt::mma_AB_shared: wgmma reads B N-major for 16-bit operands only (bf16, fp16)");
  static_assert(S::swizzle_bytes != 0, "kt::mma_AB_shared: the shared tile's rows are 32, 64 or a multiple of 128 bytes");
  static_assert(std::is_same<typename A::elem_type, T>::value, "kt::mma_AB_shared: a and the shared b must have the same element type");
  static_assert(std::is_same<D, C>::value, "kt::mma_AB_shared: the result has the accumulator's type");
  static_assert(std::is_same<typename A::frag, frag_a>::value && std::is_same<typename A::layout, row>::value,
                "kt::mma_AB_shared: a must be a row-layout frag_a tile (run the fragments pass)");
  static_assert(std::is_same<typename D::frag, frag_acc>::value && std::is_same<typename D::layout, row>::value,
                "kt::mma_AB_shared: the accumulator must be a row-layout frag_acc tile (run the fragments pass)");
  static_assert(std::is_same<typename D::elem_type, float>::value, "kt::mma_AB_shared: 16-bit operands accumulate in float");
  static_assert(A::cols == SR, "kt::mma_AB_shared: a's columns and the shared tile's rows (K) differ");
  static_assert(D::rows == A::rows && D::cols == SC, "kt::mma_AB_shared: the accumulator is not a's rows x the shared tile's columns");
  static_assert(SC <= 256, "kt::mma_AB_shared: the shared tile has at most 256 columns (wgmma's widest N)");
  if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
  detail::wgmma_AB<PROXY_FENCE>(d, a, b);
}

}  // namespace kt

// ktile / NVIDIA Hopper: kt::mma_ABt_shared<WARPS>(d, a, b, c) — d = c + a·bᵀ where a is this
// warp's M×K register tile and b the block's N×K shared tile (the DSL's `acc += a @ s.T`).
//
// Each warp multiplies its own a by the same b. When the block is whole warpgroups (WARPS % 4 ==
// 0), the operands are 16-bit and the shared tile's layout is one a wgmma descriptor describes
// (shared_tile.hpp: rows of 32, 64 or a multiple of 128 bytes), the four warps of each
// warpgroup issue `wgmma.mma_async.m64nNk16` together: warpgroup row block i stacks the i-th 16
// rows of a of each of its warps (the wgmma A register fragment of a warp is the mma.sync
// m16n8k16 A fragment, pairs 0..3 of a row-layout subtile), and each warp's slice of the m64×N
// accumulator is the mma.sync accumulator layout repeated over N/8 — d's own pairs. Every
// warp therefore gets exactly its acc + a·bᵀ; the verify pass guarantees all warps reach the
// op. Otherwise B is read 16 rows at a time with ldmatrix and multiplied with mma.sync.
//
// `a` may be a shared tile of the block's rows (WARPS × M rows, the DSL's `acc += sa @ sb.T`):
// warp w multiplies rows [w·M, (w+1)·M). With M = 16 each warpgroup's 64 rows are contiguous,
// so wgmma reads A by descriptor too (the "ss" form, same K-major swizzled layout as B);
// otherwise the warp loads its rows (ldmatrix) and takes the register-A path.
// The "ss" form also multiplies fp8e4m3 tiles (`m64nNk32.f32.e4m3.e4m3`, a K step of 32
// bytes as k16 is for 16-bit types); fp8 from registers takes mma.sync (mma_8bit.hpp).
//
// The wgmma path, in order: fence.proxy.async (the tile was written through the generic proxy
// — cp.async, st.shared — and wgmma reads through the async proxy; not with PROXY_FENCE false:
// operands only TMA wrote), bind d (no accumulator
// move crosses the fence), wgmma.fence, every wgmma of the op, commit_group. The op does not
// wait: its group stays in flight until a kt::wgmma_wait<N>() (`wgmma.wait_group N`) that the
// waits pass derives, so the next K step's loads and wgmmas overlap it. Until then d's
// registers are read only by another wgmma accumulating into them (the hardware orders
// those), and the shared operands are not overwritten (the waits pass refuses it).
#pragma once

#include "ktile/nvidia/hopper/async_copy.hpp"
#include "ktile/nvidia/hopper/mma.hpp"
#include "ktile/nvidia/hopper/shared_access.hpp"
#include "ktile/nvidia/hopper/warp.hpp"
#include "ktile/nvidia/hopper/wgmma_instructions.hpp"

namespace kt {
namespace detail {

// ---- the shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") ---------------
// bits 0-13: start address >> 4; 16-29: leading byte offset >> 4 (unused by K-major swizzled
// layouts whose K step fits one atom row, set to 1); 32-45: stride byte offset >> 4 (between
// 8-row atoms along N); 49-51: base offset (0: atoms start on their 1024-byte boundary);
// 62-63: swizzle (1: 128B, 2: 64B, 3: 32B).
template <int SWIZZLE> __host__ __device__ constexpr uint64_t swizzle_mode() {
  static_assert(SWIZZLE == 128 || SWIZZLE == 64 || SWIZZLE == 32, "kt: wgmma describes 128, 64 or 32-byte swizzles");
  return SWIZZLE == 128 ? 1 : SWIZZLE == 64 ? 2 : 3;
}

__device__ __forceinline__ uint64_t matrix_descriptor(uint32_t shared_address, uint32_t swizzle_bytes, uint64_t mode) {
  const uint64_t start = (shared_address & 0x3FFFF) >> 4, leading = 1, stride = (8u * swizzle_bytes) >> 4;
  return start | (leading << 16) | (stride << 32) | (mode << 62);
}

// A wgmma K step is 32 bytes of a row: 16 16-bit elements (k16) or 32 8-bit ones (k32).
constexpr int wgmma_k_bytes = 32;

// The byte offset, inside shared tile S, of the K-step `k` (wgmma_k_bytes) of B rows n0..:
// the column block holding it, its rows, and its place inside the atom row (the hardware
// applies the swizzle to the address it forms, as copy_async and ldmatrix do through
// chunk_offset).
template <class S> __host__ __device__ constexpr uint32_t k_step_offset(int n0, int k) {
  constexpr int atom = S::swizzle_bytes;
  const int byte = k * wgmma_k_bytes;
  return static_cast<uint32_t>((byte / atom) * S::rows * atom + n0 * atom + byte % atom);
}

__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }

// kt::bind for an fp32 accumulator, float by float ("+f"): it emits no instruction, where a
// bit-cast bind moves registers, and a move reading an in-flight wgmma's accumulator makes
// ptxas serialize every wgmma of the kernel (C7514).
template <class D> __device__ __forceinline__ void bind_accumulator(D& d) {
#pragma unroll
  for (int i = 0; i < D::height; ++i)
#pragma unroll
    for (int j = 0; j < D::width; ++j)
#pragma unroll
      for (int p = 0; p < 4; ++p) asm volatile("" : "+f"(d.tiles[i][j][p].x), "+f"(d.tiles[i][j][p].y));
}

// The widest wgmma width (256, 192, 128, 64, 32, 16) that fits in `left` columns.
__host__ __device__ constexpr int wgmma_width(int left) {
  return left >= 256 ? 256 : left >= 192 ? 192 : left >= 128 ? 128 : left >= 64 ? 64 : left >= 32 ? 32 : 16;
}

// Columns [n0, n0 + W) of accumulator row block m, through issue(regs): wgmma register 4j + e
// is pair 2(j % 2) + e / 2 of subtile n0/16 + j/2 (its n8 half j % 2).
template <int W, class D, class Issue>
__device__ __forceinline__ void wgmma_piece(D& d, int m, int n0, Issue&& issue) {
  float regs[W / 2];
#pragma unroll
  for (int j = 0; j < W / 8; ++j) {
    const float2& lo = d.tiles[m][n0 / 16 + j / 2][2 * (j % 2)];
    const float2& hi = d.tiles[m][n0 / 16 + j / 2][2 * (j % 2) + 1];
    regs[4 * j] = lo.x, regs[4 * j + 1] = lo.y, regs[4 * j + 2] = hi.x, regs[4 * j + 3] = hi.y;
  }
  issue(regs);
#pragma unroll
  for (int j = 0; j < W / 8; ++j) {
    d.tiles[m][n0 / 16 + j / 2][2 * (j % 2)] = make_float2(regs[4 * j], regs[4 * j + 1]);
    d.tiles[m][n0 / 16 + j / 2][2 * (j % 2) + 1] = make_float2(regs[4 * j + 2], regs[4 * j + 3]);
  }
}

// All of B's columns for one (m, k), widest instructions first: A from a's registers.
template <int N0, class S, class D, class A>
__device__ __forceinline__ void wgmma_columns(D& d, const A& a, const S& b, int m, int k, uint64_t base) {
  if constexpr (N0 < S::rows) {
    constexpr int W = wgmma_width(S::rows - N0);
    const uint64_t desc = base + (k_step_offset<S>(N0, k) >> 4);
    const uint32_t ar[4] = {bits_of<uint32_t>(a.tiles[m][k][0]), bits_of<uint32_t>(a.tiles[m][k][1]),
                            bits_of<uint32_t>(a.tiles[m][k][2]), bits_of<uint32_t>(a.tiles[m][k][3])};
    wgmma_piece<W>(d, m, N0, [&](float (&regs)[W / 2]) { wgmma_rs<typename S::elem_type, W>::issue(regs, ar, desc); });
    wgmma_columns<N0 + W>(d, a, b, m, k, base);
  }
}

// The same with A by descriptor (`desc_a`: this warpgroup's 64 rows at K step k).
template <int N0, class S, class D>
__device__ __forceinline__ void wgmma_columns_ss(D& d, const S& b, int k, uint64_t desc_a, uint64_t base) {
  if constexpr (N0 < S::rows) {
    constexpr int W = wgmma_width(S::rows - N0);
    const uint64_t desc = base + (k_step_offset<S>(N0, k) >> 4);
    wgmma_piece<W>(d, 0, N0, [&](float (&regs)[W / 2]) { wgmma_ss<typename S::elem_type, W>::issue(regs, desc_a, desc); });
    wgmma_columns_ss<N0 + W>(d, b, k, desc_a, base);
  }
}

template <bool PROXY_FENCE, class D, class A, class S>
__device__ __forceinline__ void wgmma_ABt(D& d, const A& a, const S& b) {
  const uint64_t base = matrix_descriptor(b.address(0), S::swizzle_bytes, swizzle_mode<S::swizzle_bytes>());
  if constexpr (PROXY_FENCE) fence_proxy_async();
  bind_accumulator(d);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < A::width; ++k)
#pragma unroll
    for (int m = 0; m < A::height; ++m) wgmma_columns<0>(d, a, b, m, k, base);
  wgmma_commit();
}

// Both operands by descriptor: A's rows 64g .. 64g + 63 for warpgroup g (16 rows a warp).
template <bool PROXY_FENCE, class D, class SA, class S>
__device__ __forceinline__ void wgmma_ABt_ss(D& d, const SA& a, const S& b) {
  const uint64_t base = matrix_descriptor(b.address(0), S::swizzle_bytes, swizzle_mode<S::swizzle_bytes>());
  const uint64_t base_a = matrix_descriptor(a.address(0), SA::swizzle_bytes, swizzle_mode<SA::swizzle_bytes>());
  const int row0 = 64 * static_cast<int>(warp_id() / 4);
  if constexpr (PROXY_FENCE) fence_proxy_async();
  bind_accumulator(d);
  wgmma_fence();
#pragma unroll
  for (int k = 0; k < SA::cols * static_cast<int>(sizeof(typename SA::elem_type)) / wgmma_k_bytes; ++k)
    wgmma_columns_ss<0>(d, b, k, base_a + (k_step_offset<SA>(row0, k) >> 4), base);
  wgmma_commit();
}

// The fallback: 16 rows of B at a time through ldmatrix, into the matching 16 columns of d.
template <class D, class A, class S>
__device__ __forceinline__ void mma_sync_ABt(D& d, const A& a, const S& b) {
  using T = typename S::elem_type;
  using Part = rt<T, 16, S::cols, row, frag_b>;
  using Slice = rt<typename D::elem_type, D::rows, 16, row, frag_acc>;
#pragma unroll
  for (int n = 0; n < S::rows / 16; ++n) {
    Part part;
    lds_load(part, b, n, 0);
    Slice slice;
#pragma unroll
    for (int m = 0; m < D::height; ++m)
#pragma unroll
      for (int p = 0; p < 4; ++p) slice.tiles[m][0][p] = d.tiles[m][n][p];
    mma_ABt(slice, a, part, slice);
#pragma unroll
    for (int m = 0; m < D::height; ++m)
#pragma unroll
      for (int p = 0; p < 4; ++p) d.tiles[m][n][p] = slice.tiles[m][0][p];
  }
}

template <int WARPS, class T, class S>
__host__ __device__ constexpr bool wgmma_takes() {
  return WARPS % 4 == 0 && (std::is_same<T, bf16>::value || std::is_same<T, half>::value) && S::swizzle_bytes != 0;
}

// Both operands by descriptor also take fp8e4m3 (m64nNk32): 8-bit wgmma operands must be
// K-major, which both shared tiles are; from registers only 16-bit A goes (wgmma_takes).
template <int WARPS, class T, class S>
__host__ __device__ constexpr bool wgmma_takes_ss() {
  return wgmma_takes<WARPS, T, S>() || (WARPS % 4 == 0 && std::is_same<T, fp8e4m3>::value && S::swizzle_bytes != 0);
}

}  // namespace detail

// PROXY_FENCE false: the shared operands were written only by TMA (the async proxy, complete
// on an mbarrier this thread has waited on), so no fence.proxy.async before the wgmma
// (codegen/lower_pipeline.py's written_by_tensor_copies decides).
template <int WARPS, bool PROXY_FENCE = true, class D, class A, class T, int SR, int SC, class C>
__device__ __forceinline__ void mma_ABt_shared(D& d, const A& a, const st<T, SR, SC>& b, const C& c) {
  using S = st<T, SR, SC>;
  static_assert(WARPS >= 1, "kt::mma_ABt_shared: WARPS is the block's warp count");
  static_assert(std::is_same<typename A::elem_type, T>::value, "kt::mma_ABt_shared: a and the shared b must have the same element type");
  static_assert(std::is_same<D, C>::value, "kt::mma_ABt_shared: the result has the accumulator's type");
  static_assert(std::is_same<typename A::frag, frag_a>::value && std::is_same<typename A::layout, row>::value,
                "kt::mma_ABt_shared: a must be a row-layout frag_a tile (run the fragments pass)");
  static_assert(std::is_same<typename D::frag, frag_acc>::value && std::is_same<typename D::layout, row>::value,
                "kt::mma_ABt_shared: the accumulator must be a row-layout frag_acc tile (run the fragments pass)");
  static_assert(A::cols == SC, "kt::mma_ABt_shared: a's columns and the shared tile's columns (K) differ");
  static_assert(D::rows == A::rows && D::cols == SR, "kt::mma_ABt_shared: the accumulator is not a's rows x the shared tile's rows");
  static_assert(SR <= 256, "kt::mma_ABt_shared: the shared tile has at most 256 rows (wgmma's widest N; the verify pass says so)");
  if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
  if constexpr (detail::wgmma_takes<WARPS, T, S>()) {
    static_assert(std::is_same<typename D::elem_type, float>::value, "kt::mma_ABt_shared: 16-bit operands accumulate in float");
    detail::wgmma_ABt<PROXY_FENCE>(d, a, b);
  } else {
    detail::mma_sync_ABt(d, a, b);
  }
}

// acc + (this warp's rows of the shared a)·bᵀ: warp w's rows [w·M, (w+1)·M) of a.
template <int WARPS, bool PROXY_FENCE = true, class D, class T, int AR, int AC, int SR, int SC, class C>
__device__ __forceinline__ void mma_ABt_shared(D& d, const st<T, AR, AC>& a, const st<T, SR, SC>& b, const C& c) {
  using SA = st<T, AR, AC>;
  using S = st<T, SR, SC>;
  static_assert(AR == WARPS * D::rows, "kt::mma_ABt_shared: a shared a holds the accumulator's rows for every warp");
  static_assert(AC == SC, "kt::mma_ABt_shared: the shared a's and b's columns (K) differ");
  if constexpr (detail::wgmma_takes_ss<WARPS, T, S>() && D::rows == 16 && SA::swizzle_bytes != 0) {
    static_assert(std::is_same<D, C>::value && D::cols == SR, "kt::mma_ABt_shared: the accumulator is 16 x the shared b's rows");
    static_assert(std::is_same<typename D::elem_type, float>::value, "kt::mma_ABt_shared: 16-bit and fp8 operands accumulate in float");
    if (static_cast<const void*>(&d) != static_cast<const void*>(&c)) d = c;
    detail::wgmma_ABt_ss<PROXY_FENCE>(d, a, b);
  } else {
    rt<T, D::rows, AC, row, frag_a> rows;   // load-then-MMA: this warp's rows in registers
    lds_load(rows, a, static_cast<int>(warp_id()), 0);
    mma_ABt_shared<WARPS, PROXY_FENCE>(d, rows, b, c);
  }
}

// `wgmma.wait_group N`: at most N of this warpgroup's wgmma groups stay in flight (the waits
// pass derives N; the wait binds the accumulators it names after this).
template <int N> __device__ __forceinline__ void wgmma_wait() {
  static_assert(N >= 0 && N <= 7, "kt::wgmma_wait: N is 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

}  // namespace kt

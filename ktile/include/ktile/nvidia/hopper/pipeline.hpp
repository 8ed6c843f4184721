// ktile / NVIDIA Hopper: warpgroup roles over a pipeline of shared stages (hk.pipeline).
//
// kt::pipeline<STAGES, OFFSET, PRODUCER_WARP> owns 2 × STAGES mbarriers at OFFSET of the
// dynamic shared memory (lds-alloc places them): full[s], then empty[s]. Step k uses stage
// s = k % STAGES in round r = k / STAGES, so the phase each barrier is waited at follows from k
// and no thread keeps state:
//
//   producer (warps PRODUCER_WARP..): wait_empty(k): empty[s] at parity (r & 1) ^ 1 (a fresh
//     barrier counts the phase before its first as complete, so round 0 passes at once);
//     stage_copy(...): one elected thread announces the tile's bytes on full[s]
//     (arrive.expect_tx) and issues its TMA boxes, which complete on full[s].
//   consumers (warps 0..readers-1): wait_full(k): full[s] at parity r & 1; the MMAs reading
//     the stage; release<KEEP>(k): wgmma.wait_group KEEP (KEEP = the groups step k issued, so
//     step k-1's have completed and stopped reading their stage), then lane 0 of each warp
//     arrives on empty[(k-1) % STAGES] (nothing at k = 0).
//
// full expects `arrivals` a phase: with TMA one per stage tile (its elected thread's
// expect_tx, plus the bytes); without tensor maps (a call whose tensors cannot have them) one
// per producer thread and stage tile: each thread's cp.async chunks, then
// `cp.async.mbarrier.arrive.noinc` (the arrival happens when they have landed; a thread whose
// chunks were loaded and stored synchronously, rows not 16-byte aligned, arrives plainly, which
// releases its stores). empty expects `readers` (one per consumer warp). setmaxnreg_dec / _inc move registers between the roles:
// every warp of a warpgroup executes them (.sync.aligned), first thing in the role's branch.
#pragma once

#include <cstdint>

#include "ktile/nvidia/hopper/arrivals.hpp"
#include "ktile/nvidia/hopper/async_copy.hpp"
#include "ktile/nvidia/hopper/mma_shared.hpp"
#include "ktile/nvidia/hopper/tensor_copy.hpp"
#include "ktile/nvidia/hopper/warp.hpp"

namespace kt {

template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "kt::setmaxnreg_dec: a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(N % 8 == 0 && N >= 24 && N <= 256, "kt::setmaxnreg_inc: a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

template <int STAGES, int OFFSET, int PRODUCER_WARP>
struct pipeline {
  static_assert(STAGES >= 2, "kt::pipeline: at least 2 stages (one filled while another is read)");
  static_assert(OFFSET >= 0 && OFFSET % 8 == 0, "kt::pipeline: mbarriers are 8-byte aligned");
  static_assert(PRODUCER_WARP % 4 == 0, "kt::pipeline: the producer role starts a warpgroup");

  // Thread 0 initialises the barriers; the block meets before any role runs.
  __device__ __forceinline__ pipeline(int arrivals, int readers) {
    if (threadIdx.x == 0) {
#pragma unroll
      for (int s = 0; s < STAGES; ++s) {
        detail::mbarrier_init(full(s), static_cast<uint32_t>(arrivals));
        detail::mbarrier_init(empty(s), static_cast<uint32_t>(readers));
      }
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
  }

  __device__ static __forceinline__ uint32_t barrier(int slot) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(detail::dynamic_shared() + OFFSET + 8 * slot));
  }
  __device__ static __forceinline__ uint32_t full(int s) { return barrier(s); }
  __device__ static __forceinline__ uint32_t empty(int s) { return barrier(STAGES + s); }
  __device__ static __forceinline__ int stage(index_t k) { return static_cast<int>(k % STAGES); }
  __device__ static __forceinline__ uint32_t round_parity(index_t k) { return static_cast<uint32_t>((k / STAGES) & 1); }

  __device__ __forceinline__ void wait_full(index_t k) const { spin(full(stage(k)), round_parity(k)); }
  __device__ __forceinline__ void wait_empty(index_t k) const { spin(empty(stage(k)), round_parity(k) ^ 1u); }

  template <int KEEP> __device__ __forceinline__ void release(index_t k) const {
    wgmma_wait<KEEP>();   // step k-1's MMAs have read their stage
    __syncwarp();
    if (k > 0 && detail::lane_id() == 0) detail::mbarrier_arrive(empty(stage(k - 1)));
  }

  // The producer after its last step: its cp.async chunks have landed (so their arrivals have
  // happened) before it exits; nothing is pending after TMA copies.
  __device__ __forceinline__ void producer_done() const { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

  // The thread that announces a stage copy's bytes and issues its boxes.
  __device__ static __forceinline__ bool elected() { return threadIdx.x == 32 * PRODUCER_WARP; }
  // This thread's index among the producer's threads (from its first warp on).
  __device__ static __forceinline__ unsigned producer_thread() { return threadIdx.x - 32u * PRODUCER_WARP; }

 private:
  __device__ static __forceinline__ void spin(uint32_t bar, uint32_t parity) {
    while (!detail::mbarrier_try_wait(bar, parity)) {
    }
  }
};

// Step k's tile of a stage, by TMA, completing on the stage's full barrier. Every producer
// thread calls it; the elected one announces the bytes, then issues the boxes.
template <class T, int R, int C, class U, class At, class P>
__device__ __forceinline__ void stage_copy(st<T, R, C>& dst, const gl<U>& g, At where, const P& pipe,
                                           index_t k, const tensor_map& map) {
  static_assert(std::is_same<T, U>::value, "kt::stage_copy: the shared tile's element type must be the global's");
  using box = tensor_box<T, R, C>;
  static_assert(box::usable && box::rows > 0, "kt::stage_copy: this shared tile's layout is no TMA swizzle mode");
  (void)g;
  if (!P::elected()) return;
  const elem_coord at = origin_of<R, C>(where);
  const uint32_t bar = P::full(P::stage(k));
  detail::mbarrier_arrive_expect_tx(bar, static_cast<uint32_t>(R * C * sizeof(T)));
  constexpr int col_boxes = C / box::cols;
  const int32_t dd = detail::tensor_coordinate(at.d), bb = detail::tensor_coordinate(at.b);
#pragma unroll 1
  for (int i = 0; i < box::count; ++i) {
    const int j = i % col_boxes, r = i / col_boxes;
    const uint32_t to = dst.address(st<T, R, C>::chunk_offset(r * box::rows, j * st<T, R, C>::atom_chunks));
    detail::tma_load_4d(to, map, bar, detail::tensor_coordinate(at.c + j * box::cols),
                        detail::tensor_coordinate(at.r + r * box::rows), dd, bb);
  }
}

namespace detail {

__device__ __forceinline__ void cp_async_arrive_noinc(uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" :: "r"(bar) : "memory");
}

}  // namespace detail

// Step k's tile of a stage without a tensor map: the producer's threads take its 16-byte
// chunks in turn (cp.async with a source size: outside the global zero-filled), then each
// arrives on the stage's full barrier once its chunks have landed. Rows that are not 16-byte
// aligned are loaded and stored by the same threads, which then arrive plainly.
template <class T, int R, int C, class U, class At, class P>
__device__ __forceinline__ void stage_copy(st<T, R, C>& dst, const gl<U>& g, At where, const P& pipe,
                                           index_t k) {
  static_assert(std::is_same<T, U>::value, "kt::stage_copy: the shared tile's element type must be the global's");
  constexpr int chunk_elems = 16 / sizeof(T), row_chunks = C / chunk_elems;
  constexpr unsigned threads = 128;   // one producer warpgroup issues (the others only wait)
  const unsigned t = P::producer_thread();
  const uint32_t bar = P::full(P::stage(k));
  if (t >= threads) {
    detail::mbarrier_arrive(bar);
    return;
  }
  const elem_coord at = origin_of<R, C>(where);
  const bool plane = g.has_plane(at.b, at.d);
  const T* base = plane ? g.at(at.b, at.d, 0, 0) : g.data;
  const uintptr_t bits = reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(g.stride[2] * sizeof(T)) |
                         static_cast<uintptr_t>(at.c * static_cast<index_t>(sizeof(T)));
  const bool vector_ok = g.stride[3] == 1 && bits % 16 == 0;
#pragma unroll 1
  for (unsigned i = t; i < R * row_chunks; i += threads) {
    const int row = i / row_chunks, chunk = i % row_chunks;
    const index_t gr = at.r + row, gc = at.c + chunk * chunk_elems;
    const bool row_ok = plane && gr >= 0 && gr < g.rows();
    const uint32_t to = dst.address(st<T, R, C>::chunk_offset(row, chunk));
    if (vector_ok) {
      const uint32_t n = row_ok ? detail::bytes_inside<T>(gc, g.cols()) : 0u;
      detail::cp_async_16(to, n ? base + gr * g.stride[2] + gc : g.data, n);
      continue;
    }
    // element by element: the producer's few registers (setmaxnreg) hold no 16-byte chunk
    T* out = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(dst.data) + st<T, R, C>::chunk_offset(row, chunk));
#pragma unroll 1
    for (int e = 0; e < chunk_elems; ++e) {
      const index_t c = gc + e;
      out[e] = row_ok && c >= 0 && c < g.cols() ? detail::load_global(g.at(at.b, at.d, gr, c)) : cast_to<T>(0);
    }
  }
  if (vector_ok) detail::cp_async_arrive_noinc(bar);
  else detail::mbarrier_arrive(bar);
}

}  // namespace kt

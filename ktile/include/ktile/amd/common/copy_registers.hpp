// ktile / AMD: a global -> shared copy through registers, by every thread of the block — how
// kt::copy_async works where there is no global->LDS DMA (RDNA), and the fallback where the DMA
// cannot take the window (CDNA: columns crossing the global's edge, strided or unaligned rows).
//
// The block's threads take the tile's 16-byte chunks in turn (consecutive threads, consecutive
// chunks of a row). When the window's columns lie inside the global with unit stride and
// 16-byte aligned rows: one 16-byte buffer load each at the copy plan's offset (copy_plan.hpp:
// computed once, before a kernel's loop), straight-line; else element by element with bounds,
// a loop (the edge tile's path, kept small). Then one 16-byte LDS write to the chunk's
// swizzled place (shared_tile.hpp). Elements outside the global are zeros. The copy is
// synchronous to the compiler, which waits for the loads before the LDS writes; kt::barrier()
// publishes them to the other waves.
#pragma once

#include "ktile/amd/common/copy_plan.hpp"
#include "ktile/amd/common/shared_tile.hpp"

namespace kt::detail {

// The window element by element, with bounds (its columns cross the global's edge, or are
// strided or unaligned): the edge tile's path, rolled loops (kept small: it is compiled into a
// kernel's loop beside the fast path, which the steady state runs). Thread t takes chunks t,
// t + threads, ...; a 16-bit or narrower element is read and written alone.
template <class T, int R, int C, class S>
__device__ __attribute__((noinline)) void copy_elements_call(uint32_t lds, const T* origin, int row_lo, int row_hi, int col_lo,
                                                             int col_hi, uint32_t row_bytes, uint32_t col_bytes) {
  constexpr int per = 16 / static_cast<int>(sizeof(T));
  constexpr int row_chunks = C * static_cast<int>(sizeof(T)) / 16, chunks = R * row_chunks;
  const isa::buffer buf = isa::make_buffer(origin);
  const lane_window v{row_lo, row_hi, col_lo, col_hi, row_bytes, col_bytes};
  const int threads = isa::block_threads();
#pragma clang loop unroll(disable)
  for (int k = isa::thread(); k < chunks; k += threads) {
    const int row = k / row_chunks, chunk = k % row_chunks;
    const uint32_t at = lds + S::chunk_offset(row, chunk);
#pragma clang loop unroll(disable)
    for (int e = 0; e < per; ++e) {
      const auto bits = isa::buffer_load<sizeof(T)>(buf, v.offset(row, chunk * per + e));
      isa::lds_write<sizeof(T)>(at + e * static_cast<uint32_t>(sizeof(T)), bits);
    }
  }
}
template <class T, int R, int C, class S>
__device__ __forceinline__ void copy_elements(S& dst, const window<T>& w_op) {
  const window<T> w = w_op.here();
  copy_elements_call<T, R, C, S>(dst.address(), w.origin, w.row_lo, w.row_hi, w.col_lo, w.col_hi, w.row_bytes, w.col_bytes);
}

// R rows × C columns of g[b, d] from (r0, c0) into shared S (a kt::st or kt::sv).
template <class T, int R, int C, class S, class U>
__device__ __forceinline__ void copy_through_registers(S& dst, const window<T>& w_op, const gl<U>& g) {
  if (!w_op.template whole_rows<16>(C)) return copy_elements<T, R, C>(dst, w_op);
  constexpr int chunks = S::rows * S::row_chunks;
  const copy_plan<S, T, isa::wave_size> plan = plan_of<S, T, isa::wave_size>(g);
  const window<T> w = w_op.here();                                   // this copy's scalars
  const isa::buffer buf = w.rows_buffer(C);
  const uint32_t first_row = static_cast<uint32_t>(w.row_lo) * w.row_bytes;
  const uint32_t lds = dst.address();
  plan.template each_instruction<16, false>([&](int n, auto at) {
    if (chunks % isa::wave_size == 0 || n * isa::wave_size + isa::lane() < chunks)
      isa::lds_write<16>(lds + at.lds, isa::buffer_load<16>(buf, at.global - first_row));
  });
}

}  // namespace kt::detail

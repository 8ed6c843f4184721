// ktile / AMD: a global -> shared copy through registers, by every thread of the block — how
// kt::copy_async works where there is no global->LDS DMA (RDNA), and the fallback where the DMA
// cannot take the window (CDNA: columns crossing the global's edge, strided or unaligned rows).
//
// The block's threads take the tile's 16-byte chunks in turn (consecutive threads, consecutive
// chunks of a row): one 16-byte buffer load each when the window's columns lie inside the
// global with unit stride and 16-byte aligned rows, else element by element with bounds; then
// one 16-byte LDS write to the chunk's swizzled place (shared_tile.hpp). Elements outside the
// global are zeros. The copy is synchronous to the compiler, which waits for the loads before
// the LDS writes; kt::barrier() publishes them to the other waves.
#pragma once

#include "ktile/amd/common/global_tile.hpp"
#include "ktile/amd/common/shared_tile.hpp"

namespace kt::detail {

// One 16-byte chunk (chunk k of window row `row`), element by element with bounds.
template <class T>
__device__ __forceinline__ isa::word<16> chunk_elements(const lane_window& w, isa::buffer buf, int row, int k) {
  constexpr int per = 16 / sizeof(T);
  isa::vec<storage_t<T>, per> v;
  static_for<per>([&](auto e) {
    const uint32_t offset = w.offset(row, k * per + decltype(e)::value);
    v[decltype(e)::value] = __builtin_bit_cast(storage_t<T>, isa::buffer_load<sizeof(T)>(buf, offset));
  });
  return __builtin_bit_cast(isa::word<16>, v);
}

// R rows × C columns of g[b, d] from (r0, c0) into shared S (a kt::st or kt::sv).
template <class T, int R, int C, class S>
__device__ __forceinline__ void copy_through_registers(S& dst, const window<T>& w_op) {
  const window<T> w = w_op.here();
  constexpr int row_chunks = C * static_cast<int>(sizeof(T)) / 16, chunks = R * row_chunks;
  const bool whole = w.template whole_rows<16>(C);
  const isa::buffer buf = whole ? w.rows_buffer(C) : isa::make_buffer(w.origin);
  const lane_window v = lanes_of(w);
  const uint32_t lds = dst.address();
  const int threads = isa::block_threads();
  for (int k = isa::thread(); k < chunks; k += threads) {
    const int row = k / row_chunks, chunk = k % row_chunks;
    isa::word<16> data;
    if (whole) {
      data = isa::buffer_load<16>(buf, v.row_offset(row) + 16u * chunk);
    } else {
      data = chunk_elements<T>(v, buf, row, chunk);
    }
    isa::lds_write<16>(lds + S::chunk_offset(row, chunk), data);
  }
}

}  // namespace kt::detail

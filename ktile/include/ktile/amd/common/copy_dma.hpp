// ktile / AMD: a global -> shared copy by global->LDS DMA (CDNA3 / CDNA4: buffer_load ... lds),
// the asynchronous kt::copy_async. The data never passes through registers; each instruction
// completes on vmcnt, so the waits pass puts kt::wait<0, ...> and a barrier between the copy and
// any read of the tile (trap 4).
//
// One DMA instruction writes `wave_size` granules of `lds_dma_bytes` (16 on gfx950, 4 on
// gfx942) to consecutive LDS addresses, lane i at base + i·granule. So the lanes choose their
// global addresses to fit the LDS layout: the granule at LDS byte q·granule belongs to chunk
// slot q·granule / 16 of the swizzled tile (shared_tile.hpp), whose row and column the swizzle's
// inverse gives. The waves of the block take the tile's instructions in turn. Rows outside the
// global read zeros (the buffer's bounds); a window whose columns cross the global's edge, or
// whose rows are strided or unaligned, goes through registers instead (copy_registers.hpp).
#pragma once

#include "ktile/amd/common/copy_registers.hpp"

namespace kt::detail {

template <class T, int R, int C, class S>
__device__ __forceinline__ void copy_by_dma(S& dst, const window<T>& w_op) {
  const window<T> w = w_op.here();
  constexpr int granule = isa::lds_dma_bytes, per_instruction = isa::wave_size;
  constexpr int row_chunks = C * static_cast<int>(sizeof(T)) / 16;
  constexpr int granules = R * C * static_cast<int>(sizeof(T)) / granule;
  static_assert(16 % granule == 0, "kt: a DMA granule divides a 16-byte chunk");
  const int lane = isa::lane(), waves = isa::block_threads() / isa::wave_size;
  const isa::buffer buf = w.rows_buffer(C);
  const lane_window v = lanes_of(w);
  const uint32_t lds = dst.address();
  for (int first = isa::wave() * per_instruction; first < granules; first += waves * per_instruction) {
    const int q = first + lane;
    const int linear = S::chunk_at_slot(q * granule / 16);   // row * row_chunks + chunk
    const int row = linear / row_chunks, within = q * granule % 16;
    const uint32_t offset = v.row_offset(row) + 16u * (linear % row_chunks) + within;
    if (q < granules) isa::dma_to_lds(buf, offset, lds + first * granule);
  }
}

// kt::copy_async's choice on a DMA family: the DMA when the window's rows are whole granules
// inside the global, else the register path.
template <class T, int R, int C, class S>
__device__ __forceinline__ void copy_window(S& dst, const window<T>& w) {
  if (w.template whole_rows<isa::lds_dma_bytes>(C)) copy_by_dma<T, R, C>(dst, w);
  else copy_through_registers<T, R, C>(dst, w);
}

}  // namespace kt::detail

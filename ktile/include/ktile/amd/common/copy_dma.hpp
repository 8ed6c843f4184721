// ktile / AMD: a global -> shared copy by global->LDS DMA (CDNA3 / CDNA4: buffer_load ... lds),
// the asynchronous kt::copy_async. The data never passes through registers; each instruction
// completes on vmcnt, so the waits pass puts kt::wait<0, ...> and a barrier between the copy and
// any read of the tile (trap 4).
//
// One DMA instruction writes `wave_size` granules of `lds_dma_bytes` (16 on gfx950, 4 on
// gfx942) to consecutive LDS addresses, lane i at base + i·granule. So the lanes choose their
// global addresses to fit the LDS layout: the granule at LDS byte q·granule belongs to chunk
// slot q·granule / 16 of the swizzled tile (shared_tile.hpp), whose row and column the swizzle's
// inverse gives. Those offsets are the copy plan's (copy_plan.hpp): computed once before a
// kernel's loop; a copy adds scalars and issues its instructions straight-line. Rows outside
// the global read zeros (the buffer's bounds); a window whose columns cross the global's edge,
// or whose rows are strided or unaligned, goes through registers instead (copy_registers.hpp).
#pragma once

#include "ktile/amd/common/copy_registers.hpp"

namespace kt::detail {

template <class T, class S, class U>
__device__ __forceinline__ void copy_by_dma(S& dst, const window<T>& w_op, const gl<U>& g) {
  constexpr int granule = isa::lds_dma_bytes, per = isa::wave_size * granule / 16;   // chunks an instruction
  static_assert(16 % granule == 0, "kt: a DMA granule divides a 16-byte chunk");
  constexpr int granules = S::rows * S::row_chunks * 16 / granule;
  const copy_plan<S, T, per> plan = plan_of<S, T, per>(g);
  const window<T> w = w_op.here();                                   // this copy's scalars
  const isa::buffer buf = w.rows_buffer(S::cols);
  const uint32_t first_row = static_cast<uint32_t>(w.row_lo) * w.row_bytes;
  const uint32_t lds = dst.address();
  plan.template each_instruction<granule, true>([&](int n, auto at) {
    if (granules % isa::wave_size == 0 || n * isa::wave_size + isa::lane() < granules)
      isa::dma_to_lds(buf, at.global - first_row, lds + n * per * 16);
  });
}

// kt::copy_async's choice on a DMA family: the DMA when the window's rows are whole granules
// inside the global, else the register path.
template <class T, int R, int C, class S, class U>
__device__ __forceinline__ void copy_window(S& dst, const window<T>& w, const gl<U>& g) {
  if (w.template whole_rows<isa::lds_dma_bytes>(C)) copy_by_dma<T>(dst, w, g);
  else copy_through_registers<T, R, C>(dst, w, g);
}

}  // namespace kt::detail

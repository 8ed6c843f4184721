// ktile / AMD CDNA4 (gfx950): kt::copy_async by global->LDS DMA, 16 bytes per lane
// (buffer_load_dwordx4 ... lds, common/copy_dma.hpp): asynchronous, completing on vmcnt; the
// waits pass puts kt::wait<0, ...> and a barrier before any read of the tile (trap 4). Windows
// the DMA cannot take go through registers.
#pragma once

#include "ktile/amd/common/copy_dma.hpp"

namespace kt {

template <class T, int R, int C, class U, class At>
__device__ __forceinline__ void copy_async(st<T, R, C>& dst, const gl<U>& g, At where) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared tile's element type must be the global's");
  detail::copy_window<T, R, C>(dst, detail::window_of(g, at.b, at.d, at.r, at.c, R, C), g);
}

template <class T, int L, class U, class At>
__device__ __forceinline__ void copy_async(sv<T, L>& dst, const gl<U>& g, At where) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared vector's element type must be the global's");
  detail::copy_window<T, 1, L>(dst, detail::window_of(g, at.b, at.d, at.r, at.c, 1, L), g);
}

}  // namespace kt

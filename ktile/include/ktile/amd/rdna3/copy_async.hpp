// ktile / AMD RDNA3 (gfx1100): kt::copy_async. RDNA has no global->LDS DMA ("needs target
// feature vmem-to-lds-load-insts"), so a copy goes through registers (common/copy_registers.hpp):
// synchronous to the compiler, published to the other waves by the kt::barrier that follows.
// The kt::wait<0, ...> the waits pass puts before that barrier is then a harmless s_waitcnt.
#pragma once

#include "ktile/amd/common/copy_registers.hpp"

namespace kt {

template <class T, int R, int C, class U, class At>
__device__ __forceinline__ void copy_async(st<T, R, C>& dst, const gl<U>& g, At where) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared tile's element type must be the global's");
  detail::copy_through_registers<T, R, C>(dst, detail::window_of(g, at.b, at.d, at.r, at.c, R, C), g);
}

template <class T, int L, class U, class At>
__device__ __forceinline__ void copy_async(sv<T, L>& dst, const gl<U>& g, At where) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared vector's element type must be the global's");
  detail::copy_through_registers<T, 1, L>(dst, detail::window_of(g, at.b, at.d, at.r, at.c, 1, L), g);
}

}  // namespace kt

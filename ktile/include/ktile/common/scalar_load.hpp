// ktile: kt::load_scalar(g, at, pad) — one element of a global as a scalar every lane holds
// (hk.load_scalar: an id or a count read from a tensor, usable in a tile coordinate); an
// element outside the global reads `pad`. Vendor-neutral: a plain load of one address, the
// same for every lane of a warp (one transaction, broadcast).
#pragma once

#include "ktile/common/global_layout.hpp"

namespace kt {

template <class T>
__device__ __forceinline__ T load_scalar(const gl<T>& g, elem_coord at, double pad) {
  if (!g.has_plane(at.b, at.d) || !g.has_element(at.r, at.c)) return static_cast<T>(pad);
  return *g.at(at.b, at.d, at.r, at.c);
}

}  // namespace kt

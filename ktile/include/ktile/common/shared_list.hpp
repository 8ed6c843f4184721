// ktile: kt::shared_index<S, OFFSET, STRIDE>(i), tile i of a list of shared tiles indexed on the
// device (`bufs[k % 2]`, kt.lds_select). Vendor-neutral: it builds on the backend's
// kt::shared_at, so each backend's shared_tile.hpp includes it after defining that.
//
// The lds-alloc pass lays such a list out as one block: tile i at OFFSET + i·STRIDE of the
// block's dynamic shared memory, STRIDE the tile's size rounded up to the strictest alignment
// any use of the list needs (an MMA reading it, a copy writing it). The index is not checked
// here: the interpreter checks it; on the GPU an index outside the list reaches other tiles.
#pragma once

#include "ktile/common/tags.hpp"   // kt::index_t

namespace kt {

template <class S, int OFFSET, int STRIDE>
__device__ __forceinline__ S& shared_index(index_t i) {
  static_assert(STRIDE >= static_cast<int>(sizeof(S)), "kt::shared_index: the tiles of a list are STRIDE bytes apart, STRIDE at least one tile (lds-alloc places them so)");
  static_assert(STRIDE % 16 == 0, "kt::shared_index: every tile of a list starts 16-byte aligned (lds-alloc rounds the stride up)");
  unsigned char* base = reinterpret_cast<unsigned char*>(&shared_at<S, OFFSET>());
  return *reinterpret_cast<S*>(base + i * STRIDE);
}

}  // namespace kt

// ktile / AMD: where this block and wave are (kt::block_idx_*, kt::warp_id) and the block
// barrier (kt::barrier) — the generated code's names for the instruction layer's.
//
// A ktile warp is an AMD wave (32 lanes on RDNA, 64 on CDNA). kt::warp_id() is the same in
// every lane of a wave and the compiler knows it (readfirstlane), so branches on it are uniform.
#pragma once

#include "ktile/common/tags.hpp"
#include "ktile/amd/common/isa_lanes.hpp"

namespace kt {

__device__ __forceinline__ index_t block_idx_x() { return static_cast<index_t>(isa::block_x()); }
__device__ __forceinline__ index_t block_idx_y() { return static_cast<index_t>(isa::block_y()); }
__device__ __forceinline__ index_t block_idx_z() { return static_cast<index_t>(isa::block_z()); }
__device__ __forceinline__ index_t warp_id() { return static_cast<index_t>(isa::wave()); }

// All waves meet; LDS writes made from registers before it are visible after it. It does not
// wait for global->LDS copies in flight (CDNA's DMA): the waits pass puts kt::wait before it
// (trap 4).
__device__ __forceinline__ void barrier() { isa::barrier(); }

}  // namespace kt

// ktile / NVIDIA Hopper: TMA copies of shared tiles (cp.async.bulk.tensor), completing on an
// mbarrier of kt::arrivals with the bytes they bring.
//
// A kt::tensor_map is a CUtensorMap the host encoded (cuTensorMapEncodeTiled) for one global
// parameter and one shared tile shape: rank 4 (cols, rows, depth, batch: innermost first),
// the box of tensor_box<T, R, C> and its swizzle, out-of-bounds elements zero-filled. It is a
// __grid_constant__ kernel parameter, so the copy reads it from parameter space. Where the host
// cannot encode one for a call's tensor (a row stride that is no multiple of 16 bytes, an extent
// of 2^31 or more) it builds the kernel without tensor maps: its copies take the cp.async path
// (async_copy.hpp), and no kernel carries both paths for one copy.
//
// The box is one swizzle atom wide: st<T, R, C>'s column blocks of 128 bytes are the 128B
// swizzle mode's layout (16-byte chunk k of row r at (k % 8) ^ (r % 8): address bits [4, 7)
// XOR bits [7, 10)), and its 64- and 32-byte rows the 64B and 32B modes', when the tile starts
// on a 1024-byte boundary (lds-alloc aligns copied-into tiles so on sm_90a). A tile of another
// width has no mode (tensor_box<...>::usable is false). Warp 0 issues the boxes, one per lane
// in turn; its lane 0's arrival announces the tile's bytes; every other thread just arrives.
#pragma once

#include <cstdint>

#include "ktile/nvidia/hopper/arrivals.hpp"
#include "ktile/nvidia/hopper/shared_tile.hpp"
#include "ktile/nvidia/hopper/warp.hpp"

namespace kt {

struct alignas(64) tensor_map {
  unsigned char bytes[128];   // the CUtensorMap
};
static_assert(sizeof(tensor_map) == 128 && alignof(tensor_map) == 64,
              "kt::tensor_map: a CUtensorMap, 128 bytes, 64-byte aligned (the loader's ABI)");

// The TMA box of a copy into st<T, R, C>: `cols` elements (one swizzle atom) × `rows` rows,
// `swizzle_bytes` the mode. The same rule is ktile.targets' `tensor_box` (the host encodes it).
template <class T, int R, int C>
struct tensor_box {
  static constexpr int swizzle_bytes = st<T, R, C>::swizzle_bytes;
  static constexpr bool usable = swizzle_bytes != 0;
  static constexpr int cols = usable ? swizzle_bytes / static_cast<int>(sizeof(T)) : 0;
  static constexpr int largest_rows(int r) {   // a box is at most 256 rows and divides the tile
    for (int b = 256; b >= 8; b -= 8)
      if (r % b == 0) return b;
    return 0;
  }
  static constexpr int rows = R <= 256 ? R : largest_rows(R);
  static constexpr int count = usable ? (C / cols) * (R / rows) : 0;
};

namespace detail {

__device__ __forceinline__ int32_t tensor_coordinate(index_t v) {
  // a window starting 2^31 or more outside the tensor is wholly outside it: clamped, still outside
  return v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : static_cast<int32_t>(v);
}

__device__ __forceinline__ void tma_load_4d(uint32_t dst, const tensor_map& map, uint32_t bar,
                                            int32_t c, int32_t r, int32_t d, int32_t b) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4, %5}], [%6];\n"
      :: "r"(dst), "l"(reinterpret_cast<uint64_t>(&map)), "r"(c), "r"(r), "r"(d), "r"(b), "r"(bar)
      : "memory");
}

// R × C elements of the tensor from (r0, c0) of plane (b, d) into dst, completing on `bar`.
template <class T, int R, int C>
__device__ __forceinline__ void tensor_copy(st<T, R, C>& dst, const tensor_map& map, uint32_t bar,
                                            index_t c0, index_t r0, index_t d, index_t b) {
  using box = tensor_box<T, R, C>;
  static_assert(box::usable && box::rows > 0, "kt: this shared tile's layout is no TMA swizzle mode");
  if (warp_id() != 0) {
    mbarrier_arrive(bar);
    return;
  }
  const int lane = lane_id();
  if (lane == 0) mbarrier_arrive_expect_tx(bar, static_cast<uint32_t>(R * C * sizeof(T)));
  else mbarrier_arrive(bar);
  // the shared tile's earlier reads and writes (generic proxy) before the TMA's writes
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  constexpr int col_boxes = C / box::cols;
  const int32_t dd = tensor_coordinate(d), bb = tensor_coordinate(b);
#pragma unroll 1
  for (int k = lane; k < box::count; k += 32) {
    const int j = k % col_boxes, i = k / col_boxes;
    const uint32_t at = dst.address(st<T, R, C>::chunk_offset(i * box::rows, j * st<T, R, C>::atom_chunks));
    tma_load_4d(at, map, bar, tensor_coordinate(c0 + j * box::cols), tensor_coordinate(r0 + i * box::rows), dd, bb);
  }
}

}  // namespace detail
}  // namespace kt

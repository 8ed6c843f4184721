// ktile / every target: kt::block_reduce_tile_sum / _max / _min<WARPS>(dst, x, scratch) — every
// warp gets the elementwise reduction of its register tile x over warps 0..WARPS-1 (the DSL's
// `hk.group.sum(tile)`; a split-K kernel's combine of its warps' partial sums).
//
// The order is a pairwise tree, fixed, so the result is the same run to run and in every warp
// (the interpreter's `tile_reduce_rounds`): in round k (stride s = 2^k) warp w, for w a multiple
// of 2s with w + s < WARPS, loads warp w + s's partial from scratch, combines it into its own
// (own ⊕ other, rounded to the element type as kt::add rounds) and stores the result back into
// its own slot. 4 warps give (w0 ⊕ w1) ⊕ (w2 ⊕ w3); 3 warps (w0 ⊕ w1) ⊕ w2. No atomics.
//
// `scratch` is a shared tile of WARPS stacked tiles, slot w = rows [w·R, w·R+R): the lds-alloc
// pass places it (kt.block_reduce's `offset`). Barriers: one after the warps publish, one after
// each round, one after every warp has read the result, so the same scratch may be written
// again (a reduction in a loop). Every warp must reach it: the verify pass refuses one under a
// branch on the warp id. Written against the vendor's kt::lds_store / kt::lds_load (sub-tile
// forms), kt::add / max / min and kt::barrier / kt::warp_id, which each vendor's library
// declares before including this header.
#pragma once

#include <type_traits>

namespace kt {
namespace detail {

struct tile_sum_combine {
  template <class Tile> __device__ __forceinline__ static void apply(Tile& acc, const Tile& other) { kt::add(acc, acc, other); }
};
struct tile_max_combine {
  template <class Tile> __device__ __forceinline__ static void apply(Tile& acc, const Tile& other) { kt::max(acc, acc, other); }
};
struct tile_min_combine {
  template <class Tile> __device__ __forceinline__ static void apply(Tile& acc, const Tile& other) { kt::min(acc, acc, other); }
};

// One round of the tree at `STRIDE`, then the next; every warp meets at each round's barrier.
template <class Combine, int WARPS, int STRIDE, class Tile, class S>
__device__ __forceinline__ void tile_tree_rounds(Tile& acc, S& scratch, int warp) {
  if constexpr (STRIDE < WARPS) {
    if (warp % (2 * STRIDE) == 0 && warp + STRIDE < WARPS) {
      Tile other;
      kt::lds_load(other, scratch, static_cast<index_t>(warp + STRIDE), 0);
      Combine::apply(acc, other);
      kt::lds_store(scratch, acc, static_cast<index_t>(warp), 0);
    }
    kt::barrier();
    tile_tree_rounds<Combine, WARPS, 2 * STRIDE>(acc, scratch, warp);
  }
}

// dst may carry another fragment tag than x (an MMA accumulator reduces into a plain tile).
template <class Combine, int WARPS, class D, class Tile, class S>
__device__ __forceinline__ void block_reduce_tile(D& dst, const Tile& x, S& scratch) {
  static_assert(WARPS >= 1, "kt: block_reduce_tile combines at least one warp");
  static_assert(S::rows == WARPS * Tile::rows && S::cols == Tile::cols,
                "kt: block_reduce_tile's scratch holds one tile per warp, stacked by rows (WARPS*R x C)");
  static_assert(std::is_same<typename S::elem_type, typename Tile::elem_type>::value &&
                std::is_same<typename D::elem_type, typename Tile::elem_type>::value,
                "kt: block_reduce_tile's scratch and result have the tile's element type");
  static_assert(D::rows == Tile::rows && D::cols == Tile::cols,
                "kt: block_reduce_tile's result has the tile's shape");
  if constexpr (WARPS == 1) {
    kt::lds_store(scratch, x, 0, 0);   // the form may differ: through shared, like the rest
    kt::barrier();                      // the lanes that read are not the lanes that wrote
    kt::lds_load(dst, scratch, 0, 0);
    kt::barrier();
  } else {
    const int warp = static_cast<int>(kt::warp_id());
    Tile acc = x;
    if (warp < WARPS) kt::lds_store(scratch, acc, static_cast<index_t>(warp), 0);
    kt::barrier();
    tile_tree_rounds<Combine, WARPS, 1>(acc, scratch, warp);
    kt::lds_load(dst, scratch, 0, 0);   // warp 0's slot holds the whole tree
    kt::barrier();                      // every warp has read it before the scratch is reused
  }
}

}  // namespace detail

template <int WARPS, class D, class Tile, class S>
__device__ __forceinline__ void block_reduce_tile_sum(D& dst, const Tile& x, S& scratch) {
  detail::block_reduce_tile<detail::tile_sum_combine, WARPS>(dst, x, scratch);
}
template <int WARPS, class D, class Tile, class S>
__device__ __forceinline__ void block_reduce_tile_max(D& dst, const Tile& x, S& scratch) {
  detail::block_reduce_tile<detail::tile_max_combine, WARPS>(dst, x, scratch);
}
template <int WARPS, class D, class Tile, class S>
__device__ __forceinline__ void block_reduce_tile_min(D& dst, const Tile& x, S& scratch) {
  detail::block_reduce_tile<detail::tile_min_combine, WARPS>(dst, x, scratch);
}

}  // namespace kt

// ktile / AMD: which lane holds which element — one description for every family's MMA
// fragments, and the register maps built on it.
//
// Every AMD register layout ktile uses has one shape (docs/amd-headers.md): a tile is a grid
// of base tiles 16 rows high and `width` columns wide; in each, lane l holds row l % 16, and the
// lane's group g = (l / 16) % groups holds `elems` columns:
//   blocked      column g·elems + e     (a run of elems adjacent columns: wide memory accesses)
//   interleaved  column e·groups + g    (RDNA3's WMMA accumulator)
// Lanes past 16·groups repeat the first 16·groups (RDNA3's WMMA operands: each element twice).
// A col-layout tile is held as the row-layout tile of its transpose. The family's layouts.hpp
// says which lane_layout each (element type, fragment) gets.
//
// A register map names, for a lane and one of its registers p, the logical element it holds,
// and for an element the lane (nearest the reader) and register holding it. Moving values from
// one map to another (relayout.hpp) needs nothing else. Maps: a tile (tile_map), a vector with
// one element per lane row (lane_form: element 16c + l % 16 in register c), a vector spread
// like a tile's columns (slot_form: element width·c + column(g, e) in register c·elems + e).
#pragma once

#include <type_traits>

#include "ktile/common/tags.hpp"

namespace kt::detail {

// A logical element: (row, column) of a tile; of a vector, column = its index and row = 0.
struct element_at {
  int r, c;
};

template <int GROUPS, int ELEMS, bool INTERLEAVED>
struct lane_layout {
  static_assert(GROUPS >= 1 && ELEMS >= 1, "kt: a lane layout has at least one group and one element");
  static constexpr int groups = GROUPS, elems = ELEMS, width = GROUPS * ELEMS;
  static constexpr bool interleaved = INTERLEAVED;
  static constexpr int run = INTERLEAVED ? 1 : ELEMS;          // adjacent columns per lane
  static constexpr int lanes_per_replica = 16 * GROUPS;
  static constexpr int replicas = isa::wave_size / lanes_per_replica;
  static_assert(replicas >= 1 && replicas * lanes_per_replica == isa::wave_size,
                "kt: a lane layout's 16 x groups lanes must divide the wave");

  __host__ __device__ static constexpr int group(int lane) { return (lane / 16) % GROUPS; }
  __host__ __device__ static constexpr int replica(int lane) { return lane / lanes_per_replica; }
  __host__ __device__ static constexpr int col(int g, int e) { return INTERLEAVED ? e * GROUPS + g : g * ELEMS + e; }
  __host__ __device__ static constexpr int group_of_col(int c) { return INTERLEAVED ? c % GROUPS : c / ELEMS; }
  __host__ __device__ static constexpr int elem_of_col(int c) { return INTERLEAVED ? c / GROUPS : c % ELEMS; }
  // The lane in `reader`'s replica holding row r, column c of a base tile.
  __host__ __device__ static constexpr int holder(int r, int c, int reader) {
    return replica(reader) * lanes_per_replica + 16 * group_of_col(c) + r % 16;
  }
};

// ---- register maps -----------------------------------------------------------------------------------

// An R×C tile of layout tag ROW (kt::row) or not (kt::col) in lane layout LL. Physical rows and
// columns are the logical ones for kt::row, swapped for kt::col. Register p is element p % elems
// of base tile p / elems, base tiles numbered across, then down.
template <class LL, bool ROW, int R, int C>
struct tile_map {
  using lanes = LL;
  static constexpr bool row_tag = ROW;
  static constexpr int prows = ROW ? R : C, pcols = ROW ? C : R;
  static_assert(prows % 16 == 0, "kt: AMD register tiles are built of 16-row base tiles: rows (cols for a kt::col tile) must be multiples of 16");
  static_assert(pcols % LL::width == 0, "kt: this tile's columns (rows for a kt::col tile) must be a multiple of its fragment's base width (an MMA operand's K step)");
  static constexpr int down = prows / 16, across = pcols / LL::width, blocks = down * across;
  static constexpr int regs = blocks * LL::elems;

  __host__ __device__ static constexpr int prow(int lane, int p) { return 16 * (p / LL::elems / across) + lane % 16; }
  __host__ __device__ static constexpr int pcol(int lane, int p) {
    return LL::width * (p / LL::elems % across) + LL::col(LL::group(lane), p % LL::elems);
  }
  __host__ __device__ static constexpr element_at element(int lane, int p) {
    return ROW ? element_at{prow(lane, p), pcol(lane, p)} : element_at{pcol(lane, p), prow(lane, p)};
  }
  __host__ __device__ static constexpr int holder_lane(element_at x, int reader) {
    const int pr = ROW ? x.r : x.c, pc = ROW ? x.c : x.r;
    return LL::holder(pr, pc % LL::width, reader);
  }
  __host__ __device__ static constexpr int holder_reg(element_at x) {
    const int pr = ROW ? x.r : x.c, pc = ROW ? x.c : x.r;
    return ((pr / 16) * across + pc / LL::width) * LL::elems + LL::elem_of_col(pc % LL::width);
  }
};

// A vector of L elements, element 16c + l % 16 in register c of every lane l (the rows of a
// kt::row tile, whatever its lane layout).
template <int L>
struct lane_form {
  static_assert(L > 0 && L % 16 == 0, "kt: AMD register vectors hold whole 16-element chunks: the length must be a multiple of 16");
  static constexpr int length = L, regs = L / 16;
  __host__ __device__ static constexpr element_at element(int lane, int p) { return element_at{0, 16 * p + lane % 16}; }
  __host__ __device__ static constexpr int holder_lane(element_at x, int reader) { return (reader & ~15) | (x.c % 16); }
  __host__ __device__ static constexpr int holder_reg(element_at x) { return x.c / 16; }
};

// A vector of L elements spread as the columns of a kt::row tile in lane layout LL.
template <class LL, int L>
struct slot_form {
  static_assert(L > 0 && L % LL::width == 0, "kt: a register vector's length must be a multiple of its layout's base width");
  using lanes = LL;
  static constexpr int length = L, regs = L / LL::width * LL::elems;
  __host__ __device__ static constexpr element_at element(int lane, int p) {
    return element_at{0, LL::width * (p / LL::elems) + LL::col(LL::group(lane), p % LL::elems)};
  }
  __host__ __device__ static constexpr int holder_lane(element_at x, int reader) { return LL::holder(reader, x.c % LL::width, reader); }
  __host__ __device__ static constexpr int holder_reg(element_at x) {
    return (x.c / LL::width) * LL::elems + LL::elem_of_col(x.c % LL::width);
  }
};

// The form a tile of map M reads a vector of `AlongRows` (one value per logical row) in: a
// vector along the tile's physical rows is in lane form, along its physical columns in the
// slot form of the tile's lane layout.
template <class M, bool AlongRows, int L>
using form_for_tile = std::conditional_t<AlongRows == M::row_tag, lane_form<L>, slot_form<typename M::lanes, L>>;

// Whether `lane` is the one lane, of those holding the same elements of a vector in form F,
// that writes them out (a store, block_reduce's scratch).
template <class F> __host__ __device__ constexpr bool publishes(int lane) {
  if constexpr (std::is_same<F, lane_form<F::length>>::value) return lane < 16;   // the groups repeat
  else return lane % 16 == 0 && F::lanes::replica(lane) == 0;                    // the rows repeat
}

}  // namespace kt::detail

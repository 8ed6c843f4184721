// ktile: the vocabulary every backend shares — the index type, the empty tag types that name a
// tile's layout, MMA fragment and a vector's axis, and the small aggregates the generated code
// builds (kt::coord, kt::dim3). Vendor-neutral: no intrinsics, no vendor headers.
//
// The generated file names these types only (docs/cpp-api.md, "Types"); a backend's tile types
// take the tags as template arguments and decide what they mean physically.
#pragma once

#include <cstdint>

namespace kt {

// The interpreter's index width: every extent, coordinate and loop counter of the IR.
using index_t = int64_t;

// ---- register-tile layouts: the logical layout the kernel chose ------------------------------
struct row {};
struct col {};
struct flat {};   // memory order: eight row-contiguous elements per lane unit (no MMA, no vectors)

// ---- MMA fragments, set by the `fragments` pass ----------------------------------------------
struct frag_none {};   // a tile no MMA reads or writes
struct frag_a {};      // an MMA's left operand
struct frag_b {};      // an MMA's right operand
struct frag_acc {};    // an MMA's accumulator or result

// ---- register-vector axes ---------------------------------------------------------------------
struct row_axis {};    // one value per tile row (what a row reduction gives)
struct col_axis {};    // one value per tile column

// A tile coordinate: for an R×C tile, rows [r·R, r·R+R) and columns [c·C, c·C+C) of g[b, d];
// for a vector of length L, row r (in elements) and columns [c·L, c·L+L).
struct coord {
  index_t b, d, r, c;
};

// An element coordinate: the tile or vector's first element is g[b, d, r, c], any r and c
// (a vector: row r, columns [c, c+L)). Accesses find their alignment from the address, so
// an offset that keeps rows aligned keeps the wide accesses; any other takes the narrow path.
// kt::origin_of (global_layout.hpp) turns either kind into this one.
struct elem_coord {
  index_t b, d, r, c;
};

// Block counts as the grid function returns them (x fastest).
struct dim3 {
  index_t x, y, z;
};

// ---- compile-time questions about tags --------------------------------------------------------
template <class A, class B> struct same_tag { static constexpr bool value = false; };
template <class A> struct same_tag<A, A> { static constexpr bool value = true; };

template <class L> struct is_layout { static constexpr bool value = false; };
template <> struct is_layout<row> { static constexpr bool value = true; };
template <> struct is_layout<col> { static constexpr bool value = true; };
template <> struct is_layout<flat> { static constexpr bool value = true; };

template <class F> struct is_fragment { static constexpr bool value = false; };
template <> struct is_fragment<frag_none> { static constexpr bool value = true; };
template <> struct is_fragment<frag_a> { static constexpr bool value = true; };
template <> struct is_fragment<frag_b> { static constexpr bool value = true; };
template <> struct is_fragment<frag_acc> { static constexpr bool value = true; };

template <class A> struct is_axis { static constexpr bool value = false; };
template <> struct is_axis<row_axis> { static constexpr bool value = true; };
template <> struct is_axis<col_axis> { static constexpr bool value = true; };

// The layout whose rows are the other's columns (an MMA operand read transposed).
template <class L> struct transposed_layout;
template <> struct transposed_layout<row> { using type = col; };
template <> struct transposed_layout<col> { using type = row; };

}  // namespace kt

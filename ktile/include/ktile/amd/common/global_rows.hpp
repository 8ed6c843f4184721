// ktile / AMD: kt::gather / kt::scatter — the rows of a tile from / to rows of a global named by
// an index vector. An index < 0 or >= rows reads zeros / is dropped, as are columns outside.
//
// Each lane's row is its own, so addresses are 64-bit per lane (global_load / global_store): no
// 2 GiB limit on the table. A gather loads from a bad row's stand-in address (row 0 of the same
// columns, which exists whenever a row does) and selects zero: no branch. A scatter branches
// around a bad row's stores. As in global_tile.hpp, a kt::row tile inside the global's columns
// moves its runs up to 16 bytes at a time; other tiles go element by element. A kt::col tile is
// gathered as a kt::row tile in the same lane layout and moved (relayout.hpp).
#pragma once

#include "ktile/amd/common/global_tile.hpp"
#include "ktile/amd/common/relayout.hpp"

namespace kt {
namespace detail {

// The index vector in lane form: register i holds the global row of physical row 16i + lane % 16.
template <class V> __device__ __forceinline__ auto row_indices(const V& rows) {
  static_assert(is_vec<V>::value && is_int_elem<typename V::elem_type>::value,
                "kt: gather / scatter take their row indices as an integer register vector");
  return in_form<lane_form<V::length>>(rows);
}

// The rows of g[b, d] a gather or scatter names: a window of every row at columns [c0, c0 + C),
// and the row stride in elements (64-bit: the table may be larger than 2 GiB).
template <class T>
struct row_table {
  window<T> w;          // origin: row 0, column c0; rows [row_lo, row_hi) exist
  index_t row_stride;
  // All ones for a row index outside the table (integer arithmetic, as window::outside).
  __device__ __forceinline__ uint32_t row_outside(int row) const {
    return static_cast<uint32_t>((row | (w.row_hi - 1 - row)) >> 31);
  }
  __device__ __forceinline__ bool has_row(index_t row) const { return row >= 0 && row < w.row_hi; }
  __device__ __forceinline__ const T* row_at(index_t row) const { return w.origin + row * row_stride; }
};

template <class T>
__device__ __forceinline__ row_table<T> row_table_of(const gl<T>& g, index_t b, index_t d, index_t c0, int C) {
  return row_table<T>{window_of(g, b, d, 0, c0, 0x7fffffff, C), field32(g.stride[2])};
}

// dst (a kt::row tile) <- rows `index` of the table: runs of adjacent columns, each from the
// row's address or, for a bad row, from row 0's (which exists whenever any row does), then zero.
template <int ACCESS, class Tile, class T, class Index>
__device__ __forceinline__ void gather_runs(Tile& dst, const row_table<T>& t, const Index& index) {
  using M = typename Tile::map;
  constexpr int per = ACCESS / sizeof(T);
  const int lane = isa::lane();
  static_for<M::down>([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    const int row = static_cast<int>(index.get(I));
    const uint32_t out = t.row_outside(row);
    const T* base = t.row_at(row & ~static_cast<int>(out));   // a bad row reads row 0
    static_for<M::across * Tile::lanes::elems / per>([&](auto kc) {
      constexpr int P0 = I * M::across * Tile::lanes::elems + decltype(kc)::value * per;
      const auto v = unpack<T, per>(isa::global_load<ACCESS>(base + M::pcol(lane, P0)));
      static_for<per>([&](auto e) {
        dst.set(P0 + decltype(e)::value, from_bits32<T>(bits32(from_storage<T>(v[decltype(e)::value])) & ~out));
      });
    });
  });
}

template <class Tile, class T, class Index>
__device__ __forceinline__ void gather_elements(Tile& dst, const row_table<T>& t, const Index& index) {
  const lane_window v = lanes_of(t.w.here());
  const index_t col_stride = v.col_bytes / sizeof(T);
  each_element<typename Tile::map>(isa::lane_pinned(), [&](auto pc, int, int c) {
    constexpr int P = decltype(pc)::value;
    const int row = static_cast<int>(index.get(P / Tile::lanes::elems / Tile::map::across));
    const uint32_t out = t.row_outside(row) | v.outside(0, c);   // row 0 of the window is inside when any is
    const int keep = ~static_cast<int>(out);
    const T* at = t.row_at(row & keep) + ((c & keep) | (v.col_lo & ~keep)) * col_stride;
    const T x = from_storage<T>(__builtin_bit_cast(storage_t<T>, isa::global_load<sizeof(T)>(at)));
    dst.set(P, from_bits32<T>(bits32(x) & ~out));
  });
}

template <class Tile, class T, class Index>
__device__ __forceinline__ void scatter_elements(const row_table<T>& t, const Tile& src, const Index& index) {
  const lane_window v = lanes_of(t.w.here());
  const index_t col_stride = v.col_bytes / sizeof(T);
  const bool writer = Tile::lanes::replica(isa::lane()) == 0;
  each_element<typename Tile::map>(isa::lane_pinned(), [&](auto pc, int, int c) {
    constexpr int P = decltype(pc)::value;
    const int row = static_cast<int>(index.get(P / Tile::lanes::elems / Tile::map::across));
    if (writer && t.has_row(row) && c >= v.col_lo && c < v.col_hi) {   // a branch: stores cannot be masked
      T* at = const_cast<T*>(t.row_at(row)) + c * col_stride;
      isa::global_store<sizeof(T)>(at, __builtin_bit_cast(isa::word<sizeof(T)>, to_storage<T>(src.get(P))));
    }
  });
}

// dst (a kt::row tile) <- rows `index` of g[b, d] from column c0.
template <class Tile, class T, class Index>
__device__ __forceinline__ void gather_rows(Tile& dst, const gl<T>& g, index_t b, index_t d, const Index& index, index_t c0) {
  constexpr int access = run_access<typename Tile::lanes, T>();
  const row_table<T> t = row_table_of(g, b, d, c0, Tile::cols);
  if (t.w.row_hi <= 0 || t.w.col_hi <= t.w.col_lo) return fill_registers(dst, cast_to<T>(0));
  if constexpr (access > static_cast<int>(sizeof(T))) {
    if (t.w.template whole_rows<access>(Tile::cols)) return gather_runs<access>(dst, t, index);
  }
  gather_elements(dst, t, index);
}

}  // namespace detail

// Row i of dst is row rows[i] of g[batch, depth], column tile `col`; a bad index reads zeros.
template <class T, int R, int C, class L, class F, class U, class V>
__device__ __forceinline__ void gather(rt<T, R, C, L, F>& dst, const gl<U>& g, index_t batch, index_t depth,
                                       const V& rows, index_t col) {
  static_assert(std::is_same<T, U>::value, "kt::gather: the tile's element type must be the global's");
  static_assert(V::length == R, "kt::gather: one row index per tile row");
  const auto index = detail::row_indices(rows);
  using Tile = rt<T, R, C, L, F>;
  if constexpr (std::is_same<L, row>::value) {
    detail::gather_rows(dst, g, batch, depth, index, col * C);
  } else {
    detail::tile_regs<T, R, C, row, typename Tile::lanes> by_rows;
    detail::gather_rows(by_rows, g, batch, depth, index, col * C);
    static_cast<detail::tile_regs_of<Tile>&>(dst) = detail::relaid<typename Tile::lanes, kt::col>(by_rows);
  }
}

// Row i of src goes to row rows[i] of g[batch, depth], column tile `col`; a bad index is dropped.
template <class U, class T, int R, int C, class L, class F, class V>
__device__ __forceinline__ void scatter(const gl<U>& g, const rt<T, R, C, L, F>& src, index_t batch, index_t depth,
                                        const V& rows, index_t col) {
  static_assert(std::is_same<T, U>::value, "kt::scatter: the tile's element type must be the global's");
  static_assert(V::length == R, "kt::scatter: one row index per tile row");
  const auto index = detail::row_indices(rows);
  using Tile = rt<T, R, C, L, F>;
  if constexpr (std::is_same<L, row>::value) {
    detail::scatter_elements(detail::row_table_of(g, batch, depth, col * C, C), src, index);
  } else {
    detail::scatter_elements(detail::row_table_of(g, batch, depth, col * C, C), detail::relaid<typename Tile::lanes, kt::row>(src), index);
  }
}

}  // namespace kt

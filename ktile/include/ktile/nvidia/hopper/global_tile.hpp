// ktile / NVIDIA Hopper: kt::load / kt::store of register tiles and vectors, kt::gather /
// kt::scatter of rows by index. Bounds are checked once per tile where possible
// (global_rows.hpp picks the column path; rows outside the global are predicated per lane).
//
// A col-layout tile moves through a row-layout copy and a register transpose
// (layout_convert.hpp), so its global accesses are as wide as a row tile's.
// Vectors are small: each lane reads the few elements it holds, bounds-checked.
#pragma once

#include "ktile/nvidia/hopper/global_rows.hpp"
#include "ktile/nvidia/hopper/layout_convert.hpp"

namespace kt {

// ---- tiles --------------------------------------------------------------------------------------
template <class T, int R, int C, class L, class F, class U, class At>
__device__ __forceinline__ void load(rt<T, R, C, L, F>& dst, const gl<U>& g, At where, double pad) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::load: the tile's element type must be the global's");
  const index_t r0 = at.r;
  auto row_at = [&](int i, int h) { return r0 + 16 * i + 8 * h + detail::lane_group(); };
  if constexpr (std::is_same<L, row>::value) {
    detail::read_rows(dst, g, at.b, at.d, at.c, row_at, constant_as<T>(pad));
  } else {
    rt<T, R, C, row, F> rows;
    detail::read_rows(rows, g, at.b, at.d, at.c, row_at, constant_as<T>(pad));
    detail::transpose_layout(dst, rows);
  }
}

template <class U, class T, int R, int C, class L, class F, class At>
__device__ __forceinline__ void store(const gl<U>& g, const rt<T, R, C, L, F>& src, At where) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::store: the tile's element type must be the global's");
  const index_t r0 = at.r;
  auto row_at = [&](int i, int h) { return r0 + 16 * i + 8 * h + detail::lane_group(); };
  if constexpr (std::is_same<L, row>::value) {
    detail::write_rows(g, src, at.b, at.d, at.c, row_at);
  } else {
    rt<T, R, C, row, F> rows;
    detail::transpose_layout(rows, src);
    detail::write_rows(g, rows, at.b, at.d, at.c, row_at);
  }
}

// ---- rows by index ------------------------------------------------------------------------------
namespace detail {
// The index vector in g-form: element 16i + 8h + g is the global row of tile row 16i + 8h + g.
template <class V> __device__ __forceinline__ auto row_indices(const V& rows) {
  static_assert(is_rv<V>::value && is_int_elem<typename V::elem_type>::value,
                "kt: gather / scatter take their row indices as an integer register vector");
  using own = vec_regs<typename V::elem_type, V::length, typename V::form>;
  return in_form<g_form>(static_cast<const own&>(rows));
}
}  // namespace detail

// Row i of dst is row rows[i] of g[batch, depth], column tile `col`; a bad index reads zeros.
template <class T, int R, int C, class L, class F, class U, class V>
__device__ __forceinline__ void gather(rt<T, R, C, L, F>& dst, const gl<U>& g, index_t batch, index_t depth,
                                       const V& rows, index_t col) {
  static_assert(std::is_same<T, U>::value, "kt::gather: the tile's element type must be the global's");
  static_assert(V::length == R, "kt::gather: one row index per tile row");
  const auto index = detail::row_indices(rows);
  auto row_at = [&](int i, int h) { return static_cast<index_t>(index.data[i][h]); };
  if constexpr (std::is_same<L, row>::value) {
    detail::read_rows(dst, g, batch, depth, col * C, row_at, cast_to<T>(0));
  } else {
    rt<T, R, C, row, F> tmp;
    detail::read_rows(tmp, g, batch, depth, col * C, row_at, cast_to<T>(0));
    detail::transpose_layout(dst, tmp);
  }
}

// Row i of src goes to row rows[i] of g[batch, depth], column tile `col`; a bad index is dropped.
template <class U, class T, int R, int C, class L, class F, class V>
__device__ __forceinline__ void scatter(const gl<U>& g, const rt<T, R, C, L, F>& src, index_t batch, index_t depth,
                                        const V& rows, index_t col) {
  static_assert(std::is_same<T, U>::value, "kt::scatter: the tile's element type must be the global's");
  static_assert(V::length == R, "kt::scatter: one row index per tile row");
  const auto index = detail::row_indices(rows);
  auto row_at = [&](int i, int h) { return static_cast<index_t>(index.data[i][h]); };
  if constexpr (std::is_same<L, row>::value) {
    detail::write_rows(g, src, batch, depth, col * C, row_at);
  } else {
    rt<T, R, C, row, F> tmp;
    detail::transpose_layout(tmp, src);
    detail::write_rows(g, tmp, batch, depth, col * C, row_at);
  }
}

// ---- vectors: row r (in elements), columns [c·L, c·L + L) ----------------------------------------
namespace detail {
// Where a lane's vector element q sits, from a pinned lane id (see lane_id_pinned).
template <class Form> __device__ __forceinline__ int pinned_index(const vec_pos& q, int lane) {
  if constexpr (std::is_same<Form, g_form>::value) return 16 * q.c + 8 * q.h + (lane >> 2);
  else return 16 * q.c + 8 * q.h + 2 * (lane & 3) + q.e;
}
}  // namespace detail

template <class T, int L, class A, class U, class At>
__device__ __forceinline__ void load(rv<T, L, A>& dst, const gl<U>& g, At where, double pad) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::load: the vector's element type must be the global's");
  using V = rv<T, L, A>;
  using form = typename V::form;
  const T padv = constant_as<T>(pad);
  const bool row_ok = g.has_plane(at.b, at.d) && at.r >= 0 && at.r < g.rows();
  const T* row_ptr = row_ok ? g.at(at.b, at.d, at.r, 0) : nullptr;
  const index_t c0 = at.c;
  const bool inside = row_ok && c0 >= 0 && c0 + L <= g.cols() && g.stride[3] == 1 &&
                      reinterpret_cast<uintptr_t>(row_ptr + c0) % (2 * sizeof(T)) == 0;
  if constexpr (std::is_same<form, detail::t_form>::value) {
    if (inside) {   // a t-form vector holds pairs of adjacent columns: one access each
      const int t = detail::lane_in_group();
#pragma unroll
      for (int c = 0; c < L / 16; ++c)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          dst.data[c][h] = detail::load_global(reinterpret_cast<const detail::pair_t<T>*>(row_ptr + c0 + 16 * c + 8 * h + 2 * t));
      return;
    }
  }
  const int lane = detail::lane_id_pinned();
  detail::each_vec_pos<V>([&](const detail::vec_pos& q) {
    const index_t c = c0 + detail::pinned_index<form>(q, lane);
    detail::at_vec(dst, q) = row_ok && c >= 0 && c < g.cols() ? detail::load_global(row_ptr + c * g.stride[3]) : padv;
  });
}

template <class U, class T, int L, class A, class At>
__device__ __forceinline__ void store(const gl<U>& g, const rv<T, L, A>& src, At where) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::store: the vector's element type must be the global's");
  using form = typename rv<T, L, A>::form;
  // g-form values repeat across a quad, t-form values across the quads: one lane of each writes
  const bool writer = std::is_same<form, detail::g_form>::value ? detail::lane_in_group() == 0
                                                                 : detail::lane_group() == 0;
  if (!writer || !g.has_plane(at.b, at.d) || at.r < 0 || at.r >= g.rows()) return;
  T* row_ptr = g.at(at.b, at.d, at.r, 0);
  const index_t c0 = at.c;
  const int lane = detail::lane_id_pinned();
  detail::each_vec_pos<rv<T, L, A>>([&](const detail::vec_pos& q) {
    const index_t c = c0 + detail::pinned_index<form>(q, lane);
    if (c >= 0 && c < g.cols()) detail::store_global(row_ptr + c * g.stride[3], detail::at_vec(src, q));
  });
}

}  // namespace kt

// ktile / NVIDIA Hopper: kt::load / kt::store of flat-layout register tiles (kt::flat).
//
// Lane l's slot (i, j) holds elements n = 8·(32j + l) .. + 7 of the 16 × C band of rows 16i..,
// in row-major order (register_tile.hpp): eight elements contiguous in one row, moved as one
// unit — 16 bytes for 16-bit elements, 2 × 16 for 32-bit ones, 8 for 8-bit ones — straight into
// the slot's four pairs. No shuffles, one address per unit, bounds checked per row. One access
// of the warp covers 256 consecutive elements of the band: whole rows where C <= 256, else 512
// contiguous bytes (16-bit elements) of one row.
//
// The unit path is taken for the whole tile when its columns lie inside the global, columns are
// contiguous, and every unit is aligned (the origin's address and the row pitch, in bytes, are
// multiples of the unit's alignment); otherwise each element is moved alone, bounds-checked.
// Rows outside the global (or a missing batch / depth plane) read `pad` and are not written.
#pragma once

#include "ktile/common/global_layout.hpp"
#include "ktile/nvidia/hopper/global_access.hpp"
#include "ktile/nvidia/hopper/global_rows.hpp"
#include "ktile/nvidia/hopper/register_tile.hpp"

namespace kt {
namespace detail {

// The alignment, in bytes, a unit of eight elements needs (read_units moves 8 or 16 bytes).
template <class T> struct flat_unit { static constexpr int align = 8 * sizeof(T) >= 16 ? 16 : 8 * static_cast<int>(sizeof(T)); };

template <int C, class T>
__device__ __forceinline__ bool flat_units_fit(const gl<T>& g, const T* origin, index_t c0) {
  if (c0 < 0 || c0 + C > g.cols() || g.stride[3] != 1) return false;
  const uintptr_t bits = reinterpret_cast<uintptr_t>(origin) | static_cast<uintptr_t>(g.stride[2] * sizeof(T));
  return bits % flat_unit<T>::align == 0;
}

// `at` hidden from the optimiser: the element-by-element path's 8 · C / 16 addresses per lane,
// invariant in a loop over tiles of one row, would otherwise be hoisted out of it and held in
// registers for the whole loop (LLVM's LICM and strength reduction: a 16 × 64 fp32 load and
// store in a loop over a row's tiles took 254 registers, 80 with this).
__device__ __forceinline__ elem_coord opaque(elem_coord at) {
  asm volatile("" : "+l"(at.b), "+l"(at.d), "+l"(at.r), "+l"(at.c));
  return at;
}

}  // namespace detail

template <class T, int R, int C, class F, class U, class At>
__device__ __forceinline__ void load(rt<T, R, C, flat, F>& dst, const gl<U>& g, At where, double pad) {
  static_assert(std::is_same<T, U>::value, "kt::load: the tile's element type must be the global's");
  const elem_coord at = origin_of<R, C>(where);
  const T fill = constant_as<T>(pad);
  detail::pair_t<T> fill2;
  detail::elem(fill2, 0) = fill;
  detail::elem(fill2, 1) = fill;
  const bool plane = g.has_plane(at.b, at.d);
  const index_t pitch = g.stride[2];
  const T* origin = g.data + at.b * g.stride[0] + at.d * g.stride[1] + at.r * pitch + at.c;
  if (plane && detail::flat_units_fit<C>(g, origin, at.c)) {
#pragma unroll
    for (int j = 0; j < C / 16; ++j) {
      const int ur = detail::flat_unit_row<C>(j), uc = detail::flat_unit_col<C>(j);
      const T* unit = origin + ur * pitch + uc;
#pragma unroll
      for (int i = 0; i < R / 16; ++i) {
        const index_t row = at.r + 16 * i + ur;
        if (row >= 0 && row < g.rows()) detail::read_units(dst.tiles[i][j], unit + 16 * i * pitch);
        else for (int p = 0; p < 4; ++p) dst.tiles[i][j][p] = fill2;
      }
    }
    return;
  }
  const elem_coord cut = detail::opaque(at);  // the rare path: nothing of it hoisted
#pragma unroll
  for (int j = 0; j < C / 16; ++j) {
    const int ur = detail::flat_unit_row<C>(j), uc = detail::flat_unit_col<C>(j);
#pragma unroll
    for (int i = 0; i < R / 16; ++i)
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const index_t row = cut.r + 16 * i + ur, col = cut.c + uc + e;
        const bool inside = plane && g.has_element(row, col);
        detail::elem(dst.tiles[i][j][e >> 1], e & 1) =
            inside ? detail::load_global(g.at(cut.b, cut.d, row, col)) : fill;
      }
  }
}

template <class U, class T, int R, int C, class F, class At>
__device__ __forceinline__ void store(const gl<U>& g, const rt<T, R, C, flat, F>& src, At where) {
  static_assert(std::is_same<T, U>::value, "kt::store: the tile's element type must be the global's");
  const elem_coord at = origin_of<R, C>(where);
  if (!g.has_plane(at.b, at.d)) return;
  const index_t pitch = g.stride[2];
  T* origin = g.data + at.b * g.stride[0] + at.d * g.stride[1] + at.r * pitch + at.c;
  if (detail::flat_units_fit<C>(g, origin, at.c)) {
#pragma unroll
    for (int j = 0; j < C / 16; ++j) {
      const int ur = detail::flat_unit_row<C>(j), uc = detail::flat_unit_col<C>(j);
      T* unit = origin + ur * pitch + uc;
#pragma unroll
      for (int i = 0; i < R / 16; ++i) {
        const index_t row = at.r + 16 * i + ur;
        if (row >= 0 && row < g.rows()) detail::write_units(unit + 16 * i * pitch, src.tiles[i][j]);
      }
    }
    return;
  }
  const elem_coord cut = detail::opaque(at);  // the rare path: nothing of it hoisted
#pragma unroll
  for (int j = 0; j < C / 16; ++j) {
    const int ur = detail::flat_unit_row<C>(j), uc = detail::flat_unit_col<C>(j);
#pragma unroll
    for (int i = 0; i < R / 16; ++i)
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const index_t row = cut.r + 16 * i + ur, col = cut.c + uc + e;
        if (g.has_element(row, col)) detail::store_global(g.at(cut.b, cut.d, row, col), detail::elem(src.tiles[i][j][e >> 1], e & 1));
      }
  }
}

}  // namespace kt

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
// multiples of the unit's alignment); otherwise each element is moved alone, bounds-checked,
// out of line (read_piece_checked / write_piece_checked below).
// Rows outside the global (or a missing batch / depth plane) read `pad` and are not written; a
// tile whose rows all lie inside (one check per tile) moves its units with no check per unit.
#pragma once

#include "ktile/common/global_layout.hpp"
#include "ktile/nvidia/hopper/global_access.hpp"
#include "ktile/nvidia/hopper/global_rows.hpp"
#include "ktile/nvidia/hopper/register_tile.hpp"

namespace kt {
namespace detail {

// The alignment, in bytes, a unit of eight elements needs (read_units moves 8 or 16 bytes).
template <class T> __host__ __device__ constexpr int flat_unit_alignment() { return 8 * sizeof(T) >= 16 ? 16 : 8 * static_cast<int>(sizeof(T)); }

// The tile-local rows [lo, hi) of a tile at row r0 that lie inside the global's `rows`.
template <int R> __device__ __forceinline__ void flat_row_window(int& lo, int& hi, index_t r0, index_t rows) {
  lo = r0 < 0 ? static_cast<int>(r0 < -R ? R : -r0) : 0;
  hi = static_cast<int>(rows - r0 > R ? R : (rows - r0 < 0 ? 0 : rows - r0));
}

template <int C, class T>
__device__ __forceinline__ bool flat_units_fit(const gl<T>& g, const T* origin, index_t c0) {
#ifdef KT_MEASURE_UNIT_PATH_ONLY  // benchmarks/sass_count.py's `hot` count: full tiles only
  return true;
#endif
  if (c0 < 0 || c0 + C > g.cols() || g.stride[3] != 1) return false;
  const uintptr_t bits = reinterpret_cast<uintptr_t>(origin) | static_cast<uintptr_t>(g.stride[2] * sizeof(T));
  return bits % flat_unit_alignment<T>() == 0;
}

// The tile's rows [r0, r0 + R) all inside the global: the unit path then checks no row.
template <int R, class T> __device__ __forceinline__ bool flat_rows_inside(const gl<T>& g, index_t r0) {
#ifdef KT_MEASURE_UNIT_PATH_ONLY
  return true;
#endif
  return r0 >= 0 && r0 + R <= g.rows();
}

// Unit j of lane l starts at element 256·j + 8·l of the band. Where C divides 256 or 256
// divides C that splits into a lane part (j = 0: the lane's own first unit, computed once) and
// a lane-independent part (row 256·j / C, column 256·j % C): every other unit's address is the
// lane's first plus a uniform offset, no per-unit index math. Other widths compute each unit.
template <int C> constexpr bool flat_lane_split = 256 % C == 0 || C % 256 == 0;

template <int C>
__device__ __forceinline__ index_t flat_unit_offset(int i, int j, index_t pitch) {
  if constexpr (flat_lane_split<C>) return (16 * i + 256 * j / C) * pitch + 256 * j % C;
  else return (16 * i + flat_unit_row<C>(j) - flat_unit_row<C>(0)) * pitch + flat_unit_col<C>(j) - flat_unit_col<C>(0);
}

// The lane's rows of unit j that lie inside the global: tile rows [lo, hi) (the ragged path).
template <int C> __device__ __forceinline__ bool flat_row_inside(int i, int j, int lo, int hi) {
  const int r = 16 * i + flat_unit_row<C>(j);
  return r >= lo && r < hi;
}

// `at` hidden from the optimiser: the element-by-element path's 8 · C / 16 addresses per lane,
// invariant in a loop over tiles of one row, would otherwise be hoisted out of it and held in
// registers for the whole loop (LLVM's LICM and strength reduction: a 16 × 64 fp32 load and
// store in a loop over a row's tiles took 254 registers, 80 with this).
__device__ __forceinline__ elem_coord opaque(elem_coord at) {
  asm volatile("" : "+l"(at.b), "+l"(at.d), "+l"(at.r), "+l"(at.c));
  return at;
}

// The element-by-element path, out of line: a unit's elements col .. col + 7 of one row,
// `step` apart, moved alone where the row is inside (`row_ok`) and the column in [0, cols), in
// pieces of 16 bytes (8 16-bit elements, 4 32-bit ones) passed in registers (a uint4: no stack
// frame). Inline, its guarded accesses were laid out by ptxas in front of each access's
// full-tile path, so a full tile jumped over them at every access: rms_norm 1 x 4096's path
// ran through 16 KB of code in five places where Triton's kernel is 2 KB straight, instruction
// fetches on one launch's critical path (benchmarks/latency_probe.py times it).
template <class T> constexpr int flat_piece = 16 / sizeof(T) < 8 ? 16 / static_cast<int>(sizeof(T)) : 8;

template <class T>
__device__ __noinline__ uint4 read_piece_checked(const T* first, index_t step, index_t col, index_t cols, bool row_ok, T fill) {
  T v[16 / sizeof(T)];
#pragma unroll
  for (int e = 0; e < static_cast<int>(16 / sizeof(T)); ++e)
    v[e] = e < flat_piece<T> && row_ok && col + e >= 0 && col + e < cols ? load_global(first + e * step) : fill;
  uint4 r;
  __builtin_memcpy(&r, v, 16);
  return r;
}

template <class T>
__device__ __noinline__ void write_piece_checked(T* first, index_t step, index_t col, index_t cols, bool row_ok, uint4 r) {
  T v[16 / sizeof(T)];
  __builtin_memcpy(v, &r, 16);
#pragma unroll
  for (int e = 0; e < flat_piece<T>; ++e)
    if (row_ok && col + e >= 0 && col + e < cols) store_global(first + e * step, v[e]);
}

// Unit (i, j) of a tile read through the element-by-element path.
template <class T, int C, class Tile>
__device__ __forceinline__ void read_unit_checked(Tile& dst, int i, int j, const gl<T>& g, elem_coord cut, T fill) {
  constexpr int N = flat_piece<T>;
  const index_t row = cut.r + 16 * i + flat_unit_row<C>(j), col = cut.c + flat_unit_col<C>(j);
  const bool row_ok = row >= 0 && row < g.rows();
  const T* first = g.at(cut.b, cut.d, row, col);
  T v[8];
#pragma unroll
  for (int h = 0; h < 8 / N; ++h) {
    const uint4 r = read_piece_checked(first + h * N * g.stride[3], g.stride[3], col + h * N, g.cols(), row_ok, fill);
    __builtin_memcpy(&v[h * N], &r, N * sizeof(T));
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) elem(dst.tiles[i][j][e >> 1], e & 1) = v[e];
}

template <class T, int C, class Tile>
__device__ __forceinline__ void write_unit_checked(const gl<T>& g, const Tile& src, int i, int j, elem_coord cut) {
  constexpr int N = flat_piece<T>;
  const index_t row = cut.r + 16 * i + flat_unit_row<C>(j), col = cut.c + flat_unit_col<C>(j);
  const bool row_ok = row >= 0 && row < g.rows();
  T* first = g.at(cut.b, cut.d, row, col);
  T v[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) v[e] = elem(src.tiles[i][j][e >> 1], e & 1);
#pragma unroll
  for (int h = 0; h < 8 / N; ++h) {
    uint4 r = {};
    __builtin_memcpy(&r, &v[h * N], N * sizeof(T));
    write_piece_checked(first + h * N * g.stride[3], g.stride[3], col + h * N, g.cols(), row_ok, r);
  }
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
    const T* lane = origin + detail::flat_unit_row<C>(0) * pitch + detail::flat_unit_col<C>(0);
    if (detail::flat_rows_inside<R>(g, at.r)) {  // a full tile: no check per unit
#pragma unroll
      for (int j = 0; j < C / 16; ++j)
#pragma unroll
        for (int i = 0; i < R / 16; ++i) detail::read_units(dst.tiles[i][j], lane + detail::flat_unit_offset<C>(i, j, pitch));
      return;
    }
    int lo, hi;
    detail::flat_row_window<R>(lo, hi, at.r, g.rows());
#pragma unroll
    for (int j = 0; j < C / 16; ++j)
#pragma unroll
      for (int i = 0; i < R / 16; ++i) {
        if (detail::flat_row_inside<C>(i, j, lo, hi)) detail::read_units(dst.tiles[i][j], lane + detail::flat_unit_offset<C>(i, j, pitch));
        else for (int p = 0; p < 4; ++p) dst.tiles[i][j][p] = fill2;
      }
    return;
  }
  if (!plane) {  // a missing batch / depth plane reads pad, with no call
#pragma unroll
    for (int j = 0; j < C / 16; ++j)
#pragma unroll
      for (int i = 0; i < R / 16; ++i)
#pragma unroll
        for (int p = 0; p < 4; ++p) dst.tiles[i][j][p] = fill2;
    return;
  }
  const elem_coord cut = detail::opaque(at);  // the rare path: nothing of it hoisted
#pragma unroll
  for (int j = 0; j < C / 16; ++j)
#pragma unroll
    for (int i = 0; i < R / 16; ++i) detail::read_unit_checked<T, C>(dst, i, j, g, cut, fill);
}

template <class U, class T, int R, int C, class F, class At>
__device__ __forceinline__ void store(const gl<U>& g, const rt<T, R, C, flat, F>& src, At where) {
  static_assert(std::is_same<T, U>::value, "kt::store: the tile's element type must be the global's");
  const elem_coord at = origin_of<R, C>(where);
  if (!g.has_plane(at.b, at.d)) return;
  const index_t pitch = g.stride[2];
  T* origin = g.data + at.b * g.stride[0] + at.d * g.stride[1] + at.r * pitch + at.c;
  if (detail::flat_units_fit<C>(g, origin, at.c)) {
    T* lane = origin + detail::flat_unit_row<C>(0) * pitch + detail::flat_unit_col<C>(0);
    int lo = 0, hi = R;
    if (!detail::flat_rows_inside<R>(g, at.r)) detail::flat_row_window<R>(lo, hi, at.r, g.rows());
#pragma unroll
    for (int j = 0; j < C / 16; ++j)
#pragma unroll
      for (int i = 0; i < R / 16; ++i)
        if (detail::flat_row_inside<C>(i, j, lo, hi)) detail::write_units(lane + detail::flat_unit_offset<C>(i, j, pitch), src.tiles[i][j]);
    return;
  }
  const elem_coord cut = detail::opaque(at);  // the rare path: nothing of it hoisted
#pragma unroll
  for (int j = 0; j < C / 16; ++j)
#pragma unroll
    for (int i = 0; i < R / 16; ++i) detail::write_unit_checked<T, C>(g, src, i, j, cut);
}

}  // namespace kt

// ktile / NVIDIA Hopper: moving the rows of a row-layout register tile between registers and
// global memory — the engine under kt::load / kt::store (global_tile.hpp) and kt::gather /
// kt::scatter (global_gather.hpp). Each of the tile's rows has a global row index (a tile's
// own rows, or a gathered index); a row outside the global reads `pad` / is not written.
//
// A lane holds rows 16i + 8h + g of its tile (register_tile.hpp), so all of a row's data lives
// in one quad. The column path is chosen once per tile, from the column window and alignment:
//   wide      every lane moves 8 contiguous elements (16 bytes for bf16, 2 x 16 for fp32) of
//             its quad's row, and a 4x4 transpose across the quad (3 shuffles) turns the
//             units into the pair layout: coalesced 64-128-byte runs per row;
//   pairs     one pair (4 bytes bf16, 8 fp32) per access, when rows are not 16-byte aligned;
//   elements  one element per access, bounds-checked: the window crosses the global's column
//             edge, or the columns are strided.
#pragma once

#include "ktile/common/global_layout.hpp"
#include "ktile/nvidia/hopper/global_access.hpp"
#include "ktile/nvidia/hopper/register_tile.hpp"

namespace kt {
namespace detail {

enum class col_path { wide, pairs, elements, none };   // none: no such plane (stores)

template <class T>
__device__ __forceinline__ col_path choose_col_path(const gl<T>& g, const T* base, index_t c0, int cols) {
  if (c0 < 0 || c0 + cols > g.cols() || g.stride[3] != 1) return col_path::elements;
  const uintptr_t bits = reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(g.stride[2] * sizeof(T));
  if (bits % 16 == 0) return col_path::wide;
  return bits % (2 * sizeof(T)) == 0 ? col_path::pairs : col_path::elements;
}

// Four pairs (8 elements) from / to 8·sizeof(T) contiguous bytes, 16-byte aligned.
template <class P> __device__ __forceinline__ void read_units(P (&u)[4], const void* src) {
  if constexpr (sizeof(P) <= 4) {
    using word = std::conditional_t<sizeof(P) == 2, uint2, uint4>;
    word raw = load_global(reinterpret_cast<const word*>(src));
    __builtin_memcpy(u, &raw, sizeof(word));
  } else {
    uint4 raw0 = load_global(reinterpret_cast<const uint4*>(src));
    uint4 raw1 = load_global(reinterpret_cast<const uint4*>(src) + 1);
    __builtin_memcpy(&u[0], &raw0, 16);
    __builtin_memcpy(&u[2], &raw1, 16);
  }
}
template <class P> __device__ __forceinline__ void write_units(void* dst, const P (&u)[4]) {
  if constexpr (sizeof(P) <= 4) {
    using word = std::conditional_t<sizeof(P) == 2, uint2, uint4>;
    word raw;
    __builtin_memcpy(&raw, u, sizeof(word));
    store_global(reinterpret_cast<word*>(dst), raw);
  } else {
    uint4 raw0, raw1;
    __builtin_memcpy(&raw0, &u[0], 16);
    __builtin_memcpy(&raw1, &u[2], 16);
    store_global(reinterpret_cast<uint4*>(dst), raw0);
    store_global(reinterpret_cast<uint4*>(dst) + 1, raw1);
  }
}

// Lane row (i, h) of a row-layout tile from `src` (the row at the window's first column;
// nullptr: the row is outside the global and reads `pad`).
template <col_path PATH, class Tile, class T>
__device__ __forceinline__ void read_lane_row(Tile& dst, int i, int h, const T* src, pair_t<T> pad) {
  const int t = lane_in_group();
#pragma unroll
  for (int s = 0; PATH == col_path::wide && s < Tile::cols / 32; ++s) {
    pair_t<T> u[4] = {pad, pad, pad, pad};
    if (src) read_units(u, src + 32 * s + 8 * t);   // (pad stays where the row is outside)
    quad_transpose(u);              // u[k]: columns 8k + 2t.. of the 32-column strip
    dst.tiles[i][2 * s][h] = u[0];
    dst.tiles[i][2 * s][h + 2] = u[1];
    dst.tiles[i][2 * s + 1][h] = u[2];
    dst.tiles[i][2 * s + 1][h + 2] = u[3];
  }
  constexpr int first_pair_subtile = PATH == col_path::wide ? 2 * (Tile::cols / 32) : 0;
#pragma unroll
  for (int j = first_pair_subtile; j < Tile::width; ++j) {
    dst.tiles[i][j][h] = src ? load_global(reinterpret_cast<const pair_t<T>*>(src + 16 * j + 2 * t)) : pad;
    dst.tiles[i][j][h + 2] = src ? load_global(reinterpret_cast<const pair_t<T>*>(src + 16 * j + 8 + 2 * t)) : pad;
  }
}

template <col_path PATH, class Tile, class T>
__device__ __forceinline__ void write_lane_row(T* dst, const Tile& src, int i, int h) {
  const int t = lane_in_group();
#pragma unroll
  for (int s = 0; PATH == col_path::wide && s < Tile::cols / 32; ++s) {
    pair_t<T> u[4] = {src.tiles[i][2 * s][h], src.tiles[i][2 * s][h + 2],
                      src.tiles[i][2 * s + 1][h], src.tiles[i][2 * s + 1][h + 2]};
    quad_transpose(u);              // the transpose is its own inverse
    if (dst) write_units(dst + 32 * s + 8 * t, u);
  }
  constexpr int first_pair_subtile = PATH == col_path::wide ? 2 * (Tile::cols / 32) : 0;
#pragma unroll
  for (int j = first_pair_subtile; j < Tile::width; ++j) {
    if (!dst) continue;
    store_global(reinterpret_cast<pair_t<T>*>(dst + 16 * j + 2 * t), src.tiles[i][j][h]);
    store_global(reinterpret_cast<pair_t<T>*>(dst + 16 * j + 8 + 2 * t), src.tiles[i][j][h + 2]);
  }
}

// One lane row (i, h) element by element, bounds-checked (the window crosses a column edge, or
// the columns are strided). `row_ptr`: the row's element 0, nullptr when the row is outside.
template <class Tile, class T>
__device__ __forceinline__ void read_lane_row_elements(Tile& dst, int i, int h, const gl<T>& g, const T* row_ptr,
                                                       index_t c0, T pad) {
  const int t = lane_id_pinned() & 3;
#pragma unroll
  for (int j = 0; j < Tile::width; ++j)
#pragma unroll
    for (int p = h; p < 4; p += 2)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const index_t c = c0 + 16 * j + 8 * (p >> 1) + 2 * t + e;
        const bool ok = row_ptr != nullptr && c >= 0 && c < g.cols();
        elem(dst.tiles[i][j][p], e) = ok ? load_global(row_ptr + c * g.stride[3]) : pad;
      }
}

template <class Tile, class T>
__device__ __forceinline__ void write_lane_row_elements(const gl<T>& g, const Tile& src, int i, int h, T* row_ptr,
                                                        index_t c0) {
  if (row_ptr == nullptr) return;
  const int t = lane_id_pinned() & 3;
#pragma unroll
  for (int j = 0; j < Tile::width; ++j)
#pragma unroll
    for (int p = h; p < 4; p += 2)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const index_t c = c0 + 16 * j + 8 * (p >> 1) + 2 * t + e;
        if (c >= 0 && c < g.cols()) store_global(row_ptr + c * g.stride[3], elem(src.tiles[i][j][p], e));
      }
}

// row_at(i, h): the global row of this lane's tile row 16i + 8h + g.
// dst (row layout) <- g[b, d, row_at(i, h), c0 .. c0 + C), with `pad` outside the global.
template <col_path PATH, class Tile, class T, class RowAt>
__device__ __forceinline__ void read_rows_by(Tile& dst, const gl<T>& g, index_t b, index_t d, index_t c0,
                                             RowAt&& row_at, T pad) {
#pragma unroll
  for (int i = 0; i < Tile::height; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const index_t r = row_at(i, h);
      const bool inside = r >= 0 && r < g.rows();
      if constexpr (PATH == col_path::elements) {
        read_lane_row_elements(dst, i, h, g, inside ? g.at(b, d, r, 0) : nullptr, c0, pad);
      } else {
        read_lane_row<PATH>(dst, i, h, inside ? g.at(b, d, r, c0) : nullptr, pair_t<T>{pad, pad});
      }
    }
}

template <col_path PATH, class Tile, class T, class RowAt>
__device__ __forceinline__ void write_rows_by(const gl<T>& g, const Tile& src, index_t b, index_t d, index_t c0,
                                              RowAt&& row_at) {
#pragma unroll
  for (int i = 0; i < Tile::height; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const index_t r = row_at(i, h);
      const bool inside = r >= 0 && r < g.rows();
      if constexpr (PATH == col_path::elements) {
        write_lane_row_elements(g, src, i, h, inside ? g.at(b, d, r, 0) : nullptr, c0);
      } else {
        write_lane_row<PATH>(inside ? g.at(b, d, r, c0) : nullptr, src, i, h);
      }
    }
}

template <class Tile, class T, class RowAt>
__device__ __forceinline__ void read_rows(Tile& dst, const gl<T>& g, index_t b, index_t d, index_t c0,
                                          RowAt&& row_at, T pad) {
  static_assert(std::is_same<typename Tile::layout, row>::value, "kt: read_rows fills a row-layout tile");
  static_assert(std::is_same<typename Tile::elem_type, T>::value, "kt: a tile loads from a global of its own element type");
  if (!g.has_plane(b, d)) {
    each_tile_pos<Tile>([&](const tile_pos& q) { at(dst, q) = pad; });
    return;
  }
  switch (choose_col_path(g, g.at(b, d, 0, c0), c0, Tile::cols)) {
    case col_path::wide: read_rows_by<col_path::wide>(dst, g, b, d, c0, row_at, pad); break;
    case col_path::pairs: read_rows_by<col_path::pairs>(dst, g, b, d, c0, row_at, pad); break;
    default: read_rows_by<col_path::elements>(dst, g, b, d, c0, row_at, pad); break;
  }
}

// g[b, d, row_at(i, h), c0 .. c0 + C) <- src (row layout); elements outside the global are dropped.
template <class Tile, class T, class RowAt>
__device__ __forceinline__ void write_rows(const gl<T>& g, const Tile& src, index_t b, index_t d, index_t c0,
                                           RowAt&& row_at) {
  static_assert(std::is_same<typename Tile::layout, row>::value, "kt: write_rows stores a row-layout tile");
  static_assert(std::is_same<typename Tile::elem_type, T>::value, "kt: a tile stores into a global of its own element type");
  // the plane's check is a fourth path, not an early return: with the return ptxas spilled a
  // 16 x 256 tile's store inside a loop (matmul's wgmma_ws_persistent_nt at 256 columns)
  const col_path path = g.has_plane(b, d) ? choose_col_path(g, g.at(b, d, 0, c0), c0, Tile::cols)
                                          : col_path::none;
  switch (path) {
    case col_path::wide: write_rows_by<col_path::wide>(g, src, b, d, c0, row_at); break;
    case col_path::pairs: write_rows_by<col_path::pairs>(g, src, b, d, c0, row_at); break;
    case col_path::elements: write_rows_by<col_path::elements>(g, src, b, d, c0, row_at); break;
    case col_path::none: break;
  }
}

}  // namespace detail
}  // namespace kt

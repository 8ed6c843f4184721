// ktile / NVIDIA Hopper: kt::lds_load (shared -> registers) and kt::lds_store (registers ->
// shared) for one warp's tile or vector.
//
// kt::lds_load(dst, src, row, col) reads the dst-shaped part of `src` at tile coordinates
// (row, col) (the DSL's sub-tile): rows [row·R, row·R+R), columns [col·C, col·C+C) of `src` for
// an R×C dst; a vector of length L reads elements [col·L, col·L+L) (row is 0). The part is
// addressed as rows and chunks of the whole shared tile, through its swizzle, so it reads as a
// whole tile does. The coordinates are not checked: one outside `src` reads other shared memory.
//
// 16-bit tiles move a 16×16 subtile per instruction: `ldmatrix.x4` / `stmatrix.x4` for the row
// layout (matrix m = pair m), their `.trans` forms for the col layout, each lane giving the
// swizzled address of one 16-byte row of one 8×8 block (shared_tile.hpp). Other element types
// move pair by pair (row layout: one access per pair; col layout: one per element). Loads are
// synchronous on sm_90a (scoreboarded), so the wait that follows in the generated code costs
// nothing; its bind still pins the registers (trap 1).
#pragma once

#include "ktile/nvidia/hopper/register_tile.hpp"
#include "ktile/nvidia/hopper/shared_tile.hpp"

namespace kt {
namespace detail {

// The byte offset lane `lane` names for ldmatrix / stmatrix .x4 over subtile (i, j) of the
// register tile whose element (0, 0) is element (r0, c0) of the shared tile: it gives row
// (lane % 8) of matrix m = lane / 8, which is pair m of the subtile.
template <class S, class Layout>
__device__ __forceinline__ uint32_t matrix_row_offset(int r0, int c0, int i, int j) {
  const int lane = lane_id(), m = lane >> 3, rr = lane & 7;
  // row layout: pair m covers rows 8(m & 1).., columns 8(m >> 1)..; col layout the other way
  const int row_half = std::is_same<Layout, row>::value ? (m & 1) : (m >> 1);
  const int col_half = std::is_same<Layout, row>::value ? (m >> 1) : (m & 1);
  return S::chunk_offset(r0 + 16 * i + 8 * row_half + rr, c0 / S::chunk_elems + 2 * j + col_half);
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address) : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(address) : "memory");
}
__device__ __forceinline__ void stmatrix_x4(uint32_t address, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
               :: "r"(address), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t address, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
               :: "r"(address), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
}

template <class Tile, class S>
__device__ __forceinline__ void lds_load_matrices(Tile& dst, const S& src, int r0, int c0) {
  using L = typename Tile::layout;
#pragma unroll
  for (int i = 0; i < Tile::height; ++i)
#pragma unroll
    for (int j = 0; j < Tile::width; ++j) {
      uint32_t r[4];
      const uint32_t address = src.address(matrix_row_offset<S, L>(r0, c0, i, j));
      if constexpr (std::is_same<L, row>::value) ldmatrix_x4(r, address);
      else ldmatrix_x4_trans(r, address);
#pragma unroll
      for (int p = 0; p < 4; ++p) dst.tiles[i][j][p] = from_bits<typename Tile::pair_type>(r[p]);
    }
}

// (r0, c0): the element of dst where the tile's element (0, 0) goes (a sub-tile store).
template <class S, class Tile>
__device__ __forceinline__ void lds_store_matrices(S& dst, const Tile& src, int r0 = 0, int c0 = 0) {
  using L = typename Tile::layout;
#pragma unroll
  for (int i = 0; i < Tile::height; ++i)
#pragma unroll
    for (int j = 0; j < Tile::width; ++j) {
      uint32_t r[4];
#pragma unroll
      for (int p = 0; p < 4; ++p) r[p] = bits_of<uint32_t>(src.tiles[i][j][p]);
      const uint32_t address = dst.address(matrix_row_offset<S, L>(r0, c0, i, j));
      if constexpr (std::is_same<L, row>::value) stmatrix_x4(address, r);
      else stmatrix_x4_trans(address, r);
    }
}

// A row-layout pair is two adjacent elements of one row: one access (chunks hold an even
// number of elements, so a pair never straddles two). A col-layout pair spans two rows.
template <class Tile, class S>
__device__ __forceinline__ void lds_load_pairs(Tile& dst, const S& src, int r0, int c0) {
  using L = typename Tile::layout;
  using P = typename Tile::pair_type;
  each_tile_pos<Tile>([&](const tile_pos& q) {
    if (q.e != 0) return;
    const int r = r0 + row_of<L, 16>(q), c = c0 + col_of<L, 16>(q);
    if constexpr (std::is_same<L, row>::value) {
      dst.tiles[q.i][q.j][q.p] = *reinterpret_cast<const P*>(&src.at(r, c));
    } else {
      dst.tiles[q.i][q.j][q.p].x = src.at(r, c);
      dst.tiles[q.i][q.j][q.p].y = src.at(r + 1, c);
    }
  });
}

template <class S, class Tile>
__device__ __forceinline__ void lds_store_pairs(S& dst, const Tile& src, int r0 = 0, int c0 = 0) {
  using L = typename Tile::layout;
  using P = typename Tile::pair_type;
  each_tile_pos<Tile>([&](const tile_pos& q) {
    if (q.e != 0) return;
    const int r = r0 + row_of<L, 16>(q), c = c0 + col_of<L, 16>(q);
    if constexpr (std::is_same<L, row>::value) {
      *reinterpret_cast<P*>(&dst.at(r, c)) = src.tiles[q.i][q.j][q.p];
    } else {
      dst.at(r, c) = src.tiles[q.i][q.j][q.p].x;
      dst.at(r + 1, c) = src.tiles[q.i][q.j][q.p].y;
    }
  });
}

}  // namespace detail

template <class T, int R, int C, class L, class F, int SR, int SC>
__device__ __forceinline__ void lds_load(rt<T, R, C, L, F>& dst, const st<T, SR, SC>& src,
                                         index_t row = 0, index_t col = 0) {
  static_assert(SR % R == 0 && SC % C == 0,
                "kt::lds_load reads a sub-tile: the register tile's rows and columns must divide the shared tile's");
  const int r0 = static_cast<int>(row) * R, c0 = static_cast<int>(col) * C;
  if constexpr (sizeof(T) == 2) detail::lds_load_matrices(dst, src, r0, c0);
  else detail::lds_load_pairs(dst, src, r0, c0);
}

template <class T, int R, int C, class L, class F>
__device__ __forceinline__ void lds_store(st<T, R, C>& dst, const rt<T, R, C, L, F>& src) {
  if constexpr (sizeof(T) == 2) detail::lds_store_matrices(dst, src);
  else detail::lds_store_pairs(dst, src);
}

// A sub-tile store (the DSL's `s.store(t, row=, col=)`): src fills rows [row·R, row·R+R) and
// columns [col·C, col·C+C) of dst, addressed through dst's swizzle like a sub-tile load.
template <class T, int R, int C, class L, class F, int SR, int SC>
__device__ __forceinline__ void lds_store(st<T, SR, SC>& dst, const rt<T, R, C, L, F>& src,
                                          index_t row, index_t col) {
  static_assert(SR % R == 0 && SC % C == 0,
                "kt::lds_store writes a sub-tile: the register tile's rows and columns must divide the shared tile's");
  const int r0 = static_cast<int>(row) * R, c0 = static_cast<int>(col) * C;
  if constexpr (sizeof(T) == 2) detail::lds_store_matrices(dst, src, r0, c0);
  else detail::lds_store_pairs(dst, src, r0, c0);
}

// Vectors: each lane reads the elements it holds; one lane per distinct element writes.
template <class T, int L, class A, int SL>
__device__ __forceinline__ void lds_load(rv<T, L, A>& dst, const sv<T, SL>& src,
                                         index_t /* row: 0 */ = 0, index_t col = 0) {
  static_assert(SL % L == 0,
                "kt::lds_load reads a piece of a shared vector: the register vector's length must divide the shared vector's");
  using V = rv<T, L, A>;
  const int e0 = static_cast<int>(col) * L;
  detail::each_vec_pos<V>([&](const detail::vec_pos& q) {
    detail::at_vec(dst, q) = src.data[e0 + detail::index_of<typename V::form>(q)];
  });
}

template <class T, int L, class A>
__device__ __forceinline__ void lds_store(sv<T, L>& dst, const rv<T, L, A>& src) {
  using V = rv<T, L, A>;
  constexpr bool g = std::is_same<typename V::form, detail::g_form>::value;
  if (!(g ? detail::lane_in_group() == 0 : detail::lane_group() == 0)) return;
  detail::each_vec_pos<V>([&](const detail::vec_pos& q) {
    dst.data[detail::index_of<typename V::form>(q)] = detail::at_vec(src, q);
  });
}

// A piece of a shared vector: src fills elements [col·L, col·L+L) of dst (row is 0).
template <class T, int L, class A, int SL>
__device__ __forceinline__ void lds_store(sv<T, SL>& dst, const rv<T, L, A>& src,
                                          index_t /* row: 0 */, index_t col) {
  static_assert(SL % L == 0,
                "kt::lds_store writes a piece of a shared vector: the register vector's length must divide the shared vector's");
  using V = rv<T, L, A>;
  constexpr bool g = std::is_same<typename V::form, detail::g_form>::value;
  if (!(g ? detail::lane_in_group() == 0 : detail::lane_group() == 0)) return;
  const int e0 = static_cast<int>(col) * L;
  detail::each_vec_pos<V>([&](const detail::vec_pos& q) {
    dst.data[e0 + detail::index_of<typename V::form>(q)] = detail::at_vec(src, q);
  });
}

}  // namespace kt

// ktile / NVIDIA Hopper: moving a tile between the row and col layouts, and a vector between
// its g-form and t-form (register_tile.hpp). Used where an op mixes layouts or a vector meets
// a tile of the other layout, and where a col-layout tile is loaded from global memory.
//
// row <-> col: each 8×8 block of a subtile is transposed across the warp with
// `movmatrix.m8n8.trans.b16` (one instruction per 32-bit pair register); blocks (0, 1) and
// (1, 0) trade places. 32-bit elements move as two 16-bit halves, 8-bit ones widened to 16.
#pragma once

#include "ktile/nvidia/hopper/register_tile.hpp"

namespace kt {
namespace detail {

__device__ __forceinline__ uint32_t movmatrix_trans(uint32_t x) {
  uint32_t y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

__device__ __forceinline__ uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t selector) {
  return __byte_perm(a, b, selector);
}

// One pair register of an 8×8 block, transposed: a lane holding row-layout (g, 2t..2t+1)
// ends up holding (2t..2t+1, g) of the same block.
template <class P> __device__ __forceinline__ P transpose_pair(const P& in) {
  if constexpr (sizeof(P) == 4) {
    return from_bits<P>(movmatrix_trans(bits_of<uint32_t>(in)));
  } else if constexpr (sizeof(P) == 8) {
    uint64_t b = bits_of<uint64_t>(in);
    uint32_t x = static_cast<uint32_t>(b), y = static_cast<uint32_t>(b >> 32);
    uint32_t lo = movmatrix_trans(byte_perm(x, y, 0x5410));   // low halves of both elements
    uint32_t hi = movmatrix_trans(byte_perm(x, y, 0x7632));   // high halves
    uint64_t out = (static_cast<uint64_t>(byte_perm(lo, hi, 0x7632)) << 32) | byte_perm(lo, hi, 0x5410);
    return from_bits<P>(out);
  } else {
    static_assert(sizeof(P) == 2, "kt: pairs are 2, 4 or 8 bytes");
    uint32_t b = bits_of<uint32_t>(in);
    uint32_t widened = (b & 0xffu) | ((b & 0xff00u) << 8);      // one byte per 16-bit half
    uint32_t t = movmatrix_trans(widened);
    return from_bits<P>(static_cast<uint16_t>((t & 0xffu) | ((t >> 8) & 0xff00u)));
  }
}

// The same tile in the other layout (row <-> col), element for element.
template <class Dst, class Src> __device__ __forceinline__ void transpose_layout(Dst& dst, const Src& src) {
  static_assert(!std::is_same<typename Dst::layout, typename Src::layout>::value,
                "kt: transpose_layout moves a tile to the other layout");
  static_assert(Dst::rows == Src::rows && Dst::cols == Src::cols, "kt: layout change of tiles of different shapes");
  static_assert(std::is_same<typename Dst::elem_type, typename Src::elem_type>::value,
                "kt: a layout change keeps the element type");
#pragma unroll
  for (int i = 0; i < Src::height; ++i)
#pragma unroll
    for (int j = 0; j < Src::width; ++j) {
      dst.tiles[i][j][0] = transpose_pair(src.tiles[i][j][0]);
      dst.tiles[i][j][1] = transpose_pair(src.tiles[i][j][2]);
      dst.tiles[i][j][2] = transpose_pair(src.tiles[i][j][1]);
      dst.tiles[i][j][3] = transpose_pair(src.tiles[i][j][3]);
    }
}

// g-form -> t-form: element 8h + 2t + e of a chunk sits in g-form at lane group 2t + e.
template <class T, int L>
__device__ __forceinline__ vec_regs<T, L, t_form> to_t_form(const vec_regs<T, L, g_form>& v) {
  vec_regs<T, L, t_form> out;
  const int t = lane_in_group();
#pragma unroll
  for (int c = 0; c < L / 16; ++c)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      out.data[c][h].x = shfl_idx(v.data[c][h], 4 * (2 * t));
      out.data[c][h].y = shfl_idx(v.data[c][h], 4 * (2 * t + 1));
    }
  return out;
}

// t-form -> g-form: element 8h + g of a chunk sits in t-form at lane t = g / 2, element g % 2.
template <class T, int L>
__device__ __forceinline__ vec_regs<T, L, g_form> to_g_form(const vec_regs<T, L, t_form>& v) {
  vec_regs<T, L, g_form> out;
  const int g = lane_group();
#pragma unroll
  for (int c = 0; c < L / 16; ++c)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      pair_t<T> p = shfl_idx(v.data[c][h], g >> 1);
      out.data[c][h] = (g & 1) ? p.y : p.x;
    }
  return out;
}

// A vector's registers in form F (a copy; the caller keeps the original when it already is).
template <class F, class T, int L, class G>
__device__ __forceinline__ vec_regs<T, L, F> in_form(const vec_regs<T, L, G>& v) {
  if constexpr (std::is_same<F, G>::value) return v;
  else if constexpr (std::is_same<F, t_form>::value) return to_t_form(v);
  else return to_g_form(v);
}

}  // namespace detail
}  // namespace kt

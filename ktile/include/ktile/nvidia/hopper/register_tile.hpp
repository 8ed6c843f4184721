// ktile / NVIDIA Hopper: register tiles (kt::rt) and register vectors (kt::rv).
//
// A tile is a grid of 16×16 blocks ("subtiles"); in each, every lane holds 8 elements as four
// pairs of adjacent elements. With g = lane / 4 and t = lane % 4 (warp.hpp), pair p of a
// subtile holds
//   row layout  rows 8·(p & 1) + g,            columns 8·(p >> 1) + 2t + {0, 1}
//   col layout  rows 8·(p >> 1) + 2t + {0, 1}, columns 8·(p & 1) + g
//   flat layout element n = 8·(32j + l) + 2p + {0, 1} (l = lane) of the 16 × C band of rows
//               16i.. in row-major order: row 16i + n / C, column n % C
// so a col-layout tile is stored as the row-layout tile of its transpose, and a flat tile's lane
// holds eight row-contiguous elements per "subtile" slot (i, j), the warp's 32 lanes 256
// consecutive elements of the band: one 16-byte access per lane for 16-bit elements, 512
// contiguous bytes per warp where rows are that long, no shuffles (flat_tile.hpp). A flat tile is for memory-bound code: elementwise math and whole-tile
// reductions; no MMA fragment, vector broadcast or shared-memory form (the verifier refuses them). The row layout is
// the mma.m16n8k16 A fragment (pairs 0..3 = a0a1..a6a7) and, pair by pair, the accumulator of
// two n8 MMAs; read as B, a col-layout K×N tile (or a row-layout N×K one) gives b0b1 = pair 0 /
// pair 1 and b2b3 = pair 2 / pair 3 for its two n8 halves. Every fragment tag therefore has the
// same physical layout for a given layout tag: elementwise ops mix frag_acc and frag_none tiles
// for free, and a cast of an fp32 accumulator to bf16 is directly an A operand.
//
// A vector holds, per 16 elements ("chunk"), what one lane needs to broadcast against a tile:
//   g-form  2 elements, 8h + g            (h = 0, 1): the rows of a row-layout tile
//   t-form  2 pairs,    8h + 2t + {0, 1}:              the columns of a row-layout tile
// A row_axis vector is stored in g-form, a col_axis vector in t-form; against a col-layout tile
// the forms swap and the vector is converted (layout_convert.hpp).
#pragma once

#include "ktile/common/tags.hpp"
#include "ktile/nvidia/hopper/scalars.hpp"
#include "ktile/nvidia/hopper/warp.hpp"

namespace kt {

template <class T, int R, int C, class Layout, class Frag>
struct rt {
  static_assert(R > 0 && C > 0 && R % 16 == 0 && C % 16 == 0,
                "register tiles on sm_90a are built of 16x16 blocks: rows and columns must be multiples of 16");
  static_assert(is_layout<Layout>::value, "the layout of a register tile is kt::row, kt::col or kt::flat");
  static_assert(is_fragment<Frag>::value, "the fragment of a register tile is kt::frag_none, frag_a, frag_b or frag_acc");
  using elem_type = T;
  using layout = Layout;
  using frag = Frag;
  using pair_type = detail::pair_t<T>;
  static constexpr int rows = R, cols = C;
  static constexpr int height = R / 16, width = C / 16;   // subtiles down and across
  pair_type tiles[height][width][4];
};

namespace detail {
struct g_form {};
struct t_form {};
template <class Axis> struct form_of;
template <> struct form_of<row_axis> { using type = g_form; };
template <> struct form_of<col_axis> { using type = t_form; };

// The registers of a vector of L elements in one form.
template <class T, int L, class Form> struct vec_regs;
template <class T, int L> struct vec_regs<T, L, g_form> {
  using elem_type = T;
  using form = g_form;
  static constexpr int chunks = L / 16, length = L;
  T data[chunks][2];                       // element 16c + 8h + g
};
template <class T, int L> struct vec_regs<T, L, t_form> {
  using elem_type = T;
  using form = t_form;
  static constexpr int chunks = L / 16, length = L;
  pair_t<T> data[chunks][2];               // elements 16c + 8h + 2t + {0, 1}
};
}  // namespace detail

template <class T, int L, class Axis>
struct rv : detail::vec_regs<T, L, typename detail::form_of<Axis>::type> {
  static_assert(L > 0 && L % 16 == 0,
                "register vectors on sm_90a hold whole 16-element chunks: the length must be a multiple of 16");
  static_assert(is_axis<Axis>::value, "the axis of a register vector is kt::row_axis or kt::col_axis");
  using elem_type = T;
  using axis = Axis;
  using form = typename detail::form_of<Axis>::type;
  static constexpr int length = L;
};

namespace detail {

// ---- what a value is --------------------------------------------------------------------------
template <class X> struct is_rt : std::false_type {};
template <class T, int R, int C, class L, class F> struct is_rt<rt<T, R, C, L, F>> : std::true_type {};
template <class X> struct is_rv : std::false_type {};
template <class T, int L, class A> struct is_rv<rv<T, L, A>> : std::true_type {};
template <class X> struct is_vec_regs : std::false_type {};
template <class T, int L, class F> struct is_vec_regs<vec_regs<T, L, F>> : std::true_type {};

// The element type of a tile, vector or scalar.
template <class X, class = void> struct elem_of { using type = X; };
template <class X> struct elem_of<X, std::void_t<typename X::elem_type>> { using type = typename X::elem_type; };
template <class X> using elem_of_t = typename elem_of<X>::type;

// The same tile with another element type / layout (fragment kept).
template <class X, class U> struct retyped;
template <class T, int R, int C, class L, class F, class U> struct retyped<rt<T, R, C, L, F>, U> { using type = rt<U, R, C, L, F>; };
template <class X, class L2> struct relaid;
template <class T, int R, int C, class L, class F, class L2> struct relaid<rt<T, R, C, L, F>, L2> { using type = rt<T, R, C, L2, F>; };

// ---- element positions --------------------------------------------------------------------------
// One element of a tile: subtile (i, j), pair p, element e of the pair.
struct tile_pos { int i, j, p, e; };
// One element of a vector's registers: chunk c, half h, element e (always 0 in g-form).
struct vec_pos { int c, h, e; };

// A flat tile's unit (i, j) of lane l: element n = 8·(32j + l) of the 16 × C band of rows 16i..
template <int C> __device__ __forceinline__ int flat_unit_row(int j) { return (8 * (32 * j + lane_id())) / C; }
template <int C> __device__ __forceinline__ int flat_unit_col(int j) { return (8 * (32 * j + lane_id())) % C; }

// The row and column within its tile (of C columns) of a tile position.
template <class Layout, int C> __device__ __forceinline__ int row_of(const tile_pos& q) {
  if constexpr (std::is_same<Layout, row>::value) return 16 * q.i + 8 * (q.p & 1) + lane_group();
  else if constexpr (std::is_same<Layout, flat>::value) return 16 * q.i + flat_unit_row<C>(q.j);
  else return 16 * q.i + 8 * (q.p >> 1) + 2 * lane_in_group() + q.e;
}
template <class Layout, int C> __device__ __forceinline__ int col_of(const tile_pos& q) {
  if constexpr (std::is_same<Layout, row>::value) return 16 * q.j + 8 * (q.p >> 1) + 2 * lane_in_group() + q.e;
  else if constexpr (std::is_same<Layout, flat>::value) return flat_unit_col<C>(q.j) + 2 * q.p + q.e;
  else return 16 * q.j + 8 * (q.p & 1) + lane_group();
}
template <class Form> __device__ __forceinline__ int index_of(const vec_pos& q) {
  if constexpr (std::is_same<Form, g_form>::value) return 16 * q.c + 8 * q.h + lane_group();
  else return 16 * q.c + 8 * q.h + 2 * lane_in_group() + q.e;
}

template <class Tile> __device__ __forceinline__ auto& at(Tile& x, const tile_pos& q) {
  return elem(x.tiles[q.i][q.j][q.p], q.e);
}
template <class Tile> __device__ __forceinline__ const auto& at(const Tile& x, const tile_pos& q) {
  return elem(x.tiles[q.i][q.j][q.p], q.e);
}
template <class V> __device__ __forceinline__ auto& at_vec(V& v, const vec_pos& q) {
  if constexpr (std::is_same<typename V::form, g_form>::value) return v.data[q.c][q.h];
  else return elem(v.data[q.c][q.h], q.e);
}
template <class V> __device__ __forceinline__ const auto& at_vec(const V& v, const vec_pos& q) {
  if constexpr (std::is_same<typename V::form, g_form>::value) return v.data[q.c][q.h];
  else return elem(v.data[q.c][q.h], q.e);
}

// Every element position of a tile / of a vector's registers, in register order.
template <class Tile, class F> __device__ __forceinline__ void each_tile_pos(F&& f) {
#pragma unroll
  for (int i = 0; i < Tile::height; ++i)
#pragma unroll
    for (int j = 0; j < Tile::width; ++j)
#pragma unroll
      for (int p = 0; p < 4; ++p) { f(tile_pos{i, j, p, 0}); f(tile_pos{i, j, p, 1}); }
}
template <class V, class F> __device__ __forceinline__ void each_vec_pos(F&& f) {
  constexpr int per_half = std::is_same<typename V::form, g_form>::value ? 1 : 2;
#pragma unroll
  for (int c = 0; c < V::chunks; ++c)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < per_half; ++e) f(vec_pos{c, h, e});
}

}  // namespace detail
}  // namespace kt

// ktile / AMD: register tiles (kt::rt) and register vectors (kt::rv), and the register sets
// they are built of.
//
// A lane's registers of a tile are base tiles of `elems` elements, each a `reg_block`: one
// ext_vector_type of the element's storage type, so 16-bit elements are packed two to a VGPR and
// a base tile of an MMA operand or accumulator is exactly the vector the instruction takes.
// Registers are numbered p = block · elems + e; every index is a compile-time constant
// (compile_time.hpp). Which element a register holds is the tile's map (lane_layout.hpp):
// kt::rt<T, R, C, Layout, Frag> is a tile_regs in the family's lane layout for (T, Frag).
// kt::rv<T, L, row_axis> is in lane form (element 16c + lane % 16), kt::rv<T, L, col_axis> in
// the slot form of the family's frag_none layout (the columns of a frag_none kt::row tile).
#pragma once

#include <type_traits>

#include "ktile/common/tags.hpp"
#include "ktile/amd/common/compile_time.hpp"
#include "ktile/amd/common/lane_layout.hpp"
#include "ktile/amd/common/scalars.hpp"

namespace kt {
namespace detail {

// N elements of type T held by one lane.
template <class T, int N>
struct reg_block {
  static_assert(is_tile_elem<T>::value, "kt: AMD register tiles hold bf16, half, fp8e4m3, float, int32_t, int8_t or bool");
  using elem_type = T;
  using storage = isa::vec<storage_t<T>, N>;
  static constexpr int size = N;
  storage v;
  __device__ __forceinline__ T get(int e) const { return from_storage<T>(v[e]); }
  __device__ __forceinline__ void set(int e, T x) { v[e] = to_storage<T>(x); }
};

// An R×C tile of layout tag Layout held in lane layout Lanes.
template <class T, int R, int C, class Layout, class Lanes>
struct tile_regs {
  static_assert(is_layout<Layout>::value, "the layout of a register tile is kt::row or kt::col");
  using elem_type = T;
  using layout = Layout;
  using lanes = Lanes;
  using map = tile_map<Lanes, std::is_same<Layout, row>::value, R, C>;
  using block_type = reg_block<T, Lanes::elems>;
  static constexpr int rows = R, cols = C, regs = map::regs;
  block_type data[map::blocks];

  __device__ __forceinline__ T get(int p) const { return data[p / Lanes::elems].get(p % Lanes::elems); }
  __device__ __forceinline__ void set(int p, T x) { data[p / Lanes::elems].set(p % Lanes::elems, x); }
  // Base tile (i, j): physical rows 16i.., physical columns width·j..
  __device__ __forceinline__ block_type& block(int i, int j) { return data[i * map::across + j]; }
  __device__ __forceinline__ const block_type& block(int i, int j) const { return data[i * map::across + j]; }
};

// A vector's registers in one form (lane_form or slot_form).
template <class T, class Form>
struct vec_regs {
  using elem_type = T;
  using map = Form;
  static constexpr int length = Form::length, regs = Form::regs;
  reg_block<T, Form::regs> data;
  __device__ __forceinline__ T get(int p) const { return data.get(p); }
  __device__ __forceinline__ void set(int p, T x) { data.set(p, x); }
};

template <class Axis, class T, int L> struct axis_form;
template <class T, int L> struct axis_form<row_axis, T, L> { using type = lane_form<L>; };
template <class T, int L> struct axis_form<col_axis, T, L> { using type = slot_form<none_layout, L>; };

}  // namespace detail

template <class T, int R, int C, class Layout, class Frag>
struct rt : detail::tile_regs<T, R, C, Layout, typename detail::fragment_layout<T, Frag>::type> {
  static_assert(R > 0 && C > 0 && R % 16 == 0 && C % 16 == 0,
                "register tiles on AMD are built of 16x16 blocks: rows and columns must be multiples of 16");
  static_assert(is_fragment<Frag>::value, "the fragment of a register tile is kt::frag_none, frag_a, frag_b or frag_acc");
  using frag = Frag;
};

template <class T, int L, class Axis>
struct rv : detail::vec_regs<T, typename detail::axis_form<Axis, T, L>::type> {
  static_assert(L > 0 && L % 16 == 0,
                "register vectors on AMD hold whole 16-element chunks: the length must be a multiple of 16");
  static_assert(is_axis<Axis>::value, "the axis of a register vector is kt::row_axis or kt::col_axis");
  using axis = Axis;
};

namespace detail {

// ---- what a value is --------------------------------------------------------------------------------
// A tile: kt::rt or any tile_regs (it has a layout tag and a lane layout). A vector: kt::rv or
// any vec_regs (a map and no layout tag). Anything else is a scalar.
template <class X, class = void> struct is_tile : std::false_type {};
template <class X> struct is_tile<X, std::void_t<typename X::layout, typename X::lanes>> : std::true_type {};
template <class X, class = void> struct is_vec : std::false_type {};
template <class X> struct is_vec<X, std::void_t<typename X::map, decltype(X::length)>>
    : std::integral_constant<bool, !is_tile<X>::value> {};

// The element type of a tile, vector or scalar.
template <class X, class = void> struct elem_of { using type = X; };
template <class X> struct elem_of<X, std::void_t<typename X::elem_type>> { using type = typename X::elem_type; };
template <class X> using elem_of_t = typename elem_of<X>::type;

// The register set of a tile (its base class): what conversions produce and read.
template <class X> using tile_regs_of = tile_regs<typename X::elem_type, X::rows, X::cols, typename X::layout, typename X::lanes>;
template <class X> using vec_regs_of = vec_regs<typename X::elem_type, typename X::map>;

}  // namespace detail
}  // namespace kt

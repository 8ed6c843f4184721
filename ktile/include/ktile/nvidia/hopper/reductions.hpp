// ktile / NVIDIA Hopper: reductions of a tile along one axis (kt::row_sum, col_max, ...), of a
// whole tile to a scalar (kt::tile_sum, ...), and of a
// vector to a scalar (kt::vec_sum, ...), accumulating in fp32 (int32 for integer tiles), max / min
// propagating NaN.
//
// A row-layout tile reduces along its rows inside each lane, then across the 4 lanes of a quad
// (shfl.xor 1, 2): the result is already the g-form a row_axis vector is stored in. Along its
// columns it reduces across the 8 quads (xor 4, 8, 16) into t-form, the col_axis storage. A
// col-layout tile gives the other form, converted at the end. Every lane ends with the same
// values for the elements it holds, combined in the same order, so results are warp-uniform.
#pragma once

#include "ktile/nvidia/hopper/elementwise_ops.hpp"
#include "ktile/nvidia/hopper/layout_convert.hpp"

namespace kt {
namespace detail {

template <class Kind> struct reducer;
struct sum_kind {};
struct max_kind {};
struct min_kind {};
template <> struct reducer<sum_kind> {
  __device__ static float identity(float) { return 0.0f; }
  __device__ static int32_t identity(int32_t) { return 0; }
  __device__ static float combine(float a, float b) { return a + b; }
  __device__ static int32_t combine(int32_t a, int32_t b) { return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b)); }
};
template <> struct reducer<max_kind> {
  __device__ static float identity(float) { return -kt::inf; }
  __device__ static int32_t identity(int32_t) { return INT32_MIN; }
  __device__ static float combine(float a, float b) { return max_nan(a, b); }
  __device__ static int32_t combine(int32_t a, int32_t b) { return a < b ? b : a; }
};
template <> struct reducer<min_kind> {
  __device__ static float identity(float) { return kt::inf; }
  __device__ static int32_t identity(int32_t) { return INT32_MAX; }
  __device__ static float combine(float a, float b) { return min_nan(a, b); }
  __device__ static int32_t combine(int32_t a, int32_t b) { return a < b ? a : b; }
};

// The accumulator type of a reduction over elements of type T.
template <class T> using acc_t = std::conditional_t<is_float_elem<T>::value, float, int32_t>;
template <class T> __device__ __forceinline__ acc_t<T> widen(T x) {
  if constexpr (is_float_elem<T>::value) return as_float(x);
  else return static_cast<int32_t>(x);
}

// v combined across the lanes whose ids differ in the bits of `masks` (a butterfly).
template <class Kind, class A> __device__ __forceinline__ A across_lanes(A v, int first_mask, int last_mask) {
#pragma unroll
  for (int m = first_mask; m <= last_mask; m <<= 1) v = reducer<Kind>::combine(v, shfl_xor(v, m));
  return v;
}

// Reduce tile x along the axis whose index the lane's g (GroupAxis = true) or t does not carry.
// `by_group`: the kept index is 8h + g (g-form result, reduce across t: xor 1, 2); otherwise it
// is 8h + 2t + e (t-form result, reduce across g: xor 4, 8, 16). `keep_i`: the kept index is the
// tile's row (its subtile i), else its column (subtile j).
template <class Kind, bool by_group, bool keep_i, class Out, class X>
__device__ __forceinline__ void reduce_tile(Out& out, const X& x) {
  using A = acc_t<typename X::elem_type>;
  constexpr int chunks = keep_i ? X::height : X::width;
  constexpr int across = keep_i ? X::width : X::height;
#pragma unroll
  for (int c = 0; c < chunks; ++c)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < (by_group ? 1 : 2); ++e) {
        A v = reducer<Kind>::identity(A{});
#pragma unroll
        for (int k = 0; k < across; ++k)
#pragma unroll
          for (int p = 0; p < 4; ++p) {
            // pair p's kept-axis half is (p & 1) in g-form, (p >> 1) in t-form
            if ((by_group ? (p & 1) : (p >> 1)) != h) continue;
            const auto& pr = keep_i ? x.tiles[c][k][p] : x.tiles[k][c][p];
            if (by_group) {
              v = reducer<Kind>::combine(v, widen(pr.x));
              v = reducer<Kind>::combine(v, widen(pr.y));
            } else {
              v = reducer<Kind>::combine(v, widen(elem(pr, e)));
            }
          }
        v = by_group ? across_lanes<Kind>(v, 1, 2) : across_lanes<Kind>(v, 4, 16);
        if constexpr (by_group) out.data[c][h] = cast_to<typename Out::elem_type>(v);
        else elem(out.data[c][h], e) = cast_to<typename Out::elem_type>(v);
      }
}

// dst (a vector of axis Axis) = x reduced so that one value per `Axis` index remains.
template <class Kind, class Axis, class D, class X>
__device__ __forceinline__ void reduce_to_vector(D& dst, const X& x) {
  static_assert(is_rt<X>::value && is_rv<D>::value, "kt: a tile reduction takes a register tile and gives a register vector");
  static_assert(std::is_same<typename D::axis, Axis>::value,
                "kt: row reductions give row_axis vectors, column reductions col_axis vectors");
  constexpr bool rows_kept = std::is_same<Axis, row_axis>::value;
  static_assert(D::length == (rows_kept ? X::rows : X::cols), "kt: the reduced vector's length must match the tile");
  using T = typename D::elem_type;
  // the lane's g carries the kept index when rows are kept of a row tile or columns of a col tile
  constexpr bool by_group = rows_kept == std::is_same<typename X::layout, row>::value;
  using F = std::conditional_t<by_group, g_form, t_form>;
  vec_regs<T, D::length, F> got;
  reduce_tile<Kind, by_group, rows_kept>(got, x);
  static_cast<vec_regs<T, D::length, typename D::form>&>(dst) = in_form<typename D::form>(got);
}

// dst (a scalar) = every element of vector v combined.
template <class Kind, class S, class V>
__device__ __forceinline__ void reduce_vector(S& dst, const V& v) {
  static_assert(is_rv<V>::value, "kt: vec_sum / vec_max / vec_min reduce a register vector");
  using A = acc_t<typename V::elem_type>;
  A acc = reducer<Kind>::identity(A{});
  each_vec_pos<V>([&](const vec_pos& q) { acc = reducer<Kind>::combine(acc, widen(at_vec(v, q))); });
  constexpr bool g = std::is_same<typename V::form, g_form>::value;
  acc = g ? across_lanes<Kind>(acc, 4, 16) : across_lanes<Kind>(acc, 1, 2);
  dst = cast_to<S>(acc);
}

// dst (a scalar) = every element of tile x combined, whatever its layout: each element lives in
// exactly one lane, so the lane folds its own (eight partial accumulators, one per pair slot,
// for a short dependency chain), then the warp's 32 lanes combine in a butterfly.
template <class Kind, class S, class X>
__device__ __forceinline__ void reduce_whole_tile(S& dst, const X& x) {
  static_assert(is_rt<X>::value, "kt: tile_sum / tile_max / tile_min reduce a register tile");
  using A = acc_t<typename X::elem_type>;
  A part[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) part[k] = reducer<Kind>::identity(A{});
  each_tile_pos<X>([&](const tile_pos& q) {
    A& slot = part[2 * q.p + q.e];
    slot = reducer<Kind>::combine(slot, widen(at(x, q)));
  });
#pragma unroll
  for (int width = 4; width >= 1; width /= 2)
#pragma unroll
    for (int k = 0; k < width; ++k) part[k] = reducer<Kind>::combine(part[k], part[k + width]);
  dst = cast_to<S>(across_lanes<Kind>(part[0], 1, 16));
}

}  // namespace detail

#define KT_WHOLE_TILE_REDUCTION(NAME, KIND) \
  template <class S, class X> __device__ __forceinline__ void NAME(S& dst, const X& x) { \
    detail::reduce_whole_tile<detail::KIND>(dst, x); }
KT_WHOLE_TILE_REDUCTION(tile_sum, sum_kind) KT_WHOLE_TILE_REDUCTION(tile_max, max_kind)
KT_WHOLE_TILE_REDUCTION(tile_min, min_kind)
#undef KT_WHOLE_TILE_REDUCTION

#define KT_TILE_REDUCTION(NAME, KIND, AXIS) \
  template <class D, class X> __device__ __forceinline__ void NAME(D& dst, const X& x) { \
    detail::reduce_to_vector<detail::KIND, AXIS>(dst, x); }
KT_TILE_REDUCTION(row_sum, sum_kind, row_axis) KT_TILE_REDUCTION(row_max, max_kind, row_axis)
KT_TILE_REDUCTION(row_min, min_kind, row_axis) KT_TILE_REDUCTION(col_sum, sum_kind, col_axis)
KT_TILE_REDUCTION(col_max, max_kind, col_axis) KT_TILE_REDUCTION(col_min, min_kind, col_axis)
#undef KT_TILE_REDUCTION

#define KT_VEC_REDUCTION(NAME, KIND) \
  template <class S, class V> __device__ __forceinline__ void NAME(S& dst, const V& v) { \
    detail::reduce_vector<detail::KIND>(dst, v); }
KT_VEC_REDUCTION(vec_sum, sum_kind) KT_VEC_REDUCTION(vec_max, max_kind) KT_VEC_REDUCTION(vec_min, min_kind)
#undef KT_VEC_REDUCTION

}  // namespace kt

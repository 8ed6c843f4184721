// ktile / AMD: reductions of a tile along one axis (kt::row_sum, col_max, ...) and of a vector
// to a scalar (kt::vec_sum, ...), accumulating in fp32 (int32 for integer tiles), max / min
// propagating NaN.
//
// In every lane layout a lane holds one physical row (lane % 16) of each base tile. Reducing
// along the physical columns: in the lane, then across the lane's groups (xor 16, 32) — the
// result is in lane form, one value per physical row. Along the physical rows: in the lane over
// base tiles, then across the 16 lanes of a group (xor 1, 2, 4, 8) — the result is in the slot
// form of the tile's lane layout. A kt::row tile's rows are its physical rows, a kt::col tile's
// are its physical columns; the result is then moved to the destination vector's form
// (relayout.hpp; free when it already is). Lanes combine their values in the same order with
// commutative steps, so every lane ends with the same value: results are wave-uniform.
#pragma once

#include "ktile/amd/common/elementwise_ops.hpp"
#include "ktile/amd/common/relayout.hpp"

namespace kt {
namespace detail {

struct sum_kind {};
struct max_kind {};
struct min_kind {};
template <class Kind> struct reducer;
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

// v combined across the lanes whose ids differ in bits FIRST..LAST (masks 2^FIRST .. 2^LAST).
template <class Kind, int FIRST, int LAST, class A> __device__ __forceinline__ A across_lanes(A v) {
  const int lane = isa::lane();
  static_for<(LAST >= FIRST ? LAST - FIRST + 1 : 0)>([&](auto k) {
    v = reducer<Kind>::combine(v, read_lane(v, lane ^ (1 << (FIRST + decltype(k)::value))));
  });
  return v;
}
constexpr int log2_of(int n) { return n <= 1 ? 0 : 1 + log2_of(n / 2); }

// x reduced along its physical columns: lane form, one accumulator per physical row.
template <class Kind, class X>
__device__ __forceinline__ vec_regs<acc_t<typename X::elem_type>, lane_form<X::map::prows>> reduce_pcols(const X& x) {
  using M = typename X::map;
  using A = acc_t<typename X::elem_type>;
  constexpr int E = X::lanes::elems, group_bits = log2_of(X::lanes::groups);
  vec_regs<A, lane_form<M::prows>> out;
  static_for<M::down>([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    A v = reducer<Kind>::identity(A{});
    static_for<M::across * E>([&](auto k) { v = reducer<Kind>::combine(v, widen(x.get(I * M::across * E + decltype(k)::value))); });
    out.set(I, across_lanes<Kind, 4, 3 + group_bits>(v));
  });
  return out;
}

// x reduced along its physical rows: the slot form of its lane layout.
template <class Kind, class X>
__device__ __forceinline__ vec_regs<acc_t<typename X::elem_type>, slot_form<typename X::lanes, X::map::pcols>> reduce_prows(const X& x) {
  using M = typename X::map;
  using A = acc_t<typename X::elem_type>;
  constexpr int E = X::lanes::elems;
  vec_regs<A, slot_form<typename X::lanes, M::pcols>> out;
  static_for<M::across * E>([&](auto jc) {
    constexpr int J = decltype(jc)::value;   // register J of the first row of base tiles
    A v = reducer<Kind>::identity(A{});
    static_for<M::down>([&](auto i) { v = reducer<Kind>::combine(v, widen(x.get(decltype(i)::value * M::across * E + J))); });
    out.set(J, across_lanes<Kind, 0, 3>(v));
  });
  return out;
}

// dst (a vector of axis Axis) = x reduced so that one value per `Axis` index remains.
template <class Kind, class Axis, class D, class X>
__device__ __forceinline__ void reduce_to_vector(D& dst, const X& x) {
  static_assert(is_tile<X>::value && is_vec<D>::value, "kt: a tile reduction takes a register tile and gives a register vector");
  static_assert(std::is_same<typename D::axis, Axis>::value,
                "kt: row reductions give row_axis vectors, column reductions col_axis vectors");
  constexpr bool rows_kept = std::is_same<Axis, row_axis>::value;
  static_assert(D::length == (rows_kept ? X::rows : X::cols), "kt: the reduced vector's length must match the tile");
  using T = typename D::elem_type;
  // keeping the physical rows reduces along the physical columns
  auto got = [&] {
    if constexpr (rows_kept == X::map::row_tag) return reduce_pcols<Kind>(x);
    else return reduce_prows<Kind>(x);
  }();
  vec_regs<T, typename decltype(got)::map> rounded;
  static_for<decltype(got)::regs>([&](auto p) { rounded.set(decltype(p)::value, cast_to<T>(got.get(decltype(p)::value))); });
  static_cast<vec_regs_of<D>&>(dst) = in_form<typename D::map>(rounded);
}

// dst (a scalar) = every element of vector v combined.
template <class Kind, class S, class V>
__device__ __forceinline__ void reduce_vector(S& dst, const V& v) {
  static_assert(is_vec<V>::value, "kt: vec_sum / vec_max / vec_min reduce a register vector");
  using A = acc_t<typename V::elem_type>;
  A acc = reducer<Kind>::identity(A{});
  static_for<V::regs>([&](auto p) { acc = reducer<Kind>::combine(acc, widen(v.get(decltype(p)::value))); });
  if constexpr (std::is_same<typename V::map, lane_form<V::length>>::value) {
    acc = across_lanes<Kind, 0, 3>(acc);   // the 16 lanes of a group hold different elements
  } else {
    acc = across_lanes<Kind, 4, 3 + log2_of(V::map::lanes::groups)>(acc);   // the groups do
  }
  dst = cast_to<S>(acc);
}

}  // namespace detail

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

// A whole tile to a scalar: its rows reduced (one value per row, in lane form), then that vector.
// (A flat-layout tile is spelled as a row-layout one on AMD targets: layouts are internal.)
#define KT_WHOLE_TILE_REDUCTION(NAME, KIND) \
  template <class S, class X> __device__ __forceinline__ void NAME(S& dst, const X& x) { \
    rv<detail::acc_t<typename X::elem_type>, X::rows, row_axis> per_row; \
    detail::reduce_to_vector<detail::KIND, row_axis>(per_row, x); \
    detail::reduce_vector<detail::KIND>(dst, per_row); }
KT_WHOLE_TILE_REDUCTION(tile_sum, sum_kind) KT_WHOLE_TILE_REDUCTION(tile_max, max_kind)
KT_WHOLE_TILE_REDUCTION(tile_min, min_kind)
#undef KT_WHOLE_TILE_REDUCTION

}  // namespace kt

// ktile / AMD: elementwise ops over tiles, vectors and scalars (kt.unary, kt.binary, kt.select,
// kt.cast, kt.fill, kt.iota, kt.causal_mask), destination first.
//
// Each operand is read through a reader at the destination's registers: a scalar is the same
// everywhere; a tile held in the destination's map is read in place whatever its fragment tag;
// a tile in another lane layout or layout tag is moved first (relayout.hpp); a vector is first
// put in the form the destination reads it in — lane form along the tile's physical rows, the
// tile's slot form along its physical columns — and then read in place. What one element
// computes is elementwise_ops.hpp.
#pragma once

#include "ktile/amd/common/elementwise_ops.hpp"
#include "ktile/amd/common/relayout.hpp"

namespace kt {
namespace detail {

template <class X> struct scalar_reader {
  X v;
  template <int P> __device__ __forceinline__ X get() const { return v; }
};
template <class X> struct regs_reader {   // X: a register set, or a reference to one
  X x;
  template <int P> __device__ __forceinline__ auto get() const { return x.get(P); }
};
template <class V, class M, bool AlongRows> struct vec_on_tile_reader {
  V v;
  template <int P> __device__ __forceinline__ auto get() const {
    return v.get(vector_reg_at<M, AlongRows, typename V::map, P>());
  }
};

template <class Dst, class X> __device__ __forceinline__ auto tile_operand(const X& x) {
  static_assert(X::rows == Dst::rows && X::cols == Dst::cols, "kt: elementwise tiles must have the same shape");
  if constexpr (same_map<X, Dst>()) return regs_reader<const X&>{x};
  else return regs_reader<decltype(relaid<typename Dst::lanes, typename Dst::layout>(x))>{
      relaid<typename Dst::lanes, typename Dst::layout>(x)};
}

template <class Dst, class X> __device__ __forceinline__ auto vec_operand(const X& x) {
  if constexpr (is_tile<Dst>::value) {
    constexpr bool along_rows = std::is_same<typename X::axis, row_axis>::value;
    static_assert(X::length == (along_rows ? Dst::rows : Dst::cols),
                  "kt: a row vector broadcasts over a tile's rows, a col vector over its columns: the lengths must match");
    using M = typename Dst::map;
    using F = form_for_tile<M, along_rows, X::length>;
    return vec_on_tile_reader<decltype(in_form<F>(x)), M, along_rows>{in_form<F>(x)};
  } else {
    static_assert(X::length == Dst::length, "kt: elementwise vectors must have the same length");
    if constexpr (std::is_same<typename X::map, typename Dst::map>::value) return regs_reader<const X&>{x};
    else return regs_reader<decltype(in_form<typename Dst::map>(x))>{in_form<typename Dst::map>(x)};
  }
}

// A reader of x at Dst's registers.
template <class Dst, class X> __device__ __forceinline__ auto operand(const X& x) {
  if constexpr (is_tile<X>::value) {
    static_assert(is_tile<Dst>::value, "kt: a tile operand needs a tile destination");
    return tile_operand<Dst>(x);
  } else if constexpr (is_vec<X>::value) {
    return vec_operand<Dst>(x);
  } else {
    return scalar_reader<X>{x};
  }
}

// dst register P = f(P) for every register of a tile or vector (f takes integral_constant<int, P>).
template <class D, class F> __device__ __forceinline__ void map_into(D& dst, F&& f) {
  static_for<D::regs>([&](auto p) { dst.set(decltype(p)::value, f(p)); });
}

template <class Op, class D, class X> __device__ __forceinline__ void map_unary(D& dst, const X& x) {
  using T = elem_of_t<D>;
  if constexpr (is_tile<D>::value || is_vec<D>::value) {
    auto rx = operand<D>(x);
    map_into(dst, [&](auto p) { return apply_unary<Op, T>(rx.template get<decltype(p)::value>()); });
  } else {
    dst = apply_unary<Op, T>(x);
  }
}

template <class Op, class D, class X, class Y> __device__ __forceinline__ void map_binary(D& dst, const X& x, const Y& y) {
  using T = elem_of_t<D>;
  if constexpr (is_tile<D>::value || is_vec<D>::value) {
    auto rx = operand<D>(x);
    auto ry = operand<D>(y);
    map_into(dst, [&](auto p) {
      constexpr int P = decltype(p)::value;
      return apply_binary<Op, T>(rx.template get<P>(), ry.template get<P>());
    });
  } else {
    dst = apply_binary<Op, T>(x, y);
  }
}

}  // namespace detail

// ---- kt.select, kt.cast -----------------------------------------------------------------------
template <class D, class C, class X, class Y>
__device__ __forceinline__ void select(D& dst, const C& cond, const X& x, const Y& y) {
  using T = detail::elem_of_t<D>;
  if constexpr (detail::is_tile<D>::value || detail::is_vec<D>::value) {
    auto rc = detail::operand<D>(cond);
    auto rx = detail::operand<D>(x);
    auto ry = detail::operand<D>(y);
    detail::map_into(dst, [&](auto p) {
      constexpr int P = decltype(p)::value;
      return detail::as_bool(rc.template get<P>()) ? cast_to<T>(rx.template get<P>()) : cast_to<T>(ry.template get<P>());
    });
  } else {
    dst = detail::as_bool(cond) ? cast_to<T>(x) : cast_to<T>(y);
  }
}

template <class D, class X> __device__ __forceinline__ void cast(D& dst, const X& x) {
  using T = detail::elem_of_t<D>;
  if constexpr (detail::is_tile<D>::value || detail::is_vec<D>::value) {
    auto rx = detail::operand<D>(x);
    detail::map_into(dst, [&](auto p) { return cast_to<T>(rx.template get<decltype(p)::value>()); });
  } else {
    dst = cast_to<T>(x);
  }
}

// ---- kt.fill, kt.iota, kt.causal_mask ---------------------------------------------------------
template <class D> __device__ __forceinline__ void fill(D& dst, double value) {
  using T = detail::elem_of_t<D>;
  if constexpr (detail::is_tile<D>::value || detail::is_vec<D>::value) {
    const T v = constant_as<T>(value);
    detail::map_into(dst, [&](auto) { return v; });
  } else {
    dst = constant_as<T>(value);
  }
}

// Each element's row (Axis = row_axis) or column index; a vector's element index.
template <class Axis, class D> __device__ __forceinline__ void iota(D& dst) {
  using T = detail::elem_of_t<D>;
  const int lane = isa::lane();
  detail::map_into(dst, [&](auto p) {
    const detail::element_at at = D::map::element(lane, decltype(p)::value);
    if constexpr (detail::is_tile<D>::value) return cast_to<T>(std::is_same<Axis, row_axis>::value ? at.r : at.c);
    else return cast_to<T>(at.c);
  });
}

// x, with `fill` where col0 + j > row0 + i (a key past its query).
template <class D, class X>
__device__ __forceinline__ void causal_mask(D& dst, const X& x, index_t row0, index_t col0, double fill) {
  static_assert(detail::is_tile<D>::value, "kt::causal_mask masks a register tile");
  using T = detail::elem_of_t<D>;
  const T f = constant_as<T>(fill);
  const index_t shift = col0 - row0;     // masked where j - i > row0 - col0
  const int lane = isa::lane();
  auto rx = detail::operand<D>(x);
  detail::map_into(dst, [&](auto p) {
    constexpr int P = decltype(p)::value;
    const detail::element_at at = D::map::element(lane, P);
    return at.c - at.r + shift > 0 ? f : cast_to<T>(rx.template get<P>());
  });
}

}  // namespace kt

#include "ktile/common/elementwise_maps.hpp"   // kt::exp, kt::add, ...: a map per function

// ktile / NVIDIA Hopper: elementwise ops over tiles, vectors and scalars (kt.unary, kt.binary,
// kt.select, kt.cast, kt.fill, kt.iota, kt.causal_mask), destination first.
//
// Each operand is read through a "reader" at the destination's element positions: a scalar is
// the same everywhere; a tile of the destination's layout is read in place whatever its
// fragment tag (lane-local); a tile of the other layout is moved first (layout_convert.hpp);
// a vector is read in the form the destination's layout needs along its axis (register_tile.hpp),
// converted when it is stored in the other form. What one element computes is
// elementwise_ops.hpp.
#pragma once

#include "ktile/nvidia/hopper/elementwise_ops.hpp"
#include "ktile/nvidia/hopper/layout_convert.hpp"

namespace kt {
namespace detail {

template <class X> struct scalar_reader {
  X v;
  __device__ __forceinline__ X get(const tile_pos&) const { return v; }
  __device__ __forceinline__ X get(const vec_pos&) const { return v; }
};
template <class X> struct tile_reader {       // X: a tile type, or a reference to one
  X x;
  __device__ __forceinline__ auto get(const tile_pos& q) const { return at(x, q); }
};
template <class V, class Axis> struct vec_on_tile_reader {   // V: vec_regs, or a reference
  V v;
  __device__ __forceinline__ auto get(const tile_pos& q) const {
    const int chunk = std::is_same<Axis, row_axis>::value ? q.i : q.j;
    if constexpr (std::is_same<typename std::decay_t<V>::form, g_form>::value) return v.data[chunk][q.p & 1];
    else return elem(v.data[chunk][q.p >> 1], q.e);
  }
};
template <class V> struct vec_reader {
  V v;
  __device__ __forceinline__ auto get(const vec_pos& q) const { return at_vec(v, q); }
};

// The vector form a tile of layout L reads a vector of axis A in.
template <class L, class A> using form_for = std::conditional_t<
    std::is_same<L, row>::value == std::is_same<A, row_axis>::value, g_form, t_form>;

template <class Dst, class X> __device__ __forceinline__ auto tile_operand(const X& x) {
  static_assert(is_rt<Dst>::value, "kt: a tile operand needs a tile destination");
  static_assert(X::rows == Dst::rows && X::cols == Dst::cols, "kt: elementwise tiles must have the same shape");
  if constexpr (std::is_same<typename X::layout, typename Dst::layout>::value) {
    return tile_reader<const X&>{x};
  } else {
    typename relaid<X, typename Dst::layout>::type moved;
    transpose_layout(moved, x);
    return tile_reader<decltype(moved)>{moved};
  }
}

template <class Dst, class X> __device__ __forceinline__ auto vec_operand(const X& x) {
  using T = typename X::elem_type;
  using own = vec_regs<T, X::length, typename X::form>;
  if constexpr (is_rt<Dst>::value) {
    using A = typename X::axis;
    static_assert(X::length == (std::is_same<A, row_axis>::value ? Dst::rows : Dst::cols),
                  "kt: a row vector broadcasts over a tile's rows, a col vector over its columns: the lengths must match");
    using F = form_for<typename Dst::layout, A>;
    if constexpr (std::is_same<F, typename X::form>::value) return vec_on_tile_reader<const own&, A>{x};
    else return vec_on_tile_reader<vec_regs<T, X::length, F>, A>{in_form<F>(static_cast<const own&>(x))};
  } else {
    static_assert(X::length == Dst::length, "kt: elementwise vectors must have the same length");
    using F = typename Dst::form;
    if constexpr (std::is_same<F, typename X::form>::value) return vec_reader<const own&>{x};
    else return vec_reader<vec_regs<T, X::length, F>>{in_form<F>(static_cast<const own&>(x))};
  }
}

// A reader of x at Dst's element positions.
template <class Dst, class X> __device__ __forceinline__ auto operand(const X& x) {
  if constexpr (is_rt<X>::value) return tile_operand<Dst>(x);
  else if constexpr (is_rv<X>::value) return vec_operand<Dst>(x);
  else return scalar_reader<X>{x};
}

// dst[q] = f(q) at every element position of a tile or vector.
template <class D, class F> __device__ __forceinline__ void map_into(D& dst, F&& f) {
  if constexpr (is_rt<D>::value) each_tile_pos<D>([&](const tile_pos& q) { at(dst, q) = f(q); });
  else each_vec_pos<D>([&](const vec_pos& q) { at_vec(dst, q) = f(q); });
}

template <class Op, class D, class X> __device__ __forceinline__ void map_unary(D& dst, const X& x) {
  using T = elem_of_t<D>;
  if constexpr (is_rt<D>::value || is_rv<D>::value) {
    auto rx = operand<D>(x);
    map_into(dst, [&](const auto& q) { return apply_unary<Op, T>(rx.get(q)); });
  } else {
    dst = apply_unary<Op, T>(x);
  }
}

// bf16 -> fp32 of a whole pair with two bit operations (a bf16 is the top half of its float:
// the low element shifted up, the high one masked), not per element (PRMT + shift each).
// Exact, so results are those of the element-by-element cast. The narrowing direction stays
// element by element (9f22ca6: F2FP pairs made a pattern spill).
template <class D, class X> struct widens_bf16_pairs : std::false_type {};
template <int R, int C, class L, class F, class FX>
struct widens_bf16_pairs<rt<float, R, C, L, F>, rt<bf16, R, C, L, FX>> : std::true_type {};
__device__ __forceinline__ float2 widen_bf16_pair(const pair_t<bf16>& x) {
  uint32_t bits;
  __builtin_memcpy(&bits, &x, sizeof(bits));
  return float2{__uint_as_float(bits << 16), __uint_as_float(bits & 0xffff0000u)};
}

// fp32 -> fp8e4m3 of a slot's four pairs as two 32-bit words: one F2FP converts a pair (the
// instruction round_float issues per element, so the same bits) and the two halves of a word
// are joined once, not each byte masked and shifted into place (the fp32 -> 16-bit narrowing
// stays element by element: its paired form spilled, see above).
template <class D, class X> struct narrows_fp8_pairs : std::false_type {};
template <int R, int C, class L, class F, class FX>
struct narrows_fp8_pairs<rt<fp8e4m3, R, C, L, F>, rt<float, R, C, L, FX>> : std::true_type {};
__device__ __forceinline__ void narrow_fp8_slot(pair_t<fp8e4m3> (&dst)[4], const float2 (&x)[4]) {
  uint32_t words[2];
#pragma unroll
  for (int w = 0; w < 2; ++w)
    words[w] = round_fp8_pair_bits(x[2 * w].x, x[2 * w].y) |
               static_cast<uint32_t>(round_fp8_pair_bits(x[2 * w + 1].x, x[2 * w + 1].y)) << 16;
  __builtin_memcpy(dst, words, sizeof(words));
}

// fp32 -> int8: each element truncated to int32 (cvt.rzi: saturating, NaN to 0), then
// cvt.pack.sat (I2IP) saturates two of them to int8 and packs them, d = {c[15:0], sat(a),
// sat(b)} high to low. Saturating twice is saturating once, so these are float_to_int<int8_t>'s
// values (conversions.hpp: truncate, saturate, NaN -> 0) without its per-element clamp, NaN test
// and select; ptxas fuses the pair into one F2IP.S8.F32 (after hk.round, F2IP's nearest-even
// rounding, no FRND). A flat slot (one 8-byte store unit) packs four to a word, the other
// layouts a pair to 16 bits (words there added registers).
template <class D, class X> struct narrows_int8_pairs : std::false_type {};
template <int R, int C, class L, class F, class FX>
struct narrows_int8_pairs<rt<int8_t, R, C, L, F>, rt<float, R, C, L, FX>> : std::true_type {};
__device__ __forceinline__ uint32_t pack_int8(float a, float b, uint32_t c) {   // {c, a, b}
  uint32_t d;
  asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(__float2int_rz(a)), "r"(__float2int_rz(b)), "r"(c));
  return d;
}
__device__ __forceinline__ void narrow_int8_slot(pair_t<int8_t> (&dst)[4], const float2 (&x)[4]) {
  uint32_t words[2];
#pragma unroll
  for (int w = 0; w < 2; ++w)
    words[w] = pack_int8(x[2 * w].y, x[2 * w].x, pack_int8(x[2 * w + 1].y, x[2 * w + 1].x, 0));
  __builtin_memcpy(dst, words, sizeof(words));
}
__device__ __forceinline__ void narrow_int8_pair(pair_t<int8_t>& dst, const float2& x) {
  const uint16_t bits = static_cast<uint16_t>(pack_int8(x.y, x.x, 0));
  __builtin_memcpy(&dst, &bits, sizeof(bits));
}

// x op y of bf16 tiles of one layout, computed in fp32: each operand pair widened as above.
template <class Op, class D, class X, class Y> struct bf16_pair_binary : std::false_type {};
template <class Op, int R, int C, class L, class F, class FX, class FY>
struct bf16_pair_binary<Op, rt<bf16, R, C, L, F>, rt<bf16, R, C, L, FX>, rt<bf16, R, C, L, FY>> {
  static constexpr bool value = !is_comparison<Op>::value &&
      binary_domain<Op, bf16, bf16, bf16>() == domain::floating;
};

template <class Op, class D, class X, class Y> __device__ __forceinline__ void map_binary(D& dst, const X& x, const Y& y) {
  using T = elem_of_t<D>;
  if constexpr (bf16_pair_binary<Op, D, X, Y>::value) {
#pragma unroll
    for (int i = 0; i < D::height; ++i)
#pragma unroll
      for (int j = 0; j < D::width; ++j)
#pragma unroll
        for (int p = 0; p < 4; ++p) {
          const float2 a = widen_bf16_pair(x.tiles[i][j][p]), b = widen_bf16_pair(y.tiles[i][j][p]);
          elem(dst.tiles[i][j][p], 0) = cast_to<T>(Op::floating(a.x, b.x));
          elem(dst.tiles[i][j][p], 1) = cast_to<T>(Op::floating(a.y, b.y));
        }
    return;
  }
  if constexpr (is_rt<D>::value || is_rv<D>::value) {
    auto rx = operand<D>(x);
    auto ry = operand<D>(y);
    map_into(dst, [&](const auto& q) { return apply_binary<Op, T>(rx.get(q), ry.get(q)); });
  } else {
    dst = apply_binary<Op, T>(x, y);
  }
}

}  // namespace detail

// ---- kt.select, kt.cast -----------------------------------------------------------------------
template <class D, class C, class X, class Y>
__device__ __forceinline__ void select(D& dst, const C& cond, const X& x, const Y& y) {
  using T = detail::elem_of_t<D>;
  if constexpr (detail::is_rt<D>::value || detail::is_rv<D>::value) {
    auto rc = detail::operand<D>(cond);
    auto rx = detail::operand<D>(x);
    auto ry = detail::operand<D>(y);
    detail::map_into(dst, [&](const auto& q) {
      return detail::as_bool(rc.get(q)) ? cast_to<T>(rx.get(q)) : cast_to<T>(ry.get(q));
    });
  } else {
    dst = detail::as_bool(cond) ? cast_to<T>(x) : cast_to<T>(y);
  }
}

template <class D, class X> __device__ __forceinline__ void cast(D& dst, const X& x) {
  using T = detail::elem_of_t<D>;
  if constexpr (detail::widens_bf16_pairs<D, X>::value) {
#pragma unroll
    for (int i = 0; i < D::height; ++i)
#pragma unroll
      for (int j = 0; j < D::width; ++j)
#pragma unroll
        for (int p = 0; p < 4; ++p) dst.tiles[i][j][p] = detail::widen_bf16_pair(x.tiles[i][j][p]);
    return;
  }
  if constexpr (detail::narrows_fp8_pairs<D, X>::value) {
#pragma unroll
    for (int i = 0; i < D::height; ++i)
#pragma unroll
      for (int j = 0; j < D::width; ++j) detail::narrow_fp8_slot(dst.tiles[i][j], x.tiles[i][j]);
    return;
  }
  if constexpr (detail::narrows_int8_pairs<D, X>::value) {
#pragma unroll
    for (int i = 0; i < D::height; ++i)
#pragma unroll
      for (int j = 0; j < D::width; ++j) {
        if constexpr (std::is_same<typename D::layout, flat>::value) {
          detail::narrow_int8_slot(dst.tiles[i][j], x.tiles[i][j]);
        } else {
#pragma unroll
          for (int p = 0; p < 4; ++p) detail::narrow_int8_pair(dst.tiles[i][j][p], x.tiles[i][j][p]);
        }
      }
    return;
  }
  if constexpr (detail::is_rt<D>::value || detail::is_rv<D>::value) {
    auto rx = detail::operand<D>(x);
    detail::map_into(dst, [&](const auto& q) { return cast_to<T>(rx.get(q)); });
  } else {
    dst = cast_to<T>(x);
  }
}

// ---- kt.fill, kt.iota, kt.causal_mask ---------------------------------------------------------
template <class D> __device__ __forceinline__ void fill(D& dst, double value) {
  using T = detail::elem_of_t<D>;
  const T v = constant_as<T>(value);
  detail::map_into(dst, [&](const auto&) { return v; });
}

// Each element's row (Axis = row_axis) or column index; a vector's element index.
template <class Axis, class D> __device__ __forceinline__ void iota(D& dst) {
  using T = detail::elem_of_t<D>;
  if constexpr (detail::is_rt<D>::value) {
    using L = typename D::layout;
    constexpr bool rows = std::is_same<Axis, row_axis>::value;
    detail::map_into(dst, [&](const detail::tile_pos& q) {
      return cast_to<T>(rows ? detail::row_of<L, D::cols>(q) : detail::col_of<L, D::cols>(q));
    });
  } else {
    detail::map_into(dst, [&](const detail::vec_pos& q) { return cast_to<T>(detail::index_of<typename D::form>(q)); });
  }
}

// x, with `fill` where col0 + j > row0 + i (a key past its query).
template <class D, class X>
__device__ __forceinline__ void causal_mask(D& dst, const X& x, index_t row0, index_t col0, double fill) {
  using T = detail::elem_of_t<D>;
  using L = typename D::layout;
  const T f = constant_as<T>(fill);
  const index_t shift = col0 - row0;     // masked where j - i > row0 - col0
  auto rx = detail::operand<D>(x);
  detail::map_into(dst, [&](const detail::tile_pos& q) {
    return detail::col_of<L, D::cols>(q) - detail::row_of<L, D::cols>(q) + shift > 0 ? f : cast_to<T>(rx.get(q));
  });
}

}  // namespace kt

#include "ktile/common/elementwise_maps.hpp"   // kt::exp, kt::add, ...: a map per function

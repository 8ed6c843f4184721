// ktile / AMD: kt::load / kt::store of register tiles and vectors, through buffer resources.
//
// Bounds cost no branch and no compare: an element outside the global gets an offset past the
// buffer resource's range (global_window.hpp), which the hardware reads as zeros and does not
// write (isa_memory.hpp); a load then or's the pad's bits into those zeros (nothing, when the
// pad is zero). Two paths, chosen once per tile:
//   runs      a kt::row tile whose column window lies inside the global, with unit column
//             stride and rows aligned to the access: each lane moves its runs of adjacent
//             columns (lane_layout.hpp) up to 16 bytes at a time; the resource ends at the
//             last row inside, so the hardware checks the rows;
//   elements  anything else (edge tiles, strided columns, kt::col tiles, interleaved
//             layouts): one bounds-checked access per element, offsets from the tile's origin.
// One buffer resource per op, at the tile's origin; offsets are 32-bit, so a tile's rows must
// span less than 2 GiB. A replicated layout (RDNA3 operands) is stored by its first replica.
#pragma once

#include "ktile/amd/common/global_window.hpp"

namespace kt {
namespace detail {

template <class X, class T> __device__ __forceinline__ void fill_registers(X& dst, T v) {
  static_for<X::regs>([&](auto p) { dst.set(decltype(p)::value, v); });
}

template <class T, int N> __device__ __forceinline__ isa::vec<storage_t<T>, N> unpack(isa::word<N * sizeof(T)> w) {
  return __builtin_bit_cast(isa::vec<storage_t<T>, N>, w);
}

// x, or the pad's bits where `outside` is all ones (x is then zero: an out-of-range load).
template <class T> __device__ __forceinline__ T padded(T x, uint32_t outside, uint32_t pad_bits) {
  return from_bits32<T>(bits32(x) | (outside & pad_bits));
}

// ---- the runs path ------------------------------------------------------------------------------------
template <int ACCESS, class Tile, class T>
__device__ __forceinline__ void read_runs(Tile& dst, const window<T>& w_op, T pad) {
  const window<T> w = w_op.here();
  using M = typename Tile::map;
  constexpr int per = ACCESS / sizeof(T);
  const int lane = isa::lane();
  const uint32_t pad_bits = bits32(pad);
  const isa::buffer buf = w.rows_buffer(Tile::cols);
  const lane_window v = lanes_of(w);
  static_for<M::down>([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    const int row = 16 * I + lane % 16;
    const uint32_t row_out = pad_bits == 0 ? 0u : v.outside(row, 0);
    static_for<M::across * Tile::lanes::elems / per>([&](auto kc) {
      constexpr int P0 = (I * M::across * Tile::lanes::elems) + decltype(kc)::value * per;
      const auto got = unpack<T, per>(isa::buffer_load<ACCESS>(buf, v.row_offset(row) + M::pcol(lane, P0) * sizeof(T)));
      static_for<per>([&](auto e) {
        dst.set(P0 + decltype(e)::value, padded(from_storage<T>(got[decltype(e)::value]), row_out, pad_bits));
      });
    });
  });
}

template <int ACCESS, class Tile, class T>
__device__ __forceinline__ void write_runs(const window<T>& w_op, const Tile& src) {
  const window<T> w = w_op.here();
  using M = typename Tile::map;
  constexpr int per = ACCESS / sizeof(T);
  const int lane = isa::lane();
  const isa::buffer buf = w.rows_buffer(Tile::cols);
  const lane_window v = lanes_of(w);
  const uint32_t replica = Tile::lanes::replica(lane) == 0 ? 0u : isa::out_of_range;   // one replica stores
  static_for<M::down>([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    const int row = 16 * I + lane % 16;
    static_for<M::across * Tile::lanes::elems / per>([&](auto kc) {
      constexpr int P0 = (I * M::across * Tile::lanes::elems) + decltype(kc)::value * per;
      isa::vec<storage_t<T>, per> data;
      static_for<per>([&](auto e) { data[decltype(e)::value] = to_storage<T>(src.get(P0 + decltype(e)::value)); });
      const uint32_t offset = (v.row_offset(row) + M::pcol(lane, P0) * sizeof(T)) | replica;
      isa::buffer_store<ACCESS>(buf, offset, __builtin_bit_cast(isa::word<ACCESS>, data));
    });
  });
}

// ---- the elements path --------------------------------------------------------------------------------
template <class X, class T>
__device__ __forceinline__ void read_elements(X& dst, const window<T>& w_op, T pad) {
  const window<T> w = w_op.here();
  const lane_window v = lanes_of(w);
  const uint32_t pad_bits = bits32(pad);
  const isa::buffer buf = isa::make_buffer(w.origin);
  each_element<typename X::map>(isa::lane_pinned(), [&](auto pc, int r, int c) {
    const auto bits = isa::buffer_load<sizeof(T)>(buf, v.offset(r, c));
    dst.set(decltype(pc)::value, padded(from_storage<T>(__builtin_bit_cast(storage_t<T>, bits)), v.outside(r, c), pad_bits));
  });
}

// `silent`: all ones in the lanes that do not store (all but one of the lanes holding the same
// elements), else zero.
template <class X, class T>
__device__ __forceinline__ void write_elements(const window<T>& w_op, const X& src, uint32_t silent) {
  const window<T> w = w_op.here();
  const lane_window v = lanes_of(w);
  const isa::buffer buf = isa::make_buffer(w.origin);
  each_element<typename X::map>(isa::lane_pinned(), [&](auto pc, int r, int c) {
    const T x = src.get(decltype(pc)::value);
    isa::buffer_store<sizeof(T)>(buf, v.offset(r, c) | silent, __builtin_bit_cast(isa::word<sizeof(T)>, to_storage<T>(x)));
  });
}

}  // namespace detail

// ---- tiles --------------------------------------------------------------------------------------------------
template <class T, int R, int C, class L, class F, class U, class At>
__device__ __forceinline__ void load(rt<T, R, C, L, F>& dst, const gl<U>& g, At where, double pad) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::load: the tile's element type must be the global's");
  using Tile = rt<T, R, C, L, F>;
  constexpr int access = detail::run_access<typename Tile::lanes, T>();
  const T padv = constant_as<T>(pad);
  const detail::window<T> w = detail::window_of(g, at.b, at.d, at.r, at.c, R, C);
  if constexpr (Tile::map::row_tag && access > static_cast<int>(sizeof(T))) {
    if (w.template whole_rows<access>(C)) return detail::read_runs<access>(dst, w, padv);
  }
  detail::read_elements(dst, w, padv);
}

template <class U, class T, int R, int C, class L, class F, class At>
__device__ __forceinline__ void store(const gl<U>& g, const rt<T, R, C, L, F>& src, At where) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::store: the tile's element type must be the global's");
  using Tile = rt<T, R, C, L, F>;
  constexpr int access = detail::run_access<typename Tile::lanes, T>();
  const detail::window<T> w = detail::window_of(g, at.b, at.d, at.r, at.c, R, C);
  if constexpr (Tile::map::row_tag && access > static_cast<int>(sizeof(T))) {
    if (w.template whole_rows<access>(C)) return detail::write_runs<access>(w, src);
  }
  detail::write_elements(w, src, Tile::lanes::replica(isa::lane()) == 0 ? 0u : isa::out_of_range);
}

// ---- vectors: row r (in elements), columns [c·L, c·L + L) -------------------------------------------------
template <class T, int L, class A, class U, class At>
__device__ __forceinline__ void load(rv<T, L, A>& dst, const gl<U>& g, At where, double pad) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::load: the vector's element type must be the global's");
  detail::read_elements(dst, detail::window_of(g, at.b, at.d, at.r, at.c, 1, L), constant_as<T>(pad));
}

template <class U, class T, int L, class A, class At>
__device__ __forceinline__ void store(const gl<U>& g, const rv<T, L, A>& src, At where) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::store: the vector's element type must be the global's");
  using F = typename rv<T, L, A>::map;
  detail::write_elements(detail::window_of(g, at.b, at.d, at.r, at.c, 1, L), src,
                         detail::publishes<F>(isa::lane()) ? 0u : isa::out_of_range);
}

}  // namespace kt

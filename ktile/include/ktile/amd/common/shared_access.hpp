// ktile / AMD: kt::lds_load (LDS -> registers) and kt::lds_store (registers -> LDS) for one
// wave's tile or vector.
//
// kt::lds_load(dst, src, row, col) reads the dst-shaped part of `src` at tile coordinates
// (row, col): rows [row·R, row·R+R), columns [col·C, col·C+C) for an R×C dst; a vector of
// length L reads elements [col·L, col·L+L). The coordinates are not checked: one outside `src`
// reads other LDS. Every element is addressed through the shared tile's swizzle
// (shared_tile.hpp), so a part reads as fast as a whole tile.
//
// A kt::row tile moves each lane's runs of adjacent columns (lane_layout.hpp) as ds_read /
// ds_write of up to 16 bytes (ds_read_b128 for 16-bit MMA operands on every family). A kt::col
// tile's runs lie along a column of LDS: it moves element by element, ~8x the instructions for
// 16-bit tiles (trap 3 refuses that for MMA operands where the table says so). The loads are
// plain LDS loads to the compiler, which waits for them itself; the kt::wait that follows in the
// generated code adds the explicit wait and its bind pins the registers (trap 1).
#pragma once

#include "ktile/amd/common/register_tile.hpp"
#include "ktile/amd/common/shared_tile.hpp"

namespace kt {
namespace detail {

// The widest LDS access for a lane layout's runs of T (bytes): never across a 16-byte chunk.
template <class LL, class T> constexpr int lds_run_access() { return widest_pow2_dividing(LL::run * sizeof(T), 16); }

template <class Tile, class S>
__device__ __forceinline__ void lds_load_runs(Tile& dst, const S& src, int r0, int c0) {
  using M = typename Tile::map;
  using T = typename Tile::elem_type;
  constexpr int access = lds_run_access<typename Tile::lanes, T>(), per = access / sizeof(T);
  const int lane = isa::lane();
  const uint32_t base = src.address();
  static_for<Tile::regs / per>([&](auto kc) {
    constexpr int P0 = decltype(kc)::value * per;
    const uint32_t at = base + S::offset(r0 + M::prow(lane, P0), c0 + M::pcol(lane, P0));
    const auto v = __builtin_bit_cast(isa::vec<storage_t<T>, per>, isa::lds_read<access>(at));
    static_for<per>([&](auto e) { dst.set(P0 + decltype(e)::value, from_storage<T>(v[decltype(e)::value])); });
  });
}

// (r0, c0): the element of dst where the tile's element (0, 0) goes (a sub-tile store).
template <class S, class Tile>
__device__ __forceinline__ void lds_store_runs(S& dst, const Tile& src, int r0 = 0, int c0 = 0) {
  using M = typename Tile::map;
  using T = typename Tile::elem_type;
  constexpr int access = lds_run_access<typename Tile::lanes, T>(), per = access / sizeof(T);
  const int lane = isa::lane();
  if (Tile::lanes::replica(lane) != 0) return;   // replicas hold the same elements
  const uint32_t base = dst.address();
  static_for<Tile::regs / per>([&](auto kc) {
    constexpr int P0 = decltype(kc)::value * per;
    isa::vec<storage_t<T>, per> v;
    static_for<per>([&](auto e) { v[decltype(e)::value] = to_storage<T>(src.get(P0 + decltype(e)::value)); });
    isa::lds_write<access>(base + S::offset(r0 + M::prow(lane, P0), c0 + M::pcol(lane, P0)), __builtin_bit_cast(isa::word<access>, v));
  });
}

// Element by element: kt::col tiles, and vectors (r0: the row, 0 for a vector).
template <class X, class S>
__device__ __forceinline__ void lds_load_elements(X& dst, const S& src, int r0, int c0) {
  using T = typename X::elem_type;
  const int lane = isa::lane();
  const uint32_t base = src.address();
  static_for<X::regs>([&](auto pc) {
    constexpr int P = decltype(pc)::value;
    const element_at at = X::map::element(lane, P);
    const auto bits = isa::lds_read<sizeof(T)>(base + S::offset(r0 + at.r, c0 + at.c));
    dst.set(P, from_storage<T>(__builtin_bit_cast(storage_t<T>, bits)));
  });
}

template <class S, class X, class Writes>
__device__ __forceinline__ void lds_store_elements(S& dst, const X& src, Writes&& writes, int r0 = 0, int c0 = 0) {
  using T = typename X::elem_type;
  const int lane = isa::lane();
  if (!writes(lane)) return;
  const uint32_t base = dst.address();
  static_for<X::regs>([&](auto pc) {
    constexpr int P = decltype(pc)::value;
    const element_at at = X::map::element(lane, P);
    isa::lds_write<sizeof(T)>(base + S::offset(r0 + at.r, c0 + at.c), __builtin_bit_cast(isa::word<sizeof(T)>, to_storage<T>(src.get(P))));
  });
}

}  // namespace detail

template <class T, int R, int C, class L, class F, int SR, int SC>
__device__ __forceinline__ void lds_load(rt<T, R, C, L, F>& dst, const st<T, SR, SC>& src, index_t row = 0, index_t col = 0) {
  static_assert(SR % R == 0 && SC % C == 0,
                "kt::lds_load reads a sub-tile: the register tile's rows and columns must divide the shared tile's");
  using Tile = rt<T, R, C, L, F>;
  const int r0 = static_cast<int>(row) * R, c0 = static_cast<int>(col) * C;
  if constexpr (Tile::map::row_tag) detail::lds_load_runs(dst, src, r0, c0);
  else detail::lds_load_elements(dst, src, r0, c0);
}

template <class T, int R, int C, class L, class F>
__device__ __forceinline__ void lds_store(st<T, R, C>& dst, const rt<T, R, C, L, F>& src) {
  using Tile = rt<T, R, C, L, F>;
  if constexpr (Tile::map::row_tag) detail::lds_store_runs(dst, src);
  else detail::lds_store_elements(dst, src, [](int lane) { return Tile::lanes::replica(lane) == 0; });
}

// A sub-tile store (the DSL's `s.store(t, row=, col=)`): src fills rows [row·R, row·R+R) and
// columns [col·C, col·C+C) of dst, addressed through dst's swizzle like a sub-tile load.
template <class T, int R, int C, class L, class F, int SR, int SC>
__device__ __forceinline__ void lds_store(st<T, SR, SC>& dst, const rt<T, R, C, L, F>& src, index_t row, index_t col) {
  static_assert(SR % R == 0 && SC % C == 0,
                "kt::lds_store writes a sub-tile: the register tile's rows and columns must divide the shared tile's");
  using Tile = rt<T, R, C, L, F>;
  const int r0 = static_cast<int>(row) * R, c0 = static_cast<int>(col) * C;
  if constexpr (Tile::map::row_tag) detail::lds_store_runs(dst, src, r0, c0);
  else detail::lds_store_elements(dst, src, [](int lane) { return Tile::lanes::replica(lane) == 0; }, r0, c0);
}

// Vectors: each lane reads the elements it holds; one lane per distinct element writes.
template <class T, int L, class A, int SL>
__device__ __forceinline__ void lds_load(rv<T, L, A>& dst, const sv<T, SL>& src, index_t /* row: 0 */ = 0, index_t col = 0) {
  static_assert(SL % L == 0,
                "kt::lds_load reads a piece of a shared vector: the register vector's length must divide the shared vector's");
  detail::lds_load_elements(dst, src, 0, static_cast<int>(col) * L);
}

template <class T, int L, class A>
__device__ __forceinline__ void lds_store(sv<T, L>& dst, const rv<T, L, A>& src) {
  using F = typename rv<T, L, A>::map;
  detail::lds_store_elements(dst, src, [](int lane) { return detail::publishes<F>(lane); });
}

// A piece of a shared vector: src fills elements [col·L, col·L+L) of dst (row is 0).
template <class T, int L, class A, int SL>
__device__ __forceinline__ void lds_store(sv<T, SL>& dst, const rv<T, L, A>& src, index_t /* row: 0 */, index_t col) {
  static_assert(SL % L == 0,
                "kt::lds_store writes a piece of a shared vector: the register vector's length must divide the shared vector's");
  using F = typename rv<T, L, A>::map;
  detail::lds_store_elements(dst, src, [](int lane) { return detail::publishes<F>(lane); }, 0, static_cast<int>(col) * L);
}

}  // namespace kt

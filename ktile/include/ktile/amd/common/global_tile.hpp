// ktile / AMD: kt::load / kt::store of register tiles and vectors, through buffer resources.
//
// Bounds cost no branch: an element or row outside the global gets the offset `out_of_range`,
// which the hardware reads as zeros and does not write (isa_memory.hpp); a load then selects
// `pad` there (nothing, when pad is zero). Two paths, chosen once per tile:
//   runs      a kt::row tile whose column window lies inside the global, with unit column
//             stride and rows aligned to the access: each lane moves its runs of adjacent
//             columns (lane_layout.hpp) up to 16 bytes at a time;
//   elements  anything else (edge tiles, strided columns, kt::col tiles, interleaved
//             layouts): one bounds-checked access per element, offsets from the tile's origin.
// One buffer resource per op, at the tile's origin; offsets are 32-bit, so a tile's rows must
// span less than 2 GiB. A replicated layout (RDNA3 operands) is stored by its first replica.
#pragma once

#include "ktile/common/global_layout.hpp"
#include "ktile/amd/common/register_tile.hpp"

namespace kt {
namespace detail {

template <class X, class T> __device__ __forceinline__ void fill_registers(X& dst, T v) {
  static_for<X::regs>([&](auto p) { dst.set(decltype(p)::value, v); });
}

template <class T, int N> __device__ __forceinline__ isa::vec<storage_t<T>, N> unpack(isa::word<N * sizeof(T)> w) {
  return __builtin_bit_cast(isa::vec<storage_t<T>, N>, w);
}

// The widest access a lane layout's runs of T allow (bytes).
template <class LL, class T> constexpr int run_access() { return widest_pow2_dividing(LL::run * sizeof(T), 16); }

// The R×C part of g[b, d] at (r0, c0) that one tile op touches, in 32-bit terms relative to
// its origin: which of its rows and columns lie inside the global, and the strides in bytes.
// Bounds are integer arithmetic, not compares: a compare per element is a lane mask in scalar
// registers, and dozens of those live at once overflow them (trap 2).
template <class T>
struct window {
  const T* origin;                      // element (r0, c0) of g[b, d], inside the global or not
  int row_lo, row_hi, col_lo, col_hi;   // rows / columns [lo, hi) of the part inside the global
  index_t row_stride;                   // in elements
  uint32_t row_bytes, col_bytes;

  // All ones where (r, c) lies outside the global, else zero: an offset or'ed with it is out
  // of every resource's range, and a zero or'ed with it and the pad's bits is the pad.
  __device__ __forceinline__ uint32_t outside(int r, int c) const {
    return static_cast<uint32_t>(((r - row_lo) | (row_hi - 1 - r) | (c - col_lo) | (col_hi - 1 - c)) >> 31);
  }
  __device__ __forceinline__ uint32_t offset(int r, int c) const {
    return (static_cast<uint32_t>(r) * row_bytes + static_cast<uint32_t>(c) * col_bytes) | outside(r, c);
  }
  // Whether every column is inside, unit-stride, rows apart by at least the window's width and
  // aligned to ACCESS bytes: then a row is in or out as a whole (rows_buffer). One integer
  // tested once: each condition kept apart would be a lane mask held across the kernel's loop.
  template <int ACCESS> __device__ __forceinline__ bool whole_rows(int C) const {
    const uint32_t align = static_cast<uint32_t>(reinterpret_cast<uint64_t>(origin)) | row_bytes;
    const uint32_t bad = static_cast<uint32_t>(col_lo | (col_hi ^ C)) | (col_bytes ^ static_cast<uint32_t>(sizeof(T))) |
                         (align & (ACCESS - 1)) | static_cast<uint32_t>(static_cast<int>(row_bytes - C * sizeof(T)) >> 31);
    return bad == 0;
  }
  // A resource from row row_lo to the end of row row_hi - 1's window: the hardware checks the
  // rows. Offsets are (r - row_lo)·row_bytes + column bytes; a row above wraps past the range.
  __device__ __forceinline__ isa::buffer rows_buffer(int C) const {
    const uint32_t bytes = row_hi > row_lo ? static_cast<uint32_t>(row_hi - row_lo - 1) * row_bytes + C * sizeof(T) : 0u;
    return isa::make_buffer(origin + row_lo * row_stride, bytes);
  }
  __device__ __forceinline__ uint32_t row_offset(int r) const { return static_cast<uint32_t>(r - row_lo) * row_bytes; }

  // This window with its scalars taken as computed here (isa::here): for the paths that derive
  // a constant per element or row from them.
  __device__ __forceinline__ window here() const {
    window w = *this;
    w.origin = isa::here(origin);
    w.row_lo = isa::here(row_lo), w.row_hi = isa::here(row_hi);
    w.col_lo = isa::here(col_lo), w.col_hi = isa::here(col_hi);
    w.row_bytes = isa::here(row_bytes), w.col_bytes = isa::here(col_bytes);
    return w;
  }
};

// min(max(v, 0), hi) in integer arithmetic (a 64-bit compare of scalars would be a VALU compare
// and a lane mask).
__device__ __forceinline__ int clamp_to(index_t v, int hi) {
  v &= ~(v >> 63);                        // max(v, 0)
  const index_t over = v - hi;
  return static_cast<int>(hi + (over & (over >> 63)));   // min(v, hi)
}

// A kt::gl field as 32 bits. Every field of every global argument is a scalar register from the
// kernel's start to its last use, and eight globals of 72 bytes would take 144 of the ~104 a
// wave has (trap 2): so the extents and the row / column strides are read as their low halves
// (the loaders refuse a global with one of them at 2^31 or more); the batch and depth strides
// stay 64-bit, and fold away when the batch and depth are 0.
__device__ __forceinline__ int field32(int64_t field) { return static_cast<int>(field); }

template <class T>
__device__ __forceinline__ window<T> window_of(const gl<T>& g, index_t b, index_t d, index_t r0, index_t c0, int R, int C) {
  const int sr = field32(g.stride[2]), sc = field32(g.stride[3]);
  // all ones when (b, d) names no plane of g, else zero
  const index_t no_plane = (b | (field32(g.extent[0]) - 1 - b) | d | (field32(g.extent[1]) - 1 - d)) >> 63;
  window<T> w;
  w.origin = g.data + b * g.stride[0] + d * g.stride[1] + r0 * sr + c0 * sc;
  w.row_lo = clamp_to(-r0, R);
  w.row_hi = clamp_to((field32(g.extent[2]) - r0) & ~no_plane, R);
  w.col_lo = clamp_to(-c0, C);
  w.col_hi = clamp_to(field32(g.extent[3]) - c0, C);
  w.row_stride = sr;
  w.row_bytes = static_cast<uint32_t>(sr) * sizeof(T);
  w.col_bytes = static_cast<uint32_t>(sc) * sizeof(T);
  return w;
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
  static_for<M::down>([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    const int row = 16 * I + lane % 16;
    const uint32_t row_out = pad_bits == 0 ? 0u : w.outside(row, 0);
    static_for<M::across * Tile::lanes::elems / per>([&](auto kc) {
      constexpr int P0 = (I * M::across * Tile::lanes::elems) + decltype(kc)::value * per;
      const auto v = unpack<T, per>(isa::buffer_load<ACCESS>(buf, w.row_offset(row) + M::pcol(lane, P0) * sizeof(T)));
      static_for<per>([&](auto e) {
        dst.set(P0 + decltype(e)::value, padded(from_storage<T>(v[decltype(e)::value]), row_out, pad_bits));
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
  const uint32_t replica = Tile::lanes::replica(lane) == 0 ? 0u : isa::out_of_range;   // one replica stores
  static_for<M::down>([&](auto ic) {
    constexpr int I = decltype(ic)::value;
    const int row = 16 * I + lane % 16;
    static_for<M::across * Tile::lanes::elems / per>([&](auto kc) {
      constexpr int P0 = (I * M::across * Tile::lanes::elems) + decltype(kc)::value * per;
      isa::vec<storage_t<T>, per> v;
      static_for<per>([&](auto e) { v[decltype(e)::value] = to_storage<T>(src.get(P0 + decltype(e)::value)); });
      const uint32_t offset = (w.row_offset(row) + M::pcol(lane, P0) * sizeof(T)) | replica;
      isa::buffer_store<ACCESS>(buf, offset, __builtin_bit_cast(isa::word<ACCESS>, v));
    });
  });
}

// ---- the elements path --------------------------------------------------------------------------------
template <class X, class T>
__device__ __forceinline__ void read_elements(X& dst, const window<T>& w_op, T pad) {
  const window<T> w = w_op.here();
  const int lane = isa::lane_pinned();
  const uint32_t pad_bits = bits32(pad);
  const isa::buffer buf = isa::make_buffer(w.origin);
  static_for<X::regs>([&](auto pc) {
    constexpr int P = decltype(pc)::value;
    const element_at at = X::map::element(lane, P);
    const uint32_t outside = w.outside(at.r, at.c);
    const auto bits = isa::buffer_load<sizeof(T)>(buf, w.offset(at.r, at.c));
    dst.set(P, padded(from_storage<T>(__builtin_bit_cast(storage_t<T>, bits)), outside, pad_bits));
  });
}

// `silent`: all ones in the lanes that do not store (all but one of the lanes holding the same
// elements), else zero.
template <class X, class T>
__device__ __forceinline__ void write_elements(const window<T>& w_op, const X& src, uint32_t silent) {
  const window<T> w = w_op.here();
  const int lane = isa::lane_pinned();
  const isa::buffer buf = isa::make_buffer(w.origin);
  static_for<X::regs>([&](auto pc) {
    constexpr int P = decltype(pc)::value;
    const element_at at = X::map::element(lane, P);
    isa::buffer_store<sizeof(T)>(buf, w.offset(at.r, at.c) | silent,
                                 __builtin_bit_cast(isa::word<sizeof(T)>, to_storage<T>(src.get(P))));
  });
}

}  // namespace detail

// ---- tiles --------------------------------------------------------------------------------------------------
template <class T, int R, int C, class L, class F, class U>
__device__ __forceinline__ void load(rt<T, R, C, L, F>& dst, const gl<U>& g, coord at, double pad) {
  static_assert(std::is_same<T, U>::value, "kt::load: the tile's element type must be the global's");
  using Tile = rt<T, R, C, L, F>;
  constexpr int access = detail::run_access<typename Tile::lanes, T>();
  const T padv = constant_as<T>(pad);
  const detail::window<T> w = detail::window_of(g, at.b, at.d, at.r * R, at.c * C, R, C);
  if constexpr (Tile::map::row_tag && access > static_cast<int>(sizeof(T))) {
    if (w.template whole_rows<access>(C)) return detail::read_runs<access>(dst, w, padv);
  }
  detail::read_elements(dst, w, padv);
}

template <class U, class T, int R, int C, class L, class F>
__device__ __forceinline__ void store(const gl<U>& g, const rt<T, R, C, L, F>& src, coord at) {
  static_assert(std::is_same<T, U>::value, "kt::store: the tile's element type must be the global's");
  using Tile = rt<T, R, C, L, F>;
  constexpr int access = detail::run_access<typename Tile::lanes, T>();
  const detail::window<T> w = detail::window_of(g, at.b, at.d, at.r * R, at.c * C, R, C);
  if constexpr (Tile::map::row_tag && access > static_cast<int>(sizeof(T))) {
    if (w.template whole_rows<access>(C)) return detail::write_runs<access>(w, src);
  }
  detail::write_elements(w, src, Tile::lanes::replica(isa::lane()) == 0 ? 0u : isa::out_of_range);
}

// ---- vectors: row r (in elements), columns [c·L, c·L + L) -------------------------------------------------
template <class T, int L, class A, class U>
__device__ __forceinline__ void load(rv<T, L, A>& dst, const gl<U>& g, coord at, double pad) {
  static_assert(std::is_same<T, U>::value, "kt::load: the vector's element type must be the global's");
  detail::read_elements(dst, detail::window_of(g, at.b, at.d, at.r, at.c * L, 1, L), constant_as<T>(pad));
}

template <class U, class T, int L, class A>
__device__ __forceinline__ void store(const gl<U>& g, const rv<T, L, A>& src, coord at) {
  static_assert(std::is_same<T, U>::value, "kt::store: the vector's element type must be the global's");
  using F = typename rv<T, L, A>::map;
  detail::write_elements(detail::window_of(g, at.b, at.d, at.r, at.c * L, 1, L), src,
                         detail::publishes<F>(isa::lane()) ? 0u : isa::out_of_range);
}

}  // namespace kt

// ktile / AMD: the part of a global one tile op touches (a `window`), in the terms the load and
// store paths use: 32-bit offsets from the op's origin, and which rows and columns lie inside.
//
// Registers are the constraint here, scalar ones most: every field of every kt::gl argument is a
// scalar register from the kernel's start to its last use, values derived from uniform data
// are scalar registers, and a compare is a lane mask in scalar registers. So: the extents and
// the row / column strides are read as 32 bits (field32); bounds are integer arithmetic giving
// all-ones masks, never compares (outside()); the paths take the window's values as computed
// where they are used (isa::here) so nothing per element is hoisted out of the kernel's loop;
// and per-element arithmetic runs on VGPR copies (lane_window), whose constants are inline.
#pragma once

#include "ktile/common/global_layout.hpp"
#include "ktile/amd/common/register_tile.hpp"

namespace kt::detail {

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

// min(max(v, 0), hi): s_max_i32 and s_min_i32, no compare (a compare of scalars whose result
// outlives it is a lane mask in scalar registers).
__device__ __forceinline__ int clamp_to(int v, int hi) { return __builtin_elementwise_min(__builtin_elementwise_max(v, 0), hi); }

// A kt::gl field as 32 bits. Every field of every global argument is a scalar register from the
// kernel's start to its last use, and eight globals of 72 bytes would take 144 of the ~104 a
// wave has (trap 2): so the extents and the row / column strides are read as their low halves
// (the loaders refuse a global with one of them at 2^31 or more); the batch and depth strides
// stay 64-bit, and fold away when the batch and depth are 0.
__device__ __forceinline__ int field32(int64_t field) { return static_cast<int>(field); }

// Coordinates are taken as 32-bit too (a tile origin, batch or depth past 2^31 elements is
// outside any global whose extents are below 2^31, but would wrap: the grid never makes one).
template <class T>
__device__ __forceinline__ window<T> window_of(const gl<T>& g, index_t b, index_t d, index_t r0, index_t c0, int R, int C) {
  const int sr = isa::here(field32(g.stride[2])), sc = isa::here(field32(g.stride[3]));
  const int rows = isa::here(field32(g.extent[2])), cols = isa::here(field32(g.extent[3]));
  const int b32 = static_cast<int>(b), d32 = static_cast<int>(d), r32 = static_cast<int>(r0), c32 = static_cast<int>(c0);
  // all ones when (b, d) names no plane of g, else zero
  const int no_plane = isa::here((b32 | (field32(g.extent[0]) - 1 - b32) | d32 | (field32(g.extent[1]) - 1 - d32)) >> 31);
  window<T> w;
  w.origin = isa::here(g.data) + b * g.stride[0] + d * g.stride[1] + r0 * sr + c0 * sc;
  w.row_lo = clamp_to(-r32, R);
  w.row_hi = clamp_to(rows - r32, R) & ~no_plane;
  w.col_lo = clamp_to(-c32, C);
  w.col_hi = clamp_to(cols - c32, C);
  w.row_stride = sr;
  w.row_bytes = static_cast<uint32_t>(sr) * sizeof(T);
  w.col_bytes = static_cast<uint32_t>(sc) * sizeof(T);
  return w;
}

// The window's bounds and strides in VGPRs, for arithmetic per element (see the file comment).
struct lane_window {
  int row_lo, row_hi, col_lo, col_hi;
  uint32_t row_bytes, col_bytes;
  // All ones where (r, c) lies outside the global, else zero: an offset or'ed with it is past
  // every resource's range, and the zero an out-of-range load gives or'ed with it and the pad's
  // bits is the pad.
  __device__ __forceinline__ uint32_t outside(int r, int c) const {
    return static_cast<uint32_t>(((r - row_lo) | (row_hi - 1 - r) | (c - col_lo) | (col_hi - 1 - c)) >> 31);
  }
  // The byte offset of (r, c) from the origin, or all ones outside the global.
  __device__ __forceinline__ uint32_t offset(int r, int c) const {
    return (static_cast<uint32_t>(r) * row_bytes + static_cast<uint32_t>(c) * col_bytes) | outside(r, c);
  }
  // The offset of row r in window::rows_buffer's resource.
  __device__ __forceinline__ uint32_t row_offset(int r) const { return static_cast<uint32_t>(r - row_lo) * row_bytes; }
};
template <class T> __device__ __forceinline__ lane_window lanes_of(const window<T>& w) {
  return lane_window{isa::in_vgpr(w.row_lo), isa::in_vgpr(w.row_hi), isa::in_vgpr(w.col_lo), isa::in_vgpr(w.col_hi),
                     isa::in_vgpr(w.row_bytes), isa::in_vgpr(w.col_bytes)};
}

// Where register P of map M lies relative to register 0, the same in every lane (true of every
// map in lane_layout.hpp: a lane's registers are its first one's position plus constants).
template <class M, int P> constexpr element_at register_delta() {
  constexpr element_at d{M::element(0, P).r - M::element(0, 0).r, M::element(0, P).c - M::element(0, 0).c};
  return d;
}
template <class M, int P> constexpr bool delta_is_uniform() {
  for (int lane = 0; lane < isa::wave_size; ++lane) {
    const element_at d = register_delta<M, P>();
    if (M::element(lane, P).r - M::element(lane, 0).r != d.r || M::element(lane, P).c - M::element(lane, 0).c != d.c) return false;
  }
  return true;
}

// f(P, r, c) for every register P of a register set of map M, (r, c) its element.
template <class M, class F> __device__ __forceinline__ void each_element(int lane, F&& f) {
  const element_at base = M::element(lane, 0);
  static_for<M::regs>([&](auto pc) {
    constexpr int P = decltype(pc)::value;
    static_assert(delta_is_uniform<M, P>(), "kt: a register map whose registers do not share one lane offset");
    constexpr element_at d = register_delta<M, P>();
    f(pc, base.r + d.r, base.c + d.c);
  });
}

}  // namespace kt::detail

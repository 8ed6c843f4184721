// ktile / NVIDIA Hopper: where this thread sits — block index, warp, lane — and moving one
// register between lanes of a warp.
//
// A block is `warps × 32` threads along x (the launcher's block shape); warp w is threads
// [32w, 32w + 32). In a register tile a lane is named by its quad: g = lane / 4 (which of the
// 8 row groups) and t = lane % 4 (which column pair), as in the PTX mma fragment tables.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ktile/common/tags.hpp"

namespace kt {

__device__ __forceinline__ index_t block_idx_x() { return static_cast<index_t>(blockIdx.x); }
__device__ __forceinline__ index_t block_idx_y() { return static_cast<index_t>(blockIdx.y); }
__device__ __forceinline__ index_t block_idx_z() { return static_cast<index_t>(blockIdx.z); }
__device__ __forceinline__ index_t warp_id() { return static_cast<index_t>(threadIdx.x >> 5); }

namespace detail {

constexpr unsigned full_warp = 0xffffffffu;

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x & 31); }
__device__ __forceinline__ int lane_group() { return lane_id() >> 2; }    // g: 0..7
__device__ __forceinline__ int lane_in_group() { return lane_id() & 3; }  // t: 0..3

// The lane id read by an instruction the compiler may not move or merge. The bounds-checked
// (edge-tile) paths derive their element addresses from it, so that the compiler cannot hoist
// one 64-bit address per element out of a loop and hold them all in registers.
__device__ __forceinline__ int lane_id_pinned() {
  int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// Reinterpret the bits of a value of up to 8 bytes (zero-extended), and back.
template <class U, class T> __device__ __forceinline__ U bits_of(const T& v) {
  static_assert(sizeof(T) <= sizeof(U), "kt: bits_of into a narrower word");
  U out{};
  __builtin_memcpy(&out, &v, sizeof(T));
  return out;
}
template <class T, class U> __device__ __forceinline__ T from_bits(U bits) {
  T out;
  __builtin_memcpy(&out, &bits, sizeof(T));
  return out;
}

// `v` as held by lane `src` (every lane of the warp takes part).
template <class T> __device__ __forceinline__ T shfl_idx(const T& v, int src) {
  if constexpr (sizeof(T) <= 4) {
    return from_bits<T>(__shfl_sync(full_warp, bits_of<uint32_t>(v), src));
  } else {
    static_assert(sizeof(T) == 8, "kt: shuffles move values of up to 8 bytes");
    uint64_t b = bits_of<uint64_t>(v);
    uint32_t lo = __shfl_sync(full_warp, static_cast<uint32_t>(b), src);
    uint32_t hi = __shfl_sync(full_warp, static_cast<uint32_t>(b >> 32), src);
    return from_bits<T>((static_cast<uint64_t>(hi) << 32) | lo);
  }
}

// `v` as held by lane (this lane ^ mask).
template <class T> __device__ __forceinline__ T shfl_xor(const T& v, int mask) {
  if constexpr (sizeof(T) <= 4) {
    return from_bits<T>(__shfl_xor_sync(full_warp, bits_of<uint32_t>(v), mask));
  } else {
    static_assert(sizeof(T) == 8, "kt: shuffles move values of up to 8 bytes");
    uint64_t b = bits_of<uint64_t>(v);
    uint32_t lo = __shfl_xor_sync(full_warp, static_cast<uint32_t>(b), mask);
    uint32_t hi = __shfl_xor_sync(full_warp, static_cast<uint32_t>(b >> 32), mask);
    return from_bits<T>((static_cast<uint64_t>(hi) << 32) | lo);
  }
}

// Swap a and b when `cond` (two selects, no branch).
template <class T> __device__ __forceinline__ void swap_if(bool cond, T& a, T& b) {
  T lo = cond ? b : a;
  T hi = cond ? a : b;
  a = lo;
  b = hi;
}

// A 4×4 transpose across the 4 lanes of a quad: on return x[j] holds what lane j of the quad
// held in x[t] (t = this lane's place in the quad). Three shuffles; the xor-permutations on
// either side keep every register index a compile-time constant.
template <class T> __device__ __forceinline__ void quad_transpose(T (&x)[4]) {
  const int t = lane_in_group();
  swap_if((t & 1) != 0, x[0], x[1]); swap_if((t & 1) != 0, x[2], x[3]);   // x[k] <- x[t ^ k]
  swap_if((t & 2) != 0, x[0], x[2]); swap_if((t & 2) != 0, x[1], x[3]);
  x[1] = shfl_xor(x[1], 1);
  x[2] = shfl_xor(x[2], 2);
  x[3] = shfl_xor(x[3], 3);
  swap_if((t & 1) != 0, x[0], x[1]); swap_if((t & 1) != 0, x[2], x[3]);   // y[j] <- x[t ^ j]
  swap_if((t & 2) != 0, x[0], x[2]); swap_if((t & 2) != 0, x[1], x[3]);
}

}  // namespace detail
}  // namespace kt

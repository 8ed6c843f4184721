// ktile / NVIDIA Hopper: shared tiles (kt::st) and vectors (kt::sv) in the block's dynamic
// shared memory, and kt::shared_at<S, OFFSET>().
//
// An st<T, R, C> is exactly R·C·sizeof(T) bytes (the lds-alloc pass lays tiles out by that
// size), row-major in 16-byte chunks, with the chunks of a row permuted (a swizzle of
// addresses, not of size): for rows of a multiple of 128 bytes chunk k of row r sits at
// k ^ (r % 8); narrower rows XOR the chunk's index within its 128-byte line with the line
// number. Eight consecutive rows of one chunk column then fall in eight different bank groups,
// so an ldmatrix / stmatrix of an 8×8 block is conflict-free. An sv<T, L> is L plain elements.
#pragma once

#include <cstdint>

#include "ktile/common/tags.hpp"
#include "ktile/nvidia/hopper/scalars.hpp"

namespace kt {

template <class T, int R, int C>
struct st {
  static_assert(R > 0 && C > 0 && R % 16 == 0 && C % 16 == 0,
                "shared tiles on sm_90a are built of 16x16 blocks: rows and columns must be multiples of 16");
  using elem_type = T;
  static constexpr int rows = R, cols = C;
  static constexpr int chunk_elems = 16 / sizeof(T);             // elements per 16-byte chunk
  static constexpr int row_chunks = C * sizeof(T) / 16;          // chunks per row
  alignas(16) T data[R * C];

  // Byte offset of chunk k of row r.
  __device__ static __forceinline__ uint32_t chunk_offset(int r, int k) {
    if constexpr (row_chunks % 8 == 0) return 16u * (r * row_chunks + (k ^ (r & 7)));
    const int linear = r * row_chunks + k;
    return 16u * (linear ^ ((linear >> 3) & 7));
  }
  // Byte offset of element (r, c).
  __device__ static __forceinline__ uint32_t offset(int r, int c) {
    return chunk_offset(r, c / chunk_elems) + (c % chunk_elems) * sizeof(T);
  }
  __device__ __forceinline__ T& at(int r, int c) {
    return *reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(data) + offset(r, c));
  }
  __device__ __forceinline__ const T& at(int r, int c) const {
    return *reinterpret_cast<const T*>(reinterpret_cast<const unsigned char*>(data) + offset(r, c));
  }
  // The shared-window address (for cp.async, ldmatrix, stmatrix) of a byte offset.
  __device__ __forceinline__ uint32_t address(uint32_t byte_offset) const {
    return static_cast<uint32_t>(__cvta_generic_to_shared(data)) + byte_offset;
  }
};

template <class T, int L>
struct sv {
  static_assert(L > 0 && L % 16 == 0,
                "shared vectors on sm_90a hold whole 16-element chunks: the length must be a multiple of 16");
  using elem_type = T;
  static constexpr int length = L;
  alignas(16) T data[L];
  __device__ __forceinline__ uint32_t address(uint32_t byte_offset) const {
    return static_cast<uint32_t>(__cvta_generic_to_shared(data)) + byte_offset;
  }
};

namespace detail {
template <class X> struct is_st : std::false_type {};
template <class T, int R, int C> struct is_st<st<T, R, C>> : std::true_type {};
template <class X> struct is_sv : std::false_type {};
template <class T, int L> struct is_sv<sv<T, L>> : std::true_type {};
}  // namespace detail

// The shared tile or vector at byte OFFSET of the block's dynamic shared memory (OFFSET from the
// lds-alloc pass; the launcher passes the kernel's total `kt.lds_bytes` at launch).
template <class S, int OFFSET>
__device__ __forceinline__ S& shared_at() {
  static_assert(OFFSET >= 0 && OFFSET % 16 == 0, "kt::shared_at: offsets are 16-byte aligned (the lds-alloc pass aligns them)");
  static_assert(detail::is_st<S>::value || detail::is_sv<S>::value, "kt::shared_at places a kt::st or kt::sv");
  extern __shared__ __align__(128) unsigned char kt_dynamic_shared[];
  return *reinterpret_cast<S*>(kt_dynamic_shared + OFFSET);
}

static_assert(sizeof(st<bf16, 16, 16>) == 16 * 16 * 2, "a shared tile takes exactly rows x cols x sizeof(T) bytes");
static_assert(sizeof(st<float, 32, 64>) == 32 * 64 * 4, "a shared tile takes exactly rows x cols x sizeof(T) bytes");
static_assert(sizeof(sv<float, 16>) == 16 * 4, "a shared vector takes exactly length x sizeof(T) bytes");

}  // namespace kt

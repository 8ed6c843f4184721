// ktile / NVIDIA Hopper: shared tiles (kt::st) and vectors (kt::sv) in the block's dynamic
// shared memory, and kt::shared_at<S, OFFSET>().
//
// An st<T, R, C> is exactly R·C·sizeof(T) bytes (the lds-alloc pass lays tiles out by that
// size), in 16-byte chunks, laid out as the K-major swizzled layouts that a wgmma matrix
// descriptor describes (PTX ISA, "Shared Memory Matrix Layout"), so an MMA can read B straight
// from the tile (mma_shared.hpp). With rows of S = C·sizeof(T) bytes:
//   S a multiple of 128  column blocks of 128 bytes, each an R×128-byte region (the 128B swizzle
//                        atom, 8 rows × 128 bytes, repeated down): chunk k of row r sits in block
//                        k / 8, row r, position (k % 8) ^ (r % 8)
//   S = 64               rows packed, chunk k of row r at position k ^ ((r / 2) % 4)  (64B swizzle)
//   S = 32               rows packed, chunk k of row r at position k ^ ((r / 4) % 2)  (32B swizzle)
//   other widths         rows packed, the chunk's index within its 128-byte line XORed with the
//                        line number (no descriptor describes these: an MMA falls back to ldmatrix)
// Each is the swizzle XOR of address bits [4, 4+b) with bits [7, 7+b) inside an atom, so eight
// consecutive rows of one chunk column fall in eight different bank groups and an ldmatrix /
// stmatrix of an 8×8 block is conflict-free. The atoms repeat on 1024-byte boundaries: a tile an
// MMA reads starts on one (lds-alloc aligns it: the target's mma_shared_alignment).
// An sv<T, L> is L plain elements.
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
  // The wgmma swizzle the layout is (128, 64 or 32 bytes), 0 where none describes it.
  static constexpr int swizzle_bytes = row_chunks % 8 == 0 ? 128 : row_chunks == 4 ? 64 : row_chunks == 2 ? 32 : 0;
  static constexpr int atom_chunks = swizzle_bytes / 16;         // chunks per row of an atom
  alignas(16) T data[R * C];

  // Byte offset of chunk k of row r.
  __device__ static __forceinline__ uint32_t chunk_offset(int r, int k) {
    if constexpr (swizzle_bytes == 128) return 16u * ((k >> 3) * R * 8 + r * 8 + ((k & 7) ^ (r & 7)));
    if constexpr (swizzle_bytes == 64) return 16u * (r * 4 + (k ^ ((r >> 1) & 3)));
    if constexpr (swizzle_bytes == 32) return 16u * (r * 2 + (k ^ ((r >> 2) & 1)));
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
namespace detail {
// The block's dynamic shared memory (its size is the kernel's `kt.lds_bytes`, passed at launch).
__device__ __forceinline__ unsigned char* dynamic_shared() {
  extern __shared__ __align__(1024) unsigned char kt_dynamic_shared[];   // wgmma / TMA swizzle atoms repeat per 1 KiB
  return kt_dynamic_shared;
}
}  // namespace detail

template <class S, int OFFSET>
__device__ __forceinline__ S& shared_at() {
  static_assert(OFFSET >= 0 && OFFSET % 16 == 0, "kt::shared_at: offsets are 16-byte aligned (the lds-alloc pass aligns them)");
  static_assert(detail::is_st<S>::value || detail::is_sv<S>::value, "kt::shared_at places a kt::st or kt::sv");
  return *reinterpret_cast<S*>(detail::dynamic_shared() + OFFSET);
}

static_assert(sizeof(st<bf16, 16, 16>) == 16 * 16 * 2, "a shared tile takes exactly rows x cols x sizeof(T) bytes");
static_assert(sizeof(st<float, 32, 64>) == 32 * 64 * 4, "a shared tile takes exactly rows x cols x sizeof(T) bytes");
static_assert(sizeof(sv<float, 16>) == 16 * 4, "a shared vector takes exactly length x sizeof(T) bytes");

}  // namespace kt

#include "ktile/common/shared_list.hpp"   // kt::shared_index: a list of tiles indexed on the device

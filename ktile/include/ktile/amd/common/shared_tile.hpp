// ktile / AMD: shared tiles (kt::st) and vectors (kt::sv) in the block's LDS, and
// kt::shared_at<S, OFFSET>().
//
// An st<T, R, C> is exactly R·C·sizeof(T) bytes (the lds-alloc pass lays tiles out by that
// size), row-major in 16-byte chunks with the chunks of a row permuted — a swizzle of addresses,
// not of size: for rows of a multiple of 128 bytes chunk k of row r sits at k ^ (r % 8);
// narrower rows XOR a chunk's index within its 128-byte line with the line number. The 16
// lanes of a group read 16 consecutive rows of one chunk column (lane_layout.hpp), which the
// swizzle spreads over eight 16-byte bank groups. A run of a lane's adjacent columns never
// crosses a chunk, so it is one ds_read of up to 16 bytes. An sv<T, L> is L plain elements.
#pragma once

#include <cstdint>

#include "ktile/amd/common/isa_memory.hpp"
#include "ktile/amd/common/scalars.hpp"

namespace kt {

template <class T, int R, int C>
struct st {
  static_assert(R > 0 && C > 0 && R % 16 == 0 && C % 16 == 0,
                "shared tiles on AMD are built of 16x16 blocks: rows and columns must be multiples of 16");
  using elem_type = T;
  static constexpr int rows = R, cols = C;
  static constexpr int chunk_elems = 16 / sizeof(T);             // elements per 16-byte chunk
  static constexpr int row_chunks = C * sizeof(T) / 16;          // chunks per row
  alignas(16) T data[R * C];

  // Byte offset of chunk k of row r, and its inverse: the (row, chunk) stored at a chunk slot.
  __host__ __device__ static constexpr uint32_t chunk_offset(int r, int k) {
    if (row_chunks % 8 == 0) return 16u * (r * row_chunks + (k ^ (r & 7)));
    const int linear = r * row_chunks + k;
    return 16u * (linear ^ ((linear >> 3) & 7));
  }
  __host__ __device__ static constexpr int chunk_at_slot(int slot) {   // r * row_chunks + k
    if (row_chunks % 8 == 0) return slot ^ ((slot / row_chunks) & 7);
    return slot ^ ((slot >> 3) & 7);   // the XOR leaves bits 3+ alone: its own inverse
  }
  // Byte offset of element (r, c).
  __host__ __device__ static constexpr uint32_t offset(int r, int c) {
    return chunk_offset(r, c / chunk_elems) + (c % chunk_elems) * sizeof(T);
  }
  __device__ __forceinline__ uint32_t address() const { return isa::lds_address(data); }
};

template <class T, int L>
struct sv {
  static_assert(L > 0 && L % 16 == 0,
                "shared vectors on AMD hold whole 16-element chunks: the length must be a multiple of 16");
  using elem_type = T;
  static constexpr int rows = 1, cols = L, length = L;
  static constexpr int chunk_elems = 16 / sizeof(T), row_chunks = L * sizeof(T) / 16;
  alignas(16) T data[L];
  __host__ __device__ static constexpr uint32_t chunk_offset(int, int k) { return 16u * k; }
  __host__ __device__ static constexpr int chunk_at_slot(int slot) { return slot; }
  __host__ __device__ static constexpr uint32_t offset(int, int c) { return c * sizeof(T); }
  __device__ __forceinline__ uint32_t address() const { return isa::lds_address(data); }
};

namespace detail {
template <class X> struct is_st : std::false_type {};
template <class T, int R, int C> struct is_st<st<T, R, C>> : std::true_type {};
template <class X> struct is_sv : std::false_type {};
template <class T, int L> struct is_sv<sv<T, L>> : std::true_type {};
}  // namespace detail

// The shared tile or vector at byte OFFSET of the block's dynamic LDS (OFFSET from the lds-alloc
// pass; the launcher passes the kernel's total `kt.lds_bytes` at launch).
template <class S, int OFFSET>
__device__ __forceinline__ S& shared_at() {
  static_assert(OFFSET >= 0 && OFFSET % 16 == 0, "kt::shared_at: offsets are 16-byte aligned (the lds-alloc pass aligns them)");
  static_assert(detail::is_st<S>::value || detail::is_sv<S>::value, "kt::shared_at places a kt::st or kt::sv");
  return *reinterpret_cast<S*>(isa::dynamic_lds() + OFFSET);
}

static_assert(sizeof(st<bf16, 16, 16>) == 16 * 16 * 2, "a shared tile takes exactly rows x cols x sizeof(T) bytes");
static_assert(sizeof(st<float, 32, 64>) == 32 * 64 * 4, "a shared tile takes exactly rows x cols x sizeof(T) bytes");
static_assert(sizeof(sv<float, 16>) == 16 * 4, "a shared vector takes exactly length x sizeof(T) bytes");

}  // namespace kt

#include "ktile/common/shared_list.hpp"   // kt::shared_index: a list of tiles indexed on the device

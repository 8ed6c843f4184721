// ktile / NVIDIA Hopper: kt::copy_async (global -> shared, the whole block), kt::wait<VM, LDS>,
// kt::bind and kt::barrier — traps 1 and 4 (docs/cpp-api.md, "Waits, binds and barriers").
//
// A copy the tensor-maps pass gave a tensor map is a TMA copy completing on its tile's mbarrier
// (tensor_copy.hpp, arrivals.hpp; waited by kt::wait_arrivals). The others are below.
//
// copy_async: every thread of the block (blockDim.x of them, warps × 32) takes 16-byte chunks
// in turn (consecutive threads, consecutive chunks: coalesced) and issues `cp.async.cg` with a
// source size, so a chunk partly or wholly outside the global is zero-filled by the hardware.
// Then ONE `cp.async.commit_group`, so kt::wait<VM, ...> is `cp.async.wait_group VM` exactly.
// When the rows are not 16-byte aligned (or columns are strided) the copy falls back to loads
// and shared stores by the same threads; its group is then empty and the barrier that follows
// every wait publishes the stores.
#pragma once

#include "ktile/common/global_layout.hpp"
#include "ktile/nvidia/hopper/global_access.hpp"
#include "ktile/nvidia/hopper/register_tile.hpp"
#include "ktile/nvidia/hopper/shared_tile.hpp"
#include "ktile/nvidia/hopper/tensor_copy.hpp"

namespace kt {
namespace detail {

__device__ __forceinline__ void cp_async_16(uint32_t dst_shared, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :: "r"(dst_shared), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Bytes of a 16-byte chunk starting at column c that lie inside a row of `cols` columns.
template <class T> __device__ __forceinline__ uint32_t bytes_inside(index_t c, index_t cols) {
  if (c < 0 || c >= cols) return 0;
  const index_t n = (cols - c) * static_cast<index_t>(sizeof(T));
  return n >= 16 ? 16u : static_cast<uint32_t>(n);
}

// The window wholly inside the global, 16-byte aligned: each chunk is one cp.async of 16
// bytes from a row pointer, with no bounds arithmetic (the common case, and the one a kernel's
// bandwidth depends on: about a quarter of the instructions of the checked loop below).
template <class T, int R, int C, class S, class ChunkAt>
__device__ __forceinline__ void copy_window_inside(S& dst, const T* first, index_t row_stride, ChunkAt&& chunk_at) {
  constexpr unsigned chunk_elems = 16 / sizeof(T), row_chunks = C / chunk_elems;
  const unsigned char* src = reinterpret_cast<const unsigned char*>(first);
  const index_t row_bytes = row_stride * static_cast<index_t>(sizeof(T));
  const unsigned threads = blockDim.x, t = threadIdx.x;
  if (threads % row_chunks == 0) {
    // each thread keeps one chunk column and steps down the rows: one pointer add per chunk
    const unsigned chunk = t % row_chunks, step = threads / row_chunks;
    const index_t jump = static_cast<index_t>(step) * row_bytes;
    const unsigned char* p = src + static_cast<index_t>(t / row_chunks) * row_bytes + 16 * chunk;
#pragma unroll 4
    for (unsigned row = t / row_chunks; row < R; row += step, p += jump)
      cp_async_16(dst.address(chunk_at(row, chunk)), p, 16);
    return;
  }
#pragma unroll 4
  for (unsigned k = t; k < R * row_chunks; k += threads) {
    const unsigned row = k / row_chunks, chunk = k % row_chunks;
    cp_async_16(dst.address(chunk_at(row, chunk)), src + static_cast<index_t>(row) * row_bytes + 16 * chunk, 16);
  }
}

// R rows × C columns of g[b, d] from (r0, c0) into a shared tile / vector, asynchronously.
// `chunk_at(row, k)`: the destination's byte offset of chunk k of a row.
template <class T, int R, int C, class S, class ChunkAt>
__device__ __forceinline__ void copy_window(S& dst, const gl<T>& g, index_t b, index_t d, index_t r0, index_t c0,
                                            ChunkAt&& chunk_at) {
  constexpr int chunk_elems = 16 / sizeof(T), row_chunks = C / chunk_elems;
  const bool plane = g.has_plane(b, d);
  const T* base = plane ? g.at(b, d, 0, 0) : g.data;
  // 16-byte chunks need every row's first chunk aligned: the plane, the row stride and, at an
  // element coordinate, the first column (c0 is a multiple of the chunk at a tile coordinate)
  const uintptr_t bits = reinterpret_cast<uintptr_t>(base) | static_cast<uintptr_t>(g.stride[2] * sizeof(T)) |
                         static_cast<uintptr_t>(c0 * static_cast<index_t>(sizeof(T)));
  const bool vector_ok = g.stride[3] == 1 && bits % 16 == 0;
  if (vector_ok && plane && r0 >= 0 && r0 + R <= g.rows() && c0 >= 0 && c0 + C <= g.cols()) {
    copy_window_inside<T, R, C>(dst, base + r0 * g.stride[2] + c0, g.stride[2], chunk_at);
    cp_async_commit();
    return;
  }
  for (int k = threadIdx.x; k < R * row_chunks; k += blockDim.x) {
    const int row = k / row_chunks, chunk = k % row_chunks;
    const index_t gr = r0 + row, gc = c0 + chunk * chunk_elems;
    const bool row_ok = plane && gr >= 0 && gr < g.rows();
    if (vector_ok) {
      const uint32_t n = row_ok ? bytes_inside<T>(gc, g.cols()) : 0u;
      cp_async_16(dst.address(chunk_at(row, chunk)), n ? base + gr * g.stride[2] + gc : g.data, n);
      continue;
    }
    T values[chunk_elems];
#pragma unroll
    for (int e = 0; e < chunk_elems; ++e) {
      const index_t c = gc + e;
      values[e] = row_ok && c >= 0 && c < g.cols() ? load_global(g.at(b, d, gr, c)) : cast_to<T>(0);
    }
    uint4 raw;
    __builtin_memcpy(&raw, values, 16);
    *reinterpret_cast<uint4*>(reinterpret_cast<unsigned char*>(dst.data) + chunk_at(row, chunk)) = raw;
  }
  cp_async_commit();
}

}  // namespace detail

template <class T, int R, int C, class U, class At>
__device__ __forceinline__ void copy_async(st<T, R, C>& dst, const gl<U>& g, At where) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared tile's element type must be the global's");
  detail::copy_window<T, R, C>(dst, g, at.b, at.d, at.r, at.c,
                               [](int r, int k) { return st<T, R, C>::chunk_offset(r, k); });
}

template <class T, int L, class U, class At>
__device__ __forceinline__ void copy_async(sv<T, L>& dst, const gl<U>& g, At where) {
  const elem_coord at = origin_of<1, L>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared vector's element type must be the global's");
  detail::copy_window<T, 1, L>(dst, g, at.b, at.d, at.r, at.c, [](int, int k) { return 16u * k; });
}

// The TMA copy into the tile of arrival slot S, with the tensor map the host encoded for this
// parameter and tile shape.
template <int S, class T, int R, int C, class U, class A, class At>
__device__ __forceinline__ void copy_async(st<T, R, C>& dst, const gl<U>& g, At where, A& arrivals,
                                           const tensor_map& map) {
  const elem_coord at = origin_of<R, C>(where);
  static_assert(std::is_same<T, U>::value, "kt::copy_async: the shared tile's element type must be the global's");
  arrivals.template issued<S>();
  detail::tensor_copy(dst, map, A::address(S), at.c, at.r, at.d, at.b);
}

// Wait until at most VM of this thread's copy_async groups are in flight (VM = -1: no wait).
// LDS is accepted and ignored: shared -> register loads (ldmatrix) are scoreboarded on sm_90a.
// Either way a compiler memory barrier, ordering the shared accesses around it.
template <int VM, int LDS>
__device__ __forceinline__ void wait() {
  static_assert(VM >= -1 && VM <= 63, "kt::wait: sm_90a's cp.async group counter takes 0..63 (or -1: no wait)");
  if constexpr (VM >= 0) asm volatile("cp.async.wait_group %0;\n" :: "n"(VM) : "memory");
  else asm volatile("" ::: "memory");
}

// Trap 1: an asm that reads and writes every register of t, so nothing that uses t is hoisted
// above the wait before it.
namespace detail {
template <class X> __device__ __forceinline__ void bind_value(X& v) {
  if constexpr (std::is_same<X, float2>::value) {
    // fp32 pairs (an accumulator's) in place: a bit-cast would be a move nvcc may put before
    // the wait this bind follows (a wgmma's registers read while it still writes them)
    asm volatile("" : "+f"(v.x), "+f"(v.y));
  } else if constexpr (std::is_same<X, float>::value) {
    asm volatile("" : "+f"(v));
  } else if constexpr (sizeof(X) == 8) {
    uint64_t b = bits_of<uint64_t>(v);
    uint32_t lo = static_cast<uint32_t>(b), hi = static_cast<uint32_t>(b >> 32);
    asm volatile("" : "+r"(lo), "+r"(hi));
    v = from_bits<X>((static_cast<uint64_t>(hi) << 32) | lo);
  } else {
    static_assert(sizeof(X) <= 4, "kt::bind: register units are at most 8 bytes");
    uint32_t b = bits_of<uint32_t>(v);
    asm volatile("" : "+r"(b));
    v = from_bits<X>(b);
  }
}
}  // namespace detail

template <class X> __device__ __forceinline__ void bind(X& t) {
  if constexpr (detail::is_rt<X>::value) {
#pragma unroll
    for (int i = 0; i < X::height; ++i)
#pragma unroll
      for (int j = 0; j < X::width; ++j)
#pragma unroll
        for (int p = 0; p < 4; ++p) detail::bind_value(t.tiles[i][j][p]);
  } else if constexpr (detail::is_rv<X>::value) {
#pragma unroll
    for (int c = 0; c < X::chunks; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) detail::bind_value(t.data[c][h]);
  } else {
    detail::bind_value(t);
  }
}

// All warps meet; shared-memory writes from registers before it are visible after it. It does
// not wait for copies in flight: the waits pass puts kt::wait before it (trap 4).
__device__ __forceinline__ void barrier() { __syncthreads(); }

}  // namespace kt

// ktile: kt::gl<T>, a 4-D global tensor (batch, depth, rows, cols) as it crosses the kernel
// boundary. Its layout is the loader's ABI (docs/cpp-api.md, "Types"): a pointer, four extents
// and four strides in ELEMENTS, 72 bytes, 8-aligned, trivially copyable. Vendor-neutral.
// Uses __host__ / __device__: CUDA and HIP define them; a device-only prelude must too.
#pragma once

#include <cstdint>
#include <type_traits>

#include "ktile/common/tags.hpp"

namespace kt {

template <class T>
struct gl {
  T* data;
  int64_t extent[4];   // batch, depth, rows, cols
  int64_t stride[4];   // in elements, same order

  __host__ __device__ index_t batch() const { return extent[0]; }
  __host__ __device__ index_t depth() const { return extent[1]; }
  __host__ __device__ index_t rows() const { return extent[2]; }
  __host__ __device__ index_t cols() const { return extent[3]; }

  // g[b, d]: whether that (batch, depth) plane exists at all.
  __host__ __device__ bool has_plane(index_t b, index_t d) const {
    return b >= 0 && b < extent[0] && d >= 0 && d < extent[1];
  }
  // The first element of g[b, d, row, col], not bounds-checked.
  __host__ __device__ T* at(index_t b, index_t d, index_t row, index_t col) const {
    return data + b * stride[0] + d * stride[1] + row * stride[2] + col * stride[3];
  }
  __host__ __device__ bool has_element(index_t row, index_t col) const {
    return row >= 0 && row < extent[2] && col >= 0 && col < extent[3];
  }
};

// The first element of an R×C tile at a coordinate of either unit (a vector: R = 1, C = L):
// every load, store and copy takes both units and starts from this.
template <int R, int C> __host__ __device__ constexpr elem_coord origin_of(coord at) {
  return elem_coord{at.b, at.d, at.r * R, at.c * C};
}
template <int R, int C> __host__ __device__ constexpr elem_coord origin_of(elem_coord at) {
  return at;
}

// The ABI, checked where it is defined: a loader passes exactly these 72 bytes.
static_assert(sizeof(gl<float>) == 72, "kt::gl must be 72 bytes: T* data, int64_t extent[4], int64_t stride[4]");
static_assert(alignof(gl<float>) == 8, "kt::gl must be 8-byte aligned");
static_assert(std::is_trivially_copyable<gl<float>>::value, "kt::gl must be trivially copyable to cross the kernel boundary");
static_assert(std::is_standard_layout<gl<float>>::value, "kt::gl must be standard-layout so its field offsets are the ABI's");

}  // namespace kt

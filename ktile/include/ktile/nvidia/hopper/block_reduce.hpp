// ktile / NVIDIA Hopper: kt::block_reduce_sum / _max / _min<WARPS>(dst, x) — every warp gets the
// reduction of x over warps 0..WARPS-1, combined in that order, so the result is the same run to
// run and in every warp (the interpreter's `_warp_order_combiner`).
//
// Scratch: each instantiation owns a static __shared__ buffer of WARPS × (vector length or 1) ×
// sizeof(element) bytes, beside the kernel's dynamic shared memory (e.g. 4 warps of a 16-float
// row vector: 256 bytes). Each warp publishes its values (one lane per distinct element), a
// block barrier, every lane folds warps 0..WARPS-1 for the elements it holds, a second barrier
// before the buffer may be written again. Every warp of the block must reach it (the verify
// pass checks that no branch on the warp id surrounds it).
#pragma once

#include "ktile/nvidia/hopper/reductions.hpp"

namespace kt {
namespace detail {

template <class Kind, class T> __device__ __forceinline__ T combine_as(T a, T b) {
  if constexpr (is_float_elem<T>::value) return cast_to<T>(reducer<Kind>::combine(as_float(a), as_float(b)));
  else if constexpr (std::is_same<T, int32_t>::value) return reducer<Kind>::combine(a, b);
  else return wrap_to<T>(reducer<Kind>::combine(static_cast<int32_t>(a), static_cast<int32_t>(b)));
}

// The block's scratch for one (warps, length, element type) instantiation.
template <int WARPS, int LENGTH, class T> __device__ __forceinline__ T* block_scratch() {
  __shared__ alignas(16) unsigned char scratch[WARPS * LENGTH * sizeof(T)];
  return reinterpret_cast<T*>(scratch);
}

template <class Kind, int WARPS, class V>
__device__ __forceinline__ void block_reduce_vector(V& dst, const V& x) {
  using T = typename V::elem_type;
  using F = typename V::form;
  constexpr bool g = std::is_same<F, g_form>::value;
  T* scratch = block_scratch<WARPS, V::length, T>();
  const int warp = static_cast<int>(warp_id());
  // g-form values repeat across a quad's 4 lanes, t-form values across the 8 quads: one writes
  const bool writer = g ? lane_in_group() == 0 : lane_group() == 0;
  if (warp < WARPS && writer) {
    each_vec_pos<V>([&](const vec_pos& q) { scratch[warp * V::length + index_of<F>(q)] = at_vec(x, q); });
  }
  __syncthreads();
  each_vec_pos<V>([&](const vec_pos& q) {
    const int k = index_of<F>(q);
    T v = scratch[k];
#pragma unroll
    for (int w = 1; w < WARPS; ++w) v = combine_as<Kind>(v, scratch[w * V::length + k]);
    at_vec(dst, q) = v;
  });
  __syncthreads();
}

template <class Kind, int WARPS, class S>
__device__ __forceinline__ void block_reduce_scalar(S& dst, S x) {
  S* scratch = block_scratch<WARPS, 1, S>();
  const int warp = static_cast<int>(warp_id());
  if (warp < WARPS && lane_id() == 0) scratch[warp] = x;
  __syncthreads();
  S v = scratch[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) v = combine_as<Kind>(v, scratch[w]);
  __syncthreads();
  dst = v;
}

template <class Kind, int WARPS, class D, class X>
__device__ __forceinline__ void block_reduce(D& dst, const X& x) {
  static_assert(WARPS >= 1, "kt: block_reduce combines at least one warp");
  static_assert(!is_rt<X>::value, "kt: block_reduce combines register vectors or scalars; reduce a tile first (kt::row_sum)");
  if constexpr (is_rv<X>::value) block_reduce_vector<Kind, WARPS>(dst, x);
  else block_reduce_scalar<Kind, WARPS>(dst, x);
}

}  // namespace detail

template <int WARPS, class D, class X> __device__ __forceinline__ void block_reduce_sum(D& dst, const X& x) {
  detail::block_reduce<detail::sum_kind, WARPS>(dst, x);
}
template <int WARPS, class D, class X> __device__ __forceinline__ void block_reduce_max(D& dst, const X& x) {
  detail::block_reduce<detail::max_kind, WARPS>(dst, x);
}
template <int WARPS, class D, class X> __device__ __forceinline__ void block_reduce_min(D& dst, const X& x) {
  detail::block_reduce<detail::min_kind, WARPS>(dst, x);
}

}  // namespace kt

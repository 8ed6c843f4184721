// ktile / AMD: kt::block_reduce_sum / _max / _min<WARPS>(dst, x) — every wave gets the reduction
// of x over waves 0..WARPS-1, combined in that order, so the result is the same run to run and
// in every wave (the interpreter's `_warp_order_combiner`).
//
// Scratch: each instantiation owns a static __shared__ buffer of WARPS × (vector length or 1) ×
// sizeof(element) bytes, beside the kernel's dynamic LDS (it shows in the code object's static
// LDS). Each wave publishes its values (one lane per distinct element), a block barrier, every
// lane folds waves 0..WARPS-1 for the elements it holds, a second barrier before the buffer may
// be written again. Every wave of the block must reach it (the verify pass checks that no
// branch on the warp id surrounds it).
#pragma once

#include "ktile/amd/common/reductions.hpp"

namespace kt {
namespace detail {

template <class Kind, class T> __device__ __forceinline__ T combine_as(T a, T b) {
  if constexpr (is_float_elem<T>::value) return cast_to<T>(reducer<Kind>::combine(as_float(a), as_float(b)));
  else if constexpr (std::is_same<T, int32_t>::value) return reducer<Kind>::combine(a, b);
  else return wrap_to<T>(reducer<Kind>::combine(static_cast<int32_t>(a), static_cast<int32_t>(b)));
}

// The LDS address of the block's scratch for one (waves, length, element type) instantiation.
template <int WARPS, int LENGTH, class T> struct block_reduce_scratch {};
template <int WARPS, int LENGTH, class T> __device__ __forceinline__ uint32_t block_scratch() {
  return isa::static_lds<block_reduce_scratch<WARPS, LENGTH, T>, WARPS * LENGTH * sizeof(T)>();
}

template <class T> __device__ __forceinline__ void scratch_write(uint32_t address, T v) {
  isa::lds_write<sizeof(T)>(address, __builtin_bit_cast(isa::word<sizeof(T)>, v));
}
template <class T> __device__ __forceinline__ T scratch_read(uint32_t address) {
  return __builtin_bit_cast(T, isa::lds_read<sizeof(T)>(address));
}

template <class Kind, int WARPS, class V>
__device__ __forceinline__ void block_reduce_vector(V& dst, const V& x) {
  using T = typename V::elem_type;
  using F = typename V::map;
  const uint32_t scratch = block_scratch<WARPS, V::length, T>();
  const int warp = isa::wave(), lane = isa::lane();
  if (warp < WARPS && publishes<F>(lane)) {
    static_for<V::regs>([&](auto p) {
      const int k = F::element(lane, decltype(p)::value).c;
      scratch_write(scratch + sizeof(T) * (warp * V::length + k), x.get(decltype(p)::value));
    });
  }
  isa::barrier();
  static_for<V::regs>([&](auto p) {
    const int k = F::element(lane, decltype(p)::value).c;
    T v = scratch_read<T>(scratch + sizeof(T) * k);
    static_for<WARPS - 1>([&](auto w) {
      v = combine_as<Kind>(v, scratch_read<T>(scratch + sizeof(T) * ((decltype(w)::value + 1) * V::length + k)));
    });
    dst.set(decltype(p)::value, v);
  });
  isa::barrier();
}

template <class Kind, int WARPS, class S>
__device__ __forceinline__ void block_reduce_scalar(S& dst, S x) {
  const uint32_t scratch = block_scratch<WARPS, 1, S>();
  const int warp = isa::wave();
  if (warp < WARPS && isa::lane() == 0) scratch_write(scratch + sizeof(S) * warp, x);
  isa::barrier();
  S v = scratch_read<S>(scratch);
  static_for<WARPS - 1>([&](auto w) { v = combine_as<Kind>(v, scratch_read<S>(scratch + sizeof(S) * (decltype(w)::value + 1))); });
  isa::barrier();
  dst = v;
}

template <class Kind, int WARPS, class D, class X>
__device__ __forceinline__ void block_reduce(D& dst, const X& x) {
  static_assert(WARPS >= 1, "kt: block_reduce combines at least one warp");
  static_assert(!is_tile<X>::value, "kt: block_reduce combines register vectors or scalars; reduce a tile first (kt::row_sum)");
  if constexpr (is_vec<X>::value) block_reduce_vector<Kind, WARPS>(dst, x);
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

// ktile / NVIDIA Hopper: kt::rand(dst, seed, offsets) and kt::rand4 — Philox draws
// (ktile/common/philox.hpp, bit-exact with Triton's tl.rand / tl.rand4x) at every element of a
// tile or vector of int32 offsets. kt::rand4 on a flat tile draws each lane's four adjacent
// elements of a row (pairs 0-1 and 2-3 of a slot) with one Philox call when their offsets are
// a run 4g .. 4g + 3; other layouts and vectors draw element by element.
#pragma once

#include <cstdint>

namespace kt::detail {
__device__ __forceinline__ uint32_t mul_hi(uint32_t a, uint32_t b) { return __umulhi(a, b); }
}  // namespace kt::detail

#include "ktile/common/philox.hpp"   // after mul_hi, which it uses
#include "ktile/nvidia/hopper/maps.hpp"

namespace kt {

template <class D, class S, class X>
__device__ __forceinline__ void rand(D& dst, S seed, const X& offsets) {
  static_assert(std::is_integral<S>::value, "kt::rand: the seed is an integer");
  using T = detail::elem_of_t<D>;
  const uint64_t key = static_cast<uint64_t>(static_cast<int64_t>(seed));   // a signed seed sign-extends
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  if constexpr (detail::is_rt<D>::value || detail::is_rv<D>::value) {
    auto ro = detail::operand<D>(offsets);
    detail::map_into(dst, [&](const auto& q) { return cast_to<T>(detail::rand_at(k0, k1, ro.get(q))); });
  } else {
    dst = cast_to<T>(detail::rand_at(k0, k1, offsets));
  }
}

template <class D, class S, class X>
__device__ __forceinline__ void rand4(D& dst, S seed, const X& offsets) {
  static_assert(std::is_integral<S>::value, "kt::rand4: the seed is an integer");
  using T = detail::elem_of_t<D>;
  const uint64_t key = static_cast<uint64_t>(static_cast<int64_t>(seed));   // a signed seed sign-extends
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  if constexpr (detail::is_rt<D>::value && std::is_same<typename D::layout, flat>::value) {
    auto ro = detail::operand<D>(offsets);
    const detail::philox_keys ks = detail::philox_schedule(k0, k1);   // once for the tile's calls
#pragma unroll
    for (int i = 0; i < D::height; ++i)
#pragma unroll
      for (int j = 0; j < D::width; ++j)
#pragma unroll
        for (int p = 0; p < 4; p += 2) {   // pairs p, p + 1: four adjacent columns of one row
          const detail::tile_pos q[4] = {{i, j, p, 0}, {i, j, p, 1}, {i, j, p + 1, 0}, {i, j, p + 1, 1}};
          const int32_t o[4] = {ro.get(q[0]), ro.get(q[1]), ro.get(q[2]), ro.get(q[3])};
          float r[4];
          detail::rand4_quad(r, k0, k1, ks, o);
#pragma unroll
          for (int k = 0; k < 4; ++k) detail::at(dst, q[k]) = cast_to<T>(r[k]);
        }
  } else if constexpr (detail::is_rt<D>::value || detail::is_rv<D>::value) {
    auto ro = detail::operand<D>(offsets);
    detail::map_into(dst, [&](const auto& q) { return cast_to<T>(detail::rand4_at(k0, k1, ro.get(q))); });
  } else {
    dst = cast_to<T>(detail::rand4_at(k0, k1, offsets));
  }
}

}  // namespace kt

// ktile / NVIDIA Hopper: kt::rand(dst, seed, offsets) — Philox draws (ktile/common/philox.hpp, bit-exact
// with Triton's tl.rand) at every element of a tile or vector of int32 offsets.
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

}  // namespace kt

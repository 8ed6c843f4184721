// ktile / AMD: kt::rand(dst, seed, offsets) and kt::rand4 — Philox draws (ktile/common/philox.hpp,
// bit-exact with Triton's tl.rand / tl.rand4x) at every element of a tile or vector of int32
// offsets. kt::rand4 draws element by element here (one call per element, as kt::rand; AMD
// holds flat tiles in the row layout, whose lanes hold no runs of four: not measured).
#pragma once

#include <cstdint>

namespace kt::detail {
__host__ __device__ __forceinline__ uint32_t mul_hi(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32);
}
}  // namespace kt::detail

#include "ktile/common/philox.hpp"   // after mul_hi, which it uses
#include "ktile/amd/common/maps.hpp"

namespace kt {

template <class D, class S, class X>
__device__ __forceinline__ void rand(D& dst, S seed, const X& offsets) {
  static_assert(std::is_integral<S>::value, "kt::rand: the seed is an integer");
  using T = detail::elem_of_t<D>;
  const uint64_t key = static_cast<uint64_t>(static_cast<int64_t>(seed));   // a signed seed sign-extends
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  if constexpr (detail::is_tile<D>::value || detail::is_vec<D>::value) {
    auto ro = detail::operand<D>(offsets);
    detail::map_into(dst, [&](auto p) { return cast_to<T>(detail::rand_at(k0, k1, ro.template get<decltype(p)::value>())); });
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
  if constexpr (detail::is_tile<D>::value || detail::is_vec<D>::value) {
    auto ro = detail::operand<D>(offsets);
    detail::map_into(dst, [&](auto p) { return cast_to<T>(detail::rand4_at(k0, k1, ro.template get<decltype(p)::value>())); });
  } else {
    dst = cast_to<T>(detail::rand4_at(k0, k1, offsets));
  }
}

}  // namespace kt

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

namespace detail {
// Quad n of a flat tile's lane (W 16-column blocks a row of blocks): block (n / 2 / W, n / 2 % W),
// pairs 2 (n % 2) and 2 (n % 2) + 1, four adjacent columns of one row; element k of it.
__device__ __forceinline__ tile_pos rand4_position(int n, int k, int W) {
  const int block = n / 2, p = 2 * (n % 2) + k / 2;
  return {block / W, block % W, p, k % 2};
}
}  // namespace detail

template <class D, class S, class X>
__device__ __forceinline__ void rand4(D& dst, S seed, const X& offsets) {
  static_assert(std::is_integral<S>::value, "kt::rand4: the seed is an integer");
  using T = detail::elem_of_t<D>;
  const uint64_t key = static_cast<uint64_t>(static_cast<int64_t>(seed));   // a signed seed sign-extends
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  if constexpr (detail::is_rt<D>::value && std::is_same<typename D::layout, flat>::value) {
    auto ro = detail::operand<D>(offsets);
    const detail::philox_keys ks = detail::philox_schedule(k0, k1);   // once for the tile's calls
    // Every quad's offsets first, then one check for the whole tile: where all are runs
    // 4g..4g+3 (a kernel drawing at each element's flat index), the calls have no branch
    // between them and their rounds interleave; else each quad is checked on its own.
    constexpr int quads = D::height * D::width * 2;
    int32_t o[quads][4];
    bool runs = true;
#pragma unroll
    for (int n = 0; n < quads; ++n) {
#pragma unroll
      for (int k = 0; k < 4; ++k) o[n][k] = ro.get(detail::rand4_position(n, k, D::width));
      runs = runs && detail::rand4_run(o[n]);
    }
    if (runs) {
#pragma unroll
      for (int n = 0; n < quads; ++n) {
        uint32_t w[4];
        detail::philox_words(w, static_cast<uint32_t>(o[n][0] >> 2), 0u, ks);
#pragma unroll
        for (int k = 0; k < 4; ++k) detail::at(dst, detail::rand4_position(n, k, D::width)) = cast_to<T>(detail::uniform_float(w[k]));
      }
    } else {
#pragma unroll
      for (int n = 0; n < quads; ++n) {
        float r[4];
        detail::rand4_quad(r, k0, k1, ks, o[n]);
#pragma unroll
        for (int k = 0; k < 4; ++k) detail::at(dst, detail::rand4_position(n, k, D::width)) = cast_to<T>(r[k]);
      }
    }
  } else if constexpr (detail::is_rt<D>::value || detail::is_rv<D>::value) {
    auto ro = detail::operand<D>(offsets);
    detail::map_into(dst, [&](const auto& q) { return cast_to<T>(detail::rand4_at(k0, k1, ro.get(q))); });
  } else {
    dst = cast_to<T>(detail::rand4_at(k0, k1, offsets));
  }
}

}  // namespace kt

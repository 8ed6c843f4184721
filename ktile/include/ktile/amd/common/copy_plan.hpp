// ktile / AMD: the copy plan of kt::copy_async — a lane's part of a global -> shared copy,
// apart from where the window lies, computed so that a kernel's loop holds none of it.
//
// A copy is N instructions of `per` 16-byte chunks each (wave_size lanes; a DMA granule may be
// a part of a chunk). The swizzled layout (shared_tile.hpp) repeats: past a period of Z chunks
// (a multiple of `per` and of the row's chunks), chunk slot s + Z holds what slot s holds, Z /
// row_chunks rows further down. So the instructions fall into `phases` = Z / per classes,
// and a lane's global offset in instruction n is
//     lane_offset[n % phases]  +  (n / phases) · (Z / row_chunks) · row_bytes
// where lane_offset depends only on the lane and the global's row stride: the plan reads the
// stride as the kernel argument holds it (not isa::here, global_window.hpp), so the compiler
// computes the `phases` offsets once, before a kernel's loop, and holds them (one VGPR each).
// In the loop a copy adds scalars (its period and its window's first row) and issues its
// instructions straight-line, no loop over them. Wave w takes the instructions of periods
// w, w + waves, ...; every phase of a period, so each lane's phase is a compile-time constant.
#pragma once

#include "ktile/amd/common/global_window.hpp"

namespace kt::detail {

constexpr int lcm_of(int a, int b) {
  int x = a, y = b;
  while (y != 0) { const int t = x % y; x = y; y = t; }
  return a / x * b;
}

// The smallest period of S's chunk slots that is a multiple of `per` chunks and of whole rows,
// or the whole tile rounded up to `per` (one period: every instruction its own phase).
template <class S, int CHUNKS, int PER> constexpr int slot_period() {
  const int step = lcm_of(PER, S::row_chunks);
  for (int z = step; z < CHUNKS; z += step) {
    bool repeats = true;
    for (int s = 0; s + z < CHUNKS && repeats; ++s) repeats = S::chunk_at_slot(s + z) == S::chunk_at_slot(s) + z;
    if (repeats) return z;
  }
  return (CHUNKS + PER - 1) / PER * PER;
}

// The plan for copying into shared S (R × C of T) by instructions of PER chunks a wave.
template <class S, class T, int PER>
struct copy_plan {
  static constexpr int row_chunks = S::row_chunks;
  static constexpr int chunks = S::rows * row_chunks;
  static constexpr int instructions = (chunks + PER - 1) / PER;
  static constexpr int period = slot_period<S, chunks, PER>();
  static constexpr int phases = period / PER;
  static constexpr int periods = (instructions + phases - 1) / phases;
  uint32_t row_bytes;   // the global's row stride in bytes, as the kernel argument holds it
  int wave, waves;

  // This lane's GRANULE bytes of the instruction starting at chunk `first`: the global byte
  // offset from the window's first row and the LDS byte offset from the tile. DMA: the LDS
  // place is the lane's (lane i at 16·first + i·GRANULE), so its chunk is the swizzle's inverse
  // of that slot; the register path (GRANULE 16) loads chunk first + lane and writes it to its
  // swizzled place.
  template <int GRANULE, bool DMA> struct lane_part { uint32_t global, lds; };
  template <int GRANULE, bool DMA> __device__ __forceinline__ lane_part<GRANULE, DMA> lane_at(int first) const {
    const int q = first * 16 / GRANULE + isa::lane();   // this lane's granule
    if constexpr (DMA) {
      const int linear = S::chunk_at_slot(q * GRANULE / 16);   // row * row_chunks + chunk
      return {chunk_offset(linear) + static_cast<uint32_t>(q * GRANULE % 16), static_cast<uint32_t>(q * GRANULE)};
    } else {
      return {chunk_offset(q), S::chunk_offset(q / row_chunks, q % row_chunks)};
    }
  }
  __device__ __forceinline__ uint32_t chunk_offset(int linear) const {
    return static_cast<uint32_t>(linear / row_chunks) * row_bytes + 16u * static_cast<uint32_t>(linear % row_chunks);
  }

  // f(n, part): every instruction n this wave issues (n uniform), with this lane's offsets.
  // Up to `unrolled` instructions a copy (a kernel loop's tiles): straight-line, one uniform
  // test each, the lane offsets of the `phases` held from before the loop plus scalars. More
  // (a large tile: 16 × 1024 at 4 bytes a lane on gfx942 is 128): a loop computing them.
  static constexpr int unrolled = 16;
  template <int GRANULE, bool DMA, class F> __device__ __forceinline__ void each_instruction(F&& f) const {
    if constexpr (instructions <= unrolled) {
      static_for<periods>([&](auto kc) {
        const int k = decltype(kc)::value * waves + wave;
        if (k < periods) {
          static_for<phases>([&](auto pc) {
            constexpr int P = decltype(pc)::value;
            const int n = k * phases + P;
            if (periods * phases == instructions || n < instructions) {
              const lane_part<GRANULE, DMA> at = lane_at<GRANULE, DMA>(P * PER);   // before the loop
              f(n, lane_part<GRANULE, DMA>{at.global + k * period_bytes(), at.lds + k * period_lds_bytes});
            }
          });
        }
      });
    } else {
#pragma clang loop unroll(disable)
      for (int n = wave; n < instructions; n += waves) f(n, lane_at<GRANULE, DMA>(n * PER));
    }
  }
  // The bytes a period spans in the global and in LDS.
  __device__ __forceinline__ uint32_t period_bytes() const { return static_cast<uint32_t>(period / row_chunks) * row_bytes; }
  static constexpr uint32_t period_lds_bytes = 16u * period;
};

template <class S, class T, int PER, class U>
__device__ __forceinline__ copy_plan<S, T, PER> plan_of(const gl<U>& g) {
  return copy_plan<S, T, PER>{static_cast<uint32_t>(field32(g.stride[2])) * static_cast<uint32_t>(sizeof(T)), isa::wave(),
                              isa::block_threads() / isa::wave_size};
}

}  // namespace kt::detail

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

  // The global byte offset (from the window's first row) of this lane's GRANULE bytes in a DMA
  // instruction of phase P of period 0: the granule's LDS place is the lane's, so its chunk is
  // the swizzle's inverse of that slot.
  template <int P, int GRANULE> __device__ __forceinline__ uint32_t lane_offset() const {
    const int q = P * PER * 16 / GRANULE + isa::lane();           // this lane's granule
    const int linear = S::chunk_at_slot(q * GRANULE / 16);        // row * row_chunks + chunk
    return chunk_offset(linear) + static_cast<uint32_t>(q * GRANULE % 16);
  }
  // The global byte offset (from the window's first row) of this lane's chunk in phase P of
  // period 0, in chunk order (the register path, which writes it to its swizzled LDS place).
  template <int P> __device__ __forceinline__ uint32_t lane_chunk_offset() const { return chunk_offset(P * PER + isa::lane()); }
  __device__ __forceinline__ uint32_t chunk_offset(int linear) const {
    return static_cast<uint32_t>(linear / row_chunks) * row_bytes + 16u * static_cast<uint32_t>(linear % row_chunks);
  }
  // The LDS byte offset of this lane's chunk (16 bytes a lane) in phase P of period 0.
  template <int P> __device__ __forceinline__ uint32_t lane_lds_offset() const {
    const int linear = P * PER + isa::lane();
    return S::chunk_offset(linear / row_chunks, linear % row_chunks);
  }
  // f(phase, n, k): every instruction this wave issues, n its index in the copy (uniform) and k
  // the index of the period it lies in; straight-line, with one uniform test each.
  template <class F> __device__ __forceinline__ void each_instruction(F&& f) const {
    static_for<periods>([&](auto kc) {
      const int k = decltype(kc)::value * waves + wave;
      if (k < periods) {
        static_for<phases>([&](auto pc) {
          constexpr int P = decltype(pc)::value;
          if (periods * phases == instructions || k * phases + P < instructions) f(pc, k * phases + P, k);
        });
      }
    });
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

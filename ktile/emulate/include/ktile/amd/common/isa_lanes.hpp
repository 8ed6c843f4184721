// ktile wave emulation of ktile/amd/common/isa_lanes.hpp: where a lane is, ds_bpermute as a wave
// instruction over the lanes' registers, register pins as nothing, the block barrier.
//
// Not checked here: that a value given to `uniform` / `here` (v_readfirstlane) is the same in
// every lane — the emulation returns each lane its own value.
#pragma once

#include <cstdint>

#include "ktile/amd/device.hpp"

namespace kt::isa {

static_assert(wave_size == 32 || wave_size == 64,
              "kt::isa: the family's isa.hpp must state its wave size (32 or 64) before including the shared layer");

inline int thread() { return kt::emulation::lanes().thread(); }
inline int lane() { return kt::emulation::lanes().lane(); }
inline int wave() { return kt::emulation::lanes().wave(); }
inline int block_threads() { return kt::emulation::lanes().threads(); }
inline unsigned block_x() { return kt::amd::block_idx_x(); }
inline unsigned block_y() { return kt::amd::block_idx_y(); }
inline unsigned block_z() { return kt::amd::block_idx_z(); }
inline int lane_pinned() { return lane(); }

inline uint32_t uniform(uint32_t v) { return v; }
inline uint64_t uniform64(uint64_t v) { return v; }
template <class T> inline T here(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "kt::isa::here takes a 32- or 64-bit scalar");
  return v;
}
template <class T> inline T in_vgpr(T v) {
  static_assert(sizeof(T) == 4, "kt::isa::in_vgpr takes a 32-bit value");
  return v;
}

// ds_bpermute_b32: `v` as held by lane `src`, wrapped to the wave as the hardware's byte address is.
inline uint32_t lane_read(uint32_t v, int src) {
  struct operands {
    uint32_t v;
    int src;
  };
  return kt::emulation::lanes().meet<uint32_t>("ds_bpermute_b32", operands{v, src}, [](const operands* in, uint32_t* out) {
    for (int l = 0; l < wave_size; ++l) out[l] = in[in[l].src & (wave_size - 1)].v;
  });
}

inline void pin(uint32_t&) {}
inline void memory_order() {}

inline void barrier_instruction();   // the family's isa.hpp: the block barrier
inline void barrier() { barrier_instruction(); }

}  // namespace kt::isa

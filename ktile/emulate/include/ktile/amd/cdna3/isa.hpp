// ktile wave emulation of ktile/amd/cdna3/isa.hpp (gfx942): the same facts, the waits and the
// barrier as wave instructions of the emulated machine, MFMA 16x16x16 (int8: 16x16x32) by its
// lane maps (ktile/emulation/matrix.hpp), and the 4-byte global->LDS DMA, in flight until the
// wave waits (ktile/emulation/lds.hpp).
#pragma once

#include <cstdint>

namespace kt::isa {

constexpr int wave_size = 64;
constexpr uint32_t buffer_config = 0x00020000u;
constexpr int vm_max_count = 63, lds_max_count = 15;
constexpr bool has_lds_dma = true;
constexpr int lds_dma_bytes = 4;

}  // namespace kt::isa

#include "ktile/amd/common/isa_lanes.hpp"
#include "ktile/amd/common/isa_memory.hpp"
#include "ktile/emulation/matrix.hpp"

namespace kt::isa {

inline void wait_vm() { kt::emulation::wait_vm(); }
inline void wait_lds() { kt::emulation::wait_lds(); }
inline void barrier_instruction() { kt::emulation::block_barrier(); }

// buffer_load_dword ... lds: lane i's 4 bytes land at lds_base + 4·i.
inline void dma_to_lds(buffer r, uint32_t offset, uint32_t lds_base) { copy_to_lds<lds_dma_bytes>(r, offset, lds_base); }

template <class T> struct mma_operand { static constexpr bool exists = false; };
template <> struct mma_operand<__bf16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<_Float16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<signed char> { static constexpr bool exists = true; static constexpr int k = 32; };

// MFMA: k = (K / 4)·(l / 16) + e; accumulator rows 4·(l / 16) + e (blocked).
using kt::emulation::acc_order;
inline void mma(vec<float, 4>& d, const vec<__bf16, 4>& a, const vec<__bf16, 4>& b) {
  kt::emulation::multiply<acc_order::blocked, 16>("v_mfma_f32_16x16x16_bf16", d, a, b);
}
inline void mma(vec<float, 4>& d, const vec<_Float16, 4>& a, const vec<_Float16, 4>& b) {
  kt::emulation::multiply<acc_order::blocked, 16>("v_mfma_f32_16x16x16_f16", d, a, b);
}
inline void mma(vec<int, 4>& d, const vec<signed char, 8>& a, const vec<signed char, 8>& b) {
  kt::emulation::multiply<acc_order::blocked, 32>("v_mfma_i32_16x16x32_i8", d, a, b);
}

}  // namespace kt::isa

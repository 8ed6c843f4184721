// ktile wave emulation of ktile/amd/rdna3/isa.hpp (gfx1100): the same facts, the waits and the
// barrier as wave instructions of the emulated machine, and WMMA 16x16x16 by its lane maps with
// RDNA3's half-wave operand replication checked (ktile/emulation/matrix.hpp).
#pragma once

#include <cstdint>

namespace kt::isa {

constexpr int wave_size = 32;
constexpr uint32_t buffer_config = 0x31004000u;
constexpr int vm_max_count = 63, lds_max_count = 63;
constexpr bool has_lds_dma = false;

}  // namespace kt::isa

#include "ktile/amd/common/isa_lanes.hpp"
#include "ktile/amd/common/isa_memory.hpp"
#include "ktile/emulation/matrix.hpp"

namespace kt::isa {

inline void wait_vm() { kt::emulation::wait_vm(); }
inline void wait_lds() { kt::emulation::wait_lds(); }
inline void barrier_instruction() { kt::emulation::block_barrier(); }

template <class T> struct mma_operand { static constexpr bool exists = false; };
template <> struct mma_operand<__bf16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<_Float16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<signed char> { static constexpr bool exists = true; static constexpr int k = 16; };

// WMMA: 16 k per lane, lanes l and l + 16 replicas; accumulator rows 2e + l / 16 (interleaved).
using kt::emulation::acc_order;
inline void mma(vec<float, 8>& d, const vec<__bf16, 16>& a, const vec<__bf16, 16>& b) {
  kt::emulation::multiply<acc_order::interleaved, 16>("v_wmma_f32_16x16x16_bf16", d, a, b);
}
inline void mma(vec<float, 8>& d, const vec<_Float16, 16>& a, const vec<_Float16, 16>& b) {
  kt::emulation::multiply<acc_order::interleaved, 16>("v_wmma_f32_16x16x16_f16", d, a, b);
}
inline void mma(vec<int, 8>& d, const vec<signed char, 16>& a, const vec<signed char, 16>& b) {
  kt::emulation::multiply<acc_order::interleaved, 16>("v_wmma_i32_16x16x16_iu8", d, a, b);
}

}  // namespace kt::isa

// ktile / AMD RDNA3 (gfx1100) instruction layer: the family's facts, its waits and its matrix
// instructions, then the instructions every AMD family shares (common/isa_*.hpp).
//
// RDNA3 (ktile/targets/gfx1100.py): wave32; WMMA 16x16x16 whose operands are replicated across
// the two half-waves; s_waitcnt vmcnt / lgkmcnt; no global->LDS DMA (kt::copy_async goes
// through registers, common/copy_registers.hpp). Nothing here ran on an RDNA3 GPU.
#pragma once

#include <cstdint>

namespace kt::isa {

constexpr int wave_size = 32;

// Buffer resource word 3 for gfx11 (as ROCm's Tensile and composable_kernel write it): data
// format 4 (32 bits; a zero format reads zeros on gfx10+), resource level 1, OOB_SELECT 3
// (raw: an access is out of range when its offset passes the range).
constexpr uint32_t buffer_config = 0x31004000u;

// The largest counts the wait instructions encode (the waits pass clamps to them).
constexpr int vm_max_count = 63, lds_max_count = 63;

constexpr bool has_lds_dma = false;

}  // namespace kt::isa

#include "ktile/amd/common/isa_lanes.hpp"
#include "ktile/amd/common/isa_memory.hpp"

namespace kt::isa {

// ---- waits (docs/cpp-api.md, "Which counter each asynchronous op completes on") -----------------------
// Always to zero: one tile op is several instructions, so a count of ops is not a count of
// instructions (the waits pass counts ops).
__device__ __forceinline__ void wait_vm() { asm volatile("s_waitcnt vmcnt(0)" ::: "memory"); }
__device__ __forceinline__ void wait_lds() { asm volatile("s_waitcnt lgkmcnt(0)" ::: "memory"); }

// s_barrier (see isa_lanes.hpp's barrier(): asm, so that a one-wave block keeps it)
__device__ __forceinline__ void barrier_instruction() { asm volatile("s_barrier" ::: "memory"); }

// ---- WMMA --------------------------------------------------------------------------------------------------
// d += a·b for one 16x16x16 step, a: 16 rows (the lane's row = lane % 16) × 16 k, b: 16 columns
// × 16 k, each lane holding all 16 k of its row / column, lanes l and l + 16 identical; d: lane
// l, element r holds row 2r + l / 16, column l % 16 (the tables' FragmentMaps).
template <class T> struct mma_operand { static constexpr bool exists = false; };
template <> struct mma_operand<__bf16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<_Float16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<signed char> { static constexpr bool exists = true; static constexpr int k = 16; };

__device__ __forceinline__ void mma(vec<float, 8>& d, const vec<__bf16, 16>& a, const vec<__bf16, 16>& b) {
  d = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(__builtin_bit_cast(vec<short, 16>, a),
                                                  __builtin_bit_cast(vec<short, 16>, b), d);
}
__device__ __forceinline__ void mma(vec<float, 8>& d, const vec<_Float16, 16>& a, const vec<_Float16, 16>& b) {
  d = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, d);
}
// v_wmma_i32_16x16x16_iu8, both operands signed, no clamping (int32 wraps as the interpreter's)
__device__ __forceinline__ void mma(vec<int, 8>& d, const vec<signed char, 16>& a, const vec<signed char, 16>& b) {
  d = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, __builtin_bit_cast(vec<int, 4>, a), true,
                                                 __builtin_bit_cast(vec<int, 4>, b), d, false);
}

}  // namespace kt::isa

// ktile / AMD CDNA3 (gfx942) instruction layer: the family's facts, its waits, its matrix
// instructions and its global->LDS DMA, then the instructions every AMD family shares
// (common/isa_*.hpp).
//
// CDNA3 (ktile/targets/gfx942.py): wave64; MFMA 16x16x16 for 16-bit operands, 16x16x32 for int8
// (its fp8 MFMAs read e4m3fnuz, not ktile's e4m3fn: none here); s_waitcnt vmcnt / lgkmcnt;
// buffer_load_dword ... lds writes 4 bytes per lane into LDS without passing through registers
// and completes on vmcnt. Nothing here ran on a CDNA3 GPU.
#pragma once

#include <cstdint>

namespace kt::isa {

constexpr int wave_size = 64;

// Buffer resource word 3 for gfx9 (gfx90a, gfx942, gfx950): 32-bit data format; raw offsets
// are checked against the range.
constexpr uint32_t buffer_config = 0x00020000u;

// The largest counts the wait instructions encode (the waits pass clamps to them).
constexpr int vm_max_count = 63, lds_max_count = 15;

constexpr bool has_lds_dma = true;
constexpr int lds_dma_bytes = 4;    // per lane and instruction (the table's lds_dma_bytes_per_lane)

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

// ---- global -> LDS DMA ------------------------------------------------------------------------------------
// buffer_load_dword ... lds: lane i's 4 bytes at `offset` land at LDS address lds_base + 4·i
// (lds_base goes to M0: the same in every lane). Offsets out of range write zeros.
__device__ __forceinline__ void dma_to_lds(buffer r, uint32_t offset, uint32_t lds_base) {
  using lds_ptr = __attribute__((address_space(3))) void*;
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r, (lds_ptr)(uniform(lds_base)), lds_dma_bytes,
                                           static_cast<int>(offset), 0, 0, 0);
}

// ---- MFMA ----------------------------------------------------------------------------------------------------
// d += a·b for one 16x16xK step: a: 16 rows (the lane's row = lane % 16) × K, lane l holding
// k = (K / 4)·(l / 16) .. +K/4-1; b likewise with its columns; d: lane l, element r holds row
// 4·(l / 16) + r, column l % 16 (the tables' FragmentMaps).
template <class T> struct mma_operand { static constexpr bool exists = false; };
template <> struct mma_operand<__bf16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<_Float16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<signed char> { static constexpr bool exists = true; static constexpr int k = 32; };

__device__ __forceinline__ void mma(vec<float, 4>& d, const vec<__bf16, 4>& a, const vec<__bf16, 4>& b) {
  d = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(vec<short, 4>, a), __builtin_bit_cast(vec<short, 4>, b),
                                                d, 0, 0, 0);
}
__device__ __forceinline__ void mma(vec<float, 4>& d, const vec<_Float16, 4>& a, const vec<_Float16, 4>& b) {
  d = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, d, 0, 0, 0);
}
__device__ __forceinline__ void mma(vec<int, 4>& d, const vec<signed char, 8>& a, const vec<signed char, 8>& b) {
  d = __builtin_amdgcn_mfma_i32_16x16x32_i8(__builtin_bit_cast(long, a), __builtin_bit_cast(long, b), d, 0, 0, 0);
}

}  // namespace kt::isa

// ktile / AMD RDNA4 (gfx1201) instruction layer: the family's facts, its split wait counters,
// its barrier and its matrix instructions, then the instructions every AMD family shares
// (common/isa_*.hpp).
//
// RDNA4 (ktile/targets/gfx1201.py): wave32; gfx12 WMMA 16x16x16 with no half-wave replication
// (8 k per lane); s_wait_loadcnt / s_wait_dscnt instead of s_waitcnt (which still assembles for
// gfx12, silently: the wrong spelling must not be emitted); s_barrier_signal + s_barrier_wait;
// no global->LDS DMA (kt::copy_async goes through registers). Nothing here ran on an RDNA4 GPU.
#pragma once

#include <cstdint>

namespace kt::isa {

constexpr int wave_size = 32;

// Buffer resource word 3 for gfx11 / gfx12 (as ROCm's Tensile writes it): data format 4 (32
// bits), resource level 1, OOB_SELECT 3 (raw: out of range when the offset passes the range).
constexpr uint32_t buffer_config = 0x31004000u;

// The largest counts the wait instructions encode (the waits pass clamps to them).
constexpr int vm_max_count = 63, lds_max_count = 63;

constexpr bool has_lds_dma = false;

}  // namespace kt::isa

#include "ktile/amd/common/isa_lanes.hpp"
#include "ktile/amd/common/isa_memory.hpp"

namespace kt::isa {

// ---- waits (docs/cpp-api.md, "Which counter each asynchronous op completes on") -----------------------
// gfx12's split counters, always to zero: one tile op is several instructions, so a count of ops
// is not a count of instructions (the waits pass counts ops).
__device__ __forceinline__ void wait_vm() { asm volatile("s_wait_loadcnt 0x0" ::: "memory"); }
__device__ __forceinline__ void wait_lds() { asm volatile("s_wait_dscnt 0x0" ::: "memory"); }

// gfx12's split barrier (see isa_lanes.hpp's barrier(): asm, so that a one-wave block keeps it)
__device__ __forceinline__ void barrier_instruction() {
  asm volatile("s_barrier_signal -1\n\ts_barrier_wait -1" ::: "memory");
}

// ---- WMMA (gfx12) --------------------------------------------------------------------------------------------
// d += a·b for one 16x16x16 step: a: 16 rows (the lane's row = lane % 16) × 16 k, lane l holding
// k = 8·(l / 16) .. +7; b likewise with its columns; d: lane l, element r holds row
// r + 8·(l / 16), column l % 16 (the tables' FragmentMaps).
template <class T> struct mma_operand { static constexpr bool exists = false; };
template <> struct mma_operand<__bf16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<_Float16> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<signed char> { static constexpr bool exists = true; static constexpr int k = 16; };
template <> struct mma_operand<unsigned char> { static constexpr bool exists = true; static constexpr int k = 16; };  // fp8 e4m3fn

__device__ __forceinline__ void mma(vec<float, 8>& d, const vec<__bf16, 8>& a, const vec<__bf16, 8>& b) {
  d = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(__builtin_bit_cast(vec<short, 8>, a),
                                                        __builtin_bit_cast(vec<short, 8>, b), d);
}
__device__ __forceinline__ void mma(vec<float, 8>& d, const vec<_Float16, 8>& a, const vec<_Float16, 8>& b) {
  d = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, d);
}
// v_wmma_i32_16x16x16_iu8, both operands signed, no clamping (int32 wraps as the interpreter's)
__device__ __forceinline__ void mma(vec<int, 8>& d, const vec<signed char, 8>& a, const vec<signed char, 8>& b) {
  d = __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(true, __builtin_bit_cast(vec<int, 2>, a), true,
                                                       __builtin_bit_cast(vec<int, 2>, b), d, false);
}
// v_wmma_f32_16x16x16_fp8_fp8: OCP e4m3fn (fp8 tiles hold their bits as unsigned char)
__device__ __forceinline__ void mma(vec<float, 8>& d, const vec<unsigned char, 8>& a, const vec<unsigned char, 8>& b) {
  d = __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(__builtin_bit_cast(vec<int, 2>, a),
                                                           __builtin_bit_cast(vec<int, 2>, b), d);
}

}  // namespace kt::isa

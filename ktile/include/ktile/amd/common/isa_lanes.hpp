// ktile / AMD instruction layer: where a lane is, moving a 32-bit register between the lanes of
// a wave, pinning a register (an empty asm), and the block barrier.
//
// The instruction layer is every hardware instruction the tile headers issue, each behind one
// small function: this file, isa_memory.hpp and the family's isa.hpp (waits, barrier, MMAs,
// the DMA), with ktile/amd/device.hpp's ids. Everything above it (tiles, maps, reductions,
// loads) is plain C++ over these functions, so a host emulation of the layer can stand in for
// the hardware. The family's isa.hpp states its facts (`wave_size`, `buffer_config`) in
// namespace kt::isa before it includes this file.
#pragma once

#include <cstdint>

#include "ktile/amd/device.hpp"

namespace kt::isa {

static_assert(wave_size == 32 || wave_size == 64,
              "kt::isa: the family's isa.hpp must state its wave size (32 or 64) before including the shared layer");

// ---- where this thread is ------------------------------------------------------------------------
// Blocks are one-dimensional, `warps × wave_size` threads along x (the launcher's block shape).
__device__ __forceinline__ int thread() { return static_cast<int>(kt::amd::thread_idx_x()); }
__device__ __forceinline__ int lane() { return static_cast<int>(kt::amd::thread_idx_x() & (wave_size - 1)); }
__device__ __forceinline__ int wave() { return static_cast<int>(kt::amd::wave_id()); }
__device__ __forceinline__ int block_threads() { return static_cast<int>(__builtin_amdgcn_workgroup_size_x()); }
__device__ __forceinline__ unsigned block_x() { return kt::amd::block_idx_x(); }
__device__ __forceinline__ unsigned block_y() { return kt::amd::block_idx_y(); }
__device__ __forceinline__ unsigned block_z() { return kt::amd::block_idx_z(); }

// The lane id read by an asm the compiler may not move or merge. The per-element (edge-tile)
// paths derive addresses from it, so that the compiler cannot precompute one address per
// element outside a loop and keep them all in registers.
__device__ __forceinline__ int lane_pinned() {
  uint32_t id = kt::amd::thread_idx_x();
  asm volatile("" : "+v"(id));
  return static_cast<int>(id & (wave_size - 1));
}

// ---- scalar values -------------------------------------------------------------------------------
// v_readfirstlane: the value of the first active lane, in a scalar register. Only for values that
// are the same in every lane (a tile origin computed from scalars): it tells the compiler so.
__device__ __forceinline__ uint32_t uniform(uint32_t v) { return __builtin_amdgcn_readfirstlane(v); }

__device__ __forceinline__ uint64_t uniform64(uint64_t v) {
  const uint32_t lo = uniform(static_cast<uint32_t>(v)), hi = uniform(static_cast<uint32_t>(v >> 32));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// A scalar the compiler must take as computed here. The per-element paths derive one constant
// per element from a stride (element k's offset k·stride); hoisted out of the kernel's loop,
// those are a scalar register each, held across the loop, and a few tiles' worth overflow the
// scalar register file (trap 2). Computed from this value instead, they stay in the path.
template <class T> __device__ __forceinline__ T here(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "kt::isa::here takes a 32- or 64-bit scalar");
  if constexpr (sizeof(T) == 4) {
    uint32_t bits = __builtin_amdgcn_readfirstlane(__builtin_bit_cast(uint32_t, v));
    asm volatile("" : "+s"(bits));
    return __builtin_bit_cast(T, bits);
  } else {
    uint64_t bits = __builtin_bit_cast(uint64_t, v);
    uint32_t lo = __builtin_amdgcn_readfirstlane(static_cast<uint32_t>(bits));
    uint32_t hi = __builtin_amdgcn_readfirstlane(static_cast<uint32_t>(bits >> 32));
    asm volatile("" : "+s"(lo), "+s"(hi));
    return __builtin_bit_cast(T, (static_cast<uint64_t>(hi) << 32) | lo);
  }
}

// A 32-bit value moved to a VGPR, opaque to the compiler: per-element arithmetic on it uses
// inline constants instead of one scalar register per element (see here()).
template <class T> __device__ __forceinline__ T in_vgpr(T v) {
  static_assert(sizeof(T) == 4, "kt::isa::in_vgpr takes a 32-bit value");
  uint32_t bits = __builtin_bit_cast(uint32_t, v);
  asm volatile("" : "+v"(bits));
  return __builtin_bit_cast(T, bits);
}

// ---- between lanes -----------------------------------------------------------------------------------
// ds_bpermute_b32: `v` as held by lane `src` (every active lane takes part; any lane of the wave).
// It goes through the LDS crossbar without touching LDS memory; the compiler waits for it.
__device__ __forceinline__ uint32_t lane_read(uint32_t v, int src) {
  return static_cast<uint32_t>(__builtin_amdgcn_ds_bpermute(src << 2, static_cast<int>(v)));
}

// ---- pinning a register ---------------------------------------------------------------------------------
// An empty asm that reads and writes `v` in a VGPR: zero instructions. After a wait it stops the
// compiler from hoisting a use of `v` above the wait (trap 1, docs/cpp-api.md).
__device__ __forceinline__ void pin(uint32_t& v) { asm volatile("" : "+v"(v)); }

// A compiler memory barrier: shared-memory accesses are not moved across it.
__device__ __forceinline__ void memory_order() { asm volatile("" ::: "memory"); }

// ---- the block barrier ----------------------------------------------------------------------------------
// The family's barrier instruction (`barrier_instruction()`, its isa.hpp) between workgroup-scope
// release and acquire fences: LDS writes before it are visible to every wave after it. Issued
// as asm, not __builtin_amdgcn_s_barrier, because LLVM deletes that builtin in a block of one
// wave, and then a DMA copy's tile is read with no barrier after its wait: safe for one wave,
// but what the code-object check (ktile cocheck) cannot tell from a missing barrier (trap 4).
__device__ __forceinline__ void barrier_instruction();
__device__ __forceinline__ void barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  barrier_instruction();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

}  // namespace kt::isa

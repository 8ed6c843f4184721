// ktile / AMD: the device prelude for clang's device-only HIP mode without ROCm.
//
// ktile compiles AMD kernels with `clang++ -x hip --cuda-device-only -nogpuinc -nogpulib`
// (ktile/runtime/toolchains/amd.py): no HIP headers and no device libraries. This header gives
// what HIP's headers would: the function and variable attributes, and the few hardware
// queries a tile kernel makes, each one `__builtin_amdgcn_*` builtin. Every macro is guarded,
// so the header also compiles after hip_runtime.h (hipcc without -nogpuinc), whose spellings
// then win. The family headers (ktile/amd/<family>/kernel.hpp) include it and give the
// generated code its `kt::` names (docs/cpp-api.md); nothing here is arch-specific.
#pragma once

// ---- HIP's attribute spellings ----------------------------------------------------------------
#ifndef __global__
#define __global__ __attribute__((global))
#endif
#ifndef __device__
#define __device__ __attribute__((device))
#endif
#ifndef __host__
#define __host__ __attribute__((host))
#endif
#ifndef __shared__
#define __shared__ __attribute__((shared))
#endif
#ifndef __forceinline__
#define __forceinline__ inline __attribute__((always_inline))
#endif
// The most threads a block of this kernel has: the register allocator divides the register
// file by it, and a launch with more threads than this is invalid.
#ifndef __launch_bounds__
#define __launch_bounds__(threads) __attribute__((amdgpu_flat_work_group_size(1, threads)))
#endif

namespace kt::amd {

// ---- where this thread is ----------------------------------------------------------------------
__device__ __forceinline__ unsigned thread_idx_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ __forceinline__ unsigned thread_idx_y() { return __builtin_amdgcn_workitem_id_y(); }
__device__ __forceinline__ unsigned thread_idx_z() { return __builtin_amdgcn_workitem_id_z(); }
__device__ __forceinline__ unsigned block_idx_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ __forceinline__ unsigned block_idx_y() { return __builtin_amdgcn_workgroup_id_y(); }
__device__ __forceinline__ unsigned block_idx_z() { return __builtin_amdgcn_workgroup_id_z(); }

// Threads per wave as the code object was compiled (32 on RDNA, 64 on CDNA); a constant after
// instruction selection.
__device__ __forceinline__ unsigned wave_size() { return __builtin_amdgcn_wavefrontsize(); }

// This thread's lane in its wave: the set bits of an all-ones mask below it. mbcnt_hi adds
// nothing for lanes 0-31, so the same expression holds in wave32.
__device__ __forceinline__ unsigned lane_id() {
  return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
}

// This thread's wave in the block (x-major blocks). The same in every lane, and said so
// (readfirstlane), so the compiler keeps it in a scalar register and branches on it uniformly.
__device__ __forceinline__ unsigned wave_id() {
  return __builtin_amdgcn_readfirstlane(thread_idx_x() / wave_size());
}

// 1/d in one v_rcp_f32 (1 ulp), for a d the caller keeps normal (sigmoid's, in [1, 2]).
__device__ __forceinline__ float rcp_approx(float d) { return __builtin_amdgcn_rcpf(d); }
// 1/sqrt(x) in one v_rsq_f32 (1 ulp), hk.rsqrt_fast.
__device__ __forceinline__ float rsqrt_approx(float x) { return __builtin_amdgcn_rsqf(x); }

// ---- the block barrier -------------------------------------------------------------------------
// Every wave of the block meets, and LDS writes made before it are visible after it: s_barrier
// alone orders execution, not memory, so workgroup-scope release and acquire fences surround it.
__device__ __forceinline__ void block_barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// ---- dynamic LDS -------------------------------------------------------------------------------
// The block's dynamic LDS (the launch's shared-memory bytes), 16-byte aligned so a shared tile
// at a 16-byte offset can be read with 128-bit ds_read/ds_load. An incomplete `extern __shared__`
// array is HIP's dynamic LDS; every declaration of one names the same memory.
__device__ __forceinline__ unsigned char* dynamic_lds() {
  extern __shared__ __attribute__((aligned(16))) unsigned char kt_dynamic_lds[];
  return kt_dynamic_lds;
}

}  // namespace kt::amd

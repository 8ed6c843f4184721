// The few HIP spellings the planted kernels use, without ROCm (clang -nogpuinc -nogpulib).
#pragma once
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
static inline __attribute__((device)) unsigned thread_x() {
  return __builtin_amdgcn_workitem_id_x();
}

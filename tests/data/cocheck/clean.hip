// Clean on every target: global loads, LDS through a barrier, a loop with a load in flight
// around the back edge.
#include "device.h"

__global__ void __launch_bounds__(256) add(const float* a, const float* b, float* o) {
  unsigned i = thread_x() + __builtin_amdgcn_workgroup_id_x() * 256;
  o[i] = a[i] + b[i];
}

__global__ void __launch_bounds__(256) staged_sum(const float* a, float* o, int n) {
  __shared__ float tile[256];
  unsigned t = thread_x();
  float acc = 0;
  for (int i = 0; i < n; ++i) {
    tile[t] = a[i * 256 + t];
    __builtin_amdgcn_s_barrier();
    acc += tile[(t + 1) & 255];
    __builtin_amdgcn_s_barrier();
  }
  o[t] = acc;
}

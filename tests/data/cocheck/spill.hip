// 96 values live across a loop, in a kernel capped at 32 VGPRs: it spills.
#include "device.h"

__global__ void __attribute__((amdgpu_num_vgpr(32))) spills(const float* a, float* o, int n) {
  unsigned t = thread_x();
  float v[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) v[i] = a[t + i * 256];
  float s = 0;
  for (int j = 0; j < n; ++j) {
#pragma unroll
    for (int i = 0; i < 96; ++i) s += v[i] * v[(i * 7 + j) % 96];
  }
#pragma unroll
  for (int i = 0; i < 96; ++i) o[t + i * 256] = v[i] + s;
}

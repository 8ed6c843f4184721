// 24 uniform values live across a loop, in a kernel capped at 24 SGPRs: clang-22 spills SGPRs
// into VGPR lanes (v_writelane / v_readlane), with no VGPR spill and no scratch, on gfx1100.
#include "device.h"

__global__ void __attribute__((amdgpu_num_sgpr(24))) scalars(const int* p, float* o, int n) {
  int s[24];
#pragma unroll
  for (int i = 0; i < 24; ++i) s[i] = p[i];
  unsigned t = thread_x();
  float v = 0;
  for (int j = 0; j < n; ++j) {
#pragma unroll
    for (int i = 0; i < 24; ++i) v += o[(s[i] + j) * 64 + t];
  }
  o[t] = v;
}

// Kernels of growing register use, for comparing the occupancy estimate with LLVM's own.
#include "device.h"

template <int N>
__global__ void __launch_bounds__(256) live(const float* a, float* o) {
  unsigned t = thread_x();
  float v[N];
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = a[t + i * 256];
  float s = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) s += v[i] * v[(i * 7 + 3) % N];
#pragma unroll
  for (int i = 0; i < N; ++i) o[t + i * 256] = v[i] + s;
}
template __global__ void live<20>(const float*, float*);
template __global__ void live<60>(const float*, float*);
template __global__ void live<100>(const float*, float*);
template __global__ void live<130>(const float*, float*);
template __global__ void live<200>(const float*, float*);

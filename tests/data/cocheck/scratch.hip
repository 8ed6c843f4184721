// A local array indexed at run time: it lives in scratch memory, though nothing spills.
#include "device.h"

__global__ void indexed(const float* a, float* o, int k) {
  unsigned t = thread_x();
  float v[64];
  for (int i = 0; i < 64; ++i) v[i] = a[t + i * 64];
  o[t] = v[k & 63] + v[(k * 3) & 63];
}

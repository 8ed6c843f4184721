// A global->LDS copy (gfx942 / gfx950 only), waited for and followed by a barrier: clean.
#include "device.h"

typedef __attribute__((address_space(3))) void lds_void;

__global__ void __launch_bounds__(256) copy_through_lds(float* a, float* o) {
  __shared__ float tile[1024];
  unsigned t = thread_x();
  __amdgpu_buffer_rsrc_t src = __builtin_amdgcn_make_buffer_rsrc(a, 0, 0x7fffffff, 0x00020000);
  __builtin_amdgcn_raw_ptr_buffer_load_lds(src, (lds_void*)tile, 4, t * 4, 0, 0, 0);
  __builtin_amdgcn_s_waitcnt(0x0f70);  // gfx9 vmcnt(0)
  __builtin_amdgcn_s_barrier();
  o[t] = tile[(t * 4 + 1) & 1023];
}

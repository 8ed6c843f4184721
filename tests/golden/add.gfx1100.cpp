// kernel 'add', translated from the kt dialect by ktile: edit the Python kernel, not this file.
// target gfx1100: amd rdna3, wave 32
#include "ktile/amd/rdna3/kernel.hpp"

#line 20 "tests/tier0/test_codegen_golden.py"
__host__ __device__ kt::dim3 add__grid(const kt::gl<kt::bf16>& v0, const kt::gl<kt::bf16>& v1, const kt::gl<kt::bf16>& v2) {
#line 20
  kt::index_t v3 = v2.cols();
#line 20
  const kt::index_t v4 = 64;
#line 20
  kt::index_t v5 = kt::ceildiv(v3, v4);
#line 20
  kt::index_t v6 = v2.rows();
#line 20
  const kt::index_t v7 = 16;
#line 20
  kt::index_t v8 = kt::ceildiv(v6, v7);
#line 20
  kt::index_t v9 = v2.batch();
#line 20
  return kt::dim3{v5, v8, v9};
}

#line 20
extern "C" __global__ __launch_bounds__(32) void add(kt::gl<kt::bf16> v0, kt::gl<kt::bf16> v1, kt::gl<kt::bf16> v2) {
#line 22
  kt::index_t v3 = kt::block_idx_z();
#line 22
  kt::index_t v4 = kt::block_idx_y();
  kt::index_t v5 = kt::block_idx_x();
#line 25
  const kt::index_t v6 = 0;
#line 25
  kt::rt<kt::bf16, 16, 64, kt::row, kt::frag_none> v7; kt::load(v7, v0, kt::coord{v3, v6, v4, v5}, 0.0);
#line 25
  kt::rt<kt::bf16, 16, 64, kt::row, kt::frag_none> v8; kt::load(v8, v1, kt::coord{v3, v6, v4, v5}, 0.0);
#line 25
  kt::rt<kt::bf16, 16, 64, kt::row, kt::frag_none> v9; kt::add(v9, v7, v8);
#line 25
  kt::store(v2, v9, kt::coord{v3, v6, v4, v5});
#line 20
  return;
}

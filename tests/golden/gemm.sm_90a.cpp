// kernel 'gemm', translated from the kt dialect by ktile: edit the Python kernel, not this file.
// target sm_90a: nvidia hopper, wave 32
#include "ktile/nvidia/hopper/kernel.hpp"

#line 28 "tests/tier0/test_codegen_golden.py"
__host__ __device__ kt::dim3 gemm__grid(const kt::gl<kt::bf16>& v0, const kt::gl<kt::bf16>& v1, const kt::gl<float>& v2) {
#line 28
  kt::index_t v3 = v2.cols();
#line 28
  const kt::index_t v4 = 32;
#line 28
  kt::index_t v5 = kt::ceildiv(v3, v4);
#line 28
  kt::index_t v6 = v2.rows();
#line 28
  kt::index_t v7 = kt::ceildiv(v6, v4);
#line 28
  const kt::index_t v8 = 1;
#line 28
  return kt::dim3{v5, v7, v8};
}

#line 28
extern "C" __global__ __launch_bounds__(32) void gemm(kt::gl<kt::bf16> v0, kt::gl<kt::bf16> v1, kt::gl<float> v2, const __grid_constant__ kt::tensor_map kt_map0, const __grid_constant__ kt::tensor_map kt_map1) {
  kt::arrivals<2, 8192> kt_arrivals;
  kt::index_t v3 = kt::block_idx_y();
#line 30
  kt::index_t v4 = kt::block_idx_x();
  kt::st<kt::bf16, 32, 64>& v5 = kt::shared_at<kt::st<kt::bf16, 32, 64>, 0>();
  kt::st<kt::bf16, 32, 64>& v6 = kt::shared_at<kt::st<kt::bf16, 32, 64>, 4096>();
  kt::rt<float, 32, 32, kt::row, kt::frag_acc> v7; kt::fill(v7, 0.0);
  kt::index_t v8 = v0.cols();
#line 34
  const kt::index_t v9 = 64;
#line 34
  kt::index_t v10 = kt::floordiv(v8, v9);
#line 34
  const kt::index_t v11 = 0;
#line 34
  const kt::index_t v12 = 1;
#line 34
  kt::rt<float, 32, 32, kt::row, kt::frag_acc> v15 = v7;
#line 34
  for (kt::index_t v14 = v11; v14 < v10; v14 += v12) {
    const kt::index_t v16 = 0;
#line 35
    kt::copy_async<0>(v5, v0, kt::coord{v16, v16, v3, v14}, kt_arrivals, kt_map0);
    kt::copy_async<1>(v6, v1, kt::coord{v16, v16, v4, v14}, kt_arrivals, kt_map1);
    kt::wait<-1, -1>(); kt::wait_arrivals<0, 1>(kt_arrivals);
    kt::barrier();
    kt::rt<kt::bf16, 32, 64, kt::row, kt::frag_a> v17; kt::lds_load(v17, v5, v16, v16);
    kt::rt<kt::bf16, 32, 64, kt::row, kt::frag_b> v18; kt::lds_load(v18, v6, v16, v16);
    kt::wait<-1, -1>(); kt::bind(v17); kt::bind(v18);
    kt::rt<float, 32, 32, kt::row, kt::frag_acc> v19; kt::mma_ABt(v19, v17, v18, v15);
    kt::barrier();
#line 34
    v15 = v19;
  }
#line 34
  kt::rt<float, 32, 32, kt::row, kt::frag_acc>& v13 = v15;
#line 44
  kt::store(v2, v13, kt::coord{v11, v11, v3, v4});
#line 28
  return;
}

"""Read bandwidth of one streaming kernel with each global-load flavour, on a CUDA GPU: is the
strong load that `__ldca` compiles to (LDG.E.128.STRONG.SM, the Hopper headers' flat tile
loads: global_access.hpp) slower than a weak, non-coherent or evict-first load?

    python3 benchmarks/load_flavours.py OUT.json        # needs CuPy and an sm_90a GPU

A 1 GiB buffer read once per launch by 132 x {4, 8, 16} blocks of 256 threads, four 16-byte
loads in flight per thread; median of 10 launches by CUDA events. The H200 result
(2026-12-02, docs/performance.md, seventh session): every flavour 4.19-4.39 TB/s.
"""
import json
import sys

import cupy as cp

SRC = r'''
#define LOADV(NAME, ASM) \
__device__ __forceinline__ uint4 NAME(const uint4* p) { uint4 r; \
  asm(ASM " {%0,%1,%2,%3}, [%4];" : "=r"(r.x),"=r"(r.y),"=r"(r.z),"=r"(r.w) : "l"(p)); return r; }
LOADV(ld_weak, "ld.global.v4.u32")
LOADV(ld_ca, "ld.global.ca.v4.u32")
LOADV(ld_nc, "ld.global.nc.v4.u32")
LOADV(ld_cs, "ld.global.cs.v4.u32")
LOADV(ld_na, "ld.global.L1::no_allocate.v4.u32")
LOADV(ld_ncna, "ld.global.nc.L1::no_allocate.v4.u32")
#define KERNEL(NAME, LD) \
extern "C" __global__ void NAME(const uint4* __restrict__ p, unsigned long long n, unsigned* out) { \
  unsigned acc = 0; unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
  unsigned long long step = (unsigned long long)gridDim.x * blockDim.x; \
  for (; i + 3 * step < n; i += 4 * step) { \
    uint4 a = LD(p + i), b = LD(p + i + step), c = LD(p + i + 2 * step), d = LD(p + i + 3 * step); \
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w; } \
  for (; i < n; i += step) { uint4 a = LD(p + i); acc ^= a.x ^ a.y ^ a.z ^ a.w; } \
  if (acc == 0x12345678u) out[0] = acc; }
KERNEL(k_weak, ld_weak) KERNEL(k_ca, ld_ca) KERNEL(k_nc, ld_nc) KERNEL(k_cs, ld_cs)
KERNEL(k_na, ld_na) KERNEL(k_ncna, ld_ncna)
'''
mod = cp.RawModule(code=SRC, options=("-arch=sm_90a",))
n_bytes = 1 << 30
buf = cp.ones(n_bytes // 4, dtype=cp.uint32)
out = cp.zeros(1, dtype=cp.uint32)
n = n_bytes // 16
res = {}
for name in ("k_ca", "k_weak", "k_nc", "k_cs", "k_na", "k_ncna"):
    k = mod.get_function(name)
    for blocks_per_sm in (4, 8, 16):
        grid = 132 * blocks_per_sm
        k((grid,), (256,), (buf, cp.uint64(n), out))
        cp.cuda.Device().synchronize()
        s, e = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(10):
            s.record(); k((grid,), (256,), (buf, cp.uint64(n), out)); e.record(); e.synchronize()
            times.append(cp.cuda.get_elapsed_time(s, e))
        t = sorted(times)[len(times) // 2]
        res[f"{name}/{blocks_per_sm}"] = round(n_bytes / t / 1e6, 1)
for k, v in res.items():
    print(f"{k:12s} {v:8.1f} GB/s read")
json.dump(res, open(sys.argv[1], "w"), indent=1)

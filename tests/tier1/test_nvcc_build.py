"""The nvcc driver, the cache and the resource gate with the real compiler (no GPU needed).

The generated-code tests compile against a small stand-in for the Hopper headers written here,
so they test the driver whatever state ktile's own headers are in.
"""
from pathlib import Path

import pytest

import ktile as hk
from ktile import targets
from ktile.errors import KernelError
from ktile.runtime.build import build_source, build_trace
from ktile.runtime.cache import BuildCache
from toolchain_checks import has_nvcc


pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(not has_nvcc(), reason="tier 1: needs nvcc (set KTILE_NVCC)")]

SM90A = targets.get("sm_90a")

GL = """
#include <cstdint>
namespace kt { template <class T> struct gl { T* data; int64_t extent[4]; int64_t stride[4]; }; }
"""

SCALE = GL + """
extern "C" __global__ void scale(kt::gl<float> x, kt::gl<float> y) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < x.extent[3]) y.data[i * y.stride[3]] = 2.0f * x.data[i * x.stride[3]];
}
"""

# 64 live floats per thread, each read 64 times, under __launch_bounds__(1024): ptxas may give
# a thread only 64 registers, so it spills
SPILLS = GL + """
extern "C" __global__ void __launch_bounds__(1024) pressure(kt::gl<float> x) {
  float v[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) v[i] = x.data[i * x.stride[3] + threadIdx.x];
  float s = 0;
#pragma unroll
  for (int j = 0; j < 64; ++j)
#pragma unroll
    for (int i = 0; i < 64; ++i) s += v[i] * v[(i + j) % 64];
  x.data[threadIdx.x] = s;
}
"""

# a local array indexed at run time lives in the stack frame
LOCAL_ARRAY = GL + """
extern "C" __global__ void local_array(kt::gl<float> x, int n) {
  float v[256];
  for (int i = 0; i < 256; ++i) v[i] = x.data[i * n];
  float s = 0;
  for (int i = 0; i < 256; ++i) s += v[(i * 7 + n) & 255] * v[i];
  x.data[threadIdx.x] = s;
}
"""


@pytest.fixture
def cache(tmp_path):
    return BuildCache(tmp_path / "cache")


def test_hand_written_kernel_builds_and_hits(cache):
    first = build_source(SCALE, SM90A, "scale", warps=4, cache=cache)
    assert not first.cache_hit and first.code[:4] == b"\x7fELF"
    assert first.resources.registers > 0 and first.resources.threads == 128
    command = (first.entry.folder / "command.txt").read_text()
    for flag in ("-std=c++17", "-O3", "-cubin", "arch=compute_90a,code=sm_90a", "-Xptxas -v",
                 "-x cu"):
        assert flag in command
    assert "fast-math" not in command and "use_fast_math" not in command
    second = build_source(SCALE, SM90A, "scale", warps=4, cache=cache)
    assert second.cache_hit and second.key == first.key and second.code == first.code
    assert "registers" in second.report() and "cache hit" in second.report()


def test_planted_spill_is_refused(cache):
    with pytest.raises(KernelError) as info:
        build_source(SPILLS, SM90A, "pressure", warps=32, cache=cache)
    message = str(info.value)
    assert info.value.kernel == "pressure"
    assert "spills registers" in message and "bytes spill stores" in message
    assert "fix: use smaller tiles, keep fewer tiles live" in message
    with pytest.raises(KernelError, match="spills registers"):      # the cache hit too
        build_source(SPILLS, SM90A, "pressure", warps=32, cache=cache)


def test_local_array_stack_frame_is_refused(cache):
    with pytest.raises(KernelError, match="uses a stack frame .* 1024 bytes stack frame"):
        build_source(LOCAL_ARRAY, SM90A, "local_array", cache=cache)


# ---- generated code, against a stand-in header ------------------------------------------

STUB = r"""
#pragma once
#include <cstdint>
#include <cuda_bf16.h>
namespace kt {
using index_t = int64_t;
using bf16 = __nv_bfloat16;
struct dim3 { index_t x, y, z; };
struct coord { index_t b, d, r, c; };
struct row {};
struct frag_none {};
template <class T> struct gl {
  T* data; int64_t extent[4]; int64_t stride[4];
  __host__ __device__ index_t batch() const { return extent[0]; }
  __host__ __device__ index_t depth() const { return extent[1]; }
  __host__ __device__ index_t rows() const { return extent[2]; }
  __host__ __device__ index_t cols() const { return extent[3]; }
};
__host__ __device__ inline index_t ceildiv(index_t a, index_t b) { return (a + b - 1) / b; }
__device__ inline index_t block_idx_x() { return blockIdx.x; }
__device__ inline index_t block_idx_y() { return blockIdx.y; }
__device__ inline index_t block_idx_z() { return blockIdx.z; }
template <class T, int R, int C, class L, class F> struct rt { T v[R * C / 32]; };
template <class T, int R, int C, class L, class F>
__device__ void load(rt<T, R, C, L, F>& dst, const gl<T>& g, coord at, double pad) {
#pragma unroll
  for (int k = 0; k < R * C / 32; ++k) dst.v[k] = g.data[k];
}
template <class T, int R, int C, class L, class F>
__device__ void store(const gl<T>& g, const rt<T, R, C, L, F>& src, coord at) {
#pragma unroll
  for (int k = 0; k < R * C / 32; ++k) g.data[k] = src.v[k];
}
ADD
}
"""
ADD_FINE = """
template <class T, int R, int C, class L, class F>
__device__ void add(rt<T, R, C, L, F>& d, const rt<T, R, C, L, F>& x, const rt<T, R, C, L, F>& y) {
#pragma unroll
  for (int k = 0; k < R * C / 32; ++k) d.v[k] = T(float(x.v[k]) + float(y.v[k]));
}
"""
ADD_ASSERTS = """
template <class T, int R, int C, class L, class F>
__device__ void add(rt<T, R, C, L, F>& d, const rt<T, R, C, L, F>& x, const rt<T, R, C, L, F>& y) {
  static_assert(R > 16, "add: tiles of 16 rows are not supported by this stand-in");
}
"""
BROKEN = "struct broken { int x }"    # a header that does not compile, whatever the kernel


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


ADD_LINE = next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                if line.strip().startswith("o[idx] = a[idx]"))   # where kt::add is called


def stub_headers(tmp_path: Path, add_function: str) -> list[Path]:
    include = tmp_path / "include"
    header = include / "ktile" / "nvidia" / "hopper" / "kernel.hpp"
    header.parent.mkdir(parents=True)
    header.write_text(STUB.replace("ADD", add_function))
    return [include]


def test_generated_kernel_builds_and_passes_the_gate(tmp_path, cache):
    built = build_trace(add.trace("sm_90a"), cache, stub_headers(tmp_path, ADD_FINE))
    assert built.kernel == "add" and built.threads == 32 and built.lds_bytes == 0
    assert not built.resources.spills and built.resources.stack_bytes == 0


def test_compile_error_points_at_the_python_line(tmp_path, cache):
    with pytest.raises(KernelError) as info:
        build_trace(add.trace("sm_90a"), cache, stub_headers(tmp_path, ""))
    error = info.value
    assert error.loc is not None and error.kernel == "add"
    assert Path(error.loc.file) == Path(__file__) and error.loc.line == ADD_LINE
    assert 'namespace "kt" has no member "add"' in str(error)
    assert "o[idx] = a[idx].load(t) + b[idx].load(t)" in str(error)   # the line is shown
    assert str(cache.root) in str(error)                               # and where the log is


def test_header_assertion_points_at_the_python_line(tmp_path, cache):
    with pytest.raises(KernelError) as info:
        build_trace(add.trace("sm_90a"), cache, stub_headers(tmp_path, ADD_ASSERTS))
    error = info.value
    assert error.loc is not None and error.loc.line == ADD_LINE
    assert "tiles of 16 rows are not supported by this stand-in" in str(error)


def test_broken_header_names_the_kernel_and_the_log(tmp_path, cache):
    with pytest.raises(KernelError) as info:
        build_trace(add.trace("sm_90a"), cache, stub_headers(tmp_path, ADD_FINE + BROKEN))
    error = info.value
    assert error.loc is None and error.kernel == "add"
    assert "tile headers do not compile for this kernel" in str(error)
    log = next(cache.root.rglob("log.txt"))
    assert str(log.parent) in str(error)
    assert "kernel.cu" in (log.parent / "command.txt").read_text()

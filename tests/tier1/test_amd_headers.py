"""The AMD tile headers (ktile/include/ktile/amd) with the real compiler, on every AMD family.

Every example kernel's C++ for gfx1100 (rdna3), gfx950 (cdna4), gfx942 (cdna3) and gfx1201
(rdna4) compiles with clang++-22 in device-only mode and no ROCm (the AMD toolchain driver's
flags), and its code object passes ktile cocheck: no VGPR or SGPR spill, no scratch (trap 2), no
register read before the wait covering its load (trap 1), no LDS read racing a global->LDS copy
(trap 4), and no undefined symbol (nothing needs device libraries). Kernels written here reach
what the examples do not: every elementwise function, cast and reduction, kt::col tiles, 16-bit,
8-bit and fp8 MMAs where the family has them, shared vectors. The headers' ABI and shape rules
hold as static_asserts, the rules a kernel can break fail with their English message, no header
tests an arch macro, and only the instruction layer touches the hardware. No AMD GPU is needed
(none has run these code objects).
"""
from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples_index import EXAMPLE_NAMES, load
from ktile.runtime.cocheck.llvm import find_tool

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "ktile" / "include"
AMD = INCLUDE / "ktile" / "amd"
TARGETS = ("gfx1100", "gfx950", "gfx942", "gfx1201")
FAMILIES = ("rdna3", "cdna4", "cdna3", "rdna4")
CLANG = find_tool("clang++")       # LLVM 22's: $KTILE_LLVM_BIN, /usr/lib/llvm-22/bin, or PATH
NM = find_tool("llvm-nm")
MISSING = [name for name, path in (("clang++-22", CLANG), ("llvm-nm", NM),
                                   ("llvm-readelf", find_tool("llvm-readelf")),
                                   ("llvm-objdump", find_tool("llvm-objdump"))) if path is None]
FLAGS = ["--cuda-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3",
         "-std=c++17"]

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs Debian's LLVM 22 (missing "
                                                       f"{', '.join(MISSING)}; apt-get install -y "
                                                       f"clang-22 lld-22 llvm-22)")]


# ---- the compiler and the gate ----------------------------------------------------------------

@dataclass
class Build:
    returncode: int
    log: str
    kernels: dict          # name -> cocheck FunctionReport
    undefined: list[str]   # symbols the code object needs from elsewhere (device libraries)
    error: str | None = None


def compile_code_object(source: Path, code: Path, target: str):
    """The AMD toolchain driver's compile when it is there, else clang++-22 with its flags."""
    try:
        from ktile import targets
        from ktile.runtime.toolchains.amd import toolchain
        return toolchain().compiler(targets.get(target), [INCLUDE])(source, code)
    except ImportError:
        command = [str(CLANG), "-x", "hip", f"--offload-arch={target}", *FLAGS, "-I", str(INCLUDE),
                   "-c", str(source), "-o", str(code)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        return done   # returncode, stdout, stderr


def amd_build(source: str, folder: Path, name: str, target: str) -> Build:
    from ktile.runtime.cocheck import Limits, Options, check_paths
    folder.mkdir(parents=True, exist_ok=True)
    src, code = folder / f"{name}.{target}.hip", folder / f"{name}.{target}.hsaco"
    src.write_text(source)
    result = compile_code_object(src, code, target)
    log = getattr(result, "log", None) or (getattr(result, "stdout", "") + getattr(result, "stderr", ""))
    if result.returncode != 0:
        return Build(result.returncode, log, {}, [])
    report = check_paths([code], Options(Limits(), mcpu=target))
    obj = report.objects[0]
    undefined = subprocess.run([str(NM), "--undefined-only", str(code)], capture_output=True,
                               text=True).stdout.split()
    kernels = {f.display or f.name: f for f in obj.functions if f.is_kernel}
    return Build(0, log, kernels, undefined, obj.error)


def assert_clean(build: Build, entry: str, what: str) -> None:
    assert build.returncode == 0, f"clang failed for {what}:\n{build.log[-4000:]}"
    assert build.error is None, f"cocheck cannot read {what}: {build.error}"
    assert build.undefined == [], f"{what} needs {build.undefined} (a device-library call)"
    assert entry in build.kernels, f"no kernel '{entry}' in {what}: {sorted(build.kernels)}"
    report = build.kernels[entry]
    res = report.resources
    assert (res.vgpr_spills, res.sgpr_spills, res.scratch_bytes) == (0, 0, 0), \
        f"{what}: {res.vgpr_spills} VGPR / {res.sgpr_spills} SGPR spills, {res.scratch_bytes} B scratch"
    failing = [f"{f.kind}: {f.message}" for f in report.findings if f.failing]
    assert failing == [], f"{what}: cocheck refuses it:\n" + "\n".join(failing)


def in_parallel(jobs, work):
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(work, jobs))


# ---- every example kernel, every family --------------------------------------------------------

def example_kernels() -> list[tuple[str, int, str]]:
    return [(name, i, target) for target in TARGETS for name in EXAMPLE_NAMES
            for i in range(len(load(name).KERNELS))]


@pytest.fixture(scope="module")
def example_builds(tmp_path_factory) -> dict:
    """(example, kernel index, target) -> (entry name, build), compiled in parallel once."""
    folder = tmp_path_factory.mktemp("amd_examples")

    def build(key):
        name, index, target = key
        kernel, constants = load(name).KERNELS[index]
        source = kernel.trace(target, **constants).source()
        return key, (kernel.name, amd_build(source, folder, f"{name}_{index}", target))
    return in_parallel(example_kernels(), build)


@pytest.mark.parametrize("name,index,target", example_kernels(),
                         ids=[f"{t}-{n}[{i}]" for n, i, t in example_kernels()])
def test_example_compiles_clean(example_builds, name, index, target):
    entry, build = example_builds[(name, index, target)]
    assert_clean(build, entry, f"{name} kernel {index} on {target}")


# ---- what the examples do not reach -------------------------------------------------------------

COVERAGE = r"""
#include "ktile/amd/FAMILY/kernel.hpp"
using f32r = kt::rt<float, 16, 32, kt::row, kt::frag_none>;
using f32c = kt::rt<float, 16, 32, kt::col, kt::frag_none>;

// every elementwise function, cast and comparison on float tiles
extern "C" __global__ __launch_bounds__(WAVE) void math(kt::gl<float> g, kt::gl<float> o) {
  f32r x; kt::load(x, g, kt::coord{0, 0, 0, 0}, 0.5);
  f32r y;
  kt::neg(y, x); kt::exp(y, y); kt::exp2(y, y); kt::log(y, y); kt::log2(y, y); kt::sqrt(y, y);
  kt::rsqrt(y, y); kt::silu(y, y); kt::gelu(y, y); kt::relu(y, y); kt::abs(y, y); kt::sin(y, y);
  kt::cos(y, y); kt::tanh(y, y); kt::sigmoid(y, y); kt::recip(y, y);
  kt::pow(y, y, x); kt::max(y, y, x); kt::min(y, y, 2.0f); kt::div(y, y, x); kt::sub(y, y, x);
  kt::rt<bool, 16, 32, kt::row, kt::frag_none> m; kt::lt(m, x, y);
  kt::rt<bool, 16, 32, kt::row, kt::frag_none> n; kt::ge(n, x, 1.0f); kt::bitwise_and(m, m, n);
  kt::logical_not(m, m);
  kt::select(y, m, x, y);
  kt::rt<kt::fp8e4m3, 16, 32, kt::row, kt::frag_none> e; kt::cast(e, y);
  kt::rt<kt::half, 16, 32, kt::row, kt::frag_none> h; kt::cast(h, e);
  kt::rt<int8_t, 16, 32, kt::row, kt::frag_none> i8; kt::cast(i8, h);
  kt::rt<int32_t, 16, 32, kt::row, kt::frag_none> i; kt::cast(i, i8); kt::iota<kt::col_axis>(n);
  kt::rt<int32_t, 16, 32, kt::row, kt::frag_none> j; kt::iota<kt::row_axis>(j); kt::mul(i, i, j);
  kt::abs(i, i); kt::bitwise_or(i, i, 3); kt::cast(y, i);
  kt::causal_mask(y, y, 3, 5, -kt::inf);
  f32r r; kt::rand(r, 1234567, i); kt::add(y, y, r);
  kt::store(o, y, kt::coord{0, 0, 0, 0});
}

// reductions along both axes of both layouts, vectors of both axes, block reductions
extern "C" __global__ __launch_bounds__(2 * WAVE) void reduce(kt::gl<float> g, kt::gl<float> o) {
  f32r x; kt::load(x, g, kt::coord{0, 0, 0, kt::warp_id()}, 0.0);
  f32c t; kt::load(t, g, kt::coord{0, 0, 0, 0}, -kt::inf);
  kt::rv<float, 16, kt::row_axis> a, b; kt::row_sum(a, x); kt::row_max(b, t); kt::add(a, a, b);
  kt::rv<float, 32, kt::col_axis> c, d; kt::col_min(c, x); kt::col_sum(d, t); kt::mul(c, c, d);
  kt::rv<float, 16, kt::row_axis> e; kt::row_min(e, t); kt::exp(e, e);
  kt::rv<float, 32, kt::col_axis> f; kt::col_max(f, t);
  kt::sub(x, x, a); kt::div(x, x, c); kt::mul(t, t, e); kt::add(t, t, f); kt::add(x, x, t);
  float s; kt::vec_sum(s, a); float mx; kt::vec_max(mx, c); float mn; kt::vec_min(mn, e);
  kt::block_reduce_max<2>(a, a); kt::block_reduce_min<2>(s, s); kt::block_reduce_sum<2>(c, c);
  kt::add(x, x, s + mx + mn); kt::add(x, x, c);
  kt::store(o, x, kt::coord{0, 0, 0, 0}); kt::store(o, a, kt::coord{0, 0, 1, 0});
  kt::store(o, c, kt::coord{0, 0, 2, 0}); kt::store(o, t, kt::coord{0, 0, 1, 0});
}

// shared tiles and vectors, both layouts, copies
extern "C" __global__ __launch_bounds__(2 * WAVE) void shared(kt::gl<kt::bf16> g, kt::gl<float> v, kt::gl<kt::bf16> o) {
  auto& s = kt::shared_at<kt::st<kt::bf16, 32, 64>, 0>();
  auto& w = kt::shared_at<kt::sv<float, 64>, 4096>();
  kt::copy_async(s, g, kt::coord{0, 0, kt::block_idx_x(), 0});
  kt::copy_async(w, v, kt::coord{0, 0, 0, 0});
  kt::wait<0, -1>(); kt::barrier();
  kt::rt<kt::bf16, 16, 32, kt::row, kt::frag_none> a; kt::lds_load(a, s, kt::warp_id(), 1);
  kt::rt<kt::bf16, 16, 32, kt::col, kt::frag_none> b; kt::lds_load(b, s, 1, 0);
  kt::rv<float, 32, kt::col_axis> c; kt::lds_load(c, w, 0, 1);
  kt::rv<float, 16, kt::row_axis> d; kt::lds_load(d, w, 0, 3);
  kt::rv<float, 64, kt::col_axis> whole; kt::lds_load(whole, w);
  kt::wait<-1, 0>(); kt::bind(a); kt::bind(b); kt::bind(c); kt::bind(d); kt::bind(whole);
  kt::mul(a, a, c); kt::add(a, a, d); kt::mul(b, b, d);
  kt::barrier();
  kt::lds_store(s, kt::rt<kt::bf16, 32, 64, kt::col, kt::frag_none>{});
  kt::mul(whole, whole, 2.0f); kt::lds_store(w, whole);
  kt::store(o, a, kt::coord{0, 0, 1, 0}); kt::store(o, b, kt::coord{0, 0, 1, 1});
}

// gather / scatter of a kt::col tile
extern "C" __global__ __launch_bounds__(WAVE) void rows(kt::gl<kt::bf16> g, kt::gl<int32_t> idx, kt::gl<kt::bf16> o) {
  kt::rv<int32_t, 16, kt::row_axis> rows; kt::load(rows, idx, kt::coord{0, 0, 0, 0}, 0.0);
  kt::rt<kt::bf16, 16, 32, kt::col, kt::frag_none> gathered; kt::gather(gathered, g, 0, 0, rows, 1);
  kt::scatter(o, gathered, 0, 0, rows, 1);
}

// all four MMA variants, and an accumulator cast into an operand
extern "C" __global__ __launch_bounds__(WAVE) void mma(kt::gl<OPERAND> a, kt::gl<ACC> c) {
  kt::rt<OPERAND, 16, KSTEP, kt::row, kt::frag_a> ra; kt::load(ra, a, kt::coord{0, 0, 0, 0}, 0.0);
  kt::rt<OPERAND, KSTEP, 16, kt::col, kt::frag_a> rat; kt::load(rat, a, kt::coord{0, 0, 0, 0}, 0.0);
  kt::rt<OPERAND, 32, KSTEP, kt::row, kt::frag_b> rbt; kt::load(rbt, a, kt::coord{0, 0, 1, 0}, 0.0);
  kt::rt<OPERAND, KSTEP, 32, kt::col, kt::frag_b> rb; kt::load(rb, a, kt::coord{0, 0, 0, 1}, 0.0);
  kt::rt<ACC, 16, 32, kt::row, kt::frag_acc> acc; kt::fill(acc, 0.0);
  kt::mma_AB(acc, ra, rb, acc); kt::mma_ABt(acc, ra, rbt, acc);
  kt::mma_AtB(acc, rat, rb, acc); kt::mma_AtBt(acc, rat, rbt, acc);
  kt::store(c, acc, kt::coord{0, 0, 0, 0});
}
"""

# (operand, accumulator, K step) of each MMA the family has; the coverage's mma kernel is
# compiled once per entry
MMAS = {
    "rdna3": [("kt::bf16", "float", 16), ("kt::half", "float", 16), ("int8_t", "int32_t", 16)],
    "rdna4": [("kt::bf16", "float", 16), ("kt::half", "float", 16), ("int8_t", "int32_t", 16),
              ("kt::fp8e4m3", "float", 16)],
    "cdna3": [("kt::bf16", "float", 16), ("kt::half", "float", 16), ("int8_t", "int32_t", 32)],
    "cdna4": [("kt::bf16", "float", 32), ("kt::half", "float", 32), ("int8_t", "int32_t", 64),
              ("kt::fp8e4m3", "float", 32)],
}


def coverage_source(target: str, family: str, mma: tuple[str, str, int]) -> str:
    from ktile import targets
    operand, acc, k = mma
    return (COVERAGE.replace("FAMILY", family).replace("2 * WAVE", str(2 * targets.get(target).wave_size))
            .replace("WAVE", str(targets.get(target).wave_size)).replace("OPERAND", operand)
            .replace("ACC", acc).replace("KSTEP", str(k)))


def coverage_jobs() -> list[tuple[str, str, int]]:
    return [(target, family, n) for target, family in zip(TARGETS, FAMILIES)
            for n in range(len(MMAS[family]))]


@pytest.fixture(scope="module")
def coverage_builds(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("amd_coverage")

    def build(job):
        target, family, n = job
        source = coverage_source(target, family, MMAS[family][n])
        return job, amd_build(source, folder, f"coverage{n}", target)
    return in_parallel(coverage_jobs(), build)


@pytest.mark.parametrize("target,family", list(zip(TARGETS, FAMILIES)))
@pytest.mark.parametrize("entry", ["math", "reduce", "shared", "rows"])
def test_every_function_compiles_clean(coverage_builds, target, family, entry):
    assert_clean(coverage_builds[(target, family, 0)], entry, f"the coverage kernel '{entry}' on {target}")


@pytest.mark.parametrize("target,family,n", coverage_jobs(),
                         ids=[f"{t}-{MMAS[f][n][0]}" for t, f, n in coverage_jobs()])
def test_every_mma_compiles_clean(coverage_builds, target, family, n):
    assert_clean(coverage_builds[(target, family, n)], "mma", f"{MMAS[family][n][0]} MMAs on {target}")


# ---- the headers' own rules, checked by the compiler ------------------------------------------

PROPERTIES = r"""
#include "ktile/amd/FAMILY/kernel.hpp"
#include <cstddef>

// the global ABI the loaders pass: pointer, extents, strides (in elements)
static_assert(sizeof(kt::gl<float>) == 72 && sizeof(kt::gl<kt::bf16>) == 72, "gl is 72 bytes");
static_assert(offsetof(kt::gl<float>, extent) == 8 && offsetof(kt::gl<float>, stride) == 40, "gl layout");
static_assert(sizeof(kt::index_t) == 8 && kt::index_t(-1) < 0, "index_t is signed 64-bit");
// a shared tile is exactly rows x cols x sizeof(T): the lds-alloc pass lays them out so
static_assert(sizeof(kt::st<kt::bf16, 32, 64>) == 32 * 64 * 2 && sizeof(kt::st<int8_t, 48, 32>) == 48 * 32, "st size");
static_assert(sizeof(kt::sv<kt::half, 64>) == 64 * 2, "sv size");
// the swizzle permutes the chunks of a row and its inverse finds them
constexpr bool swizzle_is_a_permutation() {
  using S = kt::st<kt::bf16, 32, 64>;
  for (int slot = 0; slot < 32 * S::row_chunks; ++slot) {
    const int linear = S::chunk_at_slot(slot);
    if (S::chunk_offset(linear / S::row_chunks, linear % S::row_chunks) != 16u * slot) return false;
  }
  return true;
}
static_assert(swizzle_is_a_permutation(), "chunk_at_slot inverts chunk_offset");
// a wave's tile holds each element once (replicated layouts twice): rows x cols / wave per lane
static_assert(kt::rt<float, 16, 64, kt::row, kt::frag_acc>::regs * WAVE == 16 * 64, "rt registers");
static_assert(kt::rt<float, 32, 32, kt::col, kt::frag_none>::regs * WAVE == 32 * 32, "rt registers");
static_assert(sizeof(kt::rv<float, 64, kt::row_axis>) == 4 * 4, "lane form: one value per 16");
static_assert(kt::floordiv<kt::index_t>(-7, 2) == -4 && kt::ceildiv<kt::index_t>(7, 2) == 4, "scalar helpers");

__host__ __device__ kt::dim3 host_grid(const kt::gl<float>& g) { return kt::dim3{kt::ceildiv(g.cols(), kt::index_t(64)), g.rows(), 1}; }
extern "C" __global__ void touch(kt::gl<float> g) { kt::dim3 d = host_grid(g); g.data[0] = float(d.x); }
"""


@pytest.mark.parametrize("target,family", list(zip(TARGETS, FAMILIES)))
def test_header_properties(tmp_path, target, family):
    from ktile import targets
    source = PROPERTIES.replace("FAMILY", family).replace("WAVE", str(targets.get(target).wave_size))
    build = amd_build(source, tmp_path, "properties", target)
    assert build.returncode == 0, build.log[-4000:]


REFUSED = {
    "tile_shape": ("kt::rt<float, 8, 16, kt::row, kt::frag_none> t; kt::fill(t, 0.0);",
                   "multiples of 16"),
    "mma_fragments": ("kt::rt<kt::bf16, 16, KSTEP, kt::row, kt::frag_none> a, b; kt::fill(a, 1.0); kt::fill(b, 1.0);"
                      "kt::rt<float, 16, 16, kt::row, kt::frag_acc> c, d; kt::fill(c, 0.0); kt::mma_ABt(d, a, b, c);",
                      "frag_a tile (run the fragments pass)"),
    "mma_layout": ("kt::rt<kt::bf16, 16, KSTEP, kt::row, kt::frag_a> a; kt::rt<kt::bf16, 16, KSTEP, kt::row, kt::frag_b> b;"
                   "kt::fill(a, 1.0); kt::fill(b, 1.0); kt::rt<float, 16, 16, kt::row, kt::frag_acc> c, d;"
                   "kt::fill(c, 0.0); kt::mma_AB(d, a, b, c);",
                   "col layout for B"),
    "lds_load_subtile": ("auto& s = kt::shared_at<kt::st<kt::bf16, 32, 64>, 0>();"
                         "kt::rt<kt::bf16, 16, 48, kt::row, kt::frag_none> t; kt::lds_load(t, s, 0, 1);",
                         "the register tile's rows and columns must divide the shared tile's"),
    "wait_range": ("kt::wait<99, -1>();", "within the counter's range"),
}


@pytest.fixture(scope="module")
def refused_builds(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("amd_refused")
    jobs = [(case, target, family) for case in REFUSED for target, family in (("gfx1100", "rdna3"), ("gfx950", "cdna4"))]

    def build(job):
        case, target, family = job
        k = "32" if family == "cdna4" else "16"
        body = REFUSED[case][0].replace("KSTEP", k)
        source = (f'#include "ktile/amd/{family}/kernel.hpp"\n'
                  f'extern "C" __global__ void refused(kt::gl<float> g) {{ {body} }}\n')
        return job, amd_build(source, folder, case, target)
    return in_parallel(jobs, build)


@pytest.mark.parametrize("case", sorted(REFUSED))
@pytest.mark.parametrize("target,family", [("gfx1100", "rdna3"), ("gfx950", "cdna4")])
def test_refused_with_a_message(refused_builds, case, target, family):
    build = refused_builds[(case, target, family)]
    assert build.returncode != 0, f"{case} compiled on {target} but should be refused"
    assert REFUSED[case][1] in build.log, build.log[-3000:]


def test_operand_k_step_refused(tmp_path):
    source = ('#include "ktile/amd/cdna4/kernel.hpp"\n'
              'extern "C" __global__ void refused(kt::gl<float> g) {'
              ' kt::rt<kt::bf16, 16, 16, kt::row, kt::frag_a> a; kt::fill(a, 1.0); }\n')
    build = amd_build(source, tmp_path, "kstep", "gfx950")
    assert build.returncode != 0 and "a multiple of its fragment's base width" in build.log, build.log[-3000:]


def test_fp8_mma_refused_where_the_family_has_none(tmp_path):
    source = ('#include "ktile/amd/rdna3/kernel.hpp"\n'
              'extern "C" __global__ void refused(kt::gl<float> g) {'
              ' kt::rt<kt::fp8e4m3, 16, 16, kt::row, kt::frag_a> a; kt::rt<kt::fp8e4m3, 16, 16, kt::row, kt::frag_b> b;'
              ' kt::fill(a, 1.0); kt::fill(b, 1.0); kt::rt<float, 16, 16, kt::row, kt::frag_acc> c; kt::fill(c, 0.0);'
              ' kt::mma_ABt(c, a, b, c); }\n')
    build = amd_build(source, tmp_path, "fp8", "gfx1100")
    assert build.returncode != 0 and "no matrix instruction for these operands" in build.log, build.log[-3000:]


# ---- the math and fp8 conversions, compiled for the host against the interpreter ----------------
# math.hpp and fp8.hpp are plain C++ (no device libraries on AMD: ktile computes sin, cos, tanh,
# erf and pow itself), so the host runs them on many inputs. The interpreter's numpy float32 math
# is itself up to 1 ulp from correctly rounded: the headers must be within 1 ulp of it (and are
# correctly rounded where they compute in double); fp8 rounding must match exactly.

HOST_MATH = r"""
#define __host__
#define __device__
#define __forceinline__ inline
#include "ktile/amd/common/fp8.hpp"
#include "ktile/amd/common/math.hpp"
#include <cstdio>
#include <cstring>
using namespace kt::detail;
int main(int argc, char** argv) {
  float x, y;
  while (fread(&x, 4, 1, stdin) == 1 && fread(&y, 4, 1, stdin) == 1) {
    float r = 0;
    if (!strcmp(argv[1], "sin")) r = math::sin_f(x);
    else if (!strcmp(argv[1], "cos")) r = math::cos_f(x);
    else if (!strcmp(argv[1], "tanh")) r = math::tanh_f(x);
    else if (!strcmp(argv[1], "erf")) r = math::erf_f(x);
    else if (!strcmp(argv[1], "pow")) r = math::pow_f(x, y);
    else if (!strcmp(argv[1], "fp8")) r = fp8_to_float(float_to_fp8(x));
    fwrite(&r, 4, 1, stdout);
  }
}
"""


@pytest.fixture(scope="module")
def host_math(tmp_path_factory):
    folder = tmp_path_factory.mktemp("amd_host_math")
    (folder / "math.cpp").write_text(HOST_MATH)
    exe = folder / "math"
    done = subprocess.run([str(CLANG), "-O2", "-std=c++17", "-I", str(INCLUDE), str(folder / "math.cpp"), "-o", str(exe)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]

    def run(fn, x, y=None):
        import numpy as np
        y = np.zeros_like(x) if y is None else y
        data = np.stack([x, y], 1).astype(np.float32).tobytes()
        out = subprocess.run([str(exe), fn], input=data, capture_output=True, check=True).stdout
        return np.frombuffer(out, np.float32)
    return run


def ulps_apart(got, want):
    import numpy as np
    got, want = got.astype(np.float64), want.astype(np.float64)
    with np.errstate(all="ignore"):
        d = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    d[(got == want) | (np.isnan(got) & np.isnan(want))] = 0
    return np.nan_to_num(d, nan=1e9)


def test_host_math_within_an_ulp_of_the_interpreter(host_math):
    import numpy as np
    from ktile.interpret.ops_elementwise import FLOAT_UNARY
    rng = np.random.default_rng(0)
    special = np.array([0, -0.0, 1, -1, 0.5, 2, -3, np.inf, -np.inf, np.nan, 1e-30, 1e-45, 88.7, 1e7,
                        3.14159265, 1.5707964, 1e15, -6e15], np.float32)
    x = np.concatenate([special, (rng.standard_normal(50000) * 3).astype(np.float32),
                        (rng.standard_normal(5000) * 1e4).astype(np.float32)])
    for fn in ("sin", "cos", "tanh", "erf"):   # erf: float32 polynomials, no double
        with np.errstate(all="ignore"):
            want = FLOAT_UNARY[fn](x.copy()).astype(np.float32)
        assert ulps_apart(host_math(fn, x), want).max() <= 1, fn
    base = np.concatenate([np.repeat(special, len(special)), rng.uniform(0, 10, 20000).astype(np.float32),
                           -rng.uniform(0, 3, 2000).astype(np.float32)])
    expo = np.concatenate([np.tile(special, len(special)), rng.uniform(-30, 30, 20000).astype(np.float32),
                           np.round(rng.uniform(-9, 9, 2000)).astype(np.float32)])
    with np.errstate(all="ignore"):
        want = np.power(base, expo)
    assert ulps_apart(host_math("pow", base, expo), want).max() <= 1


def test_host_fp8_rounds_as_the_interpreter(host_math):
    import numpy as np
    from ktile import dtypes
    rng = np.random.default_rng(1)
    x = np.concatenate([np.array([0, -0.0, 448, 449, 464, 480, 1e9, -1e9, np.inf, np.nan, 2 ** -9, 2 ** -10,
                                  3 * 2 ** -10, 1.0625, 1.1875], np.float32),
                        (rng.standard_normal(50000) * 100).astype(np.float32),
                        (rng.standard_normal(5000) * 0.01).astype(np.float32)])
    got, want = host_math("fp8", x), dtypes.fp8.round(x)
    assert np.array_equal(got, want, equal_nan=True)


# ---- the structure: arch variants are folders, hardware is one layer --------------------------

HEADERS = sorted(AMD.rglob("*.hpp"))


def code_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, code) with // comments dropped."""
    return [(n, line.split("//")[0]) for n, line in enumerate(path.read_text().splitlines(), 1)]


def test_no_arch_conditionals_in_amd_headers():
    """Arch variants are header folders chosen by the generated include, never `#if` chains."""
    arch = re.compile(r"gfx|__GFX|AMDGCN|ARCH|RDNA|CDNA|WAVEFRONT", re.I)
    offenders = [f"{path.relative_to(INCLUDE)}:{n}" for path in HEADERS for n, line in code_lines(path)
                 if re.match(r"\s*#\s*(if|ifdef|ifndef|elif)\b", line) and arch.search(line)]
    assert offenders == []


def test_family_folders_hold_what_differs():
    for family in FAMILIES:
        assert sorted(p.name for p in (AMD / family).glob("*.hpp")) == \
            ["copy_async.hpp", "isa.hpp", "kernel.hpp", "layouts.hpp"], family


@pytest.mark.parametrize("target,family", list(zip(TARGETS, FAMILIES)))
def test_family_facts_match_the_target_tables(target, family):
    """One source of truth: the facts a family's isa.hpp states are the target table's."""
    from ktile import targets
    table, text = targets.get(target), (AMD / family / "isa.hpp").read_text()

    def fact(name):
        found = re.search(rf"constexpr \w+ {name} = (\w+);", text) or \
            re.search(rf"constexpr int [^;]*\b{name} = (\d+)", text)
        return found.group(1) if found else None
    assert int(fact("wave_size")) == table.wave_size
    assert fact("has_lds_dma") == ("true" if table.has_lds_dma else "false")
    if table.has_lds_dma:
        assert int(fact("lds_dma_bytes")) == table.lds_dma_bytes_per_lane
    assert int(fact("vm_max_count")) == table.wait_counter("vm").max_count
    assert int(fact("lds_max_count")) == table.wait_counter("lds").max_count
    for counter in table.wait_counters:   # each wait emits the table's spelling (count 0)
        spelling = counter.wait_asm.format(n="0x0" if "s_wait_" in counter.wait_asm else 0)
        assert f'asm volatile("{spelling}"' in text, f"{family} does not emit {spelling!r}"


def test_only_the_instruction_layer_touches_the_hardware():
    """Builtins, inline asm, address spaces and __shared__ live in device.hpp, common/isa_*.hpp
    and <family>/isa.hpp only, so an emulation of that layer can run everything above it."""
    layer = {AMD / "device.hpp", *AMD.glob("common/isa_*.hpp"), *(AMD / f / "isa.hpp" for f in FAMILIES)}
    hardware = re.compile(r"__builtin_amdgcn|\basm\b|address_space|__shared__|ext_vector_type")
    offenders = [f"{path.relative_to(INCLUDE)}:{n}: {line.strip()}" for path in HEADERS if path not in layer
                 for n, line in code_lines(path) if hardware.search(line)]
    assert offenders == []

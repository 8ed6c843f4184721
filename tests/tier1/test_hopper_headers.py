"""The NVIDIA Hopper tile headers (ktile/include/ktile/nvidia/hopper) with the real compiler.

Every example kernel's sm_90a C++ compiles with nvcc for sm_90a with no register spill and no
stack frame (trap 2: a spilling build is an error, never a slow kernel); the headers' ABI and
shape rules hold as static_asserts; the rules a kernel can break fail with their English
message. No GPU needed.

nvcc is driven by a small helper here for now; it moves to ktile/runtime/toolchains/nvcc.py.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from examples_index import EXAMPLE_NAMES, load

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "ktile" / "include"
HOPPER = INCLUDE / "ktile" / "nvidia" / "hopper"
NVCC = shutil.which("nvcc") or next(
    (p for p in ("/usr/local/cuda/bin/nvcc",) if os.access(p, os.X_OK)), None)
FLAGS = ["-std=c++17", "-O3", "-cubin", "-gencode", "arch=compute_90a,code=sm_90a",
         "-Xptxas", "-v", "-I", str(INCLUDE), "-x", "cu"]

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(NVCC is None, reason="tier 1: nvcc not found (on PATH or at "
                                                      "/usr/local/cuda/bin/nvcc)")]


# ---- the compiler ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Resources:
    """What ptxas reports for one entry function."""
    registers: int
    stack_frame: int
    spill_stores: int
    spill_loads: int


@dataclass(frozen=True)
class Build:
    returncode: int
    log: str
    functions: dict[str, Resources]


_PROPERTIES = re.compile(r"Function properties for (\w+)\s*\n\s*(\d+) bytes stack frame, "
                         r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Compiling entry function '(\w+)'.*?Used (\d+) registers", re.S)


def parse_ptxas(log: str) -> dict[str, Resources]:
    registers = {name: int(n) for name, n in _REGISTERS.findall(log)}
    return {name: Resources(registers.get(name, -1), int(frame), int(stores), int(loads))
            for name, frame, stores, loads in _PROPERTIES.findall(log) if name in registers}


def nvcc_build(source: str, folder: Path, name: str) -> Build:
    folder.mkdir(parents=True, exist_ok=True)
    cu = folder / f"{name}.cu"
    cu.write_text(source)
    result = subprocess.run([NVCC, *FLAGS, str(cu), "-o", str(folder / f"{name}.cubin")],
                            capture_output=True, text=True, timeout=300)
    log = result.stdout + result.stderr
    return Build(result.returncode, log, parse_ptxas(log))


# ---- every example kernel -------------------------------------------------------------------

def example_kernels() -> list[tuple[str, int]]:
    return [(name, i) for name in EXAMPLE_NAMES for i in range(len(load(name).KERNELS))]


@pytest.fixture(scope="module")
def example_builds(tmp_path_factory) -> dict[tuple[str, int], tuple[str, Build]]:
    """(example, kernel index) -> (entry name, build), compiled in parallel once."""
    folder = tmp_path_factory.mktemp("hopper_examples")

    def build(key):
        name, index = key
        kernel, constants = load(name).KERNELS[index]
        trace = kernel.trace("sm_90a", **constants)
        return key, (kernel.name, nvcc_build(trace.source(), folder, f"{name}_{index}"))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(build, example_kernels()))


@pytest.mark.parametrize("name,index", example_kernels(),
                         ids=[f"{n}[{i}]" for n, i in example_kernels()])
def test_example_compiles_without_spills(example_builds, name, index):
    entry, build = example_builds[(name, index)]
    assert build.returncode == 0, f"nvcc failed for {name} kernel {index}:\n{build.log[-4000:]}"
    assert entry in build.functions, f"no ptxas report for '{entry}':\n{build.log}"
    report = build.functions[entry]
    assert (report.spill_stores, report.spill_loads) == (0, 0), f"{entry} spills: {report}"
    assert report.stack_frame == 0, f"{entry} has a {report.stack_frame}-byte stack frame"
    assert 0 < report.registers <= 255


# ---- the headers' own rules, checked by the compiler ------------------------------------------

PROPERTIES = r"""
#include "ktile/nvidia/hopper/kernel.hpp"
#include <cstddef>

// the global ABI the loaders pass: pointer, extents, strides (in elements)
static_assert(sizeof(kt::gl<float>) == 72 && sizeof(kt::gl<kt::bf16>) == 72, "gl is 72 bytes");
static_assert(offsetof(kt::gl<float>, data) == 0, "data first");
static_assert(offsetof(kt::gl<float>, extent) == 8, "extents at 8");
static_assert(offsetof(kt::gl<float>, stride) == 40, "strides at 40");
static_assert(std::is_trivially_copyable<kt::gl<int8_t>>::value, "gl crosses by value");
static_assert(sizeof(kt::index_t) == 8 && kt::index_t(-1) < 0, "index_t is signed 64-bit");

// a shared tile is exactly rows x cols x sizeof(T): the lds-alloc pass lays them out so
static_assert(sizeof(kt::st<kt::bf16, 32, 64>) == 32 * 64 * 2, "st size");
static_assert(sizeof(kt::st<float, 16, 16>) == 16 * 16 * 4, "st size");
static_assert(sizeof(kt::st<int8_t, 48, 32>) == 48 * 32, "st size");
static_assert(sizeof(kt::sv<kt::half, 64>) == 64 * 2, "sv size");

// one warp's tile: rows x cols / 32 elements per lane, nothing more
static_assert(sizeof(kt::rt<float, 16, 64, kt::row, kt::frag_acc>) == 16 * 64 * 4 / 32, "rt size");
static_assert(sizeof(kt::rt<kt::bf16, 32, 32, kt::col, kt::frag_b>) == 32 * 32 * 2 / 32, "rt size");
static_assert(sizeof(kt::rv<float, 16, kt::row_axis>) == 2 * 4, "g-form: 2 per 16");
static_assert(sizeof(kt::rv<float, 64, kt::col_axis>) == 16 * 4, "t-form: 4 per 16");

// scalar helpers with arith's meaning, usable at compile time and on the host
static_assert(kt::floordiv<kt::index_t>(-7, 2) == -4 && kt::floordiv<kt::index_t>(7, 2) == 3, "floordiv");
static_assert(kt::ceildiv<kt::index_t>(7, 2) == 4 && kt::ceildiv<kt::index_t>(-7, 2) == -3, "ceildiv");
static_assert(kt::shift_right_logical<int32_t>(-1, 28) == 15, "shrui");
static_assert(kt::inf > 3.0e38f && kt::nan != kt::nan, "inf and nan");

__host__ __device__ kt::dim3 host_grid(const kt::gl<float>& g) {
  return kt::dim3{kt::ceildiv(g.cols(), kt::index_t(64)), g.rows(), g.batch()};
}
bool host_side_check() {
  kt::gl<float> g{nullptr, {2, 1, 10, 100}, {1000, 1000, 100, 1}};
  kt::dim3 d = host_grid(g);
  return d.x == 2 && d.y == 10 && d.z == 2 && kt::maximum(1.0f, kt::nan) != kt::maximum(1.0f, kt::nan);
}
extern "C" __global__ void touch(kt::gl<float> g) { kt::dim3 d = host_grid(g); g.data[0] = float(d.x); }
"""


def test_header_properties(tmp_path):
    build = nvcc_build(PROPERTIES, tmp_path, "properties")
    assert build.returncode == 0, build.log[-4000:]


# Every path of kt::lds_load at sub-tile coordinates known only at run time: 16-bit row and col
# layouts (ldmatrix, ldmatrix.trans), 32-bit and 8-bit pairs, and a piece of a shared vector.
SUBTILES = r"""
#include "ktile/nvidia/hopper/kernel.hpp"

template <class Tile> __device__ float first(const Tile& t) {
  return static_cast<float>(kt::detail::elem(t.tiles[Tile::height - 1][Tile::width - 1][3], 1));
}
extern "C" __global__ void subtiles(kt::gl<float> g, kt::index_t row, kt::index_t col) {
  auto& s16 = kt::shared_at<kt::st<kt::bf16, 64, 128>, 0>();
  auto& s32 = kt::shared_at<kt::st<float, 32, 64>, 16384>();
  auto& s8 = kt::shared_at<kt::st<int8_t, 32, 64>, 24576>();
  auto& sv = kt::shared_at<kt::sv<float, 64>, 26624>();
  kt::rt<kt::bf16, 32, 64, kt::row, kt::frag_a> a; kt::lds_load(a, s16, row, col);
  kt::rt<kt::bf16, 16, 32, kt::col, kt::frag_b> b; kt::lds_load(b, s16, row, col);
  kt::rt<float, 16, 32, kt::row, kt::frag_none> f; kt::lds_load(f, s32, row, col);
  kt::rt<int8_t, 16, 32, kt::col, kt::frag_none> i; kt::lds_load(i, s8, row, col);
  kt::rv<float, 32, kt::col_axis> v; kt::lds_load(v, sv, 0, col);
  kt::rt<kt::bf16, 64, 128, kt::row, kt::frag_none> whole; kt::lds_load(whole, s16);
  g.data[threadIdx.x] = first(a) + first(b) + first(f) + first(i) + first(whole) + v.data[1][1].y;
}
"""


def test_sub_tile_reads_compile(tmp_path):
    build = nvcc_build(SUBTILES, tmp_path, "subtiles")
    assert build.returncode == 0, build.log[-4000:]
    report = build.functions["subtiles"]
    assert (report.spill_stores, report.spill_loads, report.stack_frame) == (0, 0, 0), report


REFUSED = {
    "tile_shape": ("kt::rt<float, 8, 16, kt::row, kt::frag_none> t; kt::fill(t, 0.0); g.data[0] = t.tiles[0][0][0].x;",
                   "multiples of 16"),
    "mma_fragments": ("kt::rt<kt::bf16, 16, 16, kt::row, kt::frag_none> a, b; kt::fill(a, 1.0); kt::fill(b, 1.0);"
                      "kt::rt<float, 16, 16, kt::row, kt::frag_acc> c, d; kt::fill(c, 0.0);"
                      "kt::mma_ABt(d, a, b, c); g.data[0] = d.tiles[0][0][0].x;",
                      "frag_a tile (run the fragments pass)"),
    "mma_layout": ("kt::rt<kt::bf16, 16, 16, kt::row, kt::frag_a> a; kt::rt<kt::bf16, 16, 16, kt::row, kt::frag_b> b;"
                   "kt::fill(a, 1.0); kt::fill(b, 1.0);"
                   "kt::rt<float, 16, 16, kt::row, kt::frag_acc> c, d; kt::fill(c, 0.0);"
                   "kt::mma_AB(d, a, b, c); g.data[0] = d.tiles[0][0][0].x;",
                   "col layout for B"),
    "mma_k8": ("kt::rt<int8_t, 16, 16, kt::row, kt::frag_a> a; kt::rt<int8_t, 16, 16, kt::row, kt::frag_b> b;"
               "kt::fill(a, 1.0); kt::fill(b, 1.0);"
               "kt::rt<int32_t, 16, 16, kt::row, kt::frag_acc> c, d; kt::fill(c, 0.0);"
               "kt::mma_ABt(d, a, b, c); g.data[0] = float(d.tiles[0][0][0].x);",
               "multiple of 32"),
    "lds_load_subtile": ("auto& s = kt::shared_at<kt::st<kt::bf16, 32, 64>, 0>();"
                         "kt::rt<kt::bf16, 16, 48, kt::row, kt::frag_none> t; kt::lds_load(t, s, 0, 1);"
                         "g.data[0] = float(t.tiles[0][0][0].x);",
                         "the register tile's rows and columns must divide the shared tile's"),
}


@pytest.fixture(scope="module")
def refused_builds(tmp_path_factory) -> dict[str, Build]:
    folder = tmp_path_factory.mktemp("hopper_refused")

    def build(item):
        case, (body, _) = item
        source = ('#include "ktile/nvidia/hopper/kernel.hpp"\n'
                  f'extern "C" __global__ void refused(kt::gl<float> g) {{ {body} }}\n')
        return case, nvcc_build(source, folder, case)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(pool.map(build, REFUSED.items()))


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_with_a_message(refused_builds, case):
    build = refused_builds[case]
    assert build.returncode != 0, f"{case} compiled but should be refused"
    assert REFUSED[case][1] in build.log, build.log[-3000:]


def test_no_arch_conditionals_in_headers():
    """Arch variants are header folders chosen by codegen, never `#if` chains (STYLE habit 12)."""
    offenders = [f"{path.relative_to(INCLUDE)}:{n}"
                 for path in sorted(INCLUDE.rglob("*.hpp"))
                 for n, line in enumerate(path.read_text().splitlines(), 1)
                 if re.match(r"\s*#\s*(if|ifdef|ifndef|elif)\b", line) and "ARCH" in line.upper()]
    assert offenders == []

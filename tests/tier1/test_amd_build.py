"""The AMD driver with the real compiler (Debian's clang++-22, or ROCm's hipcc), the build cache
and cocheck's gate: code objects for every AMD target, refusals on builds and on cache hits,
compile errors at the Python line, the quality report. No AMD GPU is needed or used.

The sources are hand-written against ktile/amd/device.hpp alone, or generated from a traced
kernel and compiled against a small stand-in for the family headers written here, so they test
the driver whatever state ktile's own AMD headers are in.
"""
import os
import re
import shutil
from pathlib import Path

import pytest

import ktile as hk
from ktile import targets
from ktile.errors import KernelError
from ktile.runtime.build import BuildLimits, build_source, build_trace
from ktile.runtime.cache import INCLUDE_DIR, BuildCache
from ktile.runtime.cocheck.inputs import EM_AMDGPU
from ktile.runtime.cocheck.llvm import find_tool, run_tool
from ktile.runtime.loaders.packing import GLOBAL_ARG_BYTES
from ktile.runtime.toolchains import amd

AMD = ("gfx1100", "gfx1201", "gfx942", "gfx950")


def _missing_tools() -> list[str]:
    clang = shutil.which("clang++-22") or os.access(amd.CLANG_FALLBACK, os.X_OK)
    missing = [] if clang else ["clang++-22"]
    return missing + [t for t in ("ld.lld", "llvm-readelf", "llvm-objdump") if not find_tool(t)]


MISSING = _missing_tools()
pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs LLVM 22 (missing "
                                 f"{', '.join(MISSING)}; apt-get install -y clang-22 lld-22 "
                                 f"llvm-22, or scripts/setup.sh)")]

# A staged loop: global -> LDS -> registers, two barriers; one wave size fits every target.
STAGED = """
#include "ktile/amd/device.hpp"
extern "C" __global__ __launch_bounds__(256) void staged(float* x, float a, int steps) {
  float* lds = reinterpret_cast<float*>(kt::amd::dynamic_lds());
  unsigned t = kt::amd::thread_idx_x();
  for (int k = 0; k < steps; ++k) {
    unsigned i = (kt::amd::block_idx_x() * steps + k) * 256 + t;
    lds[t] = x[i];
    kt::amd::block_barrier();
    x[i] = a * lds[255 - t] + kt::amd::lane_id() + kt::amd::wave_id();
    kt::amd::block_barrier();
  }
}
"""

# 96 values live across a loop, in a kernel capped at 32 VGPRs: it spills.
SPILLS = """
#include "ktile/amd/device.hpp"
extern "C" __global__ __launch_bounds__(256) __attribute__((amdgpu_num_vgpr(32)))
void spills(const float* a, float* o, int n) {
  unsigned t = kt::amd::thread_idx_x();
  float v[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) v[i] = a[t + i * 256];
  float s = 0;
  for (int j = 0; j < n; ++j) {
#pragma unroll
    for (int i = 0; i < 96; ++i) s += v[i] * v[(i * 7 + j) % 96];
  }
#pragma unroll
  for (int i = 0; i < 96; ++i) o[t + i * 256] = v[i] + s;
}
"""

# A load the compiler cannot see (inline asm), read at once: no wait covers it (gfx11 syntax).
EARLY_READ = """
#include "ktile/amd/device.hpp"
extern "C" __global__ __launch_bounds__(32) void early_read(const float* a, float* o) {
  float v;
  const float* p = a + kt::amd::thread_idx_x();
  asm volatile("global_load_b32 %0, %1, off" : "=v"(v) : "v"(p));
  o[kt::amd::thread_idx_x()] = v * 2.0f;
}
"""

# One matrix instruction per step on operands read from LDS 128 bits at a time.
MMA_LOOP = """
#include "ktile/amd/device.hpp"
typedef unsigned u32x4 __attribute__((ext_vector_type(4)));
{types}
extern "C" __global__ __launch_bounds__({threads}) void mma_loop(const u32x4* a, float* out,
                                                                 int steps) {{
  u32x4* lds = reinterpret_cast<u32x4*>(kt::amd::dynamic_lds());
  unsigned t = kt::amd::thread_idx_x();
  acc_t acc = {{}};
  for (int k = 0; k < steps; ++k) {{
    lds[t] = a[k * {threads} + t];
    kt::amd::block_barrier();
    {step}
    kt::amd::block_barrier();
  }}
  for (int r = 0; r < {acc}; ++r) out[r * {threads} + t] = acc[r];
}}
"""
WMMA_GFX11 = MMA_LOOP.format(  # two waves: a one-wave block's barriers are compiled away
    threads=64, acc=8,
    types="typedef short operand_t __attribute__((ext_vector_type(16)));\n"
          "typedef unsigned u32x8 __attribute__((ext_vector_type(8)));\n"
          "typedef float acc_t __attribute__((ext_vector_type(8)));",
    step="u32x8 v = __builtin_shufflevector(lds[t ^ 1], lds[t ^ 2], 0, 1, 2, 3, 4, 5, 6, 7);\n"
         "    operand_t x = __builtin_bit_cast(operand_t, v);\n"
         "    acc = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(x, x, acc);")
MFMA_GFX950 = MMA_LOOP.format(
    threads=128, acc=4,
    types="typedef __bf16 operand_t __attribute__((ext_vector_type(8)));\n"
          "typedef float acc_t __attribute__((ext_vector_type(4)));",
    step="operand_t x = __builtin_bit_cast(operand_t, lds[t ^ 1]);\n"
         "    operand_t y = __builtin_bit_cast(operand_t, lds[t ^ 2]);\n"
         "    acc = __builtin_amdgcn_mfma_f32_16x16x32_bf16(x, y, acc, 0, 0, 0);")

# The ABI the loaders pack: three kt::gl by value.
GLOBALS = """
#include "ktile/amd/device.hpp"
#include "ktile/common/global_layout.hpp"
extern "C" __global__ __launch_bounds__(64) void copy(kt::gl<float> x, kt::gl<float> y,
                                                      kt::gl<float> z) {
  kt::index_t i = kt::amd::thread_idx_x();
  z.data[i * z.stride[3]] = x.data[i * x.stride[3]] + y.data[i * y.stride[3]];
}
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> BuildCache:
    return BuildCache(tmp_path_factory.mktemp("amd-cache"))


def build(source: str, kernel: str, arch: str, cache: BuildCache, warps: int | None = None,
          **kw):
    target = targets.get(arch)
    threads = int(re.search(r"__launch_bounds__\((\d+)\)", source).group(1))
    return build_source(source, target, kernel, warps=warps or threads // target.wave_size,
                        cache=cache, **kw)


# ---- every target: a real code object, checked clean -------------------------------------

@pytest.mark.parametrize("arch", AMD)
def test_a_hand_written_kernel_builds_for_every_target(arch, cache):
    built = build(STAGED, "staged", arch, cache, lds_bytes=1024)
    code = built.code
    assert code[:4] == b"\x7fELF" and int.from_bytes(code[18:20], "little") == EM_AMDGPU
    assert built.code_path.name == "kernel.hsaco" and not built.cache_hit
    checked = built.quality.checked
    assert checked.findings == [] and checked.instructions_checked > 10
    assert checked.resources.wave_size == targets.get(arch).wave_size
    assert built.resources.registers == checked.resources.vgprs > 0
    assert built.resources.shared_bytes == 1024 and built.threads == 256
    assert built.quality.mix.loop is not None and built.quality.mix.hot_loop.barriers == 2
    command = (built.entry.folder / "command.txt").read_text()
    assert f"--offload-arch={arch} --cuda-device-only --no-gpu-bundle-output -nogpuinc " \
           f"-nogpulib -O3 -std=c++17 -I {INCLUDE_DIR}" in command


def test_a_cache_hit_is_checked_again_and_reports_the_same(cache):
    first = build(STAGED, "staged", "gfx942", cache, lds_bytes=1024)
    again = build(STAGED, "staged", "gfx942", cache, lds_bytes=1024)
    assert again.cache_hit and again.key == first.key and again.code == first.code
    assert again.quality.report() == first.quality.report()
    assert "(cache hit, key" in again.report()


def test_the_key_changes_with_the_target_and_the_source(cache):
    keys = {build(STAGED, "staged", arch, cache).key for arch in ("gfx942", "gfx950")}
    keys.add(build(STAGED.replace("a * lds", "a + lds"), "staged", "gfx942", cache).key)
    assert len(keys) == 3


# ---- refusals: spills, hazards, limits, on builds and on cache hits ---------------------

def test_a_spilling_kernel_is_refused_on_build_and_again_on_the_cache_hit(cache, monkeypatch):
    compiles = []
    real_run = amd.run_command
    monkeypatch.setattr(amd, "run_command", lambda cmd, **kw: compiles.append(cmd) or
                        real_run(cmd, **kw))
    messages = []
    for _ in range(2):
        with pytest.raises(KernelError) as info:
            build(SPILLS, "spills", "gfx1100", cache)
        messages.append(info.value)
    assert len([c for c in compiles if "-o" in c]) == 1, "the second build is a cache hit"
    first, second = messages
    assert str(first) == str(second)
    assert re.search(r"the gfx1100 build is refused by the code-object check \(spill\): spills "
                     r"registers on gfx1100: \d+ VGPRs go through scratch memory",
                     first.message)
    assert first.kernel == "spills" and first.hint.startswith("keep fewer values live at once")


def test_a_wait_hazard_is_refused_with_the_wait_that_fixes_it(cache):
    with pytest.raises(KernelError) as info:
        build(EARLY_READ, "early_read", "gfx1100", cache)
    assert "(wait-hazard) (at 0x" in info.value.message
    assert "may still be in flight: it counts on vmcnt" in info.value.message
    assert info.value.hint.startswith("insert `s_waitcnt vmcnt(0)` before this instruction")


def test_limits_are_checked_on_a_cache_hit(cache):
    build(STAGED, "staged", "gfx1100", cache)
    with pytest.raises(KernelError, match=r"\(max-vgprs\).*above the limit of 4"):
        build(STAGED, "staged", "gfx1100", cache, limits=BuildLimits(max_vgprs=4))
    with pytest.raises(KernelError, match=r"\(min-occupancy\).*more waves per SIMD than gfx1100 holds"):
        build(STAGED, "staged", "gfx1100", cache, limits=BuildLimits(min_occupancy=17))
    met = build(STAGED, "staged", "gfx1100", cache,
                limits=BuildLimits(max_vgprs=64, min_occupancy=8))
    assert met.cache_hit


def test_more_lds_than_the_target_has_is_refused(cache):
    with pytest.raises(KernelError, match=r"0 bytes of static and 65540 bytes of dynamic LDS, "
                                          r"over the 65536 bytes a workgroup has on gfx942"):
        build(STAGED, "staged", "gfx942", cache, lds_bytes=65540)


def test_a_truncated_cache_entry_is_rebuilt(tmp_path):
    cache = BuildCache(tmp_path)
    first = build(STAGED, "staged", "gfx950", cache)
    code = first.code
    first.code_path.write_bytes(code[:len(code) // 2])
    again = build(STAGED, "staged", "gfx950", cache)
    assert not again.cache_hit and again.code == code
    assert again.quality.checked.findings == []


# ---- compile errors at the kernel's Python line -----------------------------------------

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


ADD_LINE = add.fn.__code__.co_firstlineno + 4   # `o[idx] = ...`

# What the traced `add` needs from ktile/amd/rdna3/kernel.hpp; {add} is the elementwise add.
STAND_IN = """#pragma once
#include "ktile/amd/device.hpp"
#include "ktile/common/tags.hpp"
#include "ktile/common/global_layout.hpp"
#include "ktile/common/scalar_ops.hpp"
namespace kt {
using bf16 = __bf16;
__device__ inline index_t block_idx_x() { return amd::block_idx_x(); }
__device__ inline index_t block_idx_y() { return amd::block_idx_y(); }
__device__ inline index_t block_idx_z() { return amd::block_idx_z(); }
template <class T, int R, int C, class L, class F> struct rt { T data[R * C / 32]; };
template <class T, int R, int C, class L, class F>
__device__ void load(rt<T, R, C, L, F>& dst, const gl<T>& src, coord at, double pad) {
  for (int i = 0; i < R * C / 32; ++i)
    dst.data[i] = src.at(at.b, at.d, at.r * R + i / 2, at.c * C + amd::lane_id() * 2 + i % 2)[0];
}
template <class T, int R, int C, class L, class F>
__device__ void store(const gl<T>& dst, const rt<T, R, C, L, F>& src, coord at) {
  for (int i = 0; i < R * C / 32; ++i)
    dst.at(at.b, at.d, at.r * R + i / 2, at.c * C + amd::lane_id() * 2 + i % 2)[0] = src.data[i];
}
{add}
}  // namespace kt
"""
ADD = """template <class T, int R, int C, class L, class F>
__device__ void add(rt<T, R, C, L, F>& d, const rt<T, R, C, L, F>& a, const rt<T, R, C, L, F>& b) {
  {check}
  for (int i = 0; i < R * C / 32; ++i) d.data[i] = a.data[i] + b.data[i];
}"""


def stand_in(tmp_path: Path, add_function: str) -> Path:
    header = tmp_path / "include" / "ktile" / "amd" / "rdna3" / "kernel.hpp"
    header.parent.mkdir(parents=True)
    header.write_text(STAND_IN.replace("{add}", add_function))
    return tmp_path / "include"


def test_generated_code_builds_against_the_stand_in(tmp_path):
    include = stand_in(tmp_path, ADD.replace("{check}", ""))
    built = build_trace(add.trace("gfx1100"), cache=BuildCache(tmp_path / "cache"),
                        include_dirs=[include, INCLUDE_DIR])
    assert built.kernel == "add" and built.threads == 32
    assert built.quality.checked.findings == []


def test_a_missing_header_function_is_an_error_at_the_python_line(tmp_path):
    include = stand_in(tmp_path, "")
    with pytest.raises(KernelError) as info:
        build_trace(add.trace("gfx1100"), cache=BuildCache(tmp_path / "cache"),
                    include_dirs=[include, INCLUDE_DIR])
    error = info.value
    assert (error.loc.file, error.loc.line) == (__file__, ADD_LINE)
    assert error.message.startswith("clang++") or error.message.startswith("hipcc")
    assert "rejects the gfx1100 C++ generated for this line" in error.message
    assert "no member named 'add' in namespace 'kt'" in error.message
    assert "o[idx] = a[idx].load(t) + b[idx].load(t)" in str(error)


def test_a_header_static_assert_is_an_error_at_the_line_that_instantiated_it(tmp_path):
    check = 'static_assert(sizeof(T) == 4, "kt::add: 32-bit elements only in this stand-in");'
    include = stand_in(tmp_path, ADD.replace("{check}", check))
    with pytest.raises(KernelError) as info:
        build_trace(add.trace("gfx1100"), cache=BuildCache(tmp_path / "cache"),
                    include_dirs=[include, INCLUDE_DIR])
    assert (info.value.loc.file, info.value.loc.line) == (__file__, ADD_LINE)
    assert "kt::add: 32-bit elements only in this stand-in" in info.value.message


# ---- the quality report -----------------------------------------------------------------

@pytest.mark.parametrize("arch,source,mma", [
    ("gfx1100", WMMA_GFX11, "v_wmma_f32_16x16x16_bf16"),
    ("gfx950", MFMA_GFX950, "v_mfma_f32_16x16x32_bf16"),
], ids=["gfx1100-wmma", "gfx950-mfma"])
def test_the_quality_report_lists_the_hot_loops_instruction_mix(arch, source, mma, cache):
    built = build(source, "mma_loop", arch, cache, lds_bytes=4096)
    mix = built.quality.mix
    hot = mix.hot_loop
    assert hot.mma == {mma: 1}
    assert hot.lds_reads == {128: 2} and hot.lds_writes == {128: 1}
    assert hot.global_loads == {128: 1} and hot.barriers == 2 and hot.waits >= 1
    assert mix.narrow_lds_reads == 0
    assert mix.whole.global_stores[32] == sum(mix.whole.global_stores.values()) > 0
    text = built.report()
    for line in ("instruction mix", "    MMA             1", "    LDS reads       2 (128-bit 2)",
                 f"{mma} x1", "VGPRs (0 AGPRs)", "waves per SIMD", "hot loop at 0x"):
        assert line in text, text


# ---- the loaders' argument bytes are the code object's ----------------------------------

@pytest.mark.parametrize("arch", ["gfx1100", "gfx950"])
def test_the_code_objects_arguments_are_what_the_loaders_pack(arch, cache):
    built = build(GLOBALS, "copy", arch, cache)
    notes = run_tool("llvm-readelf", "--notes", str(built.code_path))
    args = re.findall(r"\.offset:\s+(\d+)\s+\.size:\s+(\d+)\s+\.value_kind:\s+by_value", notes)
    assert [(int(o), int(s)) for o, s in args] == \
        [(0, GLOBAL_ARG_BYTES), (GLOBAL_ARG_BYTES, GLOBAL_ARG_BYTES),
         (2 * GLOBAL_ARG_BYTES, GLOBAL_ARG_BYTES)]

"""The quality reports of the GEMM and attention examples, compiled for gfx1100 (RDNA3) and
gfx950 (CDNA4) with the real compiler, pinned: the hot loop is the main loop, holds the
kernel's MMAs, reads LDS 128 bits at a time, copies global→LDS by DMA where the target can,
and nothing spills. Compiled and statically checked only: no AMD GPU runs these.

Each property is read from the report's data (`Build.quality.mix`), whose counting and loop
rule tests/tier0/test_amd_quality_model.py checks on planted instruction lists (a narrow
read is counted, a cold loop is passed over), so a regression in the code shows here as a
failed count, not as a silently different report.
"""
import pytest

from examples_index import load
from ktile.runtime.build import build_trace
from ktile.runtime.cache import BuildCache

from test_amd_build import MISSING

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs LLVM 22 (missing "
                                 f"{', '.join(MISSING)}; apt-get install -y clang-22 lld-22 "
                                 f"llvm-22, or scripts/setup.sh)")]

GEMM_MMAS = {"gfx1100": ("v_wmma_f32_16x16x16_bf16", 8),     # 16×16 outputs, K step 16
             "gfx950": ("v_mfma_f32_16x16x32_bf16", 4)}
ATTENTION_MMAS = {"gfx1100": ("v_wmma_", 16), "gfx950": ("v_mfma_", 8)}
LDS_READ = {"gfx1100": "ds_load_b128", "gfx950": "ds_read_b128"}
WIDE_GLOBAL_LOAD = {"gfx1100": "buffer_load_b128", "gfx950": "buffer_load_dwordx4"}


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> BuildCache:
    return BuildCache(tmp_path_factory.mktemp("amd-quality-cache"))


def built(example: str, kernel: str, target: str, cache: BuildCache, **constants):
    """The example's kernel named `kernel`, with its default constants but `constants`."""
    found = next(k for k, _ in load(example).KERNELS if k.name == kernel)
    return build_trace(found.trace(target, **constants), cache=cache)


def assert_no_spill(build):
    res = build.quality.checked.resources
    assert (res.vgpr_spills, res.sgpr_spills, res.scratch_bytes) == (0, 0, 0), build.report()


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("kernel", ["gemm", "gemm_warps"])
def test_the_gemm_hot_loop_reads_lds_128_bits_at_a_time_into_the_mmas(kernel, target, cache):
    build = built("04_gemm", kernel, target, cache)
    mix, (mma, expected) = build.quality.mix, GEMM_MMAS[target]
    hot = mix.hot_loop
    assert mix.loop.depth == 1, build.report()                   # the K loop itself
    assert hot.mma[mma] >= expected and hot.mma == mix.whole.mma, build.report()
    assert hot.narrow_lds_reads() == 0 and mix.narrow_lds_reads == 0, build.report()
    assert hot.lds_reads[128] == hot.mnemonics[LDS_READ[target]] > 0, build.report()
    assert_no_spill(build)


@pytest.mark.parametrize("kernel", ["gemm", "gemm_warps"])
def test_the_gemm_hot_loop_on_gfx950_copies_global_to_lds_by_dma(kernel, cache):
    build = built("04_gemm", kernel, "gfx950", cache)
    hot = build.quality.mix.hot_loop
    assert hot.lds_dma >= 2, build.report()                      # the A and B tiles
    assert not any(m.startswith("v_wmma") for m in hot.mma)
    # the copy's edge path (element by element, then LDS writes) is out of the loop's code
    assert sum(hot.lds_writes.values()) == 0 and hot.global_loads[16] == 0, build.report()


# target -> kernel -> the lowest MMA density of the GEMM's hot loop accepted (the copy plan,
# copy_plan.hpp: 0.007 / 0.017 before it; measured 0.0136, 0.0110, 0.0220, 0.0168)
GEMM_DENSITY = {"gfx950": {"gemm": 0.013, "gemm_warps": 0.010},
                "gfx1100": {"gemm": 0.021, "gemm_warps": 0.016}}


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("kernel", ["gemm", "gemm_warps"])
def test_the_gemm_hot_loop_holds_no_per_copy_address_loop(kernel, target, cache):
    """The copies' offsets come from the copy plan, computed before the loop: the loop issues
    its copies straight-line, so the kernel holds one loop (no loop over DMA instructions or
    chunks; the edge path's loops are in their own function) and its density is at least the
    pinned floor."""
    build = built("04_gemm", kernel, target, cache)
    mix = build.quality.mix
    assert (mix.loops, mix.loop.depth) == (1, 1), build.report()
    density = mix.hot_loop.mma_density()
    print(f"{kernel} {target}: {density:.4f} MMA per hot-loop instruction")
    assert density >= GEMM_DENSITY[target][kernel], build.report()


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_the_attention_hot_loop_is_the_key_loop_with_both_load_paths(target, cache):
    build = built("05_attention", "attention", target, cache)   # causal
    mix, (prefix, expected) = build.quality.mix, ATTENTION_MMAS[target]
    hot = mix.hot_loop
    assert (mix.loops, mix.loop.depth) == (1, 1), build.report()
    assert sum(hot.mma.values()) == sum(mix.whole.mma.values()) == expected, build.report()
    assert all(m.startswith(prefix) for m in hot.mma)
    # the K tile's fast path is in the loop, not only its element path
    assert hot.mnemonics[WIDE_GLOBAL_LOAD[target]] >= 4, build.report()
    # no LDS at all: K and V go from global memory straight to registers
    assert sum(hot.lds_reads.values()) == 0 and mix.narrow_lds_reads == 0, build.report()
    assert_no_spill(build)


def test_a_report_whose_global_to_lds_copy_is_outside_the_hot_loop_renders(cache):
    build = built("02_rmsnorm", "rmsnorm_staged", "gfx942", cache)
    mix = build.quality.mix
    assert mix.whole.lds_dma >= 1 and mix.hot_loop.lds_dma == 0, build.report()
    [row] = [line for line in build.report().splitlines() if "global->LDS" in line]
    assert row.split()[1:] == [str(mix.whole.lds_dma), "0"]

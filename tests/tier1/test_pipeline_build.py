"""Tier 1 builds of `hk.pipeline` (issue #11): matmul's `wgmma_ws_nt` for sm_90a, at each of its
routes' constants (128 x 128 tiles / 6 stages, 128 x 256 / 4), compiles with no spill and no wgmma serialized by ptxas (C7514 / C7517), at the 384-thread block's launch
registers, with each role's register limit (setmaxnreg) and the stage protocol (mbarrier
parity waits, TMA copies completing on them, one wgmma group kept in flight, no proxy fence
before the wgmma on TMA-written stages) in its PTX; the kernel traced without tensor maps (cp.async stage copies) builds clean too; the small pipelined
GEMM of tests/pipeline_kernels.py, traced in turns, builds clean for the AMD targets (the
cocheck gate: no spill, no scratch, waits checked): gfx1100 and gfx950 in CI, all four with
KTILE_OPS_FULL_BUILD=1."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import build_gates
from ktile import config
from ktile.ops.matmul import config as matmul_config, tiles_ws

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pipeline_kernels as P  # noqa: E402

pytestmark = pytest.mark.tier1

# CI builds one target a wave size (test_ops_build.py's choice); all four with
# KTILE_OPS_FULL_BUILD=1
AMD_TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950") \
    if config.OPS_FULL_BUILD.get() == "1" else ("gfx1100", "gfx950")


# every warp-specialised route: wgmma_ws_nt's, and the persistent kernel's (its consumers end
# with no finish: the pipeline drains their last wgmma groups, else ptxas injected a wait a step)
WS_ROUTES = [(r.kernel, r.constants) for r in matmul_config.NT_TILES
             if r.kernel.startswith("wgmma_ws")]


@pytest.fixture(scope="module", params=WS_ROUTES, ids=lambda r: f"{r[0]}-BN{r[1]['BN']}")
def ws_build(tmp_path_factory, request):
    hopper = build_gates.hopper()
    kernel_name, constants = request.param
    folder = tmp_path_factory.mktemp(kernel_name)
    kernel = getattr(tiles_ws, kernel_name)("bf16")
    source = kernel.trace("sm_90a", **constants).source()
    cu = folder / "k.cu"
    cu.write_text(source)
    # one nvcc run: the cubin with ptxas's report, its PTX kept beside it
    result = subprocess.run([hopper.NVCC, *hopper.FLAGS, "-keep", "-keep-dir", str(folder),
                             str(cu), "-o", str(folder / "k.cubin")],
                            capture_output=True, text=True, timeout=300, cwd=folder)
    log = result.stdout + result.stderr
    build = hopper.Build(result.returncode, log, hopper.parse_ptxas(log))
    ptx = next(folder.glob("*.ptx"), None)
    assert build.returncode == 0 and ptx is not None, log[-3000:]
    return kernel.name, ptx.read_text(), build, constants["BN"]


def test_wgmma_ws_nt_builds_with_no_spill_and_no_serialized_wgmma(ws_build):
    name, _, build, _ = ws_build
    build_gates.assert_sm90a_clean(build, name)
    assert "C7514" not in build.log and "C7517" not in build.log, build.log[-3000:]
    # one block of 384 threads: 65536 / 384 rounded down to 8; the roles move registers in it
    assert build.functions[name].registers == 168


def test_each_role_sets_its_registers_and_the_stages_synchronise(ws_build):
    _, ptx, _, bn = ws_build
    assert re.findall(r"setmaxnreg\.(dec|inc)\.sync\.aligned\.u32 (\d+);", ptx) == \
        [("dec", "24"), ("inc", "240")]
    assert "mbarrier.try_wait.parity.shared::cta.b64" in ptx
    assert "mbarrier.arrive.expect_tx.shared::cta.b64" in ptx
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" in ptx
    assert re.search(rf"wgmma\.mma_async\.sync\.aligned\.m64n{bn}k16\.f32\.bf16\.bf16", ptx)
    assert "fence.proxy.async" not in ptx       # the stages are written by TMA alone
    waits = [int(n) for n in re.findall(r"wgmma\.wait_group\.sync\.aligned (\d+);", ptx)]
    assert 1 in waits and waits[-1] == 0, waits     # one group in flight, drained at the end
    assert "bar.sync" in ptx and ptx.count("bar.sync") == 1   # the barriers' initialisation


def test_wgmma_ws_nt_without_tensor_maps_builds_clean(tmp_path):
    """A call whose tensors cannot have tensor maps: the producer's threads copy by cp.async
    (element by element where rows are unaligned) within its 24 registers."""
    hopper = build_gates.hopper()
    kernel = tiles_ws.wgmma_ws_nt("bf16")
    source = kernel.trace_copies("sm_90a", False, {}).source()
    assert "kt_map" not in source
    build = hopper.nvcc_build(source, tmp_path, "k")
    build_gates.assert_sm90a_clean(build, kernel.name)
    assert "C7514" not in build.log and "C7517" not in build.log, build.log[-3000:]


@pytest.mark.parametrize("target", AMD_TARGETS)
def test_the_small_pipeline_builds_clean_for_amd(tmp_path, target):
    amd = build_gates.amd()
    source = P.pipelined.trace(target).source()
    build = amd.amd_build(source, tmp_path, f"p_{target}", target)
    amd.assert_clean(build, P.pipelined.name, f"pipelined on {target}")

"""The wgmma decode kernels on the GPU, each run 10 times (tier 3, skipped without one): every
shipped and pinnable constant set of `skinny_wgmma_nt`, `wgmma_gemv_nt` and `swap_gemv_nt`
(M up to its MN) at M 4 and 32 x
4096 x 4096 against the fp32 product, every run. The race this guards: the accumulator read
for the store before the last wgmma finished writing it (nvcc's bit-casts above the drain),
which gave wrong rows 16 and up at some runs and constants only (H200, 2026-12-02: STAGES 4
at M 32, A_REGS 1 at M 4 and 32); fixed in the waits pass (tests/tier1/
test_wgmma_accumulator_bound.py checks the PTX). Under compute-sanitizer:

    compute-sanitizer --tool racecheck python3 -m pytest -q -x \\
        tests/tier3/test_ops_matmul_wgmma_race_gpu.py -k "racecheck"
"""
import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

from test_ops_matmul_gpu import assert_close, rand  # noqa: E402

RUNS = 10


def constant_sets():
    """(kernel, constants): the routes, then every set tier 3 and benchmarks/gemv_sweep.py pin."""
    from ktile.ops.matmul import config
    sets = [(r.kernel, dict(r.constants))
            for r in config.SKINNY_WGMMA_ROUTES + config.WGMMA_GEMV_ROUTES]
    sets += [("skinny_wgmma_nt", c) for c in (
        {"BN": 128, "BK": 64, "STAGES": 4}, {"BN": 128, "BK": 64, "STAGES": 4, "IN_FLIGHT": 0},
        {"BN": 128, "BK": 64, "STAGES": 3, "IN_FLIGHT": 0}, {"BN": 64, "BK": 64, "STAGES": 4},
        {"BN": 64, "BK": 128, "STAGES": 3}, {"BN": 128, "BK": 64, "STAGES": 4, "A_REGS": 1},
        {"BN": 64, "BK": 64, "STAGES": 6})]
    sets += [("wgmma_gemv_nt", c) for c in (
        {"BN": 32, "BK": 128, "STAGES": 6}, {"BN": 32, "BK": 128, "STAGES": 8},
        {"BN": 32, "BK": 128, "STAGES": 8, "A_REGS": 1}, {"BN": 32, "BK": 64, "STAGES": 6},
        {"BN": 64, "BK": 64, "STAGES": 4}, {"BN": 64, "BK": 128, "STAGES": 4})]
    sets += [(r.kernel, dict(r.constants)) for r in config.SWAP_GEMV_ROUTES]
    sets += [("swap_gemv_nt", {"MN": mn, "BK": bk, "STAGES": st})
             for mn in (16, 32) for bk, st in ((128, 4), (128, 7), (64, 8))]
    return sets


def pinned(kernel, constants):
    from ktile.ops import _library as lib
    from ktile.ops.matmul import config
    from ktile.ops.matmul.op import OP
    return lib.pinned(OP.table, lib.Route(kernel, constants, targets=config.SM90))


@pytest.mark.parametrize("kernel,constants", constant_sets(), ids=str)
@pytest.mark.parametrize("m", [4, 32])
def test_every_run_matches_fp32(kernel, constants, m):
    import ktile.ops as ops
    if m > constants.get("MN", 64):
        pytest.skip("swap_gemv_nt holds MN rows of a")
    a, w = rand(m, 4096, seed=m), rand(4096, 4096, seed=100 + m)
    with pinned(kernel, constants):
        for _ in range(RUNS):
            assert_close(ops.matmul(a, w.t()), a, w.t(), None)


@pytest.mark.parametrize("kernel,constants", constant_sets()[:2], ids=str)
def test_racecheck(kernel, constants):
    """One run of each route at M 32 (the form to run under compute-sanitizer: fast)."""
    import ktile.ops as ops
    a, w = rand(32, 4096, seed=1), rand(4096, 4096, seed=2)
    with pinned(kernel, constants):
        got = ops.matmul(a, w.t())
    torch.cuda.synchronize()
    assert_close(got, a, w.t(), None)


@pytest.mark.parametrize("constants", [{"MN": 16, "BK": 128, "STAGES": 6},
                                       {"MN": 32, "BK": 128, "STAGES": 6},
                                       {"MN": 16, "BK": 64, "STAGES": 8}], ids=str)
@pytest.mark.parametrize("m", [1, 3, 16, 17, 32])
@pytest.mark.parametrize("n,k", [(6144, 4096), (24576, 4096), (4096, 12288), (4000, 4100),
                                 (130, 72)], ids=str)
def test_swap_gemv_shapes_match_fp32(constants, m, n, k):
    """swap_gemv_nt at the decode shapes and ragged ones (N cut inside a 64-row block, K no
    multiple of BK, K · 2 bytes no multiple of 16: the cp.async build), bias on odd M; the
    same bits twice (no split: one block sums all of K)."""
    import ktile.ops as ops
    if m > constants["MN"]:
        pytest.skip("swap_gemv_nt holds MN rows of a")
    a, w, bias = rand(m, k, seed=1), rand(n, k, seed=2), rand(n, seed=3)
    with_bias = bias if m % 2 else None
    with pinned("swap_gemv_nt", constants):
        got = ops.matmul(a, w.t(), with_bias)
        assert torch.equal(ops.matmul(a, w.t(), with_bias), got)
    assert_close(got, a, w.t(), with_bias)

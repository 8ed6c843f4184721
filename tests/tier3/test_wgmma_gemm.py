"""The wgmma GEMM (examples/04_gemm.py `gemm_wgmma`, `acc += ra @ sb.T`) on the GPU against torch
(tier 3, skipped without a GPU): shapes with ragged edges in M, N and K, every K width whose
shared layout a wgmma descriptor describes (BK 16: 32-byte rows, 32: 64-byte, 64: 128-byte,
128: two 128-byte column blocks), 2 to 4 pipeline stages, B of 256 rows (the widest wgmma),
one warpgroup per block, and a two-warp block, which takes the ldmatrix + mma.sync path instead.
"""
import pytest

from examples_index import load
from ktile.lang.kernel import Kernel
from ktile.ops.gemm.reference import gemm_abt, tolerance

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.tier3

gemm_wgmma = load("04_gemm").gemm_wgmma

SHAPES = [(1, 128, 128, 64), (1, 256, 384, 512), (2, 200, 130, 100), (1, 77, 300, 1000)]
VARIANTS = [  # (warps, constants)
    (8, {}),
    (8, {"STAGES": 2}),
    (8, {"STAGES": 4}),
    (8, {"BK": 16}),
    (8, {"BK": 32}),
    (8, {"BK": 128}),
    (8, {"BN": 256}),
    (4, {"BM": 64}),
    (2, {"BM": 32, "BN": 64}),   # not a whole warpgroup: mma.sync from ldmatrix
]


def with_warps(kernel, warps: int):
    return kernel if warps == kernel.warps else Kernel(kernel.fn, kernel.grid, warps, kernel.arch)


def run(kernel, shape, constants, seed=5):
    batch, m, n, k = shape
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn((batch, 1, m, k), generator=g, device="cuda").to(torch.bfloat16)
    b = torch.randn((batch, 1, n, k), generator=g, device="cuda").to(torch.bfloat16)
    c = torch.full((batch, 1, m, n), float("nan"), device="cuda")
    kernel(a, b, c, **constants)
    torch.cuda.synchronize()
    an, bn = a.float().cpu().numpy(), b.float().cpu().numpy()
    return c.cpu().numpy(), gemm_abt(an, bn), tolerance(an, bn)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("warps,constants", VARIANTS,
                         ids=[f"w{w}-" + ("-".join(f"{k}{v}" for k, v in c.items()) or "default")
                              for w, c in VARIANTS])
def test_wgmma_gemm_matches_torch(shape, warps, constants):
    got, want, tol = run(with_warps(gemm_wgmma, warps), shape, constants)
    err = float(abs(got - want).max())
    assert err <= tol, f"{shape} warps={warps} {constants}: max error {err} > {tol}"

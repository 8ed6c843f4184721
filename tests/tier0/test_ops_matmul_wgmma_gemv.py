"""sm_90a's one-kernel decode product (`wgmma_gemv_nt`, skinny_wgmma.py: W by TMA into wgmma
over all of K, the bias and the rounding in its epilogue, no split-K and no second kernel) on
the interpreter (KTILE_TARGET=sm_90a) against the reference: ragged M (rows past M stored by
no warp), N (a last band cut by N), K (a last tile zero-filled, K tiles no multiple of the
stage count), a in shared memory or registers, bias or none, other dtypes; its place in the
table (pinnable, never chosen first) and its refusals."""
import pytest

from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP

from bad_inputs import refused
from test_ops_matmul import check, rand

torch = pytest.importorskip("torch")

ROUTE = config.WGMMA_GEMV_ROUTES[0]


@pytest.fixture(autouse=True)
def sm90a(monkeypatch):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")


@pytest.mark.parametrize("m,n,k,constants", [
    (1, 70, 200, {}),                                          # the route's: BN 32, BK 128
    (5, 33, 1000, {"BN": 64, "BK": 64, "STAGES": 3}),           # 16 K tiles: 3 rounds past K
    (17, 45, 130, {"BK": 64, "A_REGS": 1}),                     # a from registers, 2 warps
    (2, 40, 520, {"BK": 256, "STAGES": 3, "IN_FLIGHT": 0})],    # the drained wait form
    ids=str)
def test_matches_reference_at_ragged_shapes(m, n, k, constants):
    route = lib.Route("wgmma_gemv_nt", {**ROUTE.constants, **constants}, targets=config.SM90)
    with lib.pinned(OP.table, route):
        check(m, n, k, bias=m % 2 == 1)


def test_output_dtypes():
    with lib.pinned(OP.table, ROUTE):
        check(3, 40, 300, dtype="fp16", out_dtype="fp32")


def test_pinnable_and_never_chosen_first():
    assert ROUTE in config.TABLE.routes
    for m in (1, 2, 8, 32, 64):
        assert config.choose("nt", m, 4096, "sm_90a", 4096).kernel != "wgmma_gemv_nt"


def test_refusals_name_the_shape():
    kernel = OP.kernel(ROUTE, "bf16")
    a, w, bias = rand((4, 128), 1), rand((40, 128), 2), rand((40,), 3)
    out = torch.zeros((4, 40), dtype=torch.bfloat16)
    refused(lambda: lib.run(kernel, a, w, bias, torch.zeros((4, 41), dtype=torch.bfloat16),
                            **ROUTE.constants), "out must be [M, N]", kind=InputError)
    refused(lambda: lib.run(kernel, a, w, rand((41,), 3), out, **ROUTE.constants),
            "bias must hold one value", kind=InputError)
    refused(lambda: lib.run(kernel, a, w, bias, out, **{**ROUTE.constants, "STAGES": 2}),
            "STAGES", kind=InputError)

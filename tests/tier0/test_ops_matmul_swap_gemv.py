"""sm_90a's "swap AB" decode product (`swap_gemv_nt`, swap_gemv.py: W's rows on the wgmma's
M side, a's rows as its N side, W by TMA over all of K, the epilogue's per-row stores of the
transposed accumulator) on the interpreter (KTILE_TARGET=sm_90a) against the reference:
ragged M (rows past M stored by no column), N (a last block cut by N), K (a zero-filled last
tile, K tiles no multiple of the stage count), MN 16 and 32, bias or none; its place in the
table (pinnable, never chosen first) and its refusals."""
import pytest

from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP

from bad_inputs import refused
from test_ops_matmul import check, rand

torch = pytest.importorskip("torch")

ROUTES = config.SWAP_GEMV_ROUTES


@pytest.fixture(autouse=True)
def sm90a(monkeypatch):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")


@pytest.mark.parametrize("m,n,k,constants", [
    (5, 100, 300, {"MN": 16, "BK": 64, "STAGES": 3}),      # 5 K tiles: a round past K
    (32, 130, 1000, {"MN": 32, "BK": 128, "STAGES": 4})],  # every row of MN, N cut at 130
    ids=str)
def test_matches_reference_at_ragged_shapes(m, n, k, constants):
    route = lib.Route("swap_gemv_nt", constants, targets=config.SM90)
    with lib.pinned(OP.table, route):
        check(m, n, k, bias=m % 2 == 1)


def test_pinnable_and_never_chosen_first():
    assert all(r in config.TABLE.routes for r in ROUTES)
    for m in (1, 2, 16, 32):
        assert config.choose("nt", m, 4096, "sm_90a", 4096).kernel != "swap_gemv_nt"


def test_refusals_name_the_constant_or_shape():
    kernel = OP.kernel(ROUTES[0], "bf16")
    c = ROUTES[0].constants
    a, w, bias = rand((4, 128), 1), rand((40, 128), 2), rand((40,), 3)
    out = torch.zeros((4, 40), dtype=torch.bfloat16)
    refused(lambda: lib.run(kernel, a, w, bias, out, **{**c, "STAGES": 9}), "STAGES",
            kind=InputError)
    refused(lambda: lib.run(kernel, a, w, bias, out, **{**c, "MN": 24}), "MN", kind=InputError)
    big = rand((17, 128), 4)
    refused(lambda: lib.run(kernel, big, w, bias, torch.zeros((17, 40), dtype=torch.bfloat16),
                            **c), "at most MN rows", kind=InputError)

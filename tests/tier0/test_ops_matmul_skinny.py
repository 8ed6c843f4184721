"""sm_90a's skinny route for M 2..64 (`skinny_wgmma_nt`: a TMA pipeline into wgmma, split K
over blocks, `splitk_reduce`) on the interpreter (KTILE_TARGET=sm_90a traces what the GPU
builds) against the reference at ragged M, N and K, with the split count > 1, every stage
count it takes, bias or none, other dtypes; the split count's invariants; the routing (which
M, target and layout take it); refusals naming the constant or the shape."""
import pytest

import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.matmul import config, skinny_wgmma
from ktile.ops.matmul.op import OP

from bad_inputs import refused
from test_ops_matmul import check, rand

torch = pytest.importorskip("torch")

ROUTE = config.SKINNY_WGMMA_ROUTES[0]


@pytest.fixture(autouse=True)
def sm90a(monkeypatch):
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")


@pytest.mark.parametrize("m,n,k", [(1, 33, 200), (3, 70, 1000), (9, 70, 200),
                                   (16, 300, 1000), (29, 45, 130), (33, 129, 4100),
                                   (64, 20, 64)], ids=str)
def test_matches_reference_at_ragged_shapes(m, n, k):
    """M under 16 rows (the decode sizes: warps 1..3 store nothing), past 16/32 rows, N not a
    multiple of BN, K not a multiple of BK (the last tile zero-filled) and K long enough that
    the CPU's split count is over 1."""
    assert check(m, n, k, bias=m % 2 == 1) == "skinny_wgmma_nt"


@pytest.mark.parametrize("constants", [{"BN": 64, "BK": 32, "STAGES": 4},
                                       {"BN": 32, "BK": 64, "STAGES": 5},
                                       {"BN": 128, "BK": 16, "STAGES": 3},
                                       {"BN": 64, "BK": 128, "STAGES": 3},
                                       {"BN": 64, "BK": 64, "STAGES": 4, "A_REGS": 1},
                                       {"BN": 64, "BK": 64, "STAGES": 4, "IN_FLIGHT": 0}],
                         ids=str)
def test_other_constants_match_the_reference(constants):
    """Pinned as the tuner or benchmarks/matmul.py --route would: runs of 4 and 5 stages,
    narrower and wider tiles, a run length that leaves prefetches past the split's last tile,
    the drained wait form, a read by each warp from global memory into registers."""
    route = lib.Route("skinny_wgmma_nt", constants, targets=config.SM90)
    with lib.pinned(OP.table, route):
        check(12, 40, 600, bias=True)
        check(50, 70, 136, bias=False)


@pytest.mark.parametrize("dtype,out_dtype", [("fp16", None), ("bf16", "fp32"),
                                             ("fp16", "bf16")])
def test_output_dtypes(dtype, out_dtype):
    check(17, 40, 300, dtype=dtype, out_dtype=out_dtype)


def test_partials_cover_every_k_tile_once():
    """Phase 1 alone at several split counts: the partials sum to the product (every K tile in
    exactly one split, the split's prefetches past its run add nothing), every row and column
    of every split written (part starts as NaN)."""
    kernel = OP.kernel(ROUTE, "bf16")
    a, w = rand((20, 900), 1), rand((70, 900), 2)
    want = a.float() @ w.float().t()
    for splits in (1, 2, 3, 5):
        part = torch.full((splits, 20, 70), float("nan"))
        lib.run(kernel, a, w, part, **ROUTE.constants)
        assert not part.isnan().any()
        assert float((part.sum(0) - want).abs().max()) <= float(want.abs().max()) * 2 ** -18


@pytest.mark.parametrize("n,k,sms", [(12288, 4096, 132), (4096, 4096, 132), (24576, 4096, 132),
                                     (4096, 12288, 132), (128, 64, 132), (50000, 4096, 132),
                                     (70, 4100, 4)], ids=str)
def test_split_count(n, k, sms):
    """The blocks fit the resident slots in one wave (or the N blocks alone exceed them, split
    1), every split has at least one K tile inside K, each at least two rounds where split."""
    c = ROUTE.constants
    n_blocks, k_tiles = -(-n // c["BN"]), -(-k // c["BK"])
    splits = config.split_count(ROUTE, n, k, sms)
    per = skinny_wgmma.run_length(k_tiles, splits, c["STAGES"])
    sm = config.sm90a_multiprocessor()
    stage = (skinny_wgmma.MAX_ROWS + c["BN"]) * c["BK"] * 2
    slots = sm.shared_bytes // (c["STAGES"] * stage + sm.shared_reserved_per_block) * sms
    assert 1 <= splits <= config.MAX_SPLITS
    assert splits == 1 or n_blocks * splits <= slots
    assert (splits - 1) * per < k_tiles <= splits * per
    assert splits == 1 or per >= 2 * c["STAGES"]


def test_routes_m_2_to_64_on_sm90a_only_for_the_weight_layout():
    for m in (2, 5, 8, 9, 32, 64):
        assert config.choose("nt", m, 4096, "sm_90a", 4096).kernel == "skinny_wgmma_nt"
    assert config.choose("nt", 1, 4096, "sm_90a", 4096).kernel == "gemv_nt"
    assert config.choose("nt", 1, 4096, "sm_90a", 4100).kernel == "skinny_wgmma_nt"  # K % 16
    assert config.choose("nt", 65, 4096, "sm_90a", 4096).kernel != "skinny_wgmma_nt"
    assert config.choose("nn", 16, 4096, "sm_90a", 4096).kernel == "skinny_nn"
    for target in ("gfx1100", "gfx950"):
        assert config.choose("nt", 16, 4096, target, 4096).kernel == "skinny_nt"


def test_refusals_name_the_constant_and_the_shape():
    kernel = OP.kernel(ROUTE, "bf16")
    a, w = rand((20, 128), 1), rand((40, 128), 2)
    part = torch.zeros((2, 20, 40))
    refused(lambda: lib.run(kernel, a, w, part, **{**ROUTE.constants, "STAGES": 2}),
            "STAGES", "at least 3", kind=InputError)
    big = rand((65, 128), 1)
    refused(lambda: lib.run(kernel, big, w, torch.zeros((2, 65, 40)), **ROUTE.constants),
            "at most 64 rows", kind=InputError)
    refused(lambda: lib.run(kernel, a, w, torch.zeros((2, 20, 41)), **ROUTE.constants),
            "part must be [splits, M, N]", kind=InputError)
    route = lib.Route("skinny_wgmma_nt", {**ROUTE.constants, "STAGES": 2},
                      targets=config.SM90)
    with lib.pinned(OP.table, route):
        refused(lambda: ops.matmul(a, w.t()), "STAGES", kind=InputError)


@pytest.mark.parametrize("splits,m", [(1, 5), (3, 20), (5, 16), (6, 33)], ids=str)
def test_reduce_sums_every_split_once_in_order(splits, m):
    """splitk_reduce alone (its route's UNROLL 4): split counts no multiple of UNROLL (loads
    past the last split read 0), M no multiple of 16 (a tile's rows past M hold the next
    split's rows, summed and never stored): the fp32 sum in split order, plus the bias, rounded
    once; out's rows and columns all written (out starts as NaN)."""
    reduce = OP.kernel(config.REDUCE, "bf16-fp32")
    part = rand((splits, m, 70), 9, torch.float32)
    bias = rand((70,), 10)
    out = torch.full((m, 70), float("nan"))
    lib.run(reduce, part.view(-1, 70), bias, out, **config.REDUCE.constants)
    want = torch.zeros((m, 70))
    for s in range(splits):
        want += part[s]
    assert torch.equal(out, want + bias.float())

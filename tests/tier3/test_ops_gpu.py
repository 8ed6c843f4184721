"""Every op of the library with a `case` on the GPU (tier 3, skipped without one): its public
function on CUDA tensors against its reference across rows {1, 8, 32, 256, 4096} × model
widths, in its first dtype (the other dtypes at one shape); a CUDA-graph replay of rms_norm
and of the in-place fused form matches the eager call."""
import pytest

from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops import all_ops

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tier3,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="tier 3: needs a GPU")]

ROWS = (1, 8, 32, 256, 4096)
WIDTHS = (2048, 4096, 5120, 8192, 14336, 16384)
OPS = [op for op in all_ops() if op.case is not None]


def routed(op, rows: int, cols: int) -> bool:
    """Whether `op`'s table has a route for the shape on this GPU (LayerNorm and the fused
    form hold 2048 / 4096 columns at most: docs/ops.md)."""
    target = lib.target_of(torch.empty(1, device="cuda"))
    try:
        op.table.choose(rows, cols, target)
    except InputError:
        return False
    return True


@pytest.mark.parametrize("cols", WIDTHS)
@pytest.mark.parametrize("rows", ROWS)
@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_op_matches_reference_on_the_gpu(op, rows, cols):
    if not routed(op, rows, cols):   # past the op's widest route here: refused, naming it
        with pytest.raises(InputError, match="widest route"):
            op.check(rows, cols, op.dtypes[0], "cuda")
        return
    err, tol = op.check(rows, cols, op.dtypes[0], "cuda")
    assert err <= tol, f"{op.name} {rows}x{cols}: {err} > {tol}"


@pytest.mark.parametrize("op", OPS, ids=lambda op: op.name)
def test_every_dtype_on_the_gpu(op):
    for dtype in op.dtypes:
        err, tol = op.check(37, 2000, dtype, "cuda")
        assert err <= tol, f"{op.name} {dtype}: {err} > {tol}"


def test_rms_norm_and_fused_in_place_replay_from_a_cuda_graph():
    import ktile.ops as ops
    x = torch.randn(8, 4096, device="cuda").bfloat16()
    r = torch.randn(8, 4096, device="cuda").bfloat16()
    w = torch.randn(4096, device="cuda").bfloat16()
    want_y = ops.rms_norm(x, w, 1e-6)
    want_o, want_h = ops.fused_add_rms_norm(x, r, w, 1e-6)
    xs, rs = x.clone(), r.clone()
    ops.fused_add_rms_norm_(xs.clone(), rs.clone(), w, 1e-6)       # warm-up: builds
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = ops.rms_norm(x, w, 1e-6)
        ops.fused_add_rms_norm_(xs, rs, w, 1e-6)
    xs.copy_(x)
    rs.copy_(r)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(y, want_y)
    assert torch.equal(xs, want_o) and torch.equal(rs, want_h)

"""rms_norm at head-dim widths (64, 128, 256 and the multiples of 16 up to 256: Qwen3's q_norm and
k_norm) takes `rms_norm_rows` (ktile/ops/rmsnorm/rows.py): 16 whole rows of x a warp, not one
row a block. On the interpreter at ragged row counts (not a multiple of a block's rows) in
every dtype and every route, against the reference; the routing; its refusals."""
import pytest

import ktile as hk
import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.rmsnorm import config, op
from ktile.ops.rmsnorm.reference import rms_norm as reference, tolerance
from ktile.ops.rmsnorm.rows import rms_norm_rows

torch = pytest.importorskip("torch")

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
ROWS_ROUTES = [r for r in config.ROUTES if r.kernel == "rms_norm_rows"]


def rand(shape, seed, dtype):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def err(got, want):
    return float(abs(got.float().numpy() - want).max())


def test_head_dim_widths_route_to_the_row_kernel_at_every_row_count_and_target():
    for target in (*lib.TARGETS, None):
        for cols in (16, 64, 128, 192, 256):
            for rows in (1, 32, 256, 257, 65536):
                assert config.TABLE.choose(rows, cols, target).kernel == "rms_norm_rows", \
                    (target, rows, cols)
        assert config.TABLE.choose(4096, 272, target).kernel == "rms_norm_tiles"
        assert config.TABLE.choose(4096, 100, target).kernel == "rms_norm_loop"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 128), (37, 128), (2, 9, 2, 128), (70, 64), (5, 256),
                                   (3, 11, 256), (19, 192), (23, 48)], ids=str)
def test_rms_norm_at_narrow_widths_matches_reference(shape, dtype):
    if dtype != "bf16" and shape[-1] not in (128, 256):
        pytest.skip("the other widths once, in bf16")
    x, w = rand(shape, 1, DTYPES[dtype]), rand(shape[-1:], 2, DTYPES[dtype])
    want = reference(x.float().numpy(), w.float().numpy(), 1e-6, getattr(hk, dtype))
    got = ops.rms_norm(x, w, 1e-6)
    assert got.shape == x.shape and got.dtype == x.dtype
    assert err(got, want) <= tolerance(want)
    assert op.plan(x, None)[0] is rms_norm_rows(dtype)


@pytest.mark.parametrize("route", ROWS_ROUTES, ids=lambda r: str(r.constants))
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_row_route_at_ragged_row_counts(route, dtype):
    """Each shipped route, pinned, at row counts that leave a block's last row tiles partly or
    wholly past the rows, at its widest width and a narrower ragged one."""
    for rows, cols in ((route.sample[0], route.max_cols), (3, route.max_cols - 16),
                       (81, route.max_cols)):
        x, w = rand((rows, cols), rows, DTYPES[dtype]), rand((cols,), cols, DTYPES[dtype])
        want = reference(x.float().numpy(), w.float().numpy(), 1e-5, getattr(hk, dtype))
        out = torch.full_like(x, float("nan"))
        with lib.pinned(config.TABLE, route):
            ops.rms_norm(x, w, 1e-5, out=out)
        assert err(out, want) <= tolerance(want), (rows, cols)


def test_a_route_too_narrow_for_the_row_is_refused_naming_the_fix():
    x, w = torch.ones(4, 256, dtype=torch.bfloat16), torch.ones(256, dtype=torch.bfloat16)
    narrow = next(r for r in ROWS_ROUTES if r.max_cols == 64)
    with lib.pinned(config.TABLE, narrow), pytest.raises(InputError, match="C x SPLIT"):
        ops.rms_norm(x, w, 1e-6)


def test_split_must_be_one_or_every_warp():
    x, o = torch.ones(16, 64, dtype=torch.bfloat16), torch.empty(16, 64, dtype=torch.bfloat16)
    w = torch.ones(64, dtype=torch.bfloat16)
    with pytest.raises(InputError, match="SPLIT must be 1"):
        rms_norm_rows("bf16")(x, w, o, 1e-6, C=64, WARPS=4, SPLIT=2)

"""`rmsnorm_persistent` and `rmsnorm_staged` (examples/02_rmsnorm.py) hold WIDTH columns of a
row block in shared memory, as WIDTH // (COLS × 16) column tiles per warp. Every (WIDTH, COLS)
a caller can pass, on rows of every kind of width, is either right (matches the reference on
the interpreter) or refused with a KernelError before anything is written: a WIDTH that is no
multiple of COLS × 16 once left columns unwritten (NaN, no error) for COLS=128 on rows 5120 wide.

The sweep traces for sm_90a, the target with the most shared memory, so WIDTH reaches its limit
(and one step past it). Rows are 16 high and one row block deep to keep the interpreter quick."""
import warnings

import numpy as np
import pytest

import ktile as hk
from examples_index import load
from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance

torch = pytest.importorskip("torch")
rms = load("02_rmsnorm")

TARGET = "sm_90a"
# the legal tile widths (register tiles are whole 16-column blocks), a few wide ones
TILE_WIDTHS = (16, 48, 64, 128, 256)
# from under one tile to the target's shared-memory limit (16 bf16 rows of 7264 columns) and past it
WIDTHS = (16, 200, 1024, 2048, 3000, 5120, 7168, 7680)


def row_widths(width: int) -> list[int]:
    """Rows a call may pass with this WIDTH: one column, ragged ones, exactly WIDTH, one more."""
    return sorted({1, max(width - 37, 1), width, width + 1})


def outcome(kernel, width: int, cols: int, tile: int) -> str:
    """'right' or 'refused'; a silent wrong answer fails the test."""
    g = torch.Generator().manual_seed(width + cols + tile)
    x = torch.randn((1, 1, 16, cols), generator=g).to(torch.bfloat16)
    w = torch.randn((1, 1, 1, cols), generator=g).to(torch.bfloat16)
    o = torch.full_like(x, float("nan"))
    constants = {"WIDTH": width, "COLS": tile}
    if kernel is rms.rmsnorm_persistent:
        constants["BLOCKS"] = 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", hk.KernelWarning)
            kernel.interpret(x, w, o, target=TARGET, **constants)
    except hk.KernelError:
        assert torch.isnan(o.float()).all(), "refused after writing its output"
        return "refused"
    want = reference(x.float().numpy(), w.float().numpy(), 1e-6, hk.bf16)
    got = o.float().numpy()
    assert not np.isnan(got).any(), f"WIDTH={width} COLS={tile} cols={cols}: columns unwritten"
    assert np.abs(got - want).max() <= tolerance(want), f"WIDTH={width} COLS={tile} cols={cols}"
    return "right"


def expected(width: int, cols: int, tile: int) -> str:
    """What the kernel's documented domain says: WIDTH a multiple of COLS × 16, at least the
    row length, and inside shared memory."""
    fits = 16 * width * 2 <= 232448
    return "right" if width % (tile * 16) == 0 and cols <= width and fits else "refused"


@pytest.mark.parametrize("tile", TILE_WIDTHS)
@pytest.mark.parametrize("width", WIDTHS)
def test_persistent_is_right_or_refused(width, tile):
    for cols in row_widths(width):
        assert outcome(rms.rmsnorm_persistent, width, cols, tile) == expected(width, cols, tile)


@pytest.mark.parametrize("width, tile", [(5120, 128), (3000, 64), (1024, 64), (2048, 128)])
def test_staged_is_right_or_refused(width, tile):
    for cols in row_widths(width):
        assert outcome(rms.rmsnorm_staged, width, cols, tile) == expected(width, cols, tile)


def test_the_issue_case_is_refused_with_the_fix():
    x = torch.ones((1, 1, 16, 5120), dtype=torch.bfloat16)
    with pytest.raises(hk.InputError, match="multiple of COLS x 16"):
        rms.rmsnorm_persistent.interpret(x, torch.ones((1, 1, 1, 5120), dtype=torch.bfloat16),
                                         torch.empty_like(x), target=TARGET,
                                         WIDTH=rms.staged_width(5120), COLS=128)

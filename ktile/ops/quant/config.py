"""Quantisation's configuration space: one route per kernel an op launches (the op picks the
kernel by mode and shape: per token, per tensor, dynamic), COLS = 64 (16-byte units of bf16
rows). fp8 kernels exist only where ktile has an fp8 element type (gfx1201, gfx950, sm_90a):
gfx1100 has none, and gfx942's fp8 is the fnuz format, another value for the same bits."""
from __future__ import annotations

from .._library import Route, RoutingTable

FP8_TARGETS = ("gfx1201", "gfx950", "sm_90a")
FP8_INTERPRET_TARGET = "gfx950"   # the target a CPU call's fp8 kernels are traced for

# The per-token kernels come in three forms. Where hidden % 16 == 0: `*_block` (token_block.py:
# one block per token, the token held in registers as flat tiles, x read once) up to the widest
# BLOCK_WIDTHS width, then `*_rows` (token_rows.py: one warp per token looping over the row,
# which it reads twice, the second time from cache). Else the 16-token-block kernels
# (kernels.py, row-layout tiles). The per-tensor kernels are elementwise on flat tiles, two per
# warp of a 16-bit float side (elementwise.kernels.tiles_held), over a contiguous tensor
# reflowed as rows of 64.
TOKEN_ROWS = {"COLS": 64, "WARPS": 4}

# The widest hidden of each block route: WARPS = width / 1024 warps of one flat 16 x 64 tile of
# the view (1024 values of the token) each, as rms_norm's tables (rmsnorm/config.py). A width
# between two takes the wider (its last tiles read zeros): 14336 runs 16 warps, as an exact
# 14-warp block would leave 14 of 64 warps resident on sm_90a by the budgets pass's estimate
# for fp32 rows (80 registers), below what the shipped routes must keep.
BLOCK_WIDTHS = (1024, 2048, 3072, 4096, 5120, 6144, 8192, 16384)


def block_routes(kernel: str, targets=None, *, cols: int = 64) -> list[Route]:
    """`kernel` (token_block.py) for each BLOCK_WIDTHS width: width / (16 · cols) warps (rounded
    up) of one 16 x `cols` tile (cols 64; 128 halves the warps: a variant the sweep times)."""
    per_warp = 16 * cols
    return [Route(kernel, {"C": cols, "HELD": 1, "WARPS": -(-width // per_warp)},
                  max_cols=width, cols_multiple=16, targets=targets, sample=(3, width - 48))
            for width in BLOCK_WIDTHS]


ELEMENTWISE = {"COLS": 64, "WARPS": 4, "HELD": 2}

INT8 = RoutingTable([Route("int8_per_token", {"COLS": 64}),
                     Route("int8_per_tensor", ELEMENTWISE),
                     Route("int8_per_token_rows", TOKEN_ROWS, sample=(21, 320)),
                     *block_routes("int8_per_token_block")])
FP8 = RoutingTable([Route("fp8_per_token_rows", TOKEN_ROWS, targets=FP8_TARGETS,
                          sample=(21, 320)),
                    Route("fp8_per_token", {"COLS": 64}, targets=FP8_TARGETS),
                    Route("fp8_per_tensor", ELEMENTWISE, targets=FP8_TARGETS),
                    Route("absmax_rows", TOKEN_ROWS, sample=(21, 320)),
                    Route("row_absmax", {"COLS": 64}),
                    Route("tensor_scale"),
                    *block_routes("fp8_per_token_block", FP8_TARGETS)])
DEQUANT = RoutingTable([Route("dequant_int8_per_token", {"COLS": 64}),
                        Route("dequant_int8_per_token_rows", TOKEN_ROWS, sample=(21, 320)),
                        Route("dequant_int8_per_tensor", ELEMENTWISE),
                        Route("dequant_fp8_per_token", {"COLS": 64}, targets=FP8_TARGETS),
                        Route("dequant_fp8_per_token_rows", TOKEN_ROWS, targets=FP8_TARGETS,
                              sample=(21, 320)),
                        Route("dequant_fp8_per_tensor", ELEMENTWISE, targets=FP8_TARGETS)])


def route(table: RoutingTable, kernel: str) -> Route:
    """The route of `kernel` in `table` (the op chooses by mode; the per-token kernels by
    hidden too: `per_token_route`)."""
    return next(r for r in table.routes if r.kernel == kernel)


def per_token_route(table: RoutingTable, family: str, hidden: int, target) -> Route:
    """The per-token route for rows of `hidden` (a multiple of 16) values: a pinned route of
    the family (`_library.pinned`: the sweep, tests), else the first `{family}_block` route
    that holds the row, else `{family}_rows`."""
    pin = table.pinned
    if pin is not None and pin.kernel in (f"{family}_block", f"{family}_rows"):
        return pin

    def first():
        for r in table.measured.get(target, []) + table.routes:
            if r.kernel == f"{family}_block" and r.fits(1, hidden, target):
                return r
        return route(table, f"{family}_rows")
    return table.plan(target, ("per_token", family, hidden), first)

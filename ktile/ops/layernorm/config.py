"""LayerNorm's configuration space, by row width.

Rows whose width is a multiple of 16 take the row-tile kernels (row_tiles.py): the row viewed as
a 16 × cols/16 block, each warp holding HELD flat tiles of 16 × C of it (docs/language.md, "The
flat layout": memory order, one 16-byte access per lane per 16 × 16 slot of 16-bit elements,
no shuffles). The forward routes are named by the widest row they hold, 16 · C · WARPS · HELD
columns: 1024, 2048, 3584, 4096, 5120, 8192 and 16384, so model widths fill every warp (a
width between two takes the wider route: 14336 runs on 16384's route with its last tiles
reading zeros). C = 64 up to 4096 where the budgets allow: x, weight and bias of 16 × 64 held
together cost 96 registers per lane at 4 warps on sm_90a in bf16; at 5 warps that leaves 15
warps resident, under the budgets' 25% floor, so 5120 takes 10 warps of 16 × 32. From 8192 a
warp holds four 16 × 32 tiles (as much of the row as two 16 × 64 ones: the 2-tiles-per-warp
shape the flat RMSNorm experiment measured fastest at 8192), 4 warps at 8192 and 8 at 16384,
loading the weight and bias per tile after the statistics: 128 registers in bf16, 123-124 in
fp32 (nvcc 13; 16 × 64 tiles at two per warp take 167 in bf16, 12 resident warps). The
tuner's candidates (`ktile tune`: WARPS and C halved and doubled, HELD to cover) include 8
warps of two 16 × 32 tiles at 8192; the former 8 warps × one 16 × 64 tile is in the sweep's
EXPLORE (ktile/ops/rmsnorm/sweep.py). fp32 holds each 16 × C share as two 16 × C/2 tiles
(C ≥ 32) and loads its weight and bias after the statistics (row_tiles.py). On sm_90a the
latency routes (LATENCY_WIDTHS, up to FEW_ROWS rows) and, from 8192 at more rows, two 16 × 32
shares per warp with the weight and bias loaded with x (MANY_ROW_WIDTHS) come first.

The backward holds one flat 16 × 32 tile per warp of x, dy and the weight, and two fp32
accumulators across its rows: 118-128 registers on sm_90a at 16 warps (nvcc 12, no spill), so
its row-tile routes reach 16 warps × 32 = 8192 columns (16 × 64 at 16 warps is over the
register budget); wider rows take the 16-row-tile kernel, as every width does on AMD (the
row-tile backward spills scalar registers on gfx1100 at 8 waves and needs scratch on gfx950).

Other widths (not a multiple of 16) keep the vector kernels of kernels.py: the forward up to
2048 columns (refused past that, naming the limit: pad the rows to a multiple of 16), the
backward at any width.

Backward partial sums: P parts of the rows (block p takes rows p, p + P, ...), written to fp32
scratch [P, cols] and summed in a fixed order by `column_sums`. P fills the H200's 132
multiprocessors about twice at large row counts without making the second pass large
(`parts`)."""
from __future__ import annotations

from dataclasses import dataclass

from ...errors import InputError
from .._library import AMD_TARGETS, Route, RoutingTable
from ..rmsnorm.config import LANES32, LANES64
from .kernels import held_route

SM90 = ("sm_90a",)
FORWARD_WIDTHS = {1024: (32, 2, 1), 2048: (64, 2, 1), 3584: (32, 7, 1), 4096: (64, 4, 1),
                  5120: (32, 10, 1), 8192: (32, 4, 4), 16384: (32, 8, 4)}  # (C, WARPS, HELD)
# Up to FEW_ROWS rows, one 16 x 32 tile per warp from 8192 (16 warps; 32 at 16384 would be past
# a block's 1024 threads, so 16 warps of 16 x 64 there): the held routes above load the weight
# and bias after the statistics, a second trip to memory that only many resident rows hide (the
# H200 benchmark of 2026-12-02 measured 1 x 8192 at 10.2 us on 4 x 4 against Triton's 6.1)
FEW_ROWS = 256
FEW_ROW_WIDTHS = {8192: (32, 16, 1), 16384: (64, 16, 1)}
# On sm_90a: up to FEW_ROWS rows, one short tile per warp and more warps (as rms_norm's
# LATENCY_WARPS, ktile/ops/rmsnorm/config.py, which says why): 16 x 16 up to 4096, 16 x 32 to
# 8192, 16 x 64 above. More rows: at 8192 rms_norm's fastest route, 4 warps of two 16 x 64 with
# the weight and bias loaded with x (ptxas 168 registers, 3 rows in flight; the budgets pass
# estimates 168, 12 resident warps, under the occupancy floor, so it ships with the measured
# exemption below; no early-weights route of 2048 values a warp estimates 128 or fewer: x,
# weight and bias 96, an fp32 16 x 64 deviation and its square 64). It replaced two 16 x 32
# shares per warp with the weight and bias loaded with x (94 registers in bf16, 2 blocks of 8
# warps resident: 2 rows, 32 KiB of x in flight per multiprocessor; 0.69x of Triton at 4096 x
# 8192 on the H200, 2026-12-02; the 4 x 4 route loads them per tile after the statistics, four
# trips: 0.68x), which 14336 and 16384 keep, 14336 exactly (7 of 16384's 8 warps read nothing).
LATENCY_WIDTHS = {1024: (16, 4, 1), 2048: (16, 8, 1), 3584: (16, 14, 1), 4096: (16, 16, 1),
                  5120: (32, 10, 1), 8192: (32, 16, 1), 14336: (64, 14, 1), 16384: (64, 16, 1)}
MANY_ROW_WIDTHS = {8192: (64, 4, 2), 14336: (32, 14, 2), 16384: (32, 16, 2)}
# Many rows of 8192: rms_norm's fastest route, 4 warps of two 16 x 64 shares, the weight and bias
# with x in 16-bit dtypes, below the occupancy floor by the budgets pass's estimate and measured
# faster there, so exempt from it (`Route.occupancy_exempt`, tests/tier0/test_ops_routes.py).
MANY_ROW_EXEMPT = {8192: (
    "168 registers (bf16; 12 of 64 warps resident, 3 rows in flight) measured 48.1 / 164.8 us at "
    "4096 / 16384 x 8192 against 58.8 / 211.7 for 8 warps of two 16 x 32 at 94 registers, "
    "Triton 41.4 / 143.6 (H200, 2026-12-02, docs/results/h200_2026-12-02_s7/"
    "r5_ops_softmax_ln.log at 0686e67 vs r4_ops_norms_misc.log)")}
BACKWARD_WIDTHS = {1024: 2, 2048: 4, 4096: 8, 8192: 16}    # width: WARPS of 16 x BACKWARD_TILE
BACKWARD_TILE = 32
BACKWARD_DIRECT_ROWS = 4         # up to this many rows the backward is one launch (sm_90a)
# ... in fp32 up to this width: at 8192 its sm_90a build spills (40 bytes, 128 registers, H200
# tier 3 of the eighth session, docs/results/h200_2026-12-02_s8_r2b), so wider fp32 rows take
# the two passes
BACKWARD_DIRECT_FP32_COLS = 4096
RAGGED_FORWARD_MAX = 2048        # the vector kernel's widest row (cols % 16 != 0)
MULTIPROCESSORS = 132            # fixed, not the device's: the result must not vary by GPU


@dataclass(frozen=True)
class RowTileRoute(Route):
    """A route of the row-tile kernels: rows whose width is a multiple of 16."""

    def fits(self, rows: int, cols: int, target: str | None) -> bool:
        return cols % 16 == 0 and super().fits(rows, cols, target)


@dataclass(frozen=True)
class RaggedRoute(Route):
    """A route of the vector kernels, for widths that are not a multiple of 16, or (`beyond`)
    wider than the row-tile routes hold."""
    beyond: int | None = None

    def fits(self, rows: int, cols: int, target: str | None) -> bool:
        other = cols % 16 != 0 or (self.beyond is not None and cols > self.beyond)
        return other and super().fits(rows, cols, target)


def ragged_forward(max_cols: int, warps: int, *, vec: int = 256,
                   targets: tuple[str, ...]) -> RaggedRoute:
    route = held_route(max_cols, warps, vec=vec, targets=targets)
    return RaggedRoute(route.kernel, route.constants, max_cols=max_cols, targets=targets,
                       sample=route.sample)


def row_tile_forward(width: int, few_rows: bool = False, widths: dict | None = None,
                     targets: tuple[str, ...] | None = None,
                     exempt: str | None = None) -> RowTileRoute:
    """The row-tile forward route for rows up to `width` wide: (C, WARPS, HELD) from `widths`
    (default: FEW_ROW_WIDTHS up to FEW_ROWS rows with `few_rows`, else FORWARD_WIDTHS);
    `exempt`: its measured occupancy exemption (`Route.occupancy_exempt`)."""
    table = widths or (FEW_ROW_WIDTHS if few_rows else FORWARD_WIDTHS)
    c, warps, held = table[width]
    return RowTileRoute("layer_norm_rows", {"C": c, "HELD": held, "WARPS": warps},
                        max_rows=FEW_ROWS if few_rows else None, max_cols=width,
                        targets=targets, sample=(3, width - 16 * 5), occupancy_exempt=exempt)


def forward_routes(width: int) -> list[RowTileRoute]:
    """The row-tile forward routes named by `width`, in the order the table tries them: few
    rows before any rows, sm_90a's before every target's."""
    named = [(LATENCY_WIDTHS, True, SM90), (FEW_ROW_WIDTHS, True, None),
             (MANY_ROW_WIDTHS, False, SM90), (FORWARD_WIDTHS, False, None)]
    return [row_tile_forward(width, few, widths, targets,
                             MANY_ROW_EXEMPT.get(width) if widths is MANY_ROW_WIDTHS else None)
            for widths, few, targets in named if width in widths]


def row_tile_backward(width: int, direct: bool = False) -> RowTileRoute:
    """The row-tile backward for rows up to `width`; `direct`: its one-launch form up to
    BACKWARD_DIRECT_ROWS rows (backward_direct.py)."""
    return RowTileRoute("layer_norm_rows_backward_direct" if direct else
                        "layer_norm_rows_backward",
                        {"C": BACKWARD_TILE, "WARPS": BACKWARD_WIDTHS[width]},
                        max_rows=BACKWARD_DIRECT_ROWS if direct else None, max_cols=width,
                        targets=SM90, sample=(3 if direct else 21, width - 16 * 5))


# ragged routes first: the tables list the narrowest route first, the one the emulation tests
# pin (tests/tier2/test_ops_emulated.py at 300 columns); the row-tile ones are emulated in
# tests/tier2/test_layernorm_emulated.py
FORWARD = RoutingTable([
    ragged_forward(1024, 8, vec=64, targets=LANES32),
    ragged_forward(2048, 16, vec=64, targets=LANES32),
    ragged_forward(1024, 4, targets=LANES64),
    ragged_forward(2048, 8, vec=128, targets=LANES64),
    *(route for width in sorted({*LATENCY_WIDTHS, *MANY_ROW_WIDTHS, *FORWARD_WIDTHS})
      for route in forward_routes(width)),
])

# the 16-row-tile kernel (any width) on sm_90a where no row-tile route fits: 32-column tiles
# over 8 warps (64-column ones take about 144 registers per lane there); AMD keeps it at 64
# over 4 for every width (the row-tile backward at 16 warps of 64 lanes needs scratch on gfx950)
BACKWARD = RoutingTable([
    RaggedRoute("layer_norm_dx", {"COLS": 32, "WARPS": 8}, targets=SM90, sample=(21, 300),
                beyond=max(BACKWARD_WIDTHS)),
    *(row_tile_backward(width, direct=True) for width in BACKWARD_WIDTHS),
    *(row_tile_backward(width) for width in BACKWARD_WIDTHS),
    Route("layer_norm_dx", {"COLS": 64, "WARPS": 4}, targets=AMD_TARGETS, sample=(21, 300)),
])
REDUCTION = Route("column_sums", {"COLS": 32, "WARPS": 4}, sample=(2, 300))


def forward_route(rows: int, cols: int, target: str | None) -> Route:
    """The forward's route, or an InputError naming the limit of widths not a multiple of 16."""
    if cols % 16 != 0 and cols > RAGGED_FORWARD_MAX:
        raise InputError(f"layer_norm: rows of {cols} columns: widths that are not a multiple "
                         f"of 16 run up to {RAGGED_FORWARD_MAX} columns",
                         hint=f"pad the rows to {cols + 16 - cols % 16} columns (zero weight "
                              f"and bias on the padding), or file an issue with the shape")
    return FORWARD.choose(rows, cols, target)


def parts(rows: int) -> int:
    """How many partial sums the row-tile backward writes for `rows` rows: one per row up to
    the multiprocessor count, then about 16 rows per part, at most two per multiprocessor."""
    return min(rows, max(MULTIPROCESSORS, min(2 * MULTIPROCESSORS, -(-rows // 16))))

"""Quantisation's configuration space: one route per kernel an op launches (the op picks the
kernel by mode and shape: per token, per tensor, dynamic), COLS = 64 (16-byte units of bf16
rows). fp8 kernels exist only where ktile has an fp8 element type (gfx1201, gfx950, sm_90a):
gfx1100 has none, and gfx942's fp8 is the fnuz format, another value for the same bits."""
from __future__ import annotations

from .._library import Route, RoutingTable

FP8_TARGETS = ("gfx1201", "gfx950", "sm_90a")
FP8_INTERPRET_TARGET = "gfx950"   # the target a CPU call's fp8 kernels are traced for

# The per-token kernels come in two forms: `*_rows` (token_rows.py: one warp per token, flat
# tiles, x read from DRAM once) where hidden % 16 == 0, else the 16-token-block kernels
# (kernels.py, row-layout tiles). The per-tensor kernels are elementwise on flat tiles, two per
# warp of a 16-bit float side (elementwise.kernels.tiles_held), over a contiguous tensor
# reflowed as rows of 64.
TOKEN_ROWS = {"COLS": 64, "WARPS": 4}
ELEMENTWISE = {"COLS": 64, "WARPS": 4, "HELD": 2}

INT8 = RoutingTable([Route("int8_per_token", {"COLS": 64}),
                     Route("int8_per_tensor", ELEMENTWISE),
                     Route("int8_per_token_rows", TOKEN_ROWS, sample=(21, 320))])
FP8 = RoutingTable([Route("fp8_per_token_rows", TOKEN_ROWS, targets=FP8_TARGETS,
                          sample=(21, 320)),
                    Route("fp8_per_token", {"COLS": 64}, targets=FP8_TARGETS),
                    Route("fp8_per_tensor", ELEMENTWISE, targets=FP8_TARGETS),
                    Route("absmax_rows", TOKEN_ROWS, sample=(21, 320)),
                    Route("row_absmax", {"COLS": 64}),
                    Route("tensor_scale")])
DEQUANT = RoutingTable([Route("dequant_int8_per_token", {"COLS": 64}),
                        Route("dequant_int8_per_token_rows", TOKEN_ROWS, sample=(21, 320)),
                        Route("dequant_int8_per_tensor", ELEMENTWISE),
                        Route("dequant_fp8_per_token", {"COLS": 64}, targets=FP8_TARGETS),
                        Route("dequant_fp8_per_token_rows", TOKEN_ROWS, targets=FP8_TARGETS,
                              sample=(21, 320)),
                        Route("dequant_fp8_per_tensor", ELEMENTWISE, targets=FP8_TARGETS)])


def route(table: RoutingTable, kernel: str) -> Route:
    """The route of `kernel` in `table` (the op chooses by mode, not by shape)."""
    return next(r for r in table.routes if r.kernel == kernel)

"""LayerNorm backward at a few rows in one launch: `layer_norm_rows_backward_direct`.

The row-tile backward (row_tiles.py) writes a partial dweight / dbias per block and sums them in
a second kernel (`column_sums`), two launches where a handful of rows make each one a launch's
latency (the H200, 2026-12-02: 1 x 4096 at 12.1 us against torch.compile's 5.2). Up to
DIRECT_ROWS rows one block does everything: the row-tile backward's layout (a row viewed as a
16 x cols/16 tile, `row_view`; warp w holds view-column tile w of every row, so it owns its
columns of dweight and dbias across the rows), dx per row from the two whole-tile sums, the
weight and bias gradients accumulated elementwise in fp32 over the rows and written once in the
weight's dtype: no scratch, no second launch, no atomics, the same sums in the same order every
run. The weight is loaded once. In bf16 every row's mean and rstd are loaded once too
(one 16-vector each: at most 16 rows), so no row waits on a load of its statistics, and the next
row's dy and x tiles are loaded before the current row's reductions (past the last row the load
is bounds-checked, no access); fp32 and fp16 load a row's tiles and statistics in its
iteration (ahead they spill: fp32 200 bytes at 16 warps and 8 with the statistics' vectors at 8,
fp16 32 at 16).

Its routes (`config.row_tile_backward(width, direct=True)`) come before the two-pass ones in
config.BACKWARD: sm_90a only, the widths the row-tile backward holds (16 x 32 tiles,
BACKWARD_WIDTHS warps), up to BACKWARD_DIRECT_ROWS rows."""
import functools

import ktile as hk

from . import config
from .row_tiles import ROW_VIEW, _row_value

DIRECT_ROWS = config.BACKWARD_DIRECT_ROWS     # more rows would serialise in one block

DIRECT_REQUIRES = ROW_VIEW + [
    (lambda p: p.dy.shape == p.x.shape and p.dx.shape == p.x.shape,
     "dy and dx must be row views of x's shape"),
    (lambda p: p.mean.cols * 16 == p.x.rows and p.rstd.cols * 16 == p.x.rows,
     "mean and rstd must hold one value per row of x"),
    (lambda p: p.mean.cols <= 16, "at most 16 rows (one vector of means): take the two-pass "
                                  "route"),
    (lambda p: p.dw.shape == p.w.shape and p.db.shape == p.w.shape,
     "dw and db must be views of the weight's shape, w.view(16, cols // 16)"),
    (lambda p: p.C * p.WARPS >= p.x.cols, "C x WARPS (the view columns a block holds) must be "
                                          "at least x.cols"),
]


@functools.lru_cache(maxsize=None)
def layer_norm_rows_backward_direct(dtype: str):
    DT = getattr(hk, dtype)
    AHEAD = dtype == "bf16"   # fp32 and fp16 loaded ahead spill at 16 warps (128 registers)

    @hk.kernel(grid=lambda p: (1,), warps="WARPS", requires=DIRECT_REQUIRES)
    def layer_norm_rows_backward_direct(dy: hk.Tensor[DT], x: hk.Tensor[DT], w: hk.Tensor[DT],
                                        mean: hk.Tensor[hk.fp32], rstd: hk.Tensor[hk.fp32],
                                        dx: hk.Tensor[DT], dw: hk.Tensor[DT],
                                        db: hk.Tensor[DT], *, C: hk.Constexpr[int] = 32,
                                        WARPS: hk.Constexpr[int] = 4):
        c = hk.arch.warp_id
        t, f = hk.RT(DT, 16, C, "flat"), hk.RT(hk.fp32, 16, C, "flat")
        ws = w[hk.tile_coord(0, 0, 0, c)].load(t).to(hk.fp32)           # past the row: 0
        acc_w = hk.zeros(f)
        acc_b = hk.zeros(f)
        n = hk.to_float(x.cols * 16)
        gs = dy[hk.tile_coord(0, 0, 0, c)].load(t)
        xs = x[hk.tile_coord(0, 0, 0, c)].load(t)
        if AHEAD:                             # every row's mean and rstd, loaded once
            v = hk.RV(hk.fp32, 16)
            means = mean[hk.elem_coord(0, 0, 0, 0)].load(v)
            rstds = rstd[hk.elem_coord(0, 0, 0, 0)].load(v)
            which = hk.iota(hk.RV(hk.i32, 16), "row")
        for r in range(0, hk.cdiv(x.rows, 16)):
            if AHEAD:
                next_g = dy[hk.tile_coord(0, 0, r + 1, c)].load(t)     # past the last row: 0
                next_x = x[hk.tile_coord(0, 0, r + 1, c)].load(t)
            if AHEAD:
                mu = hk.sum(hk.where(which == r, means, 0.0))
                rs = hk.sum(hk.where(which == r, rstds, 0.0))
            else:
                mu, rs = _row_value(mean, r), _row_value(rstd, r)
            g = gs.to(hk.fp32)
            xhat = (xs.to(hk.fp32) - mu) * rs
            wdy = g * ws
            c1 = hk.group.sum(hk.sum(xhat * wdy)) / n
            c2 = hk.group.sum(hk.sum(wdy)) / n
            dx[hk.tile_coord(0, 0, r, c)] = ((wdy - (xhat * c1 + c2)) * rs).to(DT)
            acc_w += g * xhat
            acc_b += g
            if AHEAD:
                gs, xs = next_g, next_x
            else:
                gs = dy[hk.tile_coord(0, 0, r + 1, c)].load(t)
                xs = x[hk.tile_coord(0, 0, r + 1, c)].load(t)
        dw[hk.tile_coord(0, 0, 0, c)] = acc_w.to(DT)
        db[hk.tile_coord(0, 0, 0, c)] = acc_b.to(DT)
    return layer_norm_rows_backward_direct


KERNELS = {"layer_norm_rows_backward_direct": layer_norm_rows_backward_direct}

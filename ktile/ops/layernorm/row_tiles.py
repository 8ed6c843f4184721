"""LayerNorm kernels over rows seen as tiles ("row as a tile"): the op passes a row of `cols`
values (cols % 16 == 0) as a 16 × cols/16 block, `x.view(rows * 16, cols // 16)`, weight and
bias as `w.view(16, cols // 16)` (`row_view`). Row r of x is tile-row r of the view, so a
register tile `hk.RT(DT, 16, C, "flat")` at `tile_coord(0, 0, r, c)` holds 16·C values of the
row with no replication, in memory order: one 16-byte access per lane per 16 × 16 slot where
the view's rows are 16-byte aligned, no shuffles (docs/language.md, "The flat layout"); a
per-row statistic is a whole-tile sum (`hk.sum(tile)`, then `hk.group.sum` over the warps).

- `layer_norm_rows`: one block per row, warp w holding view-column tiles w, w + WARPS, ...
  (HELD of them) in registers, so x is read once; the weight and bias tiles are loaded with x,
  before the reductions (fp32 ones after: `EARLY`). The mean is a whole-tile sum, the variance
  the mean of (x − mean)² from the registers, over the row's own columns (a tile past the
  view's edge reads 0 and is masked out of it with a flat `hk.iota`), as torch.
- `layer_norm_rows_backward`: block p of P takes rows p, p + P, ...: per row, dx from the two
  whole-tile sums Σ x̂·w·dy and Σ w·dy; the weight and bias gradients are accumulated over the
  block's rows elementwise in fp32 tiles (in the view a row is a 16 × cols/16 tile) and written
  once, as row p of the fp32 scratch [P, cols] (`dw_part`, `db_part`), with flat stores.
- `column_sums`: dw = Σ_p dw_part[p], db likewise, in a fixed order (each warp a fixed set of
  16-row slabs, then the warps in order): the same result every run, no atomics. It stays on
  row-layout tiles: the sum down a slab's 16 rows is a column reduction, which a flat tile has
  not, and summing whole 16-row bands elementwise instead would leave one warp per 16 × C
  column band for all P partials (16 warps at 4096 columns: far too few to fill the GPU).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT
import functools

import ktile as hk
from ktile.errors import InputError

ROW_VIEW = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D (rows * 16, cols / 16)"),
    (lambda p: p.x.rows % 16 == 0, "x must be the row view x.view(rows * 16, cols // 16)"),
    (lambda p: p.w.rows == 16 and p.w.cols == p.x.cols,
     "w must be the weight's view w.view(16, cols // 16)"),
]

FORWARD = ROW_VIEW + [
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.b.shape == p.w.shape, "b must be the bias's view b.view(16, cols // 16)"),
    (lambda p: p.HELD * p.C * p.WARPS >= p.x.cols,
     "HELD x C x WARPS (the view columns a block holds) must be at least x.cols"),
    (lambda p: p.WEIGHTS in WEIGHTS_KINDS,
     "WEIGHTS (when the weight and bias load) must be auto, early, after or per_tile"),
]


def row_view(t):
    """A contiguous tensor of rows of `cols` values (cols % 16 == 0) as the 2-D view whose tile
    row r is row r: (rows * 16, cols // 16)."""
    return t.view(-1, t.shape[-1] // 16)




WEIGHTS_KINDS = ("auto", "early", "after", "per_tile")


def weights_when(DT, HELD: int, WEIGHTS: str) -> str:
    """When the weight and bias tiles are loaded: "early" with x, before the statistics (their
    latency hidden behind x's; all of them held from the start); "after" the statistics, all
    at once before the first store (one trip to memory, x and all of them held together);
    "per_tile" after the statistics, each tile's just before its store (the fewest registers,
    HELD trips). "auto": early in 16-bit dtypes at up to two shares per warp (two 16 x 32
    shares of x, w and b: 102 registers on sm_90a in bf16, nvcc 13), else per tile (fp32 x, w
    and b of 16 x 64 at 16 warps need more than sm_90a's 128 registers at 512 lanes; four
    shares of 16 x 32 loaded after the statistics all at once take 168)."""
    if WEIGHTS not in WEIGHTS_KINDS:
        raise InputError(f"layer_norm_rows: WEIGHTS={WEIGHTS!r} is not a way to load the "
                         f"weight and bias", hint=f"pass one of {', '.join(WEIGHTS_KINDS)}")
    if WEIGHTS != "auto":
        return WEIGHTS
    return "early" if DT.bits < 32 and HELD <= 2 else "per_tile"


@functools.lru_cache(maxsize=None)
def layer_norm_rows(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps="WARPS", requires=FORWARD)
    def layer_norm_rows(x: hk.Tensor[DT], w: hk.Tensor[DT], b: hk.Tensor[DT], o: hk.Tensor[DT],
                        eps: float, inv_cols: float, *, C: hk.Constexpr[int] = 64,
                        HELD: hk.Constexpr[int] = 1, WARPS: hk.Constexpr[int] = 4,
                        WEIGHTS: hk.Constexpr[str] = "auto"):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        when = weights_when(DT, HELD, WEIGHTS)
        # fp32 holds a 16 x C share as two tiles of 16 x C/2 where C/2 is whole 16-column
        # blocks: the same data, half-size temporaries (one 16 x 64 fp32 tile's masked square
        # costs 144 registers, estimated)
        SPLIT = 2 if DT.bits == 32 and C >= 32 else 1
        width = C // SPLIT                                    # view columns per register tile
        t = hk.RT(DT, 16, width, "flat")
        # unrolled: held in registers; tile k covers view columns k * width ..
        chunks = [(warp + i * WARPS) * SPLIT + s for i in range(HELD) for s in range(SPLIT)]
        held = [x[hk.tile_coord(0, 0, r, k)].load(t) for k in chunks]
        if when == "early":
            wbs = [load_weights(w, b, k, t) for k in chunks]
        # 1 / n: the host's (`inv_cols`, rmsnorm.tiles.inv_cols), no division in the kernel
        per_value = inv_cols
        total = hk.sum(held[0].to(hk.fp32))                   # columns past the row read 0
        for xs in held[1:]:
            total = total + hk.tile_sum(xs.to(hk.fp32))
        mean = hk.group.sum(total) * per_value
        squares = 0.0
        for k, xs in zip(chunks, held):    # a scalar per tile: no accumulator tile held
            squares = squares + hk.tile_sum(deviations(xs, mean, k, width, x.cols))
        # the hardware's 1/sqrt (one MUFU.RSQ, within 2^-22 relative): no IEEE sqrt and
        # division, each with a slow-path branch, on the chain after the block's combine
        rstd = hk.rsqrt_fast(hk.group.sum(squares) * per_value + eps)
        if when == "after":
            wbs = [load_weights(w, b, k, t) for k in chunks]
        for i, (k, xs) in enumerate(zip(chunks, held)):
            wt, bt = load_weights(w, b, k, t) if when == "per_tile" else wbs[i]
            y = (xs.to(hk.fp32) - mean) * rstd * wt.to(hk.fp32) + bt.to(hk.fp32)
            o[hk.tile_coord(0, 0, r, k)] = y.to(DT)
    return layer_norm_rows


def load_weights(w, b, k, t) -> tuple:
    """The weight's and the bias's view-column tile `k` (loads issued, not yet waited on)."""
    return w[hk.tile_coord(0, 0, 0, k)].load(t), b[hk.tile_coord(0, 0, 0, k)].load(t)


@hk.func
def deviations(xs, mean, k, width: int, cols):
    """(x - mean)² of view-column tile `k` (of `width` columns) in fp32, zero past the row's
    `cols` view columns (there x reads 0, and -mean must not count). Only a tile that reaches
    past the row is masked (a uniform branch per tile): full tiles, every tile of a route that
    fits the width exactly, skip the per-element compare and select."""
    d = xs.to(hk.fp32) - mean
    if (k + 1) * width > cols:
        column = hk.iota(hk.RT(hk.i32, 16, width, "flat"), "col")
        d = hk.where(column + k * width < cols, d, 0.0)
    return d * d


BACKWARD = ROW_VIEW + [
    (lambda p: p.dy.shape == p.x.shape and p.dx.shape == p.x.shape,
     "dy and dx must be row views of x's shape"),
    (lambda p: p.mean.cols * 16 == p.x.rows and p.rstd.cols * 16 == p.x.rows,
     "mean and rstd must hold one value per row of x"),
    (lambda p: p.dw_part.shape == p.db_part.shape and p.dw_part.cols == p.x.cols
     and p.dw_part.rows % 16 == 0 and p.dw_part.rows <= p.x.rows,
     "dw_part and db_part must be row views of fp32 [parts, cols], parts <= rows"),
    (lambda p: p.C * p.WARPS >= p.x.cols, "C x WARPS (the view columns a block holds) must be "
                                          "at least x.cols"),
]


def _row_value(v, r):
    """Element r of the 1-D fp32 global `v` as a scalar: the vector at element r, first lane."""
    near = v[hk.elem_coord(0, 0, 0, r)].load(hk.RV(hk.fp32, 16))
    return hk.sum(hk.where(hk.iota(hk.RV(hk.i32, 16), "row") == 0, near, 0.0))


@functools.lru_cache(maxsize=None)
def layer_norm_rows_backward(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.dw_part.rows, 16),), warps="WARPS", requires=BACKWARD)
    def layer_norm_rows_backward(dy: hk.Tensor[DT], x: hk.Tensor[DT], w: hk.Tensor[DT],
                                 mean: hk.Tensor[hk.fp32], rstd: hk.Tensor[hk.fp32],
                                 dx: hk.Tensor[DT], dw_part: hk.Tensor[hk.fp32],
                                 db_part: hk.Tensor[hk.fp32], *, C: hk.Constexpr[int] = 32,
                                 WARPS: hk.Constexpr[int] = 4):
        part, c = hk.arch.block_idx.x, hk.arch.warp_id
        t, f = hk.RT(DT, 16, C, "flat"), hk.RT(hk.fp32, 16, C, "flat")
        dw = hk.zeros(f)
        db = hk.zeros(f)
        n = hk.to_float(x.cols * 16)
        for r in range(part, hk.cdiv(x.rows, 16), hk.cdiv(dw_part.rows, 16)):
            gs = dy[hk.tile_coord(0, 0, r, c)].load(t)
            xs = x[hk.tile_coord(0, 0, r, c)].load(t)
            # the weight reloaded per row (L1 / L2): held across rows, fp32 spilled at 8+ warps
            # in the row layout (not re-measured flat: the routes already use 118-128 registers)
            ws = w[hk.tile_coord(0, 0, 0, c)].load(t)                        # past the row: 0
            mu, rs = _row_value(mean, r), _row_value(rstd, r)
            g = gs.to(hk.fp32)
            xhat = (xs.to(hk.fp32) - mu) * rs
            wdy = g * ws.to(hk.fp32)
            c1 = hk.group.sum(hk.sum(xhat * wdy)) / n
            c2 = hk.group.sum(hk.sum(wdy)) / n
            dx[hk.tile_coord(0, 0, r, c)] = ((wdy - (xhat * c1 + c2)) * rs).to(DT)
            dw += g * xhat
            db += g
        dw_part[hk.tile_coord(0, 0, part, c)] = dw
        db_part[hk.tile_coord(0, 0, part, c)] = db
    return layer_norm_rows_backward


SUMS = [
    (lambda p: p.dw_part.batch * p.dw_part.depth == 1, "dw_part must be 2-D [parts, cols]"),
    (lambda p: p.db_part.shape == p.dw_part.shape, "db_part must have dw_part's shape"),
    (lambda p: p.dw.cols == p.dw_part.cols and p.db.cols == p.dw_part.cols,
     "dw and db must hold one value per column of the partials"),
]


@functools.lru_cache(maxsize=None)
def column_sums(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.dw_part.cols, p.COLS),), warps="WARPS", requires=SUMS)
    def column_sums(dw_part: hk.Tensor[hk.fp32], db_part: hk.Tensor[hk.fp32],
                    dw: hk.Tensor[DT], db: hk.Tensor[DT], *, COLS: hk.Constexpr[int] = 32,
                    WARPS: hk.Constexpr[int] = 4):
        c, warp = hk.arch.block_idx.x, hk.arch.warp_id
        f = hk.RT(hk.fp32, 16, COLS)
        acc_w = hk.zeros(f)
        acc_b = hk.zeros(f)
        for s in range(warp, hk.cdiv(dw_part.rows, 16), WARPS):   # slabs past the end read 0
            acc_w += dw_part[hk.tile_coord(0, 0, s, c)].load(f)
            acc_b += db_part[hk.tile_coord(0, 0, s, c)].load(f)
        total_w = hk.group.sum(hk.col_sum(acc_w))
        total_b = hk.group.sum(hk.col_sum(acc_b))
        if warp == 0:
            dw[hk.tile_coord(0, 0, 0, c)] = total_w.to(DT)
            db[hk.tile_coord(0, 0, 0, c)] = total_b.to(DT)
    return column_sums


KERNELS = {"layer_norm_rows": layer_norm_rows}
BACKWARD_KERNELS = {"layer_norm_rows_backward": layer_norm_rows_backward,
                    "column_sums": column_sums}

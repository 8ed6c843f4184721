"""Row softmax kernels that read each row as one register tile ("row as a tile").

The op passes x (and o) as a view `x.view(rows * 16, cols // 16)`: row r of x is the 16-row
tile-row r of the view, so a 16 x C register tile at `tile_coord(0, 0, r, c)` holds 16 runs of C
contiguous elements of row r. No lane is spent on another row, whatever the row count, and the
loads are the headers' wide 16-byte accesses wherever the view's rows are 16-byte aligned
(fp32 rows of a multiple of 64, 16-bit ones of 128; else pairs, same results). The last tile
of a view row may cross its edge: padding reads -inf (exp gives 0), nothing is written there.

The statistics are kept per tile row (one (max, sum) per 1/16 of the row, online: the sum is
rescaled whenever the max grows) and combined at the end in a fixed order: across warps with
`hk.group` (warps 0, 1, ... in turn), then the 16 tile rows with a vector reduction. Running
maxima start at the lowest finite float, not -inf, so a stretch of -inf (masked logits) never
computes -inf - -inf; a row that is -inf everywhere gives 0 / 0 = NaN, as torch does.

- `softmax_held`: one block per row, held in registers (HELD tiles of C per warp): x is read
  once; rows up to HELD x WARPS x C view columns.
- `softmax_loop`: one block per row of any width: an online pass, then a pass that writes
  (x read twice; the second read mostly from L2).
- `softmax_stats` + `softmax_write`: a row split over the grid's x blocks (`splits`, from the
  scratch's shape): phase 1 writes each block's 16 (max, sum) pairs into float32 scratch of
  [rows, splits x 16]; phase 2 folds a row's partials in split order (every block of the row
  gets the same max and sum, bit for bit; no atomics) and writes its share.
"""
import functools

import ktile as hk

ROW = 16                       # view rows per row of x: one register tile's height
LOWEST = -3.4028234663852886e38  # the lowest finite float32: a running max's start


def _row_views(*names):
    """Each named tensor is a 2-D view of whole rows: 16 view rows per row of x."""
    return [(lambda p, n=n: getattr(p, n).batch * getattr(p, n).depth == 1
             and getattr(p, n).rows % ROW == 0,
             f"'{n}' must be a 2-D view [rows * 16, cols // 16] of x's rows (x.view(-1, "
             f"cols // 16)): 16 view rows per row") for n in names]


SAME_SHAPE = [(lambda p: p.o.rows == p.x.rows and p.o.cols == p.x.cols,
               "'o' must have x's shape")]
SCRATCH = [
    (lambda p: p.m.rows * ROW == p.x.rows and p.m.cols % ROW == 0 and p.m.cols > 0,
     "'m' must be float32 scratch of [rows, splits * 16] (rows of x, not of its view)"),
    (lambda p: p.s.rows == p.m.rows and p.s.cols == p.m.cols, "'s' must be shaped like 'm'"),
]


@hk.func
def _online(xs, row_max, row_sum):
    """The per-tile-row (max, sum of exp(x - max)) after one more fp32 tile."""
    new_max = hk.maximum(row_max, hk.row_max(xs))
    row_sum = row_sum * hk.exp(row_max - new_max) + hk.row_sum(hk.exp(xs - new_max))
    return new_max, row_sum


@hk.func
def _tile_stats(x, t, r, first, last):
    """This warp's online per-tile-row (max, sum) over tiles first + warp, ... < last of row r."""
    row_max = hk.full(hk.RV(hk.fp32, ROW), LOWEST)
    row_sum = hk.zeros(hk.RV(hk.fp32, ROW))
    for c in range(first + hk.arch.warp_id, last, hk.arch.num_warps):
        xs = x[hk.tile_coord(0, 0, r, c)].load(t, pad=float("-inf")).to(hk.fp32)
        row_max, row_sum = _online(xs, row_max, row_sum)
    return row_max, row_sum


@hk.func
def _block_stats(row_max, row_sum):
    """The block's per-tile-row (max, sum) from every warp's; every warp gets the same."""
    block_max = hk.group.max(row_max)
    return block_max, hk.group.sum(row_sum * hk.exp(row_max - block_max))


@hk.func
def _fold_rows(row_max, row_sum):
    """The row's (max, sum) from its 16 tile rows' (a fixed-order vector reduction)."""
    top = row_max.max()
    return top, (row_sum * hk.exp(row_max - top)).sum()


@hk.func
def _write(x, o, t, r, first, last, top, total, dt):
    """o = exp(x - top) / total over this warp's tiles first + warp, ... < last of row r."""
    scale = 1.0 / total
    for c in range(first + hk.arch.warp_id, last, hk.arch.num_warps):
        idx = hk.tile_coord(0, 0, r, c)
        xs = x[idx].load(t, pad=float("-inf")).to(hk.fp32)
        o[idx] = (hk.exp(xs - top) * scale).to(dt)


@functools.lru_cache(maxsize=None)
def softmax_held_kernel(dtype: str):
    """One block per row, the row held in registers between the statistics and the store."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows // ROW,), warps="WARPS", name=f"softmax_held_{dtype}",
               requires=_row_views("x", "o") + SAME_SHAPE + [
                   (lambda p: p.HELD * p.WARPS * p.C >= p.x.cols,
                    "HELD x WARPS x C must cover the view's columns: take a wider route")])
    def softmax_held(x: hk.Tensor[dt], o: hk.Tensor[dt], *, C: hk.Constexpr[int] = 64,
                     HELD: hk.Constexpr[int] = 1, WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        t = hk.RT(dt, ROW, C)
        chunks = [warp + i * WARPS for i in range(HELD)]          # unrolled: held
        held = [x[hk.tile_coord(0, 0, r, c)].load(t, pad=float("-inf")) for c in chunks]
        row_max = hk.full(hk.RV(hk.fp32, ROW), LOWEST)
        for xs in held:
            row_max = hk.maximum(row_max, hk.row_max(xs).to(hk.fp32))
        top = hk.group.max(row_max.max())
        exps = [hk.exp(xs.to(hk.fp32) - top) for xs in held]       # fp32, computed once
        row_sum = hk.zeros(hk.RV(hk.fp32, ROW))
        for e in exps:
            row_sum += hk.row_sum(e)
        scale = 1.0 / hk.group.sum(row_sum.sum())
        for c, e in zip(chunks, exps):
            o[hk.tile_coord(0, 0, r, c)] = (e * scale).to(dt)

    return softmax_held


@functools.lru_cache(maxsize=None)
def softmax_loop_kernel(dtype: str):
    """One block per row of any width: the online pass, then the pass that writes."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows // ROW,), warps="WARPS", name=f"softmax_loop_{dtype}",
               requires=_row_views("x", "o") + SAME_SHAPE)
    def softmax_loop(x: hk.Tensor[dt], o: hk.Tensor[dt], *, C: hk.Constexpr[int] = 64,
                     WARPS: hk.Constexpr[int] = 8):
        r = hk.arch.block_idx.x
        t = hk.RT(dt, ROW, C)
        tiles = hk.cdiv(x.cols, C)
        top, total = _fold_rows(*_block_stats(*_tile_stats(x, t, r, 0, tiles)))
        _write(x, o, t, r, 0, tiles, top, total, dt)

    return softmax_loop


@hk.func
def _split_share(x, m, split, C):
    """(first, last): the tiles of split `split` of a row (the last split may get fewer)."""
    tiles = hk.cdiv(x.cols, C)
    per = hk.cdiv(tiles, m.cols // ROW)
    first = split * per
    return first, hk.minimum(first + per, tiles)


def _split_grid(p):
    return p.m.cols // ROW, p.x.rows // ROW


@functools.lru_cache(maxsize=None)
def softmax_stats_kernel(dtype: str):
    """Phase 1 of a split row: block (split, r) writes its share's 16 (max, sum) pairs into
    m[r, 16 split : 16 split + 16] and s[...]."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_split_grid, warps="WARPS", name=f"softmax_stats_{dtype}",
               requires=_row_views("x") + SCRATCH)
    def softmax_stats(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32], *,
                      C: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        first, last = _split_share(x, m, split, C)
        row_max, row_sum = _block_stats(*_tile_stats(x, hk.RT(dt, ROW, C), r, first, last))
        if hk.arch.warp_id == 0:
            at = hk.elem_coord(0, 0, r, split * ROW)
            m[at] = row_max
            s[at] = row_sum

    return softmax_stats


@functools.lru_cache(maxsize=None)
def softmax_write_kernel(dtype: str):
    """Phase 2 of a split row: fold row r's partials in split order, then write block
    (split, r)'s share."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_split_grid, warps="WARPS", name=f"softmax_write_{dtype}",
               requires=_row_views("x", "o") + SAME_SHAPE + SCRATCH)
    def softmax_write(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32],
                      o: hk.Tensor[dt], *, C: hk.Constexpr[int] = 64,
                      WARPS: hk.Constexpr[int] = 4):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        v = hk.RV(hk.fp32, ROW)
        row_max = hk.full(v, LOWEST)
        row_sum = hk.zeros(v)
        for part in range(m.cols // ROW):
            at = hk.elem_coord(0, 0, r, part * ROW)
            part_max = m[at].load(v)
            new_max = hk.maximum(row_max, part_max)
            row_sum = row_sum * hk.exp(row_max - new_max) + s[at].load(v) * hk.exp(
                part_max - new_max)
            row_max = new_max
        top, total = _fold_rows(row_max, row_sum)
        first, last = _split_share(x, m, split, C)
        _write(x, o, hk.RT(dt, ROW, C), r, first, last, top, total, dt)

    return softmax_write


KERNELS = {
    "softmax_held": softmax_held_kernel,
    "softmax_loop": softmax_loop_kernel,
    "softmax_stats": softmax_stats_kernel,
    "softmax_write": softmax_write_kernel,
}

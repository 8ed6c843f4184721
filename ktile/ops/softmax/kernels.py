"""Row softmax kernels over 2-D [rows, cols] tensors, in float32 whatever the element type.

Each block owns 16 rows. Its WARPS warps share the row's column tiles (warp w takes tiles w,
w + WARPS, ...), each keeping an online running max and a sum rescaled to it; the warps'
(max, sum) pairs are combined with `hk.group` (the same order every run), then each warp writes
its tiles as exp(x - max) / sum.

A row wider than one block's share (`BLOCK` columns) splits across blocks in two phases, no
atomics: `softmax_partials` writes each block's (max, sum) for its 16 rows into float32
scratch of [splits, rows]; `softmax_normalize` folds the partials of its rows in split order
(so every block of a row gets the same max and sum, bit for bit) and writes its columns. The
scratch is laid out with splits as rows, so a block's 16 values are one contiguous vector.
"""
import functools

import ktile as hk

ROW_TILE = 16


def _two_dimensional(*names):
    return [(lambda p, n=n: getattr(p, n).batch * getattr(p, n).depth == 1,
             f"'{n}' must be 2-D [rows, cols]: fold batch and depth into rows")
            for n in names]


@hk.func
def _tiles_online_stats(x, t, r, first, last):
    """This warp's running (max, sum) of rows r over column tiles first + warp, ... < last."""
    row_max = hk.neg_infty(hk.RV(hk.fp32, ROW_TILE))
    row_sum = hk.zeros(hk.RV(hk.fp32, ROW_TILE))
    for c in range(first + hk.arch.warp_id, last, hk.arch.num_warps):
        xs = x[hk.tile_coord(0, 0, r, c)].load(t, pad=float("-inf")).to(hk.fp32)
        new_max = hk.maximum(row_max, hk.row_max(xs))
        row_sum = row_sum * hk.exp(row_max - new_max) + hk.row_sum(hk.exp(xs - new_max))
        row_max = new_max
    return row_max, row_sum


@hk.func
def _block_stats(row_max, row_sum):
    """The block's (max, sum) from each warp's: every warp gets the same pair."""
    block_max = hk.group.max(row_max)
    return block_max, hk.group.sum(row_sum * hk.exp(row_max - block_max))


@hk.func
def _write_normalised(x, o, t, r, first, last, row_max, row_sum, dt):
    """o = exp(x - max) / sum over this warp's column tiles first + warp, ... < last."""
    scale = 1.0 / row_sum
    for c in range(first + hk.arch.warp_id, last, hk.arch.num_warps):
        idx = hk.tile_coord(0, 0, r, c)
        xs = x[idx].load(t, pad=float("-inf")).to(hk.fp32)
        o[idx] = (hk.exp(xs - row_max) * scale).to(dt)


@functools.lru_cache(maxsize=None)
def softmax_rows_kernel(dtype: str):
    """One block per 16 rows, whole rows of any width."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, ROW_TILE),), warps="WARPS",
               name=f"softmax_rows_{dtype}",
               requires=_two_dimensional("x", "o"))
    def softmax_rows(x: hk.Tensor[dt], o: hk.Tensor[dt], *,
                     COLS: hk.Constexpr[int] = 256, WARPS: hk.Constexpr[int] = 4):
        r = hk.arch.block_idx.x
        t = hk.RT(dt, ROW_TILE, COLS)
        tiles = hk.cdiv(x.cols, COLS)
        row_max, row_sum = _block_stats(*_tiles_online_stats(x, t, r, 0, tiles))
        _write_normalised(x, o, t, r, 0, tiles, row_max, row_sum, dt)

    return softmax_rows


def _split_grid(p):
    return hk.cdiv(p.x.cols, p.BLOCK), hk.cdiv(p.x.rows, ROW_TILE)


SPLIT_REQUIRES = [
    (lambda p: p.BLOCK % p.COLS == 0, "BLOCK must be a multiple of COLS"),
    (lambda p: p.m.rows == (p.x.cols + p.BLOCK - 1) // p.BLOCK and p.m.cols == p.x.rows,
     "m must be float32 scratch of [splits, x.rows], splits = cdiv(x.cols, BLOCK)"),
    (lambda p: p.s.rows == p.m.rows and p.s.cols == p.m.cols, "s must be shaped like m"),
]


@functools.lru_cache(maxsize=None)
def softmax_partials_kernel(dtype: str):
    """Phase 1 of a split row: block (split, r) writes the (max, sum) of its BLOCK columns of
    rows r into m[split, r·16 : r·16 + 16] and s[...]."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_split_grid, warps="WARPS", name=f"softmax_partials_{dtype}",
               requires=_two_dimensional("x", "m", "s") + SPLIT_REQUIRES)
    def softmax_partials(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32], *,
                         BLOCK: hk.Constexpr[int] = 8192, COLS: hk.Constexpr[int] = 256,
                         WARPS: hk.Constexpr[int] = 4):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        t = hk.RT(dt, ROW_TILE, COLS)
        first = split * (BLOCK // COLS)
        last = hk.minimum(first + BLOCK // COLS, hk.cdiv(x.cols, COLS))
        row_max, row_sum = _block_stats(*_tiles_online_stats(x, t, r, first, last))
        if hk.arch.warp_id == 0:
            at = hk.elem_coord(0, 0, split, r * ROW_TILE)
            m[at] = row_max
            s[at] = row_sum

    return softmax_partials


@functools.lru_cache(maxsize=None)
def softmax_normalize_kernel(dtype: str):
    """Phase 2 of a split row: fold the partials of rows r in split order, then write block
    (split, r)'s BLOCK columns."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_split_grid, warps="WARPS", name=f"softmax_normalize_{dtype}",
               requires=_two_dimensional("x", "m", "s", "o") + SPLIT_REQUIRES)
    def softmax_normalize(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32],
                          o: hk.Tensor[dt], *, BLOCK: hk.Constexpr[int] = 8192,
                          COLS: hk.Constexpr[int] = 256, WARPS: hk.Constexpr[int] = 4):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        t = hk.RT(dt, ROW_TILE, COLS)
        v = hk.RV(hk.fp32, ROW_TILE)
        row_max = hk.neg_infty(v)
        row_sum = hk.zeros(v)
        for part in range(m.rows):
            at = hk.elem_coord(0, 0, part, r * ROW_TILE)
            part_max = m[at].load(v)
            new_max = hk.maximum(row_max, part_max)
            row_sum = row_sum * hk.exp(row_max - new_max) + s[at].load(v) * hk.exp(
                part_max - new_max)
            row_max = new_max
        first = split * (BLOCK // COLS)
        last = hk.minimum(first + BLOCK // COLS, hk.cdiv(x.cols, COLS))
        _write_normalised(x, o, t, r, first, last, row_max, row_sum, dt)

    return softmax_normalize


KERNELS = {
    "softmax_rows": softmax_rows_kernel,
    "softmax_partials": softmax_partials_kernel,
    "softmax_normalize": softmax_normalize_kernel,
}

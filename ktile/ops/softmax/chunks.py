"""Row softmax kernels whose every warp tile is one contiguous run of its row ("chunks").

The op passes x (and o) as a 3-D view `x.view(rows, cols // C, C)` (cols a multiple of C): row
r of x is depth plane r, and a flat 16 x C register tile (`hk.RT(dt, 16, C, "flat")`) at
`tile_coord(0, r, k, 0)` holds the row's 16·C elements from 16·C·k on, contiguous in memory: a
warp's access is one run of 16·C elements (2 KiB for fp32 at C 32), the block's WARPS warps take
WARPS consecutive tiles, so each step of a block reads WARPS·16·C contiguous elements (as a
Triton program reads its 2048-element block). The row-as-a-16-row-tile view of row_tile.py
instead spreads a tile over 16 runs of C elements a sixteenth of the row apart (16 DRAM pages
per tile where this touches one or two). The last tile of a row may pass its end by whole view
rows: those rows are outside the view (the unit path's row window), read -inf and are not
written; no element-by-element path.

- `softmax_chunk_stats` + `softmax_chunk_write`: a row split over `splits` blocks (two
  launches, no atomics). Block `split` takes the row's tile groups split, split + splits, ...
  (a group: WARPS consecutive tiles, warp w its w-th), so no block divides by the split count.
  Phase 1 writes each block's (max, sum) into float32 scratch seen as [rows, splits, 1]; phase
  2 sees it as [rows, splits] and folds a row's partials in split order (row_tile.py's
  `_fold_partials`: one vector load each, every block of the row gets the same pair).
- `softmax_chunk_loop`: one block per row of any width: the online pass, then the pass that
  writes (x read twice), the block's warps on consecutive tiles.

exp(x - max) is row_tile.py's `_exp`: exp2((x - max) · log2 e), the subtraction first (one
hardware exp2 on sm_90a; within e^-1 · 2^-24 absolute of exp for a softmax value).
"""
import functools

import ktile as hk

from .config import MAX_SPLITS
from .row_tile import LOWEST, NEG_INF, ROW, _block_stats, _exp, _fold_partials


def _views(*names):
    """Each named tensor is x's 3-D view [rows, cols // C, C]."""
    return [(lambda p, n=n: getattr(p, n).batch == 1 and getattr(p, n).cols == p.C,
             f"'{n}' must be the 3-D view x.view(rows, cols // C, C) of whole rows (cols a "
             f"multiple of C)") for n in names]


SAME_SHAPE = [(lambda p: p.o.depth == p.x.depth and p.o.rows == p.x.rows,
               "'o' must have x's shape")]
PARTIALS = [       # phase 1's view of the scratch
    (lambda p: p.m.cols == 1 and p.m.depth == p.x.depth and p.m.rows > 0,
     "'m' must be float32 scratch [rows, splits, 1]"),
    (lambda p: p.s.rows == p.m.rows and p.s.cols == p.m.cols and p.s.depth == p.m.depth,
     "'s' must be shaped like 'm'"),
]
FOLDED = [         # phase 2's view of the same scratch
    (lambda p: p.m.rows == p.x.depth and p.m.cols > 0,
     "'m' must be float32 scratch [rows, splits]"),
    (lambda p: p.s.rows == p.m.rows and p.s.cols == p.m.cols, "'s' must be shaped like 'm'"),
    (lambda p: p.m.cols <= p.FOLD, "at most FOLD splits per row: raise FOLD"),
]


def ahead(dtype: str, C: int) -> bool:
    """Whether a warp's next tile is loaded before the current one's math: a tile of at most
    16 registers a lane (16-bit dtypes at C 64, fp32 at C 32), as row_tile.py's loops."""
    return ROW * C * (4 if dtype == "fp32" else 2) // (32 * 4) <= 16


@hk.func
def _tile(x, t, r, k):
    """Tile k of row r (16·C contiguous elements); rows past the row's end read -inf."""
    return x[hk.tile_coord(0, r, k, 0)].load(t, pad=NEG_INF)


@hk.func
def _warp_stats(x, t, r, first, step, tiles, C, early):
    """This warp's online (max, sum of exp(x - max)) over tiles first, first + step, ... <
    tiles of row r: the max a scalar, the sum an fp32 tile rescaled as the max grows and reduced
    once at the end."""
    m = LOWEST
    acc = hk.zeros(hk.RT(hk.fp32, ROW, C, "flat"))
    cur = _tile(x, t, r, first)
    for k in range(first, tiles, step):
        if early:
            nxt = _tile(x, t, r, k + step)
        xs = cur.to(hk.fp32)
        new = hk.maximum(m, hk.tile_max(xs))
        acc = acc * _exp(m, new) + _exp(xs, new)
        m = new
        cur = nxt if early else _tile(x, t, r, k + step)
    return m, hk.tile_sum(acc)


@hk.func
def _write(x, o, t, r, first, step, tiles, top, total, dt, cur, early):
    """o = exp(x - top) / total over this warp's tiles first, first + step, ... of row r;
    `cur` is the warp's first tile, loaded by the caller before the statistics."""
    scale = 1.0 / total
    for k in range(first, tiles, step):
        if early:
            nxt = _tile(x, t, r, k + step)
        o[hk.tile_coord(0, r, k, 0)] = (_exp(cur.to(hk.fp32), top) * scale).to(dt)
        cur = nxt if early else _tile(x, t, r, k + step)


@hk.func
def _split_tiles(x, splits, split):
    """(first, step, tiles): this warp's tiles of split `split` (tile groups of WARPS
    consecutive tiles: block split takes groups split, split + splits, ...)."""
    warps = hk.arch.num_warps
    return (split * warps + hk.arch.warp_id, warps * splits, hk.cdiv(x.rows, ROW))


@functools.lru_cache(maxsize=None)
def softmax_chunk_stats_kernel(dtype: str):
    """Phase 1 of a split row: block (split, r) writes its share's (max, sum) into element
    (r, split, 0) of m and s."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.m.rows, p.m.depth), warps="WARPS",
               name=f"softmax_chunk_stats_{dtype}", requires=_views("x") + PARTIALS)
    def softmax_chunk_stats(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32], *,
                            C: hk.Constexpr[int] = 32, WARPS: hk.Constexpr[int] = 4):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        first, step, tiles = _split_tiles(x, m.rows, split)        # m.rows: the split count
        top, total = _block_stats(*_warp_stats(x, hk.RT(dt, ROW, C, "flat"), r, first, step,
                                               tiles, C, ahead(dtype, C)))
        if hk.arch.warp_id == 0:
            v = hk.zeros(hk.RV(hk.fp32, ROW))
            at = hk.elem_coord(0, r, split, 0)   # one column: element 0 written
            m[at] = v + top
            s[at] = v + total

    return softmax_chunk_stats


@functools.lru_cache(maxsize=None)
def softmax_chunk_write_kernel(dtype: str):
    """Phase 2 of a split row: fold row r's partials in split order, then write block
    (split, r)'s share."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.m.cols, p.m.rows), warps="WARPS",
               name=f"softmax_chunk_write_{dtype}",
               requires=_views("x", "o") + SAME_SHAPE + FOLDED)
    def softmax_chunk_write(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32],
                            o: hk.Tensor[dt], *, C: hk.Constexpr[int] = 32,
                            WARPS: hk.Constexpr[int] = 4,
                            FOLD: hk.Constexpr[int] = MAX_SPLITS):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        t = hk.RT(dt, ROW, C, "flat")
        first, step, tiles = _split_tiles(x, m.cols, split)
        cur = _tile(x, t, r, first)                     # in flight during the fold
        top, total = _fold_partials(m, s, r, FOLD)
        _write(x, o, t, r, first, step, tiles, top, total, dt, cur, ahead(dtype, C))

    return softmax_chunk_write


@functools.lru_cache(maxsize=None)
def softmax_chunk_loop_kernel(dtype: str):
    """One block per row of any width: the online pass, then the pass that writes."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.depth,), warps="WARPS", name=f"softmax_chunk_loop_{dtype}",
               requires=_views("x", "o") + SAME_SHAPE)
    def softmax_chunk_loop(x: hk.Tensor[dt], o: hk.Tensor[dt], *, C: hk.Constexpr[int] = 64,
                           WARPS: hk.Constexpr[int] = 8):
        r = hk.arch.block_idx.x
        t = hk.RT(dt, ROW, C, "flat")
        tiles, warp, step = hk.cdiv(x.rows, ROW), hk.arch.warp_id, hk.arch.num_warps
        early = ahead(dtype, C)
        top, total = _block_stats(*_warp_stats(x, t, r, warp, step, tiles, C, early))
        cur = _tile(x, t, r, warp)
        _write(x, o, t, r, warp, step, tiles, top, total, dt, cur, early)

    return softmax_chunk_loop


KERNELS = {
    "softmax_chunk_stats": softmax_chunk_stats_kernel,
    "softmax_chunk_write": softmax_chunk_write_kernel,
    "softmax_chunk_loop": softmax_chunk_loop_kernel,
}

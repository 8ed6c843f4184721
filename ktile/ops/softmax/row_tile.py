"""Row softmax kernels that read each row as one flat register tile band ("row as a tile").

The op passes x (and o) as a view `x.view(rows * 16, cols // 16)`: row r of x is the 16-row
tile-row r of the view, so a flat 16 x C register tile (`hk.RT(dt, 16, C, "flat")`) at
`tile_coord(0, 0, r, c)` holds 16 runs of C contiguous elements of row r in memory order: one
16-byte access per lane per 8 elements, no shuffles (docs/language.md, "The flat layout"), and
no lane spent on another row at any row count. The last tile of a view row may cross its edge:
padding reads -inf (exp gives 0), nothing is written there.

A row's max and sum are whole-tile reductions (`hk.tile_max`, `hk.tile_sum`: an fp32 scalar per
warp), combined across warps with `hk.group.max` / `hk.group.sum` (warps 0, 1, ... in turn: the
same result every run) and across a warp's tiles by a scalar online update (the sum rescaled
whenever the max grows). Running maxima start at the lowest finite float, not -inf, so a
stretch of -inf (masked logits) never computes -inf - -inf; a row that is -inf everywhere gives
0 / 0 = NaN, as torch does.

- `softmax_held`: one block per row held in registers (HELD tiles of C per warp, all loaded
  before the first reduction): x is read once; rows up to HELD x WARPS x C view columns.
- `softmax_loop`: one block per row of any width: an online pass, then a pass that writes
  (x read twice).
- `softmax_stats` + `softmax_write`: a row split over `splits` blocks, interleaved: block
  `split` takes the row's tiles split, split + splits, ... (warp w every WARPS-th of those from
  its w-th), so no block divides by the split count before its first load. Phase 1 writes each
  block's (max, sum) into float32 scratch m, s seen as [rows, splits, 1] (element
  (r, split, 0): a 16-vector stored at a one-column row writes its first element only; the
  split count is the scratch's shape); phase 2 sees the same scratch as [rows, splits], reads
  a row's partials with one vector load each (at most FOLD = 64 splits), its first tile of x
  already in flight, folds them in split order (every block of the row gets the same max and
  sum, bit for bit; no atomics) and writes its share.

exp(x - max) is `_exp`: exp2 of the log2 e-scaled difference (one hardware exp2 on sm_90a).

Every loop over a warp's tiles loads the next tile before the current one's math where a tile
takes at most AHEAD_REGISTERS a lane (`ahead`: 16-bit dtypes at C 64, fp32 at C 32), else right
after it; past the row's last tile that load is the bounds-checked path reading -inf, no memory
access.
"""
import functools

import ktile as hk

from .config import MAX_SPLITS

ROW = 16                       # view rows per row of x: one register tile's height
LOWEST = -3.4028234663852886e38  # the lowest finite float32: a running max's start
NEG_INF = float("-inf")
LOG2E = 1.4426950408889634


def _row_views(*names):
    """Each named tensor is a 2-D view of whole rows: 16 view rows per row of x."""
    return [(lambda p, n=n: getattr(p, n).batch * getattr(p, n).depth == 1
             and getattr(p, n).rows % ROW == 0,
             f"'{n}' must be a 2-D view [rows * 16, cols // 16] of x's rows (x.view(-1, "
             f"cols // 16)): 16 view rows per row") for n in names]


SAME_SHAPE = [(lambda p: p.o.rows == p.x.rows and p.o.cols == p.x.cols,
               "'o' must have x's shape")]
PARTIALS = [       # phase 1's view of the scratch
    (lambda p: p.m.cols == 1 and p.m.depth * ROW == p.x.rows and p.m.rows > 0,
     "'m' must be float32 scratch [rows, splits, 1] (rows of x, not of its view)"),
    (lambda p: p.s.rows == p.m.rows and p.s.cols == p.m.cols, "'s' must be shaped like 'm'"),
]
FOLDED = [         # phase 2's view of the same scratch
    (lambda p: p.m.rows * ROW == p.x.rows and p.m.cols > 0,
     "'m' must be float32 scratch [rows, splits] (rows of x, not of its view)"),
    (lambda p: p.s.rows == p.m.rows and p.s.cols == p.m.cols, "'s' must be shaped like 'm'"),
]


AHEAD_REGISTERS = 16     # a warp's next tile is loaded ahead where a tile takes at most this
                         # many registers a lane in x's dtype: two tiles live plus phase 1's
                         # fp32 sum tile; fp32 at C 64 (32 each) would pass ktile's budget
                         # warning on sm_90a (about 144 registers, 12-19% occupancy)


def ahead(dtype: str, C: int) -> bool:
    """Whether the loop and split kernels load a warp's next tile before the current one's
    math (a tile of x's dtype within AHEAD_REGISTERS a lane: bf16 / fp16 at C 64, fp32 at 32)."""
    return ROW * C * (4 if dtype == "fp32" else 2) // (32 * 4) <= AHEAD_REGISTERS


@hk.func
def _exp(v, top):
    """exp(v - top) as exp2((v - top) · log2 e), float32: the subtraction first (a -inf stretch
    against the lowest-float running max gives exp2(-inf) = 0, never -inf - -inf). On sm_90a an
    FADD, an FMUL and the hardware exp2 (2 ulp) where expf took nine instructions; within
    e^-1 · 2^-24 absolute of exp for a value at most 1 (the product's rounding)."""
    return hk.exp2((v - top) * LOG2E)


@hk.func
def _prefetch(x, t, r, c):
    """Tile c of row r as stored: a warp's next tile, loaded before its current tile's math.
    Past the row (a warp's share done, or a warp with none) every element is bounds-checked and
    reads -inf: no memory access, unused."""
    return x[hk.tile_coord(0, 0, r, c)].load(t, pad=NEG_INF)


@hk.func
def _warp_stats(x, t, r, first, step, tiles, C, early):
    """This warp's online (max, sum of exp(x - max)) over tiles first, first + step, ... of the
    row's `tiles`: the max a scalar (one tile_max per tile), the sum an elementwise fp32 tile
    rescaled by a scalar as the max grows and reduced once at the end (one shuffle chain per
    tile, not two). With `early` (`ahead`) each tile's successor is loaded before the tile's
    math, else after it."""
    m = LOWEST
    acc = hk.zeros(hk.RT(hk.fp32, ROW, C, "flat"))
    cur = _prefetch(x, t, r, first)
    for c in range(first, tiles, step):
        if early:
            nxt = _prefetch(x, t, r, c + step)
        xs = cur.to(hk.fp32)
        new = hk.maximum(m, hk.tile_max(xs))
        acc = acc * _exp(m, new) + _exp(xs, new)
        m = new
        cur = nxt if early else _prefetch(x, t, r, c + step)
    return m, hk.tile_sum(acc)


@hk.func
def _block_stats(m, s):
    """The block's (max, sum) from every warp's; every warp gets the same."""
    top = hk.group.max(m)
    return top, hk.group.sum(s * _exp(m, top))


@hk.func
def _write(x, o, t, r, first, step, tiles, top, total, dt, cur, early):
    """o = exp(x - top) / total over this warp's tiles first, first + step, ... of row r;
    `cur` is the warp's first tile (`_prefetch(x, t, r, first)`, loaded by the caller
    before the statistics it waits on), each later tile loaded before (`early`) or after the
    one before is written."""
    scale = 1.0 / total
    for c in range(first, tiles, step):
        if early:
            nxt = _prefetch(x, t, r, c + step)
        o[hk.tile_coord(0, 0, r, c)] = (_exp(cur.to(hk.fp32), top) * scale).to(dt)
        cur = nxt if early else _prefetch(x, t, r, c + step)


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
        t = hk.RT(dt, ROW, C, "flat")
        chunks = [warp + i * WARPS for i in range(HELD)]          # unrolled: held
        held = [x[hk.tile_coord(0, 0, r, c)].load(t, pad=NEG_INF) for c in chunks]
        m = hk.tile_max(held[0])
        for xs in held[1:]:
            m = hk.maximum(m, hk.tile_max(xs))
        top = hk.group.max(m)           # -inf only where the whole row is: NaN, as torch
        exps = [_exp(xs.to(hk.fp32), top) for xs in held]          # fp32, computed once
        s = hk.tile_sum(exps[0])
        for e in exps[1:]:
            s = s + hk.tile_sum(e)
        scale = 1.0 / hk.group.sum(s)
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
        t = hk.RT(dt, ROW, C, "flat")
        tiles, warp, step = hk.cdiv(x.cols, C), hk.arch.warp_id, hk.arch.num_warps
        early = ahead(dtype, C)
        top, total = _block_stats(*_warp_stats(x, t, r, warp, step, tiles, C, early))
        cur = _prefetch(x, t, r, warp)
        _write(x, o, t, r, warp, step, tiles, top, total, dt, cur, early)

    return softmax_loop


@hk.func
def _split_tiles(x, splits, split, C):
    """(first, step, tiles): this warp's tiles of split `split` of a row (interleaved: block
    split takes tiles split, split + splits, ...; warp w of them every WARPS-th from its w-th)."""
    return (split + hk.arch.warp_id * splits, hk.arch.num_warps * splits, hk.cdiv(x.cols, C))


@functools.lru_cache(maxsize=None)
def softmax_stats_kernel(dtype: str):
    """Phase 1 of a split row: block (split, r) writes its share's (max, sum) into element
    (r, split, 0) of m and s."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.m.rows, p.m.depth), warps="WARPS",
               name=f"softmax_stats_{dtype}", requires=_row_views("x") + PARTIALS)
    def softmax_stats(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32], *,
                      C: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        first, step, tiles = _split_tiles(x, m.rows, split, C)     # m.rows: the split count
        top, total = _block_stats(*_warp_stats(x, hk.RT(dt, ROW, C, "flat"), r, first, step,
                                               tiles, C, ahead(dtype, C)))
        if hk.arch.warp_id == 0:
            v = hk.zeros(hk.RV(hk.fp32, ROW))
            at = hk.elem_coord(0, r, split, 0)   # one column: element 0 written
            m[at] = v + top
            s[at] = v + total

    return softmax_stats


@hk.func
def _fold_partials(m, s, r, FOLD):
    """Row r's (max, sum) from its splits' partials (at most FOLD of them), each read by one
    vector load issued before any arithmetic (the loads are the latency here), folded in split
    order."""
    v = hk.RV(hk.fp32, FOLD)
    at = hk.elem_coord(0, 0, r, 0)
    maxima, sums = m[at].load(v, pad=LOWEST), s[at].load(v, pad=0.0)
    top = maxima.max()
    return top, (sums * _exp(maxima, top)).sum()


@functools.lru_cache(maxsize=None)
def softmax_write_kernel(dtype: str):
    """Phase 2 of a split row: fold row r's partials in split order, then write block
    (split, r)'s share."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.m.cols, p.m.rows), warps="WARPS",
               name=f"softmax_write_{dtype}",
               requires=_row_views("x", "o") + SAME_SHAPE + FOLDED + [
                   (lambda p: p.m.cols <= p.FOLD, "at most FOLD splits per row: raise FOLD")])
    def softmax_write(x: hk.Tensor[dt], m: hk.Tensor[hk.fp32], s: hk.Tensor[hk.fp32],
                      o: hk.Tensor[dt], *, C: hk.Constexpr[int] = 64,
                      WARPS: hk.Constexpr[int] = 4, FOLD: hk.Constexpr[int] = MAX_SPLITS):
        split, r = hk.arch.block_idx.x, hk.arch.block_idx.y
        t = hk.RT(dt, ROW, C, "flat")
        first, step, tiles = _split_tiles(x, m.cols, split, C)
        cur = _prefetch(x, t, r, first)                 # in flight during the fold
        top, total = _fold_partials(m, s, r, FOLD)
        _write(x, o, t, r, first, step, tiles, top, total, dt, cur, ahead(dtype, C))

    return softmax_write


KERNELS = {
    "softmax_held": softmax_held_kernel,
    "softmax_loop": softmax_loop_kernel,
    "softmax_stats": softmax_stats_kernel,
    "softmax_write": softmax_write_kernel,
}

"""RMSNorm over rows viewed as tiles (`_library.row_tiles`): the fast kernel for rows whose
width is a multiple of 16.

A row of `cols` values is viewed as 16 rows of cols/16, so row r of x is row tile r of the view
and a row-layout register tile 16 x C of it holds C columns of each of the 16 slices: every
element is loaded by one lane, with 16-byte accesses where the view's rows are 16-byte aligned
(cols/16 x the element size a multiple of 16: cols % 128 == 0 for bf16, else 4-byte pairs).
One block per row; warp w holds tiles w, w + WARPS, ... (HELD of them) in registers between
the sum of squares and the store, so x is read once. The weight, viewed the same way (one tile
row, 16 x cols/16), multiplies lane by lane. A tile past the view's last column reads zeros and
writes nothing, so a route serves every width up to HELD x C x WARPS x 16 columns.

Each lane reads exactly the elements it writes, before it writes them: the kernel declares
`in_place={"o": "x"}` (docs/runtime.md, "Aliasing and in-place").
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import ktile as hk

from .. import _library

ROW_TILE = 16    # the rows of the view one row of x becomes, and of one register tile

TILED_ROWS = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D: the rows as tiles, row_tiles(x)"),
    (lambda p: p.x.rows % ROW_TILE == 0,
     "x must be rows of 16-row tiles (x.rows a multiple of 16): pass row_tiles(x)"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.w.rows == ROW_TILE and p.w.cols == p.x.cols,
     "w must be the weight as one tile row (16, x.cols): pass row_tiles(w)"),
    (lambda p: p.HELD * p.C * p.WARPS >= p.x.cols,
     "HELD x C x WARPS (the view's columns a block holds) must be at least x.cols: choose "
     "another route"),
]


def sum_of_squares(tiles: list, C: int):
    """The block's sum of the squares of every element of every warp's `tiles`: elementwise
    over the tiles, then the tile's rows, its row sums, and the block's warps in order."""
    squares = hk.zeros(hk.RT(hk.fp32, ROW_TILE, C))
    for t in tiles:
        f = t.to(hk.fp32)
        squares += f * f
    return hk.group.sum(hk.sum(hk.row_sum(squares)))


def weights(w, chunks: list, DT, C: int) -> list:
    """The weight tiles of column tiles `chunks`, loaded with x's (before the block's sum:
    their latency hides behind x's, not after the reduction's barrier)."""
    return [w[hk.tile_coord(0, 0, 0, c)].load(hk.RT(DT, ROW_TILE, C)) for c in chunks]


def normalised(xs, ws, inv_rms, DT):
    """x · inv_rms rounded to the dtype, times the weight tile, rounded again (the engines'
    rounding)."""
    return ((xs.to(hk.fp32) * inv_rms).to(DT).to(hk.fp32) * ws.to(hk.fp32)).to(DT)


@functools.lru_cache(maxsize=None)
def rms_norm_tiles(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.x.rows // ROW_TILE,), warps="WARPS", requires=TILED_ROWS,
               in_place={"o": "x"})
    def rms_norm_tiles(x: hk.Tensor[DT], w: hk.Tensor[DT], o: hk.Tensor[DT], eps: float, *,
                       C: hk.Constexpr[int] = 32, HELD: hk.Constexpr[int] = 1,
                       WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        chunks = [warp + i * WARPS for i in range(HELD)]     # unrolled: held in registers
        held = [x[hk.tile_coord(0, 0, r, c)].load(hk.RT(DT, ROW_TILE, C)) for c in chunks]
        ws = weights(w, chunks, DT, C)
        total = sum_of_squares(held, C)
        inv_rms = hk.rsqrt(total / hk.to_float(x.cols * ROW_TILE) + eps)
        for c, xs, wt in zip(chunks, held, ws):
            o[hk.tile_coord(0, 0, r, c)] = normalised(xs, wt, inv_rms, DT)
    return rms_norm_tiles


def tiles_route(max_cols: int, warps: int, cols: int, *, held: int = 1,
                targets: tuple[str, ...] | None = None) -> _library.Route:
    """The tile kernel for rows up to `max_cols` wide (a multiple of 16) on `targets`: `warps`
    warps of `held` tiles 16 x `cols` of the view each."""
    assert held * cols * warps * ROW_TILE >= max_cols, (max_cols, warps, cols, held)
    return _library.Route("rms_norm_tiles", {"C": cols, "HELD": held, "WARPS": warps},
                          max_cols=max_cols, targets=targets, cols_multiple=ROW_TILE,
                          sample=(3, max_cols - 48))

"""RMSNorm over rows viewed as tiles (`_library.row_tiles`): the fast kernel for rows whose
width is a multiple of 16.

A row of `cols` values is viewed as 16 rows of cols/16, so row r of x is row tile r of the view
and a flat register tile 16 x C of it (docs/language.md, "The flat layout") holds C columns of
each of the 16 slices in memory order: on sm_90a one 16-byte access per lane for 8 elements
where the view's rows are 16-byte aligned (cols % 128 == 0 in 16-bit dtypes, else element by
element), no shuffles. One block per row; warp w holds tiles w, w + WARPS, ... (HELD of them)
in registers between the sum of squares and the store, so x is read once. Every load of the
block (x's tiles, then the weight's, viewed the same way: one tile row, 16 x cols/16) is issued
before the reduction; the sum of squares is a whole-tile sum per warp (`hk.tile_sum`, an fp32
scalar) and `hk.group.sum` over the warps. A tile past the view's last column reads zeros and
writes nothing, so a route serves every width up to HELD x C x WARPS x 16 columns.

Each lane reads exactly the elements it writes, before it writes them: the kernel declares
`in_place={"o": "x"}` (docs/runtime.md, "Aliasing and in-place").
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype DT

import functools

import numpy as np

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


def flat(DT, C: int):
    """The register tile of one warp's share: 16 x C of the view, in memory order."""
    return hk.RT(DT, ROW_TILE, C, "flat")


def split(DT, C: int) -> int:
    """How many register tiles hold a warp's 16 x C share: two of 16 x C/2 in fp32 (the same
    data; half-size fp32 temporaries, which on sm_90a keep the wide routes' estimate inside
    the occupancy budget) where C/2 is still whole 16-column blocks, else one."""
    return 2 if DT.bits == 32 and C >= 32 else 1


def early(DT) -> bool:
    """Whether the weight is loaded with x, before the reduction (its latency hidden behind
    x's): in 16-bit dtypes; an fp32 weight is loaded after it (held from the start, fp32 x,
    residual and weight tiles put the wide routes past sm_90a's occupancy budget)."""
    return DT.bits < 32


def shares(warp, WARPS: int, HELD: int, SPLIT: int) -> list:
    """The view's column tiles (of C/SPLIT columns) warp `warp` holds: SPLIT adjacent ones
    per share, shares warp, warp + WARPS, ... (HELD of them; unrolled: held in registers)."""
    return [(warp + i * WARPS) * SPLIT + s for i in range(HELD) for s in range(SPLIT)]


def load(tensor, r, c, tile):
    """Tile `c` of row tile `r` of `tensor`."""
    return tensor[hk.tile_coord(0, 0, r, c)].load(tile)


def load_all(tensor, r, chunks: list, tile) -> list:
    """Tiles `chunks` of row tile `r` of `tensor`, each loaded (issued) before any is used."""
    return [load(tensor, r, c, tile) for c in chunks]


def inv_rms(tiles: list, x, eps, per_value=None):
    """rsqrt(mean of the squares of the row + eps): each warp's tiles squared in fp32 and
    summed whole (one fp32 scalar per warp), then the block's warps in order. The mean is a
    product with `per_value`, 1 / cols: the kernel's parameter where it has one (computed on
    the host, `inv_cols`), else an IEEE division in the kernel, which depends on no load. The
    factor is the hardware's approximate 1/sqrt (`hk.rsqrt_fast`: one MUFU.RSQ on sm_90a,
    within 2^-22 relative, far inside the op's tolerance of a bf16 ulp), not the IEEE sqrt and
    division, each with a slow-path branch, on the serial chain after the block's combine."""
    if per_value is None:
        per_value = 1.0 / hk.to_float(x.cols * ROW_TILE)
    total = None
    for t in tiles:
        f = t.to(hk.fp32)
        part = hk.tile_sum(f * f)
        total = part if total is None else total + part
    return hk.rsqrt_fast(hk.group.sum(total) * per_value + eps)


def inv_cols(cols: int) -> float:
    """1 / cols in fp32, correctly rounded: the kernels' `inv_cols` parameter, the same value
    as the kernel's own fp32 division would give (computed once on the host, not on the
    block's serial chain)."""
    return float(np.float32(1.0) / np.float32(cols))


def normalised(xs, ws, inv, DT):
    """x · inv rounded to the dtype, times the weight tile, rounded again (the engines'
    rounding)."""
    return ((xs.to(hk.fp32) * inv).to(DT).to(hk.fp32) * ws.to(hk.fp32)).to(DT)


@functools.lru_cache(maxsize=None)
def rms_norm_tiles(dtype: str):
    DT = getattr(hk, dtype)
    EARLY = early(DT)

    @hk.kernel(grid=lambda p: (p.x.rows // ROW_TILE,), warps="WARPS", requires=TILED_ROWS,
               in_place={"o": "x"})
    def rms_norm_tiles(x: hk.Tensor[DT], w: hk.Tensor[DT], o: hk.Tensor[DT], eps: float,
                       inv_cols: float, *,
                       C: hk.Constexpr[int] = 64, HELD: hk.Constexpr[int] = 1,
                       WARPS: hk.Constexpr[int] = 4):
        r, warp = hk.arch.block_idx.x, hk.arch.warp_id
        SPLIT = split(DT, C)
        t = flat(DT, C // SPLIT)
        chunks = shares(warp, WARPS, HELD, SPLIT)
        held = load_all(x, r, chunks, t)
        ws = load_all(w, 0, chunks, t) if EARLY else None
        inv = inv_rms(held, x, eps, inv_cols)
        for i, (c, xs) in enumerate(zip(chunks, held)):
            wt = ws[i] if ws else load(w, 0, c, t)
            o[hk.tile_coord(0, 0, r, c)] = normalised(xs, wt, inv, DT)
    return rms_norm_tiles


def tiles_route(max_cols: int, warps: int, cols: int = 64, *, held: int = 1,
                targets: tuple[str, ...] | None = None,
                max_rows: int | None = None) -> _library.Route:
    """The tile kernel for rows up to `max_cols` wide (a multiple of 16) and up to `max_rows`
    of them (None: any) on `targets`: `warps` warps of `held` flat tiles 16 x `cols` of the
    view each."""
    assert held * cols * warps * ROW_TILE >= max_cols, (max_cols, warps, cols, held)
    return _library.Route("rms_norm_tiles", {"C": cols, "HELD": held, "WARPS": warps},
                          max_rows=max_rows, max_cols=max_cols, targets=targets,
                          cols_multiple=ROW_TILE, sample=(3, max_cols - 48))

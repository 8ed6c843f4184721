"""The dropout kernel, one per dtype: seeded low-memory dropout with a runtime seed and
probability (a new seed or p is no new trace or build). Element (r, c) of x `[rows, cols]` draws
`hk.rand4(seed, r · cols + c)`, its index in the flattened tensor (one Philox call per four
consecutive elements); it is kept when the draw exceeds p and becomes x · scale, scale = 1 / (1 − p)
rounded to float32 once per lane (torch's CUDA dropout multiplies by its scale so; the product
in float32, rounded once to the dtype), else 0. A float32 division per element (IEEE, its
denormal check and slow-path call) was about a third of the kernel's SASS on sm_90a.

Flat-layout tiles (docs/language.md), as the elementwise kernels: a block's WARPS warps take
HELD adjacent 16 x COLS row tiles each of one column tile (block x: the row tiles, block y: the
column tile, so no division maps a block to its tiles), and the op reflows a contiguous x as
rows of COLS (the flat index of an element is the same in any row width): each warp's tile is
one contiguous run. A lane's four adjacent elements of a row share one Philox-4x32-10 call
(`tl.rand4x` of the group's index, whose mask the Triton alternative reproduces bit for bit)
when the row width is a multiple of 4, as it is in the reflowed form; else each element makes
its own call (still exact). What a route changes is how many elements a lane holds (COLS / 2
of a 16-bit type) and so the registers and the warps resident."""
import functools

import ktile as hk

from ..elementwise.kernels import ROW_TILE, flat, tiles_held

MAX_COLUMN_TILES = 65535       # grid.y


def column_tiles(cols: int, tile_cols: int) -> int:
    return -(-cols // tile_cols)


SHAPES = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D [rows, cols]: fold leading dimensions"),
    (lambda p: p.out.shape == p.x.shape, "out must have x's shape"),
    (lambda p: column_tiles(p.out.cols, p.COLS) <= MAX_COLUMN_TILES,
     f"a row must be at most {MAX_COLUMN_TILES} tiles of COLS: pass a contiguous x (the op "
     f"reflows it as rows of COLS)"),
]


def _grid(dt):
    def grid(p):
        rows_per_block = ROW_TILE * p.WARPS * tiles_held(dt, p.HELD)
        return hk.cdiv(p.out.rows, rows_per_block), hk.cdiv(p.out.cols, p.COLS)
    return grid


def _warp_tiles(held: int) -> list:
    """(row tile, column tile) of this warp's tiles: warp w takes row tiles w, w + WARPS, ...
    of its block's, so the block's warps read adjacent tiles at each step."""
    warps = hk.arch.num_warps
    first = hk.arch.block_idx.x * warps * held + hk.arch.warp_id
    return [(first + i * warps, hk.arch.block_idx.y) for i in range(held)]


@functools.cache
def dropout(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid(dt), warps="WARPS", requires=SHAPES)
    def dropout_seeded(x: hk.Tensor[dt], out: hk.Tensor[dt], p: float, seed: int, *,
                       COLS: hk.Constexpr[int] = 16, WARPS: hk.Constexpr[int] = 4,
                       HELD: hk.Constexpr[int] = 1):
        t, at = flat(dt, COLS), _warp_tiles(tiles_held(dt, HELD))
        xs = [x[hk.tile_coord(0, 0, r, c)].load(t) for r, c in at]
        index_tile = flat(hk.i32, COLS)
        # each element's flat index: the tile's first element's, plus its place in the tile
        in_tile = hk.iota(index_tile, "row") * x.cols + hk.iota(index_tile, "col")
        scale = 1.0 / (1.0 - p)          # one IEEE division; inf at p = 1, when none is kept
        for (r, c), xt in zip(at, xs):
            keep = hk.rand4(seed, in_tile + (r * ROW_TILE * x.cols + c * COLS)) > p
            kept = xt.to(hk.fp32) * scale
            out[hk.tile_coord(0, 0, r, c)] = hk.where(keep, kept, 0.0).to(dt)
    return dropout_seeded


KERNELS = {"dropout_seeded": dropout}

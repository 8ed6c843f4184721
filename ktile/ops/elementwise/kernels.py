"""Elementwise kernels over 2-D [rows, cols] tensors, one factory per shape of call.

Every kernel is made per element type (`binary_kernel("bf16")`), so one body serves bf16, fp16
and fp32; what the kernel computes is a compile-time constant (`OP` / `FN`), so a call never
branches at run time. Each warp owns HELD flat-layout 16 x COLS tiles of the output (memory
order: 16-byte accesses with no shuffles), all loaded before any is computed; a block is WARPS
warps over adjacent row tiles. Math is float32, rounded once to the output's dtype: what torch
computes for these dtypes (its "opmath"), so results are bit-exact against the references.

The op functions (`op.py`) view any 1-4-D input as 2-D rows before calling these kernels, a
contiguous one as rows of COLS (`config.REFLOW`), so that each tile is one contiguous run:
tensors of one shape (`binary`), a tensor and one row broadcast down its rows (`binary` too,
the row expanded to the tensor's shape with row stride 0), a tensor and one column broadcast
across its columns (`binary_col`, row layout: the column is passed as a `[1, rows]` view), a
tensor and a Python number (`scalar`, a runtime scalar: no rebuild per value), and one tensor
(`unary`).
"""

import functools
import math

import ktile as hk

ROW_TILE = 16                     # rows of one warp's tile: every target builds 16-row tiles

# The binary ops, as functions of two traced values (tiles, vectors or scalars).
COMBINE = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "maximum": lambda a, b: hk.maximum(a, b),
    "minimum": lambda a, b: hk.minimum(a, b),
}

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu_tanh(x):
    """torch's gelu(approximate="tanh") of a float32 tile: 0.5 x (1 + tanh(√(2/π)(x + 0.044715 x³)))."""
    inner = (x + x * x * x * 0.044715) * SQRT_2_OVER_PI
    return x * 0.5 * (hk.tanh(inner) + 1.0)


# The unary ops, as functions of a float32 tile.
APPLY = {
    "exp": hk.exp,
    "relu": hk.relu,
    "gelu": hk.gelu,
    "gelu_tanh": gelu_tanh,
    "silu": hk.silu,
    "neg": lambda x: -x,
    "abs": hk.abs,
}

BINARY_OPS = tuple(COMBINE)
UNARY_OPS = tuple(APPLY)


def flat_grid(dt, out: str = "o"):
    """The grid of a kernel of `dt` whose warps hold flat tiles (`warp_tiles`) of tensor
    parameter `out`: one axis of row blocks × column tiles (grid.y is capped at 65535 blocks,
    which a reflowed 2^28-element fp32 tensor or a 2^23-wide row would pass)."""
    def grid(p):
        rows_per_block = ROW_TILE * p.WARPS * tiles_held(dt, p.HELD)
        o = getattr(p, out)
        return (hk.cdiv(o.rows, rows_per_block) * hk.cdiv(o.cols, p.COLS),)
    return grid


def _two_dimensional(*names):
    """requires= entries: the op function passes 2-D views (batch and depth 1)."""
    return [(lambda p, n=n: getattr(p, n).batch * getattr(p, n).depth == 1,
             f"'{n}' must be 2-D [rows, cols]: fold batch and depth into rows")
            for n in names]


def _same_shape(p):
    return p.x.rows == p.o.rows and p.x.cols == p.o.cols


def _checked_names(*names):
    return _two_dimensional(*names) + [(_same_shape, "x and o must have one shape")]


def tiles_held(dt, held: int) -> int:
    """How many tiles a warp of `dt` holds for a route's HELD (counted in 16-bit tiles): the
    same bytes in flight, so a 32-bit type holds half as many (its tile takes twice the
    registers), at least one."""
    return max(1, held * 16 // dt.bits)


def warp_tile_indices(g, cols: int, held: int) -> list:
    """(row tile, column tile) of this warp's `held` 16 x cols tiles of `g` (`flat_grid`'s
    blocks): a block covers WARPS · held row tiles of one column tile, warp w taking rows w,
    w + WARPS, ...: the block's warps read adjacent tiles at each step (one contiguous run of a
    reflowed [n / cols, cols] view, whose one column tile makes the division trivial)."""
    warps, across = hk.arch.num_warps, hk.cdiv(g.cols, cols)
    block = hk.arch.block_idx.x
    first = (block // across) * warps * held + hk.arch.warp_id
    return [(first + i * warps, block % across) for i in range(held)]


def warp_tiles(g, cols: int, held: int) -> list:
    """The tile coordinates of `warp_tile_indices`."""
    return [hk.tile_coord(0, 0, r, c) for r, c in warp_tile_indices(g, cols, held)]


def flat(dt, cols: int):
    """A warp's 16 x cols tile in memory order (docs/language.md, "The flat layout"): a load or
    store of a whole, aligned tile is one 16-byte access per lane, no shuffles."""
    return hk.RT(dt, ROW_TILE, cols, "flat")


def _dtype(name: str):
    return getattr(hk, name)


@functools.lru_cache(maxsize=None)
def binary_kernel(dtype: str):
    """o = OP(x, y) (y OP x with SWAP) for x, y, o of one shape. A row broadcast (a bias) is
    this kernel with y the row expanded down o's rows (row stride 0: every tile re-reads the
    row's columns, from the cache)."""
    dt = _dtype(dtype)

    @hk.kernel(grid=flat_grid(dt), warps="WARPS", name=f"ew_binary_{dtype}",
               requires=_checked_names("x", "y", "o")
               + [(lambda p: p.y.rows == p.o.rows and p.y.cols == p.o.cols,
                   "y and o must have one shape")])
    def binary(x: hk.Tensor[dt], y: hk.Tensor[dt], o: hk.Tensor[dt], *,
               OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
               COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4,
               HELD: hk.Constexpr[int] = 1):
        t, tiles = flat(dt, COLS), warp_tiles(o, COLS, tiles_held(dt, HELD))
        xs = [x[idx].load(t) for idx in tiles]      # every load issued before any math
        ys = [y[idx].load(t) for idx in tiles]
        for idx, a, b in zip(tiles, xs, ys):
            o[idx] = COMBINE[OP](b, a) if SWAP else COMBINE[OP](a, b)

    return binary


@functools.lru_cache(maxsize=None)
def binary_col_kernel(dtype: str):
    """o = OP(x, y) (y OP x with SWAP), y one value per row of o (passed as a [1, rows] view)
    broadcast across the columns. Row-layout tiles: the per-row values are a column vector
    broadcast, which a flat tile does not take."""
    dt = _dtype(dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, p.COLS), hk.cdiv(p.o.rows, ROW_TILE * p.WARPS)),
               warps="WARPS", name=f"ew_binary_col_{dtype}",
               requires=_checked_names("x", "y", "o")
               + [(lambda p: p.y.rows == 1 and p.y.cols == p.o.rows,
                   "y must hold one value per row of o, as a [1, o.rows] view")])
    def binary_col(x: hk.Tensor[dt], y: hk.Tensor[dt], o: hk.Tensor[dt], *,
                   OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
                   COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r = hk.arch.block_idx.y * hk.arch.num_warps + hk.arch.warp_id
        idx = hk.tile_coord(0, 0, r, hk.arch.block_idx.x)
        a = x[idx].load(hk.RT(dt, ROW_TILE, COLS))
        b = y[hk.elem_coord(0, 0, 0, r * ROW_TILE)].load(hk.RV(dt, ROW_TILE, axis="row"))
        o[idx] = COMBINE[OP](b, a) if SWAP else COMBINE[OP](a, b)

    return binary_col


@functools.lru_cache(maxsize=None)
def scalar_kernel(dtype: str):
    """o = OP(x, s) (s OP x with SWAP) for a Python number s, a runtime scalar: float32 math,
    rounded once to o's dtype."""
    dt = _dtype(dtype)

    @hk.kernel(grid=flat_grid(dt), warps="WARPS", name=f"ew_scalar_{dtype}",
               requires=_checked_names("x", "o"))
    def scalar(x: hk.Tensor[dt], s: float, o: hk.Tensor[dt], *,
               OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
               COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4,
               HELD: hk.Constexpr[int] = 1):
        t, tiles = flat(dt, COLS), warp_tiles(o, COLS, tiles_held(dt, HELD))
        xs = [x[idx].load(t) for idx in tiles]
        for idx, a in zip(tiles, xs):
            a = a.to(hk.fp32)
            o[idx] = (COMBINE[OP](s, a) if SWAP else COMBINE[OP](a, s)).to(dt)

    return scalar


@functools.lru_cache(maxsize=None)
def unary_kernel(dtype: str):
    """o = FN(x): float32 math, rounded once to o's dtype."""
    dt = _dtype(dtype)

    @hk.kernel(grid=flat_grid(dt), warps="WARPS", name=f"ew_unary_{dtype}",
               requires=_checked_names("x", "o"))
    def unary(x: hk.Tensor[dt], o: hk.Tensor[dt], *, FN: hk.Constexpr[str] = "relu",
              COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4,
              HELD: hk.Constexpr[int] = 1):
        t, tiles = flat(dt, COLS), warp_tiles(o, COLS, tiles_held(dt, HELD))
        xs = [x[idx].load(t) for idx in tiles]
        for idx, a in zip(tiles, xs):
            o[idx] = APPLY[FN](a.to(hk.fp32)).to(dt)

    return unary


KERNELS = {
    "binary": binary_kernel,
    "binary_col": binary_col_kernel,
    "scalar": scalar_kernel,
    "unary": unary_kernel,
}

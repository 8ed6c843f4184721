"""Elementwise kernels over 2-D [rows, cols] tensors, one factory per shape of call.

Every kernel is made per element type (`binary_kernel("bf16")`), so one body serves bf16, fp16
and fp32; what the kernel computes is a compile-time constant (`OP` / `FN`), so a call never
branches at run time. Each warp owns one 16 x COLS tile of the output; a block is WARPS warps
stacked over rows. Math is float32, rounded once to the output's dtype: what torch computes
for these dtypes (its "opmath"), so results are bit-exact against the references.

The op functions (`ops.py`) view any 1-4-D input as 2-D rows before calling these kernels:
tensors of one shape (`binary`), a tensor and one row broadcast down its rows (`binary_row`:
the row is a `[1, cols]` view), a tensor and one column broadcast across its columns
(`binary_col`: the column is passed as a `[1, rows]` view), a tensor and a Python number
(`scalar`, a runtime scalar: no rebuild per value), and one tensor (`unary`).
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


def _grid(p):
    return hk.cdiv(p.o.cols, p.COLS), hk.cdiv(p.o.rows, ROW_TILE * p.WARPS)


def _two_dimensional(*names):
    """requires= entries: the op function passes 2-D views (batch and depth 1)."""
    return [(lambda p, n=n: getattr(p, n).batch * getattr(p, n).depth == 1,
             f"'{n}' must be 2-D [rows, cols]: fold batch and depth into rows")
            for n in names]


def _same_shape(p):
    return p.x.rows == p.o.rows and p.x.cols == p.o.cols


def _checked_names(*names):
    return _two_dimensional(*names) + [(_same_shape, "x and o must have one shape")]


def _tile_of_warp():
    """(row tile, column tile) of this warp's output tile."""
    row = hk.arch.block_idx.y * hk.arch.num_warps + hk.arch.warp_id
    return row, hk.arch.block_idx.x


def _dtype(name: str):
    return getattr(hk, name)


@functools.lru_cache(maxsize=None)
def binary_kernel(dtype: str):
    """o = OP(x, y) (y OP x with SWAP) for x, y, o of one shape."""
    dt = _dtype(dtype)

    @hk.kernel(grid=_grid, warps="WARPS", name=f"ew_binary_{dtype}",
               requires=_checked_names("x", "y", "o")
               + [(lambda p: p.y.rows == p.o.rows and p.y.cols == p.o.cols,
                   "y and o must have one shape")])
    def binary(x: hk.Tensor[dt], y: hk.Tensor[dt], o: hk.Tensor[dt], *,
               OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
               COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r, c = _tile_of_warp()
        idx = hk.tile_coord(0, 0, r, c)
        t = hk.RT(dt, ROW_TILE, COLS)
        a, b = x[idx].load(t), y[idx].load(t)
        if SWAP:
            a, b = b, a
        o[idx] = COMBINE[OP](a, b)

    return binary


@functools.lru_cache(maxsize=None)
def binary_row_kernel(dtype: str):
    """o = OP(x, y) (y OP x with SWAP), y one row of o.cols values broadcast down the rows."""
    dt = _dtype(dtype)

    @hk.kernel(grid=_grid, warps="WARPS", name=f"ew_binary_row_{dtype}",
               requires=_checked_names("x", "y", "o")
               + [(lambda p: p.y.rows == 1 and p.y.cols == p.o.cols,
                   "y must be one row of o.cols values")])
    def binary_row(x: hk.Tensor[dt], y: hk.Tensor[dt], o: hk.Tensor[dt], *,
                   OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
                   COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r, c = _tile_of_warp()
        idx = hk.tile_coord(0, 0, r, c)
        a = x[idx].load(hk.RT(dt, ROW_TILE, COLS))
        b = y[hk.tile_coord(0, 0, 0, c)].load(hk.RV(dt, COLS, axis="col"))
        o[idx] = COMBINE[OP](b, a) if SWAP else COMBINE[OP](a, b)

    return binary_row


@functools.lru_cache(maxsize=None)
def binary_col_kernel(dtype: str):
    """o = OP(x, y) (y OP x with SWAP), y one value per row of o (passed as a [1, rows] view)
    broadcast across the columns."""
    dt = _dtype(dtype)

    @hk.kernel(grid=_grid, warps="WARPS", name=f"ew_binary_col_{dtype}",
               requires=_checked_names("x", "y", "o")
               + [(lambda p: p.y.rows == 1 and p.y.cols == p.o.rows,
                   "y must hold one value per row of o, as a [1, o.rows] view")])
    def binary_col(x: hk.Tensor[dt], y: hk.Tensor[dt], o: hk.Tensor[dt], *,
                   OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
                   COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r, c = _tile_of_warp()
        idx = hk.tile_coord(0, 0, r, c)
        a = x[idx].load(hk.RT(dt, ROW_TILE, COLS))
        b = y[hk.elem_coord(0, 0, 0, r * ROW_TILE)].load(hk.RV(dt, ROW_TILE, axis="row"))
        o[idx] = COMBINE[OP](b, a) if SWAP else COMBINE[OP](a, b)

    return binary_col


@functools.lru_cache(maxsize=None)
def scalar_kernel(dtype: str):
    """o = OP(x, s) (s OP x with SWAP) for a Python number s, a runtime scalar: float32 math,
    rounded once to o's dtype."""
    dt = _dtype(dtype)

    @hk.kernel(grid=_grid, warps="WARPS", name=f"ew_scalar_{dtype}",
               requires=_checked_names("x", "o"))
    def scalar(x: hk.Tensor[dt], s: float, o: hk.Tensor[dt], *,
               OP: hk.Constexpr[str] = "add", SWAP: hk.Constexpr[bool] = False,
               COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r, c = _tile_of_warp()
        idx = hk.tile_coord(0, 0, r, c)
        a = x[idx].load(hk.RT(dt, ROW_TILE, COLS)).to(hk.fp32)
        o[idx] = (COMBINE[OP](s, a) if SWAP else COMBINE[OP](a, s)).to(dt)

    return scalar


@functools.lru_cache(maxsize=None)
def unary_kernel(dtype: str):
    """o = FN(x): float32 math, rounded once to o's dtype."""
    dt = _dtype(dtype)

    @hk.kernel(grid=_grid, warps="WARPS", name=f"ew_unary_{dtype}",
               requires=_checked_names("x", "o"))
    def unary(x: hk.Tensor[dt], o: hk.Tensor[dt], *, FN: hk.Constexpr[str] = "relu",
              COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        r, c = _tile_of_warp()
        idx = hk.tile_coord(0, 0, r, c)
        a = x[idx].load(hk.RT(dt, ROW_TILE, COLS)).to(hk.fp32)
        o[idx] = APPLY[FN](a).to(dt)

    return unary


KERNELS = {
    "binary": binary_kernel,
    "binary_row": binary_row_kernel,
    "binary_col": binary_col_kernel,
    "scalar": scalar_kernel,
    "unary": unary_kernel,
}

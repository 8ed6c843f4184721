"""`ktile.ops.softmax(x, dim=-1, *, out=None)`: torch.softmax over one axis of a 1-4-D bf16,
fp16 or fp32 tensor, computed in float32 and rounded once to x's dtype.

The kernels reduce along rows (the last axis); another `dim` is moved last (a copy), computed,
and moved back. Rows of a multiple of 16 columns are passed to the row-tile kernels as
[rows * 16, cols // 16] views (row_tile.py), or, for the chunk kernels (chunks.py: every warp
tile one contiguous run of the row), as [rows, cols // C, C]; wide rows with few rows split
across blocks in two phases (float32 partial max and sum per block, folded in order: no
atomics). Other widths take the 16-row kernels (kernels.py). `torch.ops.ktile.softmax` and its
`_out` form."""
from __future__ import annotations

import functools

import torch

from ...errors import InputError
from .. import _library as lib
from . import chunks, config, kernels, row_tile

DTYPES = ("bf16", "fp16", "fp32")
CPU_MULTIPROCESSORS = 2      # the interpreter's stand-in: splits stay few and quick


def _twin(route):
    """The phase-2 route of a split route: its twin kernel at the same constants."""
    return lib.Route(config.SPLIT_TWINS[route.kernel], route.constants, route.max_rows,
                     route.max_cols, route.targets, route.sample)


@functools.lru_cache(maxsize=None)
def _multiprocessors(device) -> int:
    """Multiprocessors of x's GPU; on the CPU (the interpreter) a small stand-in."""
    if device.type != "cuda":
        return CPU_MULTIPROCESSORS
    return torch.cuda.get_device_properties(device).multi_processor_count


def plan(x, target):
    """(route, its kernel, the split twin's kernel or None) for contiguous x's rows on target,
    memoized per shape and dtype (`RoutingTable.plan`)."""
    shape = x.shape
    cols = shape[-1]

    def make():
        route = config.TABLE.choose(x.numel() // cols, cols, target)
        dtype = lib.kt_dtype(x)
        kernel = OP.kernel(route, dtype)
        twin = OP.kernel(_twin(route), dtype) if route.kernel in config.SPLIT_TWINS else None
        return route, kernel, twin
    return config.TABLE.plan(target, (shape, x.dtype), make)


def _launch_row_tile(route, kernel, twin, x, out, rows: int, cols: int) -> None:
    """x (rows of cols) viewed as [rows * 16, cols // 16]: a row of x is one 16-row tile."""
    xv, ov = x.view(rows * config.TILE, cols // config.TILE), out.view(rows * config.TILE, -1)
    if twin is None:
        lib.run(kernel, xv, ov, **route.constants)
        return
    blocks = _multiprocessors(x.device) * config.BLOCKS_PER_SM
    splits = config.split_count(rows, cols, route.constants["C"], blocks)
    m = torch.empty((rows, splits, 1), dtype=torch.float32, device=x.device)
    s = torch.empty_like(m)
    lib.run(kernel, xv, m, s, **route.constants)     # [rows, splits, 1]
    lib.run(twin, xv, m.view(rows, splits), s.view(rows, splits), ov, **route.constants)


def _launch_chunks(route, kernel, twin, x, out, rows: int, cols: int) -> None:
    """x (rows of cols, a multiple of C) viewed as [rows, cols // C, C]: a tile of 16 view rows
    is 16·C contiguous elements of one row (chunks.py)."""
    c = route.constants["C"]
    if cols % c:
        raise InputError(f"softmax: route {route.kernel} takes rows of a multiple of C = {c} "
                         f"columns, got {cols}", hint="take a route with a C that divides the "
                         "row, or the row-tile kernels")
    if twin is None and route.kernel in config.SPLIT_TWINS.values():
        raise InputError(f"softmax: {route.kernel} is the second phase of a split route",
                         hint=f"pin its first phase instead: {route.kernel} runs after it")
    xv, ov = x.view(rows, cols // c, c), out.view(rows, cols // c, c)
    if twin is None:
        lib.run(kernel, xv, ov, **route.constants)
        return
    blocks = _multiprocessors(x.device) * config.BLOCKS_PER_SM
    splits = config.chunk_split_count(rows, cols, c, route.constants["WARPS"], blocks)
    m = torch.empty((rows, splits, 1), dtype=torch.float32, device=x.device)
    s = torch.empty_like(m)
    lib.run(kernel, xv, m, s, **route.constants)     # [rows, splits, 1]
    lib.run(twin, xv, m.view(rows, splits), s.view(rows, splits), ov, **route.constants)


def _launch_rows16(route, kernel, twin, x, out, rows: int, cols: int) -> None:
    """The 16-row kernels (kernels.py): any width."""
    x2, o2 = x.view(rows, cols), out.view(rows, cols)
    if twin is None:
        lib.run(kernel, x2, o2, **route.constants)
        return
    splits = -(-cols // route.constants["BLOCK"])
    m = torch.empty((splits, rows), dtype=torch.float32, device=x.device)
    s = torch.empty_like(m)
    lib.run(kernel, x2, m, s, **route.constants)
    lib.run(twin, x2, m, s, o2, **route.constants)


def launch(x: torch.Tensor, out: torch.Tensor) -> None:
    """Softmax of each row of contiguous x into out (x's shape)."""
    route, kernel, twin = plan(x, lib.target_of(x))
    cols = x.shape[-1]
    launch_as = (_launch_row_tile if route.kernel in row_tile.KERNELS else
                 _launch_chunks if route.kernel in chunks.KERNELS else _launch_rows16)
    launch_as(route, kernel, twin, x, out, x.numel() // cols, cols)


def _last_axis(x, dim: int):
    return x if dim == x.dim() - 1 else x.movedim(dim, -1)


def _softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    xs = _last_axis(x, dim).contiguous()
    out = torch.empty_like(xs)
    launch(xs, out)
    return out if dim == x.dim() - 1 else out.movedim(-1, dim).contiguous()


def _softmax_fake(x, dim):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _softmax_out(x: torch.Tensor, dim: int, out: torch.Tensor) -> None:
    if dim == x.dim() - 1:
        launch(x, out)
    else:
        out.copy_(_softmax(x, dim))


def _none(*args):
    return None


FUNCTIONAL = lib.define("ktile::softmax", _softmax, _softmax_fake)
OUT = lib.define("ktile::softmax_out", _softmax_out, _none, mutates_args=("out",))


def check_dim(op: str, x, dim) -> int:
    """dim as a non-negative axis of x."""
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise InputError(f"{op}: 'dim' must be an int, got {type(dim).__name__}",
                         hint="pass dim=-1 (the last axis)")
    if not -x.dim() <= dim < x.dim():
        raise InputError(f"{op}: 'dim' is {dim}; x has {x.dim()} dimensions, so dim must be in "
                         f"[{-x.dim()}, {x.dim() - 1}]", hint="pass dim=-1 (the last axis)")
    return dim % x.dim()


def softmax(x, dim: int = -1, *, out=None):
    """torch.softmax(x, dim) in float32, rounded to x's dtype; writes `out` when given."""
    lib.check_tensor("softmax", "x", x, DTYPES)
    dim = check_dim("softmax", x, dim)
    if out is None:
        return FUNCTIONAL(x, dim)
    lib.check_out("softmax", out, x)
    OUT(x, dim, out)
    return out


def case(rows: int, cols: int, dtype: str, device: str = "cpu") -> tuple[float, float]:
    """(max error, tolerance) of `softmax` on seeded inputs of rows x cols against the reference."""
    from ... import dtypes
    from .reference import softmax as reference, tolerance
    x = lib.random((rows, cols), 1, dtype, device) * 3
    want = reference(x.float().cpu().numpy(), getattr(dtypes, dtype))
    return lib.max_error(softmax(x), want), tolerance(getattr(dtypes, dtype))


OP = lib.Op("softmax", {"softmax": softmax},
            {**row_tile.KERNELS, **chunks.KERNELS, **kernels.KERNELS}, DTYPES,
            config.TABLE, "ktile.ops.softmax.reference", case=case)
OPS = [OP]

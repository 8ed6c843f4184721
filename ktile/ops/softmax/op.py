"""`ktile.ops.softmax(x, dim=-1, *, out=None)`: torch.softmax over one axis of a 1-4-D bf16,
fp16 or fp32 tensor, computed in float32 and rounded once to x's dtype.

The kernels reduce along rows (the last axis); another `dim` is moved last (a copy), computed,
and moved back. Rows of any width: a wide row with few rows splits across blocks in two phases
(float32 partial max and sum per block, folded in order: no atomics). `torch.ops.ktile.softmax`
and its `_out` form."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from . import config, kernels

DTYPES = ("bf16", "fp16", "fp32")


def _normalize_route(partials):
    """The `softmax_normalize` twin of a split route: the same constants."""
    return lib.Route("softmax_normalize", partials.constants, partials.max_rows,
                     partials.max_cols, partials.targets, partials.sample)


def launch(x: torch.Tensor, out: torch.Tensor) -> None:
    """Softmax of each row of contiguous x into out (x's shape)."""
    rows, o = lib.rows_of(x), lib.rows_of(out)
    route = config.TABLE.choose(rows.shape[0], rows.shape[1], lib.target_of(x))
    dtype = lib.kt_dtype(x)
    if route.kernel != "softmax_partials":
        OP.kernel(route, dtype)(rows, o, **route.constants)
        return
    splits = -(-rows.shape[1] // route.constants["BLOCK"])
    m = torch.empty((splits, rows.shape[0]), dtype=torch.float32, device=x.device)
    s = torch.empty_like(m)
    OP.kernel(route, dtype)(rows, m, s, **route.constants)
    OP.kernel(_normalize_route(route), dtype)(rows, m, s, o, **route.constants)


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


OP = lib.Op("softmax", {"softmax": softmax}, kernels.KERNELS, DTYPES, config.TABLE,
            "ktile.ops.softmax.reference")
OPS = [OP]

"""`ktile.ops.dropout(x, p, seed, *, out=None)`: seeded low-memory dropout (reference.py's
`dropout4`), `torch.ops.ktile.dropout`. Each element of x (1 to 4 dimensions) is kept when
`rand4(seed, its flat index) > p` (one Philox call per four consecutive elements: word i % 4 of
`tl.rand4x(seed, i // 4)`) and scaled by 1 / (1 − p); p and seed are runtime scalars (a new
value is no new trace or build), so a call is replayable in a CUDA graph with its values."""
from __future__ import annotations

import math

import torch

from ...errors import InputError
from .. import _library as lib
from ..elementwise.launch import run_kernel
from .._library import Route, RoutingTable
from . import kernels

NAME = "dropout"
DTYPES = ("bf16", "fp16", "fp32")
# The default first: 16 elements a lane of a 16-bit type (Triton's dropout kernel's share per
# thread; 55 registers on sm_90a with rand4, 16 x 16 tiles 42 and 16 x 64 72, nvcc 13; with one
# Philox call per element they were 48 / - / 87), then narrower and wider tiles for the tuner
# to time (benchmarks/act_variants.py --ops dropout times each).
TABLE = RoutingTable([Route("dropout_seeded", {"COLS": cols, "WARPS": 4, "HELD": 1})
                      for cols in (32, 16, 64)])


def _check_scalars(p, seed) -> tuple[float, int]:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) \
            or not 0 <= p <= 1:
        raise InputError(f"{NAME}: 'p' is {p!r}; it must be a probability, a float in [0, 1]",
                         hint="pass p=0.1 (the share of elements dropped)")
    if isinstance(seed, bool) or not isinstance(seed, int) or not -2 ** 31 <= seed < 2 ** 31:
        raise InputError(f"{NAME}: 'seed' is {seed!r}; it must be an int in [-2^31, 2^31)",
                         hint="pass seed=1234 (reduce a larger seed modulo 2**31)")
    return float(p), seed


def _launch(x, out, p: float, seed: int) -> None:
    """x and out as rows of the route's COLS where both are contiguous and COLS divides their
    size (the flat index of an element, what it draws with, is the same in any row width),
    else as their own rows."""
    target, cols = lib.target_of(x), x.shape[-1] if x.dim() else 1
    route = TABLE.choose(x.numel() // cols, cols, target)
    width = route.constants["COLS"]
    if x.is_contiguous() and out.is_contiguous() and x.numel() % width == 0:
        rows, o = x.view(-1, width), out.view(-1, width)
    else:
        rows, o = lib.rows_of(x), lib.rows_of(out)
    run_kernel(OP.kernel(route, lib.kt_dtype(x)), rows, o, p, seed, target=target,
               **route.constants)


def _dropout(x: torch.Tensor, p: float, seed: int) -> torch.Tensor:
    out = torch.empty_like(x)
    _launch(x, out, p, seed)
    return out


def _dropout_fake(x, p, seed):
    return torch.empty_like(x)


def _dropout_out(x: torch.Tensor, p: float, seed: int, out: torch.Tensor) -> None:
    _launch(x, out, p, seed)


def _dropout_out_fake(x, p, seed, out):
    return None


_FUNCTIONAL = lib.define("ktile::dropout", _dropout, _dropout_fake)
_OUT = lib.define("ktile::dropout_out", _dropout_out, _dropout_out_fake, mutates_args=("out",))


def dropout(x: torch.Tensor, p: float, seed: int, *, out: torch.Tensor | None = None):
    """x with each element dropped with probability p (seeded), the kept ones scaled."""
    lib.check_tensor(NAME, "x", x, DTYPES)
    p, seed = _check_scalars(p, seed)
    if x.numel() >= 2 ** 31:
        raise InputError(f"{NAME}: 'x' holds {x.numel()} elements; an element's index must fit "
                         f"int32", hint="split x into calls of fewer than 2^31 elements")
    if out is None:
        return _FUNCTIONAL(x, p, seed)
    lib.check_out(NAME, out, x)
    _OUT(x, p, seed, out)
    return out


OP = lib.Op(NAME, {"dropout": dropout}, kernels.KERNELS, DTYPES, TABLE,
            "ktile.ops.dropout.reference")
OPS = [OP]

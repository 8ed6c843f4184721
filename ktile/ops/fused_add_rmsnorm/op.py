"""Fused add + RMSNorm, in two forms:

- `ktile.ops.fused_add_rms_norm(x, residual, weight, eps, *, out=None, residual_out=None)`
  returns `(out, residual_out)`: residual_out = x + residual, out = rms_norm(residual_out)
  (`torch.ops.ktile.fused_add_rms_norm`);
- `ktile.ops.fused_add_rms_norm_(x, residual, weight, eps)`, vLLM's engine form: residual
  becomes x + residual and x its norm, both in place; returns None
  (`torch.ops.ktile.fused_add_rms_norm_`, mutating x and residual). For widths that are a
  multiple of 16 the tile kernel runs in place (it declares `in_place`: o may be x, h may be
  residual), with no copy; other widths run the fallback kernel into fresh outputs that are
  then copied back.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from ..rmsnorm.op import check_inputs as check_norm_inputs
from . import config, kernels

NAME = "fused_add_rms_norm"
DTYPES = ("bf16", "fp16", "fp32")


def check_inputs(op: str, x, residual, weight, eps) -> float:
    eps = check_norm_inputs(op, x, weight, eps)
    lib.check_tensor(op, "residual", residual, DTYPES)
    lib.check_like(op, "residual", residual, x, "x")
    if lib.shares_memory(x, residual):
        raise InputError(f"{op}: 'residual' shares memory with 'x'",
                         hint="pass two separate tensors")
    return eps


TILES = "fused_add_rms_norm_tiles"


def _route(rows: int, cols: int, target):
    """The route for rows of cols; a width no route takes is refused saying which widths run."""
    try:
        return config.TABLE.choose(rows, cols, target)
    except InputError:
        if cols % 16 == 0:
            raise
    widest = {m: max(r.max_cols for r in config.ROUTES
                     if r.cols_multiple == m and r.fits(1, r.max_cols, target)) for m in (1, 16)}
    raise InputError(f"{NAME}: no kernel handles rows of {cols} columns on "
                     f"{target or 'the CPU'}: widths that are a multiple of 16 run up to "
                     f"{widest[16]} columns, other widths up to {widest[1]}",
                     hint="file an issue with the shape (docs/ops.md)")


def plan(x):
    """(route, kernel, the tensors' view shape, weight's view shape or None) for contiguous x:
    rows of 16-row tiles for the tile kernel (`lib.row_tiles`), else (rows, cols) views.
    Memoized per shape, dtype and target (`RoutingTable.plan`)."""
    shape, target = x.shape, lib.target_of(x)
    cols = shape[-1]

    def make():
        route = _route(x.numel() // cols, cols, target)
        kernel = OP.kernel(route, lib.kt_dtype(x))
        if route.kernel == TILES:
            return route, kernel, (-1, cols // 16), (-1, cols // 16)
        return route, kernel, (-1, cols), None
    return config.TABLE.plan(target, (shape, x.dtype), make)


def route_of(x):
    """The route for x's rows (`plan`)."""
    return plan(x)[0]


def launch(x, residual, weight, out, residual_out, eps: float) -> None:
    """Run the routed kernel on the `plan` views of the tensors; `out` may be x and
    `residual_out` residual for the tile kernel (declared in place)."""
    route, kernel, rows, weights = plan(x)
    if weights is not None:
        weight = weight.view(weights)
    lib.run(kernel, x.view(rows), residual.view(rows), weight, out.view(rows),
            residual_out.view(rows), eps, **route.constants)


def _functional(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    out, residual_out = torch.empty_like(x), torch.empty_like(x)
    launch(x, residual, weight, out, residual_out, eps)
    return out, residual_out


def _functional_fake(x, residual, weight, eps):
    return torch.empty_like(x), torch.empty_like(x)


def _out(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float,
         out: torch.Tensor, residual_out: torch.Tensor) -> None:
    launch(x, residual, weight, out, residual_out, eps)


def _in_place(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float) -> None:
    if route_of(x).kernel == TILES:
        launch(x, residual, weight, x, residual, eps)
        return
    out, residual_out = _functional(x, residual, weight, eps)
    residual.copy_(residual_out)
    x.copy_(out)


def _nothing(*args):
    return None


_FUNCTIONAL = lib.define("ktile::fused_add_rms_norm", _functional, _functional_fake)
_OUT = lib.define("ktile::fused_add_rms_norm_out", _out, _nothing,
                  mutates_args=("out", "residual_out"))
_IN_PLACE = lib.define("ktile::fused_add_rms_norm_", _in_place, _nothing,
                       mutates_args=("x", "residual"))


def fused_add_rms_norm(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                       eps: float = 1e-6, *, out: torch.Tensor | None = None,
                       residual_out: torch.Tensor | None = None):
    """(out, residual_out): residual_out = x + residual, out = its RMSNorm times weight. Give
    both `out` and `residual_out` to write into them, or neither."""
    eps = check_inputs(NAME, x, residual, weight, eps)
    if (out is None) != (residual_out is None):
        raise InputError(f"{NAME}: give both 'out' and 'residual_out', or neither",
                         hint="out=torch.empty_like(x), residual_out=torch.empty_like(x)")
    if out is None:
        return _FUNCTIONAL(x, residual, weight, eps)
    for param, t in (("out", out), ("residual_out", residual_out)):
        lib.check_out(NAME, t, x, "x", param)
        lib.check_out(NAME, t, residual, "residual", param)
    if lib.shares_memory(out, residual_out):
        raise InputError(f"{NAME}: 'out' and 'residual_out' share memory",
                         hint="pass two separate tensors")
    _OUT(x, residual, weight, eps, out, residual_out)
    return out, residual_out


def fused_add_rms_norm_(x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                        eps: float = 1e-6) -> None:
    """vLLM's in-place form: residual ← x + residual, x ← RMSNorm(residual) · weight."""
    eps = check_inputs(NAME + "_", x, residual, weight, eps)
    _IN_PLACE(x, residual, weight, eps)


def case(rows: int, cols: int, dtype: str, device: str = "cpu") -> tuple[float, float]:
    """The larger of out's and residual_out's errors (residual_out must be exact)."""
    from ... import dtypes
    from .reference import fused_add_rms_norm as reference, tolerance
    x, r = (lib.random((rows, cols), s, dtype, device) for s in (1, 2))
    w = lib.random((cols,), 3, dtype, device)
    want_o, want_h = reference(*(t.float().cpu().numpy() for t in (x, r, w)), 1e-6,
                               getattr(dtypes, dtype))
    out, residual_out = fused_add_rms_norm(x, r, w, 1e-6)
    h_error = lib.max_error(residual_out, want_h)
    return lib.max_error(out, want_o) + (float("inf") if h_error else 0.0), tolerance(want_o)


OP = lib.Op(NAME, {"fused_add_rms_norm": fused_add_rms_norm,
                   "fused_add_rms_norm_": fused_add_rms_norm_},
            kernels.KERNELS, DTYPES, config.TABLE, "ktile.ops.fused_add_rmsnorm.reference", case=case)
OPS = [OP]

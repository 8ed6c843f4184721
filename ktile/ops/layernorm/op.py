"""LayerNorm:

- `ktile.ops.layer_norm(x, weight, bias, eps, *, out=None)`: torch's `F.layer_norm` over the
  last axis (`torch.ops.ktile.layer_norm`), x of 1 to 4 dimensions, weight and bias 1-D;
- `ktile.ops.layer_norm_backward(dy, x, weight, mean, rstd)` → `(dx, dweight, dbias)`, as
  aten's `native_layer_norm_backward` (mean and rstd: fp32, one per row of x, e.g. from
  `torch.ops.aten.native_layer_norm`); `torch.ops.ktile.layer_norm_backward`.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from . import backward_direct, config, kernels
from ..rmsnorm.tiles import inv_cols
from .row_tiles import row_view

DTYPES = ("bf16", "fp16", "fp32")


def check_inputs(op: str, x, weight, bias, eps) -> float:
    lib.check_tensor(op, "x", x, DTYPES)
    for param, t in (("weight", weight), ("bias", bias)):
        lib.check_tensor(op, param, t, DTYPES)
        lib.check_last_dim(op, param, t, x.shape[-1], "x")
        lib.check_same_device(op, {"x": x, param: t})
        if t.dtype != x.dtype:
            raise InputError(f"{op}: '{param}' holds {lib.dtype_name(t)}, 'x' "
                             f"{lib.dtype_name(x)}; they must be equal",
                             hint=f"convert it: {param}.to(x.dtype)")
    return lib.check_eps(op, eps)


def launch(x, weight, bias, out, eps: float) -> None:
    shape, target = x.shape, lib.target_of(x)
    cols = shape[-1]

    def make():
        route = config.forward_route(x.numel() // cols, cols, target)
        # the row-tile kernel reads a row as a 16 x cols/16 block (`row_view`) and takes
        # 1 / cols computed here, not on its serial chain (`inv_cols`); the vector kernel a row
        tiled = isinstance(route, config.RowTileRoute)
        return FORWARD_OP.kernel(route, lib.kt_dtype(x)), route.constants, \
            (-1, cols // 16) if tiled else (-1, cols), (inv_cols(cols),) if tiled else ()
    kernel, constants, rows, more = config.FORWARD.plan(target, (shape, x.dtype), make)
    lib.run(kernel, x.view(rows), weight.view(rows), bias.view(rows), out.view(rows), eps,
            *more, **constants)


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor,
                eps: float) -> torch.Tensor:
    out = torch.empty_like(x)
    launch(x, weight, bias, out, eps)
    return out


def _layer_norm_fake(x, weight, bias, eps):
    return torch.empty_like(x)


def _layer_norm_out(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float,
                    out: torch.Tensor) -> None:
    launch(x, weight, bias, out, eps)


def _nothing(*args):
    return None


_FUNCTIONAL = lib.define("ktile::layer_norm", _layer_norm, _layer_norm_fake)
_OUT = lib.define("ktile::layer_norm_out", _layer_norm_out, _nothing, mutates_args=("out",))


def layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5, *,
               out: torch.Tensor | None = None) -> torch.Tensor:
    """torch's layer_norm over x's last axis; writes `out` when given and returns it."""
    eps = check_inputs("layer_norm", x, weight, bias, eps)
    if out is None:
        return _FUNCTIONAL(x, weight, bias, eps)
    lib.check_out("layer_norm", out, x)
    _OUT(x, weight, bias, eps, out)
    return out


# ---- backward ----------------------------------------------------------------------------

def check_backward(op: str, dy, x, weight, mean, rstd) -> None:
    lib.check_tensor(op, "x", x, DTYPES)
    lib.check_tensor(op, "dy", dy, DTYPES)
    lib.check_like(op, "dy", dy, x, "x")
    lib.check_tensor(op, "weight", weight, DTYPES)
    lib.check_last_dim(op, "weight", weight, x.shape[-1], "x")
    if weight.dtype != x.dtype:
        raise InputError(f"{op}: 'weight' holds {lib.dtype_name(weight)}, 'x' "
                         f"{lib.dtype_name(x)}; they must be equal",
                         hint="convert it: weight.to(x.dtype)")
    rows = x.numel() // x.shape[-1]
    for param, t in (("mean", mean), ("rstd", rstd)):
        lib.check_tensor(op, param, t, ("fp32",))
        if t.numel() != rows:
            raise InputError(f"{op}: '{param}' holds {t.numel()} values; it must hold one per "
                             f"row of 'x', {rows}",
                             hint="pass the mean and rstd of x's forward "
                                  "(torch.ops.aten.native_layer_norm returns them)")
        lib.check_same_device(op, {"x": x, param: t})
    lib.check_same_device(op, {"x": x, "weight": weight})


def _backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, mean: torch.Tensor,
              rstd: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    rows, cols = lib.rows_of(x).shape
    dtype = lib.kt_dtype(x)
    route = config.BACKWARD.choose(rows, cols, lib.target_of(x))
    if route.kernel in backward_direct.KERNELS and dtype == "fp32" \
            and cols > config.BACKWARD_DIRECT_FP32_COLS:
        # the one-launch form spills in fp32 past these widths (sm_90a, nvcc 13): two passes
        route = config.BACKWARD.choose(config.BACKWARD_DIRECT_ROWS + 1, cols, lib.target_of(x))
    if route.kernel in backward_direct.KERNELS:      # a few rows: one launch, no partials
        dx, dweight, dbias = torch.empty_like(x), torch.empty_like(weight), torch.empty_like(weight)
        lib.run(BACKWARD_OP.kernel(route, dtype), *(row_view(t) for t in (dy, x, weight)),
                mean.reshape(-1), rstd.reshape(-1),
                *(row_view(t) for t in (dx, dweight, dbias)), **route.constants)
        return dx, dweight, dbias
    tiled = isinstance(route, config.RowTileRoute)
    # partial sums: one per part of the rows (row tiles), else one per 16-row block
    parts = config.parts(rows) if tiled else -(-rows // 16)
    dx = torch.empty_like(x)
    dw_part = torch.empty((parts, cols), dtype=torch.float32, device=x.device)
    db_part = torch.empty_like(dw_part)
    dweight, dbias = torch.empty_like(weight), torch.empty_like(weight)
    view = row_view if tiled else lib.rows_of
    lib.run(BACKWARD_OP.kernel(route, dtype), view(dy), view(x), view(weight),
            mean.reshape(-1), rstd.reshape(-1), view(dx), view(dw_part), view(db_part),
            **route.constants)
    lib.run(BACKWARD_OP.kernel(config.REDUCTION, dtype), dw_part, db_part, dweight, dbias,
            **config.REDUCTION.constants)
    return dx, dweight, dbias


def _backward_fake(dy, x, weight, mean, rstd):
    return torch.empty_like(x), torch.empty_like(weight), torch.empty_like(weight)


_BACKWARD = lib.define("ktile::layer_norm_backward", _backward, _backward_fake)


def layer_norm_backward(dy: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                        mean: torch.Tensor, rstd: torch.Tensor):
    """(dx, dweight, dbias) of layer_norm(x, weight, bias) for the output gradient dy, from the
    forward's per-row mean and rstd (fp32)."""
    check_backward("layer_norm_backward", dy, x, weight, mean, rstd)
    return _BACKWARD(dy, x, weight, mean, rstd)


def forward_case(rows: int, cols: int, dtype: str, device: str = "cpu"):
    from ... import dtypes
    from .reference import forward_tolerance, layer_norm as reference
    x = lib.random((rows, cols), 1, dtype, device, shift=2.0)
    w, b = (lib.random((cols,), s, dtype, device) for s in (2, 3))
    want = reference(*(t.float().cpu().numpy() for t in (x, w, b)), 1e-5, getattr(dtypes, dtype))
    return (lib.max_error(layer_norm(x, w, b, 1e-5), want),
            forward_tolerance(want, getattr(dtypes, dtype)))


def backward_case(rows: int, cols: int, dtype: str, device: str = "cpu"):
    """The largest error of dx, dweight and dbias; tolerance: the reference's, plus one
    rounding of each result for 16-bit dtypes."""
    from .reference import layernorm_backward, tolerance
    x, dy = (lib.random((rows, cols), s, dtype, device) for s in (1, 2))
    w = lib.random((cols,), 3, dtype, device)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x.float(), (cols,), w.float(), None, 1e-5)
    got = layer_norm_backward(dy, x, w, mean, rstd)
    want = layernorm_backward(x.float().cpu().numpy(), dy.float().cpu().numpy(),
                              w.float().cpu().numpy(), mean.reshape(-1).cpu().numpy(),
                              rstd.reshape(-1).cpu().numpy())
    slack = 2.0 ** -7 if x.element_size() == 2 else 0.0
    worst = max(lib.max_error(g, e) - slack * float(abs(e).max()) for g, e in zip(got, want))
    return max(worst, 0.0), tolerance(*want)


FORWARD_OP = lib.Op("layer_norm", {"layer_norm": layer_norm}, kernels.KERNELS, DTYPES,
                    config.FORWARD, "ktile.ops.layernorm.reference", case=forward_case)
BACKWARD_OP = lib.Op("layer_norm_backward", {"layer_norm_backward": layer_norm_backward},
                     {**kernels.BACKWARD_KERNELS, **backward_direct.KERNELS}, DTYPES,
                     config.BACKWARD,
                     "ktile.ops.layernorm.reference", also=(config.REDUCTION,),
                     case=backward_case)
OPS = [FORWARD_OP, BACKWARD_OP]

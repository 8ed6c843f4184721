"""`ktile.ops.rms_norm(x, weight, eps, *, out=None)`: torch semantics, `torch.ops.ktile.rms_norm`.

y = (x · rsqrt(mean(x², last axis) + eps)) rounded to x's dtype, times weight, rounded again
(vLLM's RMSNorm and transformers' LlamaRMSNorm). x has 1 to 4 dimensions; weight is 1-D with
x.shape[-1] values of x's dtype.
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from . import config, kernels, tiles

NAME = "rms_norm"
DTYPES = ("bf16", "fp16", "fp32")


def check_inputs(op: str, x, weight, eps) -> float:
    lib.check_tensor(op, "x", x, DTYPES)
    lib.check_tensor(op, "weight", weight, DTYPES)
    lib.check_last_dim(op, "weight", weight, x.shape[-1], "x")
    lib.check_same_device(op, {"x": x, "weight": weight})
    if weight.dtype != x.dtype:
        raise InputError(f"{op}: 'weight' holds {lib.dtype_name(weight)}, 'x' "
                             f"{lib.dtype_name(x)}; they must be equal",
                             hint="convert it: weight.to(x.dtype)")
    return lib.check_eps(op, eps)


def plan(x: torch.Tensor, target):
    """(kernel, constants, x's view shape, weight's view shape or None) for contiguous x:
    x, weight and out as rows of 16-row tiles for the tile kernel (`lib.row_tiles`), else x
    and out as (rows, cols) views. Memoized per shape, dtype and target (`RoutingTable.plan`)."""
    shape = x.shape
    cols = shape[-1]
    rows = x.numel() // cols

    def make():
        route = config.TABLE.choose(rows, cols, target)
        kernel = OP.kernel(route, lib.kt_dtype(x))
        if route.kernel == "rms_norm_tiles":
            return kernel, route.constants, (-1, cols // 16), (-1, cols // 16)
        return kernel, route.constants, (-1, cols), None
    return config.TABLE.plan(target, (shape, x.dtype), make)


def launch(x: torch.Tensor, weight: torch.Tensor, out: torch.Tensor, eps: float) -> None:
    """Run the routed kernel on x (contiguous), weight and out (x's shape) as `plan` views."""
    kernel, constants, rows, weights = plan(x, lib.target_of(x))
    if weights is None:
        lib.run(kernel, x.view(rows), weight, out.view(rows), eps, **constants)
    else:   # the tile kernel: 1 / cols computed here, not on its serial chain
        lib.run(kernel, x.view(rows), weight.view(weights), out.view(rows), eps,
                tiles.inv_cols(x.shape[-1]), **constants)


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    out = torch.empty_like(x)
    launch(x, weight, out, eps)
    return out


def _rms_norm_fake(x, weight, eps):
    return torch.empty_like(x)


def _rms_norm_out(x: torch.Tensor, weight: torch.Tensor, eps: float, out: torch.Tensor) -> None:
    launch(x, weight, out, eps)


def _rms_norm_out_fake(x, weight, eps, out):
    return None


_FUNCTIONAL = lib.define("ktile::rms_norm", _rms_norm, _rms_norm_fake)
_OUT = lib.define("ktile::rms_norm_out", _rms_norm_out, _rms_norm_out_fake, mutates_args=("out",))


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6, *,
             out: torch.Tensor | None = None) -> torch.Tensor:
    """RMSNorm over x's last axis; writes `out` when given (x's shape, dtype, device) and
    returns it, else returns a new tensor."""
    eps = check_inputs(NAME, x, weight, eps)
    if out is None:
        return _FUNCTIONAL(x, weight, eps)
    lib.check_out(NAME, out, x)
    _OUT(x, weight, eps, out)
    return out


def case(rows: int, cols: int, dtype: str, device: str = "cpu") -> tuple[float, float]:
    from ... import dtypes
    from .reference import rms_norm as reference, tolerance
    x, w = lib.random((rows, cols), 1, dtype, device), lib.random((cols,), 2, dtype, device)
    want = reference(x.float().cpu().numpy(), w.float().cpu().numpy(), 1e-5,
                     getattr(dtypes, dtype))
    return lib.max_error(rms_norm(x, w, 1e-5), want), tolerance(want)


OP = lib.Op(NAME, {"rms_norm": rms_norm}, kernels.KERNELS, DTYPES, config.TABLE,
            "ktile.ops.rmsnorm.reference", case=case)
OPS = [OP]

"""`ktile.ops.silu_and_mul(x, *, out=None)` and `ktile.ops.gelu_and_mul(x, approximate="none",
*, out=None)`: x of [..., 2d] (1 to 4 dimensions), out of [..., d] = act(x[..., :d]) ·
x[..., d:], x's dtype (vLLM's SiluAndMul / GeluAndMul). `torch.ops.ktile.act_and_mul` and its
`_out` form."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from ..elementwise.launch import run_kernel
from . import config, kernels

DTYPES = ("bf16", "fp16", "fp32")
ACTS = ("silu", "gelu", "gelu_tanh")


def out_shape(x) -> tuple[int, ...]:
    return tuple(x.shape[:-1]) + (x.shape[-1] // 2,)


def views(route, x: torch.Tensor, out: torch.Tensor):
    """(kernel name, x's view, out's view) of a call on `route`; a route that does not fit d
    (a pinned one) gives way to `act_and_mul`, which takes any d."""
    d = out.shape[-1]
    if d % route.cols_multiple:
        return "act_and_mul", lib.rows_of(x), lib.rows_of(out)
    if route.kernel == "act_and_mul_flat":
        return route.kernel, *kernels.flat_tokens(x, out, route.constants["COLS"])
    if route.kernel == "act_and_mul_tokens":
        return route.kernel, *kernels.token_bands(x, out)
    return route.kernel, lib.rows_of(x), lib.rows_of(out)


def launch(x: torch.Tensor, out: torch.Tensor, act: str) -> None:
    d, target = out.shape[-1], lib.target_of(x)
    route = config.TABLE.choose(lib.rows_of(out).shape[0], d, target)   # a pinned one included
    name, rows, o = views(route, x, out)
    constants = route.constants if name == route.kernel else config.FLAT
    kernel = kernels.KERNELS[name](lib.kt_dtype(x))
    run_kernel(kernel, rows, o, target=target, **{**constants, "ACT": act})


def _act_and_mul(x: torch.Tensor, act: str) -> torch.Tensor:
    out = torch.empty(out_shape(x), dtype=x.dtype, device=x.device)
    launch(x, out, act)
    return out


def _act_and_mul_fake(x, act):
    return torch.empty(out_shape(x), dtype=x.dtype, device=x.device)


def _act_and_mul_out(x: torch.Tensor, act: str, out: torch.Tensor) -> None:
    launch(x, out, act)


def _none(*args):
    return None


FUNCTIONAL = lib.define("ktile::act_and_mul", _act_and_mul, _act_and_mul_fake)
OUT = lib.define("ktile::act_and_mul_out", _act_and_mul_out, _none, mutates_args=("out",))


def _check_x(op: str, x) -> None:
    lib.check_tensor(op, "x", x, DTYPES)
    if x.shape[-1] % 2:
        raise InputError(f"{op}: 'x' has {x.shape[-1]} columns; it must hold gate and up side "
                         f"by side, an even count [..., 2d]",
                         hint="pass the fused gate_up projection's output, [..., 2 * d]")


def _check_out(op: str, x, out) -> None:
    want = out_shape(x)
    if not isinstance(out, torch.Tensor):
        raise InputError(f"{op}: 'out' must be a torch.Tensor, got {type(out).__name__}",
                         hint="leave out= out, or pass a tensor of x.shape[:-1] + (d,)")
    if tuple(out.shape) != want or out.dtype != x.dtype or out.device != x.device:
        raise InputError(f"{op}: 'out' is {lib.dtype_name(out)} of shape {tuple(out.shape)} "
                         f"on {out.device}; it must be {lib.dtype_name(x)} of shape {want} on "
                         f"{x.device}",
                         hint=f"pass out=torch.empty({want}, dtype=x.dtype, device=x.device)")
    if not out.is_contiguous():
        raise InputError(f"{op}: 'out' is not contiguous (strides {out.stride()})",
                         hint=f"pass out=torch.empty({want}, dtype=x.dtype, device=x.device)")
    if lib.shares_memory(out, x):
        raise InputError(f"{op}: 'out' shares memory with 'x'; the kernel's blocks read x "
                         f"while others write out",
                         hint="pass a separate out, or leave it out")


def _call(op: str, act: str, x, out):
    _check_x(op, x)
    if out is None:
        return FUNCTIONAL(x, act)
    _check_out(op, x, out)
    OUT(x, act, out)
    return out


def silu_and_mul(x, *, out=None):
    """silu(x[..., :d]) · x[..., d:]."""
    return _call("silu_and_mul", "silu", x, out)


def gelu_and_mul(x, approximate: str = "none", *, out=None):
    """gelu(x[..., :d], approximate) · x[..., d:]; approximate "none" (erf) or "tanh"."""
    if approximate not in ("none", "tanh"):
        raise InputError(f"gelu_and_mul: approximate={approximate!r}; it must be 'none' (erf) "
                         f"or 'tanh'", hint="pass approximate='none' or approximate='tanh'")
    return _call("gelu_and_mul", "gelu" if approximate == "none" else "gelu_tanh", x, out)


OP = lib.Op("act_and_mul", {"silu_and_mul": silu_and_mul, "gelu_and_mul": gelu_and_mul},
            kernels.KERNELS, DTYPES, config.TABLE, "ktile.ops.activations.reference")
OPS = [OP]

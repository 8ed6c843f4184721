"""The elementwise ops, with torch semantics: `ktile.ops.add(x, y, *, out=None)`, `sub`, `mul`,
`maximum`, `minimum` (a tensor and a tensor or a Python number, either side), and `exp`,
`relu`, `gelu(x, approximate="none"|"tanh")`, `silu`, `neg`, `abs`.

Results match torch: the result dtype is torch's (`torch.result_type`; a Python number keeps
the tensor's dtype), math is float32 rounded once to it. Two tensors broadcast as torch
broadcasts when one of them is the result's shape and the other is one row of it (shape
(..., cols) with leading 1s: a bias) or one value per row (the result's shape with a last
extent of 1: a per-token scale); other broadcasts are refused with the fix. A Python number is
a runtime scalar: one build serves every value.

Each is a `torch.library` op (`torch.ops.ktile.elementwise_binary` and its `_out`, `_scalar`,
`_unary` kin), so torch.compile(fullgraph=True) and CUDA graphs trace through them.
"""
from __future__ import annotations

import math

import torch

from ...errors import InputError
from .. import _library as lib
from . import config, kernels
from .launch import run_kernel

DTYPES = ("bf16", "fp16", "fp32")


# ---- the shape of a binary call -----------------------------------------------------------

def _padded(shape, rank: int) -> tuple[int, ...]:
    return (1,) * (rank - len(shape)) + tuple(shape)


def broadcast_form(op: str, big_shape, small_shape, big: str, small: str) -> str:
    """'same', 'row' or 'col': how `small` meets `big` (whose shape is the result's)."""
    big_shape, small_shape = tuple(big_shape), tuple(small_shape)
    if big_shape == small_shape:
        return "same"
    padded = _padded(small_shape, len(big_shape))
    if all(n == 1 for n in padded[:-1]) and padded[-1] in (1, big_shape[-1]):
        return "row"
    if padded[-1] == 1 and padded[:-1] == big_shape[:-1]:
        return "col"
    raise InputError(
        f"{op}: '{small}' of shape {small_shape} broadcasts against '{big}' of shape "
        f"{big_shape} in a way ktile's kernels do not cover: only one row (shape (..., "
        f"{big_shape[-1]}) with leading 1s) or one value per row (shape {big_shape[:-1] + (1,)})",
        hint=f"expand it first: {small}.expand({big_shape}).contiguous()")


def broadcast_shape(a: tuple, b: tuple) -> tuple[int, ...] | None:
    """torch's broadcast of two shapes (None: they do not broadcast), in plain Python: torch's
    own (`torch.broadcast_shapes`) costs tens of microseconds a call."""
    if a == b:
        return tuple(a)
    rank = max(len(a), len(b))
    shape = []
    for m, n in zip(_padded(a, rank), _padded(b, rank)):
        if m != n and m != 1 and n != 1:
            return None
        shape.append(n if m == 1 else m)
    return tuple(shape)


def result_shape(op: str, x, y) -> tuple[int, ...]:
    shape = broadcast_shape(x.shape, y.shape)
    if shape is None:
        raise InputError(f"{op}: shapes {tuple(x.shape)} ('x') and {tuple(y.shape)} ('y') do "
                         f"not broadcast", hint="pass tensors of one shape, or a row or column "
                                                "of the other's")
    return shape


_SHAPE_PLANS: dict = {}      # (x's shape, y's shape) -> plan_shapes(...), a covered broadcast
_SHAPE_PLAN_LIMIT = 4096


def plan_shapes(op: str, x, y) -> tuple[tuple[int, ...], str, bool]:
    """(the result's shape, form, swap) of a binary call on tensors x and y: how the small
    operand meets the big one (of the result's shape; see `broadcast_form`) and whether the
    small one is the left operand. Memoized per pair of shapes; an uncovered broadcast raises
    (each call: refusals are not memoized)."""
    key = (x.shape, y.shape)
    found = None if torch.compiler.is_compiling() else _SHAPE_PLANS.get(key)
    if found is None:
        shape = result_shape(op, x, y)
        if tuple(x.shape) == shape:
            found = shape, broadcast_form(op, shape, y.shape, "x", "y"), False
        elif tuple(y.shape) == shape:
            found = shape, broadcast_form(op, shape, x.shape, "y", "x"), True
        else:
            raise InputError(
                f"{op}: 'x' of shape {tuple(x.shape)} and 'y' of shape {tuple(y.shape)} "
                f"broadcast each other (to {shape}); ktile's kernels broadcast one operand "
                f"against the other's shape only",
                hint="expand one first: x.expand(shape).contiguous()")
        if torch.compiler.is_compiling():     # symbolic shapes: no memo
            return found
        if len(_SHAPE_PLANS) >= _SHAPE_PLAN_LIMIT:
            _SHAPE_PLANS.clear()
        _SHAPE_PLANS[key] = found
    return found


def _plan(op: str, x, y):
    """(big, small, form, swap): the tensor of the result's shape, the other, how they meet,
    and whether the small one is the left operand."""
    _, form, swap = plan_shapes(op, x, y)
    return (y, x, form, True) if swap else (x, y, form, False)


# ---- launching ----------------------------------------------------------------------------

def as_rows(t):
    """t as a 2-D view: a contiguous t as rows of config.REFLOW where that divides its size
    (elementwise math does not care where rows end; each 16-row flat tile is then one
    contiguous run of memory), else its own rows."""
    if t.is_contiguous() and t.numel() % config.REFLOW == 0:
        return t.view(-1, config.REFLOW)
    return lib.rows_of(t)


def _run(kernel_name: str, rows_shape, *args, **identity) -> None:
    rows, cols = rows_shape
    target = lib.target_of(args[0])
    dtype = args[0].dtype

    def make():
        route = config.choose(kernel_name, rows, cols, target)
        return kernels.KERNELS[kernel_name](lib.kt_dtype(args[0])), route.constants
    kernel, constants = config.TABLE.plan(target, (kernel_name, rows, cols, dtype), make)
    run_kernel(kernel, *args, target=target, **constants, **identity)


def launch_binary(x, y, out, op: str) -> None:
    """out = op(x, y); x, y already of out's dtype; out contiguous and of the result's shape."""
    big, small, form, swap = _plan(op, x, y)
    big, small = big.contiguous(), small.contiguous()
    if form == "same":
        o = as_rows(out)
        _run("binary", o.shape, big.view(o.shape), small.view(o.shape), o,
             OP=op, SWAP=swap)
        return
    o = lib.rows_of(out)
    if form == "row":
        # the row read as a tensor of o's shape whose rows all lie at one address (row stride
        # 0): the same-shape kernel's flat tiles, no vector broadcast
        row = small.reshape(-1).expand(o.shape[1]).contiguous().view(1, -1)
        _run("binary", o.shape, big.view(o.shape), row.expand(o.shape), o, OP=op, SWAP=swap)
        return
    _run("binary_col", o.shape, big.view(o.shape), small.reshape(1, -1), o, OP=op, SWAP=swap)


def launch_scalar(x, s: float, out, op: str, swap: bool) -> None:
    o = as_rows(out)
    _run("scalar", o.shape, x.contiguous().view(o.shape), s, o, OP=op, SWAP=swap)


def launch_unary(x, out, fn: str) -> None:
    o = as_rows(out)
    _run("unary", o.shape, x.contiguous().view(o.shape), o, FN=fn)


def _span(t) -> tuple[int, int]:
    """The bytes [first, last) a non-empty tensor's elements lie in."""
    reach = sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1
    return t.data_ptr(), t.data_ptr() + reach * t.element_size()


def meets(a, b) -> bool:
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def write_out(out, inputs, launch) -> None:
    """`launch(target)` into out, through a scratch tensor copied back when out shares memory
    with an input: torch allows `add(a, b, out=a)`, but a kernel's blocks must not read what
    others already wrote (docs/runtime.md, "Aliasing and in-place")."""
    if not any(meets(out, t) for t in inputs if isinstance(t, torch.Tensor)):
        launch(out)
        return
    scratch = torch.empty_like(out)
    launch(scratch)
    out.copy_(scratch)


# ---- the torch.library ops ----------------------------------------------------------------

def _promoted(x, y):
    if x.dtype == y.dtype:          # tensors of one dtype: torch's result is that dtype
        return x, y
    dtype = torch.result_type(x, y)
    return x.to(dtype), y.to(dtype)


def _binary(x: torch.Tensor, y: torch.Tensor, op: str) -> torch.Tensor:
    x, y = _promoted(x, y)
    out = torch.empty(plan_shapes(op, x, y)[0], dtype=x.dtype, device=x.device)
    launch_binary(x, y, out, op)
    return out


def _binary_fake(x, y, op):
    return torch.empty(torch.broadcast_shapes(x.shape, y.shape),
                       dtype=torch.result_type(x, y), device=x.device)


def _binary_out(x: torch.Tensor, y: torch.Tensor, op: str, out: torch.Tensor) -> None:
    x, y = _promoted(x, y)
    write_out(out, (x, y), lambda o: launch_binary(x, y, o, op))


def _scalar(x: torch.Tensor, s: float, op: str, swap: bool) -> torch.Tensor:
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    launch_scalar(x, s, out, op, swap)
    return out


def _scalar_fake(x, s, op, swap):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _scalar_out(x: torch.Tensor, s: float, op: str, swap: bool, out: torch.Tensor) -> None:
    write_out(out, (x,), lambda o: launch_scalar(x, s, o, op, swap))


def _unary(x: torch.Tensor, fn: str) -> torch.Tensor:
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    launch_unary(x, out, fn)
    return out


def _unary_fake(x, fn):
    return torch.empty_like(x, memory_format=torch.contiguous_format)


def _unary_out(x: torch.Tensor, fn: str, out: torch.Tensor) -> None:
    write_out(out, (x,), lambda o: launch_unary(x, o, fn))


def _none(*args):
    return None


BINARY = lib.define("ktile::elementwise_binary", _binary, _binary_fake)
BINARY_OUT = lib.define("ktile::elementwise_binary_out", _binary_out, _none,
                        mutates_args=("out",))
SCALAR = lib.define("ktile::elementwise_scalar", _scalar, _scalar_fake)
SCALAR_OUT = lib.define("ktile::elementwise_scalar_out", _scalar_out, _none,
                        mutates_args=("out",))
UNARY = lib.define("ktile::elementwise_unary", _unary, _unary_fake)
UNARY_OUT = lib.define("ktile::elementwise_unary_out", _unary_out, _none, mutates_args=("out",))


# ---- the public functions -----------------------------------------------------------------

def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _check_number(op: str, param: str, v) -> float:
    """A Python number as a float32 runtime scalar: finite or ±inf/nan, within f32's range."""
    v = float(v)
    if math.isfinite(v) and math.fabs(v) > 3.4028234663852886e38:
        raise InputError(f"{op}: '{param}' is {v}, beyond float32's range; the kernel computes "
                         f"in float32", hint=f"pass a number within ±3.4e38 (or inf)")
    return v


def _check_operand(op: str, param: str, v) -> None:
    if isinstance(v, bool) or not isinstance(v, torch.Tensor):
        raise InputError(f"{op}: '{param}' must be a torch.Tensor or a Python number, got "
                         f"{type(v).__name__}", hint=f"pass torch.as_tensor({param})")
    lib.check_tensor(op, param, v, DTYPES)


def _check_out(op: str, out, shape, dtype, device) -> None:
    if not isinstance(out, torch.Tensor):
        raise InputError(f"{op}: 'out' must be a torch.Tensor, got {type(out).__name__}",
                         hint="pass out=torch.empty_like(x), or leave it out")
    if tuple(out.shape) != tuple(shape) or out.dtype != dtype or out.device != device:
        raise InputError(f"{op}: 'out' is {lib.dtype_name(out)} of shape {tuple(out.shape)} on "
                         f"{out.device}; the result is {str(dtype).removeprefix('torch.')} of "
                         f"shape {tuple(shape)} on {device}",
                         hint=f"pass out=torch.empty({tuple(shape)}, dtype={dtype}, "
                              f"device='{device}')")
    if not out.is_contiguous():
        raise InputError(f"{op}: 'out' is not contiguous (strides {out.stride()})",
                         hint="pass out=torch.empty_like(x)")


def binary(op: str, x, y, out=None):
    """op(x, y) with torch's broadcasting and promotion (see the module's docstring)."""
    if _is_number(x) and _is_number(y):
        raise InputError(f"{op}: both operands are Python numbers; one must be a tensor",
                         hint="pass x as a tensor: torch.tensor([x])")
    if _is_number(y) or _is_number(x):
        return _scalar_call(op, x, y, out)
    _check_operand(op, "x", x)
    _check_operand(op, "y", y)
    lib.check_same_device(op, {"x": x, "y": y})
    shape, _, _ = plan_shapes(op, x, y)               # refuse an uncovered broadcast here
    if out is None:
        return BINARY(x, y, op)
    _check_out(op, out, shape, x.dtype if x.dtype == y.dtype else torch.result_type(x, y),
               x.device)
    BINARY_OUT(x, y, op, out)
    return out


def _scalar_call(op: str, x, y, out):
    swap = _is_number(x)
    tensor, number = (y, x) if swap else (x, y)
    _check_operand(op, "y" if swap else "x", tensor)
    s = _check_number(op, "x" if swap else "y", number)
    if out is None:
        return SCALAR(tensor, s, op, swap)
    _check_out(op, out, tensor.shape, tensor.dtype, tensor.device)
    SCALAR_OUT(tensor, s, op, swap, out)
    return out


def unary(fn: str, op: str, x, out=None):
    _check_operand(op, "x", x)
    if out is None:
        return UNARY(x, fn)
    _check_out(op, out, x.shape, x.dtype, x.device)
    UNARY_OUT(x, fn, out)
    return out


def add(x, y, *, out=None):
    """x + y (torch.add without alpha)."""
    return binary("add", x, y, out)


def sub(x, y, *, out=None):
    """x - y (torch.sub without alpha)."""
    return binary("sub", x, y, out)


def mul(x, y, *, out=None):
    """x * y."""
    return binary("mul", x, y, out)


def maximum(x, y, *, out=None):
    """torch.maximum: NaN if either is NaN."""
    return binary("maximum", x, y, out)


def minimum(x, y, *, out=None):
    """torch.minimum: NaN if either is NaN."""
    return binary("minimum", x, y, out)


def exp(x, *, out=None):
    return unary("exp", "exp", x, out)


def relu(x, *, out=None):
    return unary("relu", "relu", x, out)


def gelu(x, approximate: str = "none", *, out=None):
    """torch.nn.functional.gelu: the erf form ("none") or the tanh one ("tanh")."""
    if approximate not in ("none", "tanh"):
        raise InputError(f"gelu: approximate={approximate!r}; it must be 'none' (erf) or "
                         f"'tanh'", hint="pass approximate='none' or approximate='tanh'")
    return unary("gelu" if approximate == "none" else "gelu_tanh", "gelu", x, out)


def silu(x, *, out=None):
    return unary("silu", "silu", x, out)


def neg(x, *, out=None):
    return unary("neg", "neg", x, out)


def abs(x, *, out=None):  # noqa: A001 - torch's name
    return unary("abs", "abs", x, out)


FUNCTIONS = {f.__name__: f for f in (add, sub, mul, maximum, minimum, exp, relu, gelu, silu,
                                     neg, abs)}

OP = lib.Op("elementwise", FUNCTIONS, kernels.KERNELS, DTYPES, config.TABLE,
            "ktile.ops.elementwise.reference")
OPS = [OP]

"""Traced values: what kernel code holds while it is traced, with Python operators.

Each wraps one SSA value of the trace. Arithmetic on them emits kt / arith ops through the
builder seam; every mistake the author can make here is a `KernelError` at their line. This
module has the base and the scalars; `tiles.py` the register tiles and vectors, `memory.py`
globals, shared tiles and coordinates.
"""
from __future__ import annotations

from typing import Any

from ..ir import emit
from . import tracer
from .types import RT, RV, SV, ST

Number = (int, float, bool)
# attributes of traced values that are ktile's plumbing, not the author's vocabulary
_INTERNAL_NAMES = {"broadcasts", "describe", "kind", "ty", "v"}


def _b():
    return tracer.current().builder


class Value:
    __slots__ = ("v",)
    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, v):
        self.v = v

    @property
    def ty(self):
        return self.v.type

    def __bool__(self):
        raise tracer.error(
            f"a device {self.kind} has no Python truth value",
            hint="use it directly as the condition of `if`/`while` (not inside `and`/`or`/`not`); "
                 "combine conditions with `&`, `|` and `~`")

    def __iter__(self):
        raise tracer.error(f"a device {self.kind} cannot be iterated in Python")

    def __index__(self):
        """Python asks for an int: a shape, a `range` bound, or an index into a Python list.
        Only a list of shared tiles of one type can be indexed by a device value (the kernel
        rewrite gives `bufs[i]` to `shared_ops.select_shared` before Python sees it)."""
        raise tracer.error(
            f"a device {self.kind} is not a Python int here: shapes, Python `range` bounds and "
            f"indices into Python lists of anything but shared tiles are known while tracing",
            hint="use a Python int or a Constexpr (loop with `for i in range(n)` to unroll); a "
                 "list of shared tiles of one type, bufs = [hk.shared(hk.ST(...)) for _ in "
                 "range(2)], can be indexed by a device value: bufs[k % 2]")

    def __getattr__(self, name: str):
        """Only reached for a name the value lacks: the author's typo (`tile.rwo_sum`)."""
        if name.startswith("__") or name == "v":
            raise AttributeError(name)
        known = [n for n in dir(type(self)) if n not in _INTERNAL_NAMES]
        raise tracer.unknown_name(self.describe(), name, known)

    kind = "value"

    def describe(self) -> str:
        return f"a {self.kind}"


# ---- scalars -------------------------------------------------------------------------------

class Scalar(Value):
    """An index, i32, f32 or bool value held by the whole warp."""
    kind = "scalar"

    def describe(self) -> str:
        return "a float scalar" if self.is_float else "an integer scalar"

    @property
    def is_float(self) -> bool:
        return isinstance(self.ty, type(emit.f32))

    @property
    def is_bool(self) -> bool:
        return getattr(self.ty, "width", None) is not None and self.ty.width.data == 1

    def _binary(self, fn: str, other: Any, reverse: bool = False) -> "Value":
        if getattr(other, "broadcasts", False):  # a tile or vector: its rule applies
            return other._binary(fn, self, reverse=not reverse)
        x, y = unify_scalars(self, other)
        if reverse:
            x, y = y, x
        if fn in emit.CMP_INT:
            return Scalar(_b().scalar_compare(fn, x.v, y.v))
        if fn == "pow":
            raise tracer.error("`**` on scalars is not supported", hint="multiply, or use hk.exp2")
        if x.is_float and fn in ("floordiv", "mod", "cdiv"):
            raise tracer.error(f"`{fn}` needs integer operands, got a float scalar")
        if fn == "div" and not x.is_float:
            raise tracer.error("`/` on integer scalars", hint="use `//` for integer division, "
                               "or convert with hk.to_float(x)")
        if fn == "mod":
            return _floor_mod(x, y)
        return Scalar(_b().scalar_binary(fn, x.v, y.v))

    def __neg__(self):
        return self._binary("sub", 0, reverse=True)

    def __invert__(self):
        if not self.is_bool:
            raise tracer.error("`~` applies to a condition (a comparison result)")
        return Scalar(_b().scalar_binary("xor", self.v, _b().const_bool(True)))


def _floor_mod(x: Scalar, y: Scalar) -> Scalar:
    """Python's `%`: the remainder takes the divisor's sign (arith.remsi truncates like C)."""
    b = _b()
    r = b.scalar_binary("mod", x.v, y.v)
    zero = b.const_index(0) if isinstance(x.ty, type(emit.index)) else b.const_int(0, x.ty.width.data)
    nonzero = b.scalar_compare("ne", r, zero)
    signs_differ = b.scalar_compare("lt", b.scalar_binary("xor", r, y.v), zero)
    adjust = b.scalar_binary("and", nonzero, signs_differ)
    return Scalar(b.scalar_select(adjust, b.scalar_binary("add", r, y.v), r))


def _operator(fn: str, reverse: bool = False):
    def apply(self, other):
        return self._binary(fn, other, reverse)
    return apply


def define_operators(cls, table: dict[str, str], reflected: tuple[str, ...]) -> None:
    """Python operators → `cls._binary(fn, other, reverse)`; `reflected` also gets `__rX__`."""
    for dunder, fn in table.items():
        setattr(cls, f"__{dunder}__", _operator(fn))
        if dunder in reflected:
            setattr(cls, f"__r{dunder}__", _operator(fn, reverse=True))
    cls.__hash__ = Value.__hash__


ARITHMETIC_OPERATORS = {"add": "add", "sub": "sub", "mul": "mul", "truediv": "div"}
COMPARISON_OPERATORS = {"lt": "lt", "le": "le", "gt": "gt", "ge": "ge", "eq": "eq", "ne": "ne"}
define_operators(Scalar, {**ARITHMETIC_OPERATORS, **COMPARISON_OPERATORS, "floordiv": "floordiv", "mod": "mod",
                          "and": "and", "or": "or", "xor": "xor", "lshift": "shl",
                          "rshift": "shr"},
                 reflected=("add", "sub", "mul", "truediv", "floordiv", "mod", "and", "or"))


def scalar_const(value: Any, like: Scalar | None = None) -> Scalar:
    """A Python number as a scalar of `like`'s type (index for ints, f32 for floats)."""
    b = _b()
    if isinstance(value, bool):
        return Scalar(b.const_bool(value))
    if like is not None and like.is_float:
        return Scalar(b.const_f32(float(value)))
    if like is not None and like.is_bool:
        return Scalar(b.const_bool(bool(value)))
    if isinstance(value, float):
        return Scalar(b.const_f32(value))
    if like is not None and not isinstance(like.ty, type(emit.index)):
        return Scalar(b.const_int(value, like.ty.width.data))
    return Scalar(b.const_index(value))


def as_scalar(value: Any, what: str = "value") -> Scalar:
    if isinstance(value, Scalar):
        return value
    if isinstance(value, Number) or _is_numpy_number(value):
        return scalar_const(value.item() if hasattr(value, "item") else value)
    raise tracer.error(f"{what} must be a scalar, got {describe(value)}")


def as_index(value: Any, what: str) -> Scalar:
    s = as_scalar(value, what)
    if s.is_float:
        raise tracer.error(f"{what} must be an integer, got a float scalar")
    if not isinstance(s.ty, type(emit.index)):
        return Scalar(_b().int_cast(s.v, emit.index))
    return s


def unify_scalars(x: Scalar, y: Any) -> tuple[Scalar, Scalar]:
    if not isinstance(y, Scalar):
        if not (isinstance(y, Number) or _is_numpy_number(y)):
            raise tracer.error(f"cannot combine a scalar with {describe(y)}")
        y = scalar_const(y.item() if hasattr(y, "item") else y, like=x)
        if y.is_float and not x.is_float:
            x = Scalar(_b().index_to_f32(x.v))
        return x, y
    if x.ty == y.ty:
        return x, y
    if x.is_float or y.is_float:
        fx = x if x.is_float else Scalar(_b().index_to_f32(x.v))
        fy = y if y.is_float else Scalar(_b().index_to_f32(y.v))
        return fx, fy
    return as_index(x, "operand"), as_index(y, "operand")


def _is_numpy_number(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", 1) == 0


# ---- tiles and vectors ---------------------------------------------------------------------


def describe(value: Any) -> str:
    """A value as the author would name it, for messages."""
    if isinstance(value, Value):
        return value.describe()
    if isinstance(value, (RT, ST, RV, SV)):
        return f"the type {value!r} (not a value: create one with hk.zeros/load)"
    return f"{type(value).__name__} {value!r}" if isinstance(value, Number) else type(value).__name__

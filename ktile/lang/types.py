"""What a kernel author declares: parameter annotations and tile/vector descriptors.

These are plain Python (no IR library): `import ktile` and decorating a kernel stay fast.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import dtypes
from ..dtypes import DType
from . import tracer

# Register tiles are built of 16×16 blocks and register vectors of 16-element chunks on every
# target (the AMD and sm_90a tile headers both static_assert it). `RT` and `RV` refuse other
# shapes where the author writes them, so the interpreter runs only what a GPU would build.
REGISTER_BLOCK = 16


def as_dtype(value: Any, what: str) -> DType:
    """`value` as a ktile element type: a DType, or a name of one ("bf16", "float32")."""
    if isinstance(value, DType) and value.kind != "bool":
        return value
    found = dtypes.lookup(value) if isinstance(value, str) else None
    if found is None or found.kind == "bool":
        names = ", ".join(f"hk.{d.name}" for d in dtypes.ALL if d.kind != "bool")
        raise tracer.error(f"{what}: {_spelled(value)} is not a ktile element type",
                           hint=f"use one of {names}")
    return found


def _spelled(value: Any) -> str:
    """A would-be dtype as the author wrote it: 'fp64', numpy.float64, torch.float64."""
    if isinstance(value, type):
        return f"{value.__module__}.{value.__qualname__}".removeprefix("builtins.")
    return repr(value)


class _TensorAnnotation(type):
    def __getitem__(cls, dtype: DType) -> "TensorSpec":
        return TensorSpec(as_dtype(dtype, "Tensor[...]"))


class Tensor(metaclass=_TensorAnnotation):
    """`Tensor[hk.bf16]`: a positional kernel parameter, a 4-D global (batch, depth, rows, cols)."""


@dataclass(frozen=True)
class TensorSpec:
    dtype: DType

    def __repr__(self) -> str:
        return f"Tensor[{self.dtype!r}]"


# what a compile-time constant may be: each value traces its own kernel, keyed by its repr
CONSTEXPR_KINDS = (int, float, bool, str)


class _ConstexprAnnotation(type):
    def __getitem__(cls, kind: type) -> "ConstexprSpec":
        if kind not in CONSTEXPR_KINDS:
            raise tracer.error(
                f"hk.Constexpr[{_spelled(kind)}]: a constant is an int, float, bool or str",
                hint="pass several values as separate constants (A: hk.Constexpr[int], B: "
                     "hk.Constexpr[int]), or a tensor parameter for data")
        return ConstexprSpec(kind)


class Constexpr(metaclass=_ConstexprAnnotation):
    """`Constexpr[int]`: a keyword-only compile-time constant; each value traces its own kernel."""


@dataclass(frozen=True)
class ConstexprSpec:
    kind: type


# the element types of a runtime scalar, and the Python kinds that name them
SCALAR_DTYPES = {float: dtypes.fp32, int: dtypes.i32}


class _ScalarAnnotation(type):
    def __getitem__(cls, kind: Any) -> "ScalarSpec":
        dtype = SCALAR_DTYPES.get(kind) if isinstance(kind, type) else kind
        if dtype not in (dtypes.fp32, dtypes.i32):
            raise tracer.error(
                f"hk.Scalar[{_spelled(kind)}]: a runtime scalar is an f32 or an i32",
                hint="hk.Scalar[hk.fp32] (or float) for a float, hk.Scalar[hk.i32] (or int) for "
                     "an integer; a value of another kind is a hk.Constexpr or a tensor")
        return ScalarSpec(dtype)


class Scalar(metaclass=_ScalarAnnotation):
    """`Scalar[hk.fp32]` / `Scalar[hk.i32]` (also `Scalar[float]` / `Scalar[int]`): a runtime
    scalar parameter, passed by value at each call, positional or keyword-only. A positional
    parameter annotated `float` or `int` is one too."""


@dataclass(frozen=True)
class ScalarSpec:
    """A runtime scalar parameter: its value is an f32 or i32 kernel argument, given at each
    call, so a new value is no new trace or build."""
    dtype: DType

    def __repr__(self) -> str:
        return f"Scalar[{self.dtype!r}]"


def _whole_blocks(what: str, sides: dict[str, int]) -> None:
    """Each side of a register tile or vector is a whole number of REGISTER_BLOCKs."""
    B = REGISTER_BLOCK
    bad = [f"{name} {n}" for name, n in sides.items() if n % B]
    if bad:
        raise tracer.error(f"a {what} with {' and '.join(bad)}: on every target, register tiles "
                           f"are built of {B}x{B} blocks and vectors of {B}-element chunks, so "
                           f"each side must be a multiple of {B}",
                           hint=f"round the shape up to a multiple of {B}: a load past a "
                                f"global's edge reads the pad value and a store past it writes "
                                f"nothing")


def _positive(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise tracer.error(f"{what} must be a positive Python int, got {value!r}",
                           hint="tile shapes are compile-time constants: use a literal or a "
                                "Constexpr")
    return value


@dataclass(frozen=True)
class RT:
    """A register tile type: `hk.RT(hk.bf16, 16, 64)`, layout "row" (default), "col" or
    "flat". Row and col are the MMA operand layouts; "flat" is memory order (each lane holds
    eight row-contiguous elements per 16 x 16 block: 16-byte global accesses, no shuffles), for
    memory-bound code: global loads and stores, elementwise math, whole-tile reductions
    (docs/language.md, "The flat layout")."""
    dtype: DType
    rows: int
    cols: int
    layout: str = "row"

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "RT dtype"))
        _positive(self.rows, "RT rows")
        _positive(self.cols, "RT cols")
        _whole_blocks("register tile", {"rows": self.rows, "cols": self.cols})
        if self.layout not in ("row", "col", "flat"):
            raise tracer.error(f"RT layout must be 'row', 'col' or 'flat', got {self.layout!r}")


@dataclass(frozen=True)
class ST:
    """A shared-memory tile type: `hk.ST(hk.bf16, 64, 64)`."""
    dtype: DType
    rows: int
    cols: int

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "ST dtype"))
        _positive(self.rows, "ST rows")
        _positive(self.cols, "ST cols")


@dataclass(frozen=True)
class RV:
    """A register vector: `hk.RV(hk.fp32, 16)`; axis "row" (one value per tile row, the
    default) or "col" (one value per tile column)."""
    dtype: DType
    length: int
    axis: str = "row"

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "RV dtype"))
        _positive(self.length, "RV length")
        _whole_blocks("register vector", {"length": self.length})
        if self.axis not in ("row", "col"):
            raise tracer.error(f"RV axis must be 'row' or 'col', got {self.axis!r}")


@dataclass(frozen=True)
class SV:
    """A shared-memory vector: `hk.SV(hk.fp32, 64)`."""
    dtype: DType
    length: int

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "SV dtype"))
        _positive(self.length, "SV length")

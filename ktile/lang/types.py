"""What a kernel author declares: parameter annotations and tile/vector descriptors.

These are plain Python (no IR library): `import ktile` and decorating a kernel stay fast.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..errors import KernelError


def as_dtype(value: Any, what: str) -> DType:
    if isinstance(value, DType):
        return value
    found = dtypes.lookup(str(value)) if isinstance(value, str) else None
    if found is None:
        names = ", ".join(f"hk.{d.name}" for d in dtypes.ALL if d.kind != "bool")
        raise KernelError(f"{what}: {value!r} is not a ktile dtype", hint=f"use one of {names}")
    return found


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


class _ConstexprAnnotation(type):
    def __getitem__(cls, kind: type) -> "ConstexprSpec":
        return ConstexprSpec(kind)


class Constexpr(metaclass=_ConstexprAnnotation):
    """`Constexpr[int]`: a keyword-only compile-time constant; each value traces its own kernel."""


@dataclass(frozen=True)
class ConstexprSpec:
    kind: type


def _positive(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise KernelError(f"{what} must be a positive Python int, got {value!r}",
                          hint="tile shapes are compile-time constants: use a literal or a Constexpr")
    return value


@dataclass(frozen=True)
class RT:
    """A register tile type: `hk.RT(hk.bf16, 16, 64)`, layout "row" (default) or "col"."""
    dtype: DType
    rows: int
    cols: int
    layout: str = "row"

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "RT dtype"))
        _positive(self.rows, "RT rows")
        _positive(self.cols, "RT cols")
        if self.layout not in ("row", "col"):
            raise KernelError(f"RT layout must be 'row' or 'col', got {self.layout!r}")


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
        if self.axis not in ("row", "col"):
            raise KernelError(f"RV axis must be 'row' or 'col', got {self.axis!r}")


@dataclass(frozen=True)
class SV:
    """A shared-memory vector: `hk.SV(hk.fp32, 64)`."""
    dtype: DType
    length: int

    def __post_init__(self):
        object.__setattr__(self, "dtype", as_dtype(self.dtype, "SV dtype"))
        _positive(self.length, "SV length")

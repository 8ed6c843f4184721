"""How IR types become interpreter values: numpy carriers, rounding, and names in messages.

Register tiles are 2-D numpy arrays (rows, cols) in logical order, vectors 1-D arrays;
scalars are Python ints (index, iN), floats (f32, rounded to float32) and bools (i1).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import Float32Type, IndexType, IntegerType
from xdsl.ir import Attribute

from .. import dtypes
from ..dtypes import DType
from ..errors import InternalError
from ..ir.types import GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType

_SHAPED = (RegTileType, RegVecType, SharedTileType, SharedVecType, GlobalType)
_INT_CARRIERS = {32: np.int32, 8: np.int8}


def np_dtype(dt: DType) -> type:
    """The numpy carrier of a ktile dtype: float32 for every float type."""
    if dt.kind == "float":
        return np.float32
    if dt.kind == "bool":
        return np.bool_
    return _INT_CARRIERS[dt.bits]


def element_dtype(ty: Attribute) -> DType:
    """The element dtype of a tile, vector or global type, or of a scalar type."""
    if isinstance(ty, _SHAPED):
        return ty.dtype
    if isinstance(ty, Float32Type):
        return dtypes.fp32
    if isinstance(ty, IntegerType) and ty.width.data == 1:
        return dtypes.i1
    if isinstance(ty, (IntegerType, IndexType)):
        return dtypes.i32
    raise InternalError(f"the interpreter has no value kind for type {ty}")


def is_array_type(ty: Attribute) -> bool:
    return isinstance(ty, (RegTileType, RegVecType))


def f32(value) -> float:
    """A Python float rounded to float32, the value of an f32 scalar."""
    return float(np.float32(value))


def int_width(ty: Attribute) -> int:
    """Bits of an integer scalar type; index is 64-bit."""
    if isinstance(ty, IndexType):
        return 64
    if isinstance(ty, IntegerType):
        return ty.width.data
    raise InternalError(f"{ty} is not an integer scalar type")


def wrap_int(value: int, bits: int) -> int:
    """Two's-complement wraparound of a Python int to `bits` bits (signed)."""
    half = 1 << (bits - 1)
    return ((value + half) & ((1 << bits) - 1)) - half


def scalar_fixer(ty: Attribute) -> Callable | None:
    """How a scalar result of type `ty` is normalised; None when it needs nothing."""
    if isinstance(ty, IndexType):
        return None
    if isinstance(ty, Float32Type):
        return f32
    if isinstance(ty, IntegerType) and ty.width.data == 1:
        return bool
    if isinstance(ty, IntegerType):
        bits = ty.width.data
        return lambda v: wrap_int(v, bits)
    raise InternalError(f"the interpreter has no scalar kind for type {ty}")


def result_rounder(dt: DType) -> Callable[[np.ndarray], np.ndarray]:
    """Rounding of an arithmetic result to `dt`. Integer arithmetic wraps as C++ does (a
    conversion from float saturates instead: see `cast_rounder`)."""
    if dt.kind == "int":
        carrier = np_dtype(dt)
        return lambda a: np.asarray(a).astype(carrier)
    if dt.kind == "bool":
        return lambda a: np.asarray(a, np.bool_)
    if dt == dtypes.fp32:
        return lambda a: np.asarray(a, np.float32)
    return dt.round


def cast_rounder(dt: DType) -> Callable[[np.ndarray], np.ndarray]:
    """A conversion to `dt`: floats round to nearest even, float → int truncates toward zero
    and saturates, anything → bool is `!= 0`."""
    if dt.kind == "bool":
        return lambda a: np.asarray(a) != 0
    if dt.kind == "float":
        return lambda a: dt.round(np.asarray(a, np.float32))
    return lambda a: dt.round(a.astype(np.int64) if a.dtype == np.bool_ else a)


def constant_array(shape: tuple[int, ...], value, dt: DType) -> np.ndarray:
    """A read-only array of `value` at `dt`: safe to share, as no handler writes in place."""
    array = cast_rounder(dt)(np.full(shape, value, dtype=np.float64))
    array = np.array(array, dtype=np_dtype(dt)).reshape(shape)  # bf16 rounding makes 0-d 1-d
    array.flags.writeable = False
    return array


def shape_of(ty: Attribute) -> tuple[int, ...]:
    if isinstance(ty, (RegTileType, SharedTileType)):
        return ty.shape
    if isinstance(ty, (RegVecType, SharedVecType)):
        return (ty.length.data,)
    raise InternalError(f"{ty} has no shape")


def describe_type(ty: Attribute) -> str:
    """A register value's type in the kernel author's words."""
    if isinstance(ty, RegTileType):
        return f"the {ty.rows.data}x{ty.cols.data} {ty.dtype.name} register tile"
    if isinstance(ty, RegVecType):
        return f"the {ty.axis.data} vector of {ty.length.data} {ty.dtype.name}"
    return "the value"

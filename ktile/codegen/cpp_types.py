"""How IR types and constants are spelled in C++ against the tile headers (docs/cpp-api.md).

    !kt.global<bf16>              kt::gl<kt::bf16>
    !kt.rt<16x16xbf16, row, a>    kt::rt<kt::bf16, 16, 16, kt::row, kt::frag_a>
    !kt.st<64x64xbf16>            kt::st<kt::bf16, 64, 64>
    !kt.rv<16xf32, row>           kt::rv<float, 16, kt::row_axis>
    !kt.sv<64xf32>                kt::sv<float, 64>
    index / i32 / f32 / i1        kt::index_t / int32_t / float / bool
"""
from __future__ import annotations

import math
from functools import lru_cache

from xdsl.dialects.builtin import (BFloat16Type, Float16Type, Float32Type, Float64Type,
                                   IndexType, IntegerType)
from xdsl.ir import Attribute

from ..errors import InternalError
from ..ir.types import GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType

# C++'s own scalar types; every other element type lives in namespace kt (kt::bf16, ...)
_BUILTIN_SCALARS = frozenset({"float", "double", "bool", "int8_t", "int16_t", "int32_t",
                              "int64_t"})
_INT_WIDTHS = {1: "bool", 8: "int8_t", 16: "int16_t", 32: "int32_t", 64: "int64_t"}
_FLOATS = {BFloat16Type: "kt::bf16", Float16Type: "kt::half", Float32Type: "float",
           Float64Type: "double"}


def element_type(attr: Attribute) -> str:
    """The C++ element type of a tile, vector or global element (ktile.dtypes' `cpp` column)."""
    from ..ir.types import element_dtype
    try:
        cpp = element_dtype(attr).cpp
    except (ValueError, KeyError) as exc:
        raise InternalError(f"no C++ element type for {attr}") from exc
    return cpp if cpp in _BUILTIN_SCALARS else f"kt::{cpp}"


def scalar_type(attr: Attribute) -> str:
    if isinstance(attr, IndexType):
        return "kt::index_t"
    if isinstance(attr, IntegerType) and attr.width.data in _INT_WIDTHS:
        return _INT_WIDTHS[attr.width.data]
    spelled = _FLOATS.get(type(attr))
    if spelled is None:
        raise InternalError(f"no C++ type for the scalar type {attr}")
    return spelled


@lru_cache(maxsize=4096)
def cpp_type(attr: Attribute) -> str:
    """The C++ type of a value of IR type `attr` (types are immutable values: each is spelled
    once per process)."""
    if isinstance(attr, RegTileType):
        return (f"kt::rt<{element_type(attr.element)}, {attr.rows.data}, {attr.cols.data}, "
                f"kt::{attr.layout.data}, kt::frag_{attr.fragment.data}>")
    if isinstance(attr, SharedTileType):
        return f"kt::st<{element_type(attr.element)}, {attr.rows.data}, {attr.cols.data}>"
    if isinstance(attr, RegVecType):
        axis = f"kt::{attr.axis.data}_axis"
        return f"kt::rv<{element_type(attr.element)}, {attr.length.data}, {axis}>"
    if isinstance(attr, SharedVecType):
        return f"kt::sv<{element_type(attr.element)}, {attr.length.data}>"
    if isinstance(attr, GlobalType):
        return f"kt::gl<{element_type(attr.element)}>"
    return scalar_type(attr)


def is_register_value(attr: Attribute) -> bool:
    """Register tiles and vectors: what `kt::bind` ties to a wait."""
    return isinstance(attr, (RegTileType, RegVecType))


def float_literal(value: float) -> str:
    """A double literal that converts to the value the IR holds. Left a double on purpose:
    the IR stores f64 and rounds to the destination type once, as `double → T` does, where a
    `1.1f` literal would round the decimal text straight to float (double rounding differs)."""
    if math.isnan(value):
        return "kt::nan"
    if math.isinf(value):
        return "kt::inf" if value > 0 else "-kt::inf"
    text = repr(float(value))
    return text if any(c in text for c in ".en") else text + ".0"


def int_literal(value: int, attr: Attribute) -> str:
    if isinstance(attr, IntegerType) and attr.width.data == 1:
        return "true" if value else "false"
    if -(2 ** 31) <= value < 2 ** 31:
        return str(value)
    return f"{value}LL"

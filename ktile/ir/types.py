"""The kt dialect's types: a global tensor, register and shared tiles, register and shared vectors.

Printed forms:
    !kt.global<bf16>                 a 4-D global tensor (batch, depth, rows, cols)
    !kt.rt<16x64xbf16, row>          a register tile, row layout, no fragment yet
    !kt.rt<16x16xbf16, row, a>       the same after `fragments` gave it the MMA A fragment
    !kt.st<64x64xbf16>               a shared-memory tile
    !kt.rv<16xf32, row>              a register vector, one value per tile row
    !kt.sv<64xf32>                   a shared-memory vector
"""
from __future__ import annotations

from functools import lru_cache

from xdsl.dialects.builtin import (BFloat16Type, Float16Type, Float32Type, Float8E4M3FNType,
                                   IntAttr, IntegerType, StringAttr)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..dtypes import DType

LAYOUTS = ("row", "col", "flat")
FRAGMENTS = ("none", "a", "b", "acc")
VECTOR_AXES = ("row", "col")

_ELEMENT_ATTRS = {
    "bf16": BFloat16Type, "fp16": Float16Type, "fp32": Float32Type, "fp8": Float8E4M3FNType,
}


@lru_cache(maxsize=None)
def element_attr(dt: DType) -> Attribute:
    """The element type of `dt`, made once per process (attributes are immutable)."""
    if dt.kind == "float":
        return _ELEMENT_ATTRS[dt.name]()
    return IntegerType(dt.bits)


def element_dtype(attr: Attribute) -> DType:
    found = dtype_or_none(attr)
    if found is None:
        raise ValueError(f"no ktile dtype for {attr}")
    return found


def dtype_or_none(attr: Attribute) -> DType | None:
    """The ktile dtype an element type stands for, None where there is none (e.g. f64, i16)."""
    found = _FLOAT_DTYPES.get(type(attr))   # xDSL's float types are final classes
    if found is not None:
        return found
    if isinstance(attr, IntegerType):
        return _INTEGER_DTYPES.get(attr.width.data)
    return None


_FLOAT_DTYPES = {cls: dtypes.BY_NAME[name] for name, cls in _ELEMENT_ATTRS.items()}
_INTEGER_DTYPES = {32: dtypes.i32, 8: dtypes.i8, 1: dtypes.i1}
ELEMENT_NAMES = "bf16, f16, f32, f8E4M3FN, i32, i8, i1"


def check_element(element: Attribute) -> None:
    """Every kt type holds elements of a ktile dtype; the passes, the interpreter and the
    headers know no others."""
    if dtype_or_none(element) is None:
        raise VerifyException(f"element type {element} is not a ktile dtype (one of "
                              f"{ELEMENT_NAMES})")


def check_extent(what: str, value: int) -> None:
    if value <= 0:
        raise VerifyException(f"{what} {value} must be positive")


def parse_shape(parser: AttrParser, rank: int, what: str) -> tuple[list[int], Attribute]:
    """`RxCxelement` (rank 2) or `Lxelement` (rank 1), refused at its position when the rank,
    a size or the element type is wrong."""
    position = parser.pos
    dims, element = parser.parse_ranked_shape()
    problem = None
    if len(dims) != rank:
        problem = f"a {what} has {rank} dimension{'s' if rank > 1 else ''}, got {len(dims)}"
    elif any(d <= 0 for d in dims):
        problem = f"{what} sizes must be positive, got {'x'.join(map(str, dims))}"
    elif dtype_or_none(element) is None:
        problem = f"{what} element type {element} is not a ktile dtype (one of {ELEMENT_NAMES})"
    if problem:
        parser.raise_error(problem, position, parser.pos)
    return dims, element


def parse_choice(parser: AttrParser, what: str, choices: tuple[str, ...]) -> str:
    position = parser.pos
    word = parser.parse_identifier()
    if word not in choices:
        parser.raise_error(f"{what} {word!r} is not one of {', '.join(choices)}", position,
                           parser.pos)
    return word


class _Shaped:
    """Shared accessors of the tile and vector types."""

    @property
    def dtype(self) -> DType:
        return element_dtype(self.element)  # type: ignore[attr-defined]


@irdl_attr_definition
class GlobalType(_Shaped, ParametrizedAttribute, TypeAttribute):
    name = "kt.global"
    element: Attribute

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.element)

    def verify(self) -> None:
        check_element(self.element)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute]:
        with parser.in_angle_brackets():
            position = parser.pos
            element = parser.parse_type()
            if dtype_or_none(element) is None:
                parser.raise_error(f"global element type {element} is not a ktile dtype (one "
                                   f"of {ELEMENT_NAMES})", position, parser.pos)
            return (element,)


@irdl_attr_definition
class RegTileType(_Shaped, ParametrizedAttribute, TypeAttribute):
    name = "kt.rt"
    rows: IntAttr = param_def(converter=IntAttr.get)
    cols: IntAttr = param_def(converter=IntAttr.get)
    element: Attribute
    layout: StringAttr
    fragment: StringAttr

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows.data, self.cols.data)

    def with_fragment(self, fragment: str) -> "RegTileType":
        return _reg_tile(self.rows.data, self.cols.data, self.element, self.layout.data,
                         fragment)

    def verify(self) -> None:
        check_extent("register tile rows", self.rows.data)
        check_extent("register tile cols", self.cols.data)
        check_element(self.element)
        if self.layout.data not in LAYOUTS:
            raise VerifyException(f"register tile layout must be one of {LAYOUTS}")
        if self.fragment.data not in FRAGMENTS:
            raise VerifyException(f"register tile fragment must be one of {FRAGMENTS}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rows.data}x{self.cols.data}x")
            printer.print_attribute(self.element)
            printer.print_string(f", {self.layout.data}")
            if self.fragment.data != "none":
                printer.print_string(f", {self.fragment.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            (rows, cols), element = parse_shape(parser, 2, "register tile")
            parser.parse_punctuation(",")
            layout = parse_choice(parser, "register tile layout", LAYOUTS)
            fragment = "none"
            if parser.parse_optional_punctuation(","):
                fragment = parse_choice(parser, "register tile fragment", FRAGMENTS)
        return (IntAttr(rows), IntAttr(cols), element, StringAttr(layout), StringAttr(fragment))


@irdl_attr_definition
class SharedTileType(_Shaped, ParametrizedAttribute, TypeAttribute):
    name = "kt.st"
    rows: IntAttr = param_def(converter=IntAttr.get)
    cols: IntAttr = param_def(converter=IntAttr.get)
    element: Attribute

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows.data, self.cols.data)

    def verify(self) -> None:
        check_extent("shared tile rows", self.rows.data)
        check_extent("shared tile cols", self.cols.data)
        check_element(self.element)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.rows.data}x{self.cols.data}x")
            printer.print_attribute(self.element)

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            (rows, cols), element = parse_shape(parser, 2, "shared tile")
        return (IntAttr(rows), IntAttr(cols), element)


@irdl_attr_definition
class RegVecType(_Shaped, ParametrizedAttribute, TypeAttribute):
    """A register vector. axis "row": one value per row of a tile (what a row reduction gives,
    broadcast along a row); axis "col": one value per column."""
    name = "kt.rv"
    length: IntAttr = param_def(converter=IntAttr.get)
    element: Attribute
    axis: StringAttr

    def verify(self) -> None:
        check_extent("register vector length", self.length.data)
        check_element(self.element)
        if self.axis.data not in VECTOR_AXES:
            raise VerifyException(f"register vector axis must be one of {VECTOR_AXES}")

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.length.data}x")
            printer.print_attribute(self.element)
            printer.print_string(f", {self.axis.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            (length,), element = parse_shape(parser, 1, "register vector")
            parser.parse_punctuation(",")
            axis = parse_choice(parser, "register vector axis", VECTOR_AXES)
        return (IntAttr(length), element, StringAttr(axis))


@irdl_attr_definition
class SharedVecType(_Shaped, ParametrizedAttribute, TypeAttribute):
    name = "kt.sv"
    length: IntAttr = param_def(converter=IntAttr.get)
    element: Attribute

    def verify(self) -> None:
        check_extent("shared vector length", self.length.data)
        check_element(self.element)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.length.data}x")
            printer.print_attribute(self.element)

    @classmethod
    def parse_parameters(cls, parser: AttrParser):
        with parser.in_angle_brackets():
            (length,), element = parse_shape(parser, 1, "shared vector")
        return (IntAttr(length), element)


# The type constructors the tracer calls. Each type is made once per process per arguments
# (typed: a numpy integer is not taken for the int it equals): a type is an immutable
# attribute, equal types are interchangeable, and making one (its parameters' attributes,
# then its verifier) costs more than most traced ops.

@lru_cache(maxsize=None, typed=True)
def rt(dt: DType, rows: int, cols: int, layout: str = "row", fragment: str = "none") -> RegTileType:
    return _reg_tile(rows, cols, element_attr(dt), layout, fragment)


@lru_cache(maxsize=None, typed=True)
def _reg_tile(rows: int, cols: int, element: Attribute, layout: str,
              fragment: str) -> RegTileType:
    return RegTileType(rows, cols, element, StringAttr(layout), StringAttr(fragment))


@lru_cache(maxsize=None, typed=True)
def st(dt: DType, rows: int, cols: int) -> SharedTileType:
    return SharedTileType(rows, cols, element_attr(dt))


@lru_cache(maxsize=None, typed=True)
def rv(dt: DType, length: int, axis: str = "row") -> RegVecType:
    return RegVecType(length, element_attr(dt), StringAttr(axis))


@lru_cache(maxsize=None, typed=True)
def sv(dt: DType, length: int) -> SharedVecType:
    return SharedVecType(length, element_attr(dt))


@lru_cache(maxsize=None)
def global_(dt: DType) -> GlobalType:
    return GlobalType(element_attr(dt))


TILE_TYPES = (RegTileType, SharedTileType)
VALUE_TYPES = (RegTileType, RegVecType)
SHARED_TYPES = (SharedTileType, SharedVecType)


def scalar(dt: DType) -> Attribute:
    """A runtime scalar kernel parameter's type, f32 or i32: a kernel argument passed by value
    after the globals (docs/language.md, "Runtime scalars")."""
    return element_attr(dt)

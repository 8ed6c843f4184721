"""kt.load_scalar: one element of a global as a scalar (hk.load_scalar).

A kernel that needs a runtime value from a tensor in a coordinate (an embedding's token id: the
row its flat tile starts at) reads it with this op: every lane loads the same element, and the
result is an ordinary scalar (i32 or f32) that index arithmetic and tile coordinates take.
Element coordinates (batch, depth, row, col) of the global as given; an element outside it
reads `pad`.
"""
from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type, FloatAttr, IndexType, IntegerType, f64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, var_operand_def

from .ops import KtOp
from .types import GlobalType
from .verifiers import IRError


@irdl_op_definition
class LoadScalarOp(KtOp):
    """Global element (b, d, row, col) → a scalar of the global's element type (i32 or f32)."""
    name = "kt.load_scalar"
    src = operand_def(GlobalType)
    coords = var_operand_def(IndexType)
    pad = prop_def(FloatAttr)
    result = result_def()

    def __init__(self, src: SSAValue, coords: Sequence[SSAValue], pad: float = 0.0):
        super().__init__(operands=[src, list(coords)], properties={"pad": FloatAttr(pad, f64)},
                         result_types=[src.type.element])

    def verify_(self) -> None:
        if len(self.coords) != 4:
            raise IRError(self, f"takes 4 coordinates (batch, depth, row, col), got "
                                f"{len(self.coords)}")
        element = self.src.type.element
        if self.result.type != element:
            raise IRError(self, f"the result {self.result.type} is not the global's element "
                                f"type {element}")
        if not (isinstance(element, Float32Type)
                or isinstance(element, IntegerType) and element.width.data == 32):
            raise IRError(self, f"loads an i32 or f32 element, not {element}")


SCALAR_LOAD_OPS = [LoadScalarOp]

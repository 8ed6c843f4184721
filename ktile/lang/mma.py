"""Matrix multiply-accumulate on register tiles: `hk.mma` and its four variants."""
from __future__ import annotations

from .. import dtypes
from ..ir.ops import MMA_VARIANTS, mma_dims
from . import tracer
from .tiles import Tile
from .values import describe

def _b():
    return tracer.current().builder


# ---- MMA -----------------------------------------------------------------------------------

def mma(a: Tile, b: Tile, acc: Tile, variant: str = "AB") -> Tile:
    """acc + op(a)·op(b) in fp32. variant AB, ABt, AtB or AtBt (t: that operand transposed)."""
    if variant not in MMA_VARIANTS:
        raise tracer.error(f"unknown MMA variant {variant!r}", op="mma",
                           hint=f"use one of {', '.join(MMA_VARIANTS)}")
    for name, t in (("a", a), ("b", b), ("acc", acc)):
        if not isinstance(t, Tile):
            raise tracer.error(f"mma operand {name} must be a register tile, got {describe(t)}",
                               op="mma")
    if a.dtype != b.dtype:
        raise tracer.error(f"mma operands differ in dtype: a is {a.dtype!r}, b is {b.dtype!r}",
                           op="mma", hint="convert one with .to(...)")
    if acc.dtype not in (dtypes.fp32, dtypes.i32):
        raise tracer.error(f"mma accumulates into fp32 (or i32 for i8), got {acc.dtype!r}",
                           op="mma", hint="start the accumulator with hk.zeros(hk.RT(hk.fp32, m, n))")
    m, n, k = mma_dims(variant, a.shape, b.shape)
    if k is None:
        raise tracer.error(
            f"mma {variant}: the inner dimensions of a ({a.rows}x{a.cols}) and b "
            f"({b.rows}x{b.cols}) differ", op="mma",
            hint="for C = A·Bᵀ both operands are row-major M×K and N×K: use variant ABt")
    if acc.shape != (m, n):
        raise tracer.error(f"mma {variant}: the accumulator is {acc.rows}x{acc.cols} but the "
                           f"product is {m}x{n}", op="mma")
    want_a = "col" if variant.startswith("At") else "row"
    want_b = "row" if variant.endswith("Bt") else "col"
    if a.layout != want_a or b.layout != want_b:
        raise tracer.error(
            f"mma {variant} reads a in {want_a} layout and b in {want_b} layout, got "
            f"a {a.layout} and b {b.layout}", op="mma",
            hint=_variant_hint(a.layout, b.layout))
    return Tile(_b().mma(a.v, b.v, acc.v, variant))


def _variant_hint(a_layout: str, b_layout: str) -> str:
    variant = ("A" if a_layout == "row" else "At") + ("Bt" if b_layout == "row" else "B")
    return f"with these layouts use variant {variant} (or load the tiles in the layouts above)"


def mma_AB(a, b, acc): return mma(a, b, acc, "AB")
def mma_ABt(a, b, acc): return mma(a, b, acc, "ABt")
def mma_AtB(a, b, acc): return mma(a, b, acc, "AtB")
def mma_AtBt(a, b, acc): return mma(a, b, acc, "AtBt")


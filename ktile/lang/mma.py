"""Matrix multiply-accumulate on register tiles: `hk.mma` and its four variants, and the MMA
whose B operand is a shared tile (`acc += a @ s.T`, or `acc += a @ s` with B held K×N)."""
from __future__ import annotations

from .. import dtypes
from ..ir.ops import MMA_VARIANTS, mma_dims
from . import tracer
from .memory import SharedTile
from .tiles import Tile
from .values import describe

def _b():
    return tracer.current().builder


# ---- MMA -----------------------------------------------------------------------------------

def mma(a, b, acc, variant: str = "AB", *, into=None) -> Tile:
    """acc + op(a)·op(b) in fp32. variant AB, ABt, AtB or AtBt (t: that operand transposed).
    hk-dsl's order is told apart by a str first: `hk.mma("mma_ABt", a, b, acc, into=acc)`.
    The result is a new tile; `into=x` checks it fits x and the rewrite rebinds x to it."""
    from .hk_methods import landed
    if isinstance(a, str):  # hk-dsl: (variant, a, b, acc)
        a, b, acc, variant = b, acc, variant, a.removeprefix("mma_")
        if isinstance(acc, str):
            raise tracer.error("hk.mma(variant, a, b, acc) needs the accumulator acc", op="mma",
                               hint='hk.mma("mma_ABt", a, b, acc, into=acc)')
    return landed(_mma(a, b, acc, variant), into)


def _mma(a: Tile, b: Tile, acc: Tile, variant: str = "AB") -> Tile:
    if variant not in MMA_VARIANTS:
        raise tracer.error(f"unknown MMA variant {variant!r}", op="mma",
                           hint=f"use one of {', '.join(MMA_VARIANTS)}")
    if isinstance(b, SharedTile):
        return mma_shared(a, b, acc, variant)
    if isinstance(a, SharedTile):
        raise tracer.error("an mma reads a shared a only with a shared b, as `sa @ sb.T`",
                           op="mma", hint="load a into registers with sa.load(...), or keep "
                                          "B in a shared N×K tile too")
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
    from .roles import check_mma
    check_mma()
    return Tile(_b().mma(a.v, b.v, acc.v, variant))


def _variant_hint(a_layout: str, b_layout: str) -> str:
    variant = ("A" if a_layout == "row" else "At") + ("Bt" if b_layout == "row" else "B")
    return f"with these layouts use variant {variant} (or load the tiles in the layouts above)"


def mma_shared(a, b: SharedTile, acc: Tile, variant: str = "ABt") -> Tile:
    """acc + a·bᵀ with b a shared N×K tile read whole: each warp multiplies its own a (M×K,
    row layout) by the block's b. Every warp of the block must execute it (sm_90a: wgmma,
    kept in flight until the waits pass's `wgmma.wait_group`). `a` may be a shared tile of
    the block's rows (warps·M × K): warp w multiplies its rows [w·M, (w+1)·M), the tile that
    `a.load(hk.RT(dtype, M, K), row=w)` would give (sm_90a: wgmma reads both operands from
    shared memory; elsewhere the rows are loaded, then multiplied). Variant AB (`a @ s`): b
    holds B as K×N, N contiguous, a in registers (sm_90a's transposed-B wgmma, 16-bit)."""
    if variant not in ("ABt", "AB"):
        raise tracer.error(
            f"an mma reads its b operand from a shared tile as `a @ s.T` (the shared tile "
            f"holding B as N×K) or `a @ s` (K×N), not as variant {variant}",
            op="mma from shared",
            hint="write `acc += a @ s.T` or `acc += a @ s`, or load the tile into registers "
                 "with s.load(...) for the other variants")
    if b.is_vector or (isinstance(a, SharedTile) and a.is_vector):
        raise tracer.error("an mma reads a shared tile, not a shared vector",
                           op="mma from shared")
    if variant == "AB" and isinstance(a, SharedTile):
        raise tracer.error("`sa @ sb` (B as K×N) takes a from registers only",
                           op="mma from shared",
                           hint="load this warp's rows with sa.load(..., row=warp_id), or keep "
                                "B as N×K and write `sa @ sb.T`")
    for name, t in (("a", a), ("acc", acc)):
        if not isinstance(t, Tile) and not (name == "a" and isinstance(t, SharedTile)):
            raise tracer.error(f"mma operand {name} must be a register tile, got {describe(t)}",
                               op="mma from shared")
    form = "`a @ s`" if variant == "AB" else "`a @ s.T`"
    (n, kb), (m, k) = _b_nk(b, variant), (a.ty.shape if isinstance(a, SharedTile) else a.shape)
    if a.dtype != b.dtype:
        raise tracer.error(f"mma operands differ in dtype: a is {a.dtype!r}, the shared b is "
                           f"{b.dtype!r}", op="mma from shared", hint="convert one with .to(...)")
    if acc.dtype not in (dtypes.fp32, dtypes.i32):
        raise tracer.error(f"mma accumulates into fp32 (or i32 for i8), got {acc.dtype!r}",
                           op="mma from shared",
                           hint=f"start the accumulator with hk.zeros(hk.RT(hk.fp32, {m}, {n}))")
    if k != kb:
        sides = "a's columns and its rows (K)" if variant == "AB" else "their columns (K)"
        raise tracer.error(
            f"{form}: a is {m}x{k} but the shared tile is "
            f"{'x'.join(map(str, b.ty.shape))}: {sides} differ", op="mma from shared",
            hint="the shared tile holds B as K×N: give it as many rows as a has columns"
            if variant == "AB" else
            "the shared tile holds B as N×K: give it as many columns as a")
    if isinstance(a, SharedTile):
        return _mma_both_shared(a, b, acc, m, n)
    if acc.shape != (m, n):
        raise tracer.error(f"{form}: the accumulator is {acc.rows}x{acc.cols} but the product "
                           f"is {m}x{n}", op="mma from shared")
    if a.layout != "row":
        raise tracer.error(f"{form} reads a in row layout, got col", op="mma from shared",
                           hint="load a as hk.RT(..., layout=\"row\")")
    return _mma_shared(a, b, acc, variant)


def _b_nk(b: SharedTile, variant: str) -> tuple[int, int]:
    """(N, K) of the shared b: N×K for `a @ s.T`, K×N for `a @ s`."""
    rows, cols = b.ty.shape
    return (cols, rows) if variant == "AB" else (rows, cols)


def _mma_both_shared(a: SharedTile, b: SharedTile, acc: Tile, m: int, n: int) -> Tile:
    """`sa @ sb.T`: the warps split sa's rows evenly, each taking acc's rows (a pipeline
    role's warps inside one: roles.py)."""
    from .roles import issuing_warps
    warps = issuing_warps()
    if acc.cols != n or acc.rows * warps != m:
        raise tracer.error(
            f"`sa @ sb.T`: the shared a's {m} rows are split across the block's {warps} warps, "
            f"{m // warps if m % warps == 0 else m / warps:g} rows each, so the accumulator must "
            f"be {m // max(warps, 1)}x{n}, not {acc.rows}x{acc.cols}", op="mma from shared",
            hint=f"give the shared a {acc.rows * warps} rows (the accumulator's rows × "
                 f"{warps} warps), or load this warp's rows with sa.load(..., row=warp_id)")
    return _mma_shared(a, b, acc)


def _mma_shared(a, b, acc, variant: str = "ABt") -> Tile:
    """The kt.mma_shared, refused in a pipeline's producer (roles.py)."""
    from .roles import check_mma
    check_mma()
    return Tile(_b().mma_shared(a.v, b.v, acc.v, variant))


def mma_AB(a, b, acc): return mma(a, b, acc, "AB")
def mma_ABt(a, b, acc): return mma(a, b, acc, "ABt")
def mma_AtB(a, b, acc): return mma(a, b, acc, "AtB")
def mma_AtBt(a, b, acc): return mma(a, b, acc, "AtBt")


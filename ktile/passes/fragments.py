"""fragments: every MMA operand holds the register fragment the target's instruction reads.

Invariant established: each kt.mma's `a` operand has type fragment `a`, its `b` operand
fragment `b`, and its accumulator and result fragment `acc` (a kt.mma_shared: `a` and `acc`,
its b being a shared tile); values that structured control
flow ties to them (scf.for init / block argument / yield / result, scf.if yields / results,
scf.while's carried values) carry the same fragment, so the module still verifies. No register
tile is two different fragments; MMA tile dims are multiples of the target's instruction shape
for their dtype; and no 16-bit operand is read from shared memory in the slow layout (trap 3).
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass

from ..ir import ops as kt
from ..ir.ops import mma_dims
from ..ir.query import error_at, kernel_func, user_op_name
from ..ir.types import RegTileType
from ..targets.base import Target
from .common import OpIndex, TiedValues, describe_type, line_of, target_of

OPERAND_WORDS = {"a": "operand a", "b": "operand b", "acc": "the accumulator"}
MMA_OPS = (kt.MmaOp, kt.MmaSharedOp)
Mma = kt.MmaOp | kt.MmaSharedOp


@dataclass(frozen=True)
class FragmentUse:
    """One MMA reading or writing a value as one fragment."""
    fragment: str
    mma: Mma
    role: str          # "a", "b", "acc" (accumulator operand or result)


class Fragments(ModulePass):
    name = "fragments"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        index = OpIndex(fn)
        mmas = index.of(*MMA_OPS)
        for mma in mmas:
            check_instruction_shape(mma, target)
        tied = TiedValues(fn, index)
        classes = tied.members()
        uses = fragment_uses(mmas, tied)
        for root, found in uses.items():
            check_one_fragment(found)
        for mma in mmas:
            for value, role in register_operands(mma):
                if role in ("a", "b"):
                    check_fast_lds_layout(mma, role, tied.class_of(value, classes), target)
        for root, found in uses.items():
            for value in tied.class_of(root, classes):
                value._type = value.type.with_fragment(found[0].fragment)  # type: ignore


def register_operands(mma: Mma) -> list[tuple[SSAValue, str]]:
    """The register tiles an MMA reads or writes, each with its role (= its fragment)."""
    operands = [(mma.a, "a"), (mma.acc, "acc"), (mma.result, "acc")]
    if isinstance(mma, kt.MmaSharedOp) and mma.a_shared:   # a shared a has no fragment
        operands.pop(0)
    if isinstance(mma, kt.MmaOp):
        operands.insert(1, (mma.b, "b"))
    return operands


def mma_mnk(mma: Mma) -> tuple[int, int, int | None]:
    """(M, N, K) of an MMA; K None when the inner dimensions differ."""
    if isinstance(mma, kt.MmaSharedOp):
        (m, n), (_, k) = mma.acc.type.shape, mma.b_nk
        return m, n, k
    return mma_dims(mma.variant.data, mma.a.type.shape, mma.b.type.shape)


def fragment_uses(mmas: list[Mma], tied: TiedValues) -> dict[SSAValue, list[FragmentUse]]:
    """Per class of tied values, the fragments the MMAs want it in, in program order."""
    uses: dict[SSAValue, list[FragmentUse]] = {}
    for mma in mmas:
        for value, role in register_operands(mma):
            uses.setdefault(tied.find(value), []).append(FragmentUse(role, mma, role))
    return uses


# ---- one tile, one fragment ----------------------------------------------------------------

def check_one_fragment(found: list[FragmentUse]) -> None:
    first = found[0]
    for use in found[1:]:
        if use.fragment == first.fragment:
            continue
        ty = use.mma.operands[("a", "b", "acc").index(use.role)].type
        raise error_at(
            use.mma,
            f"this {describe_type(ty)} is {OPERAND_WORDS[use.role]} here but "
            f"{OPERAND_WORDS[first.role]} of the {user_op_name(first.mma)} at "
            f"{line_of(first.mma)}: a register tile holds one MMA fragment layout, and these "
            f"two differ",
            hint="load it twice, once for each use (both loads may read the same shared tile "
                 "or global)", what=user_op_name(use.mma))


# ---- instruction shape ---------------------------------------------------------------------

def check_instruction_shape(mma: Mma, target: Target) -> None:
    a, acc = mma.a.type, mma.acc.type
    dtype = a.dtype.name
    shape = target.mma_shape_for(dtype)
    what = user_op_name(mma)
    if shape is None:
        have = sorted({s.dtype for s in target.mma_shapes if not s.dtype.startswith("fp8_")})
        raise error_at(mma, f"{target.name} has no MMA instruction for {dtype} operands",
                       hint=f"convert the operands to one of {', '.join(have)} with .to(...)",
                       what=what)
    m, n, k = mma_mnk(mma)
    bad = [f"{name}={dim} is not a multiple of {unit}"
           for name, dim, unit in (("M", m, shape.m), ("N", n, shape.n), ("K", k, shape.k))
           if dim % unit]
    if bad:
        raise error_at(
            mma, f"an mma of {dtype} tiles with M={m}, N={n}, K={k} does not divide into "
                 f"{target.name}'s instruction {shape.instruction} ({shape.m}x{shape.n}x"
                 f"{shape.k}): {', '.join(bad)}",
            hint=f"use tiles whose M is a multiple of {shape.m}, N of {shape.n} and K of "
                 f"{shape.k}", what=what)
    if acc.dtype.name != shape.acc:
        raise error_at(mma, f"{target.name}'s {dtype} MMA accumulates in {shape.acc}, not in "
                            f"{acc.dtype.name}",
                       hint=f"start the accumulator as hk.zeros(hk.RT(hk.{shape.acc}, {m}, {n}))",
                       what=what)


# ---- trap 3: a 16-bit operand read from shared memory in the slow layout ---------------------

def check_fast_lds_layout(mma: Mma, role: str, tied: list[SSAValue],
                          target: Target) -> None:
    ty: RegTileType = getattr(mma, role).type
    fast = target.fast_lds_operand_layout
    if fast is None or ty.dtype.bits != 16 or ty.layout.data == fast:
        return  # (an mma from shared reads a in the row layout: fast wherever one is)
    load = next((v.owner for v in tied if isinstance(v.owner, kt.LdsLoadOp)), None)
    if load is None:
        return
    variant = mma.variant.data
    better = flip_transpose(variant, role)
    raise error_at(
        load,
        f"mma operand {role} (the mma at {line_of(mma)}) is a 16-bit tile loaded from shared "
        f"memory in {ty.layout.data} layout, which reads ~8x slower on {target.name} than "
        f"{fast} layout",
        hint=f"load it in {fast} layout (hk.RT(hk.{ty.dtype.name}, {ty.cols.data}, "
             f"{ty.rows.data}) from a shared tile holding its transpose) and use mma variant "
             f"{better} instead of {variant}", what="shared load")


def flip_transpose(variant: str, role: str) -> str:
    """The MMA variant that reads operand `role` in the other layout."""
    a_part, b_part = ("At", variant[2:]) if variant.startswith("At") else ("A", variant[1:])
    if role == "a":
        a_part = "A" if a_part == "At" else "At"
    else:
        b_part = "B" if b_part == "Bt" else "Bt"
    return a_part + b_part


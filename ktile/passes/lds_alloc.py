"""lds-alloc: every shared tile and vector has its place in the block's shared memory.

Invariant established: each kt.alloc has an `offset` property (bytes, 16-byte aligned, and
aligned to the target's `mma_shared_alignment` when an mma reads the tile directly;
allocations laid out in program order without overlap), the kernel function carries the
total as `kt.lds_bytes`, and the total fits the target's shared memory per block.
"""
from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from ..ir import ops as kt
from ..ir.query import error_at, kernel_func
from ..targets.base import Target
from .common import TiedValues, describe_type, element_bytes, elements, line_of, target_of

ALIGN = 16  # the widest shared-memory access (b128) needs 16-byte aligned addresses


class LdsAlloc(ModulePass):
    name = "lds-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        allocs = [o for o in fn.walk() if isinstance(o, kt.AllocOp)]
        tied = TiedValues(fn)   # a tile carried through a loop is still the tile allocated
        read_by_mma = {tied.find(o.b) for o in fn.walk() if isinstance(o, kt.MmaSharedOp)}
        end = 0
        for alloc in allocs:
            alignment = ALIGN
            if tied.find(alloc.result) in read_by_mma:
                alignment = max(ALIGN, target.mma_shared_alignment)
            offset = align_up(end, alignment)
            alloc.properties["offset"] = IntegerAttr(offset, i64)
            end = offset + alloc_bytes(alloc)
        fn.attributes["kt.lds_bytes"] = IntegerAttr(end, i64)
        check_fits(allocs, end, target)


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def alloc_bytes(alloc: kt.AllocOp) -> int:
    ty = alloc.result.type
    return elements(ty) * element_bytes(ty)


def check_fits(allocs: list[kt.AllocOp], total: int, target: Target) -> None:
    if total <= target.lds_bytes:
        return
    first_over = next(a for a in allocs if a.prop_int("offset") + alloc_bytes(a) > target.lds_bytes)
    listing = "; ".join(f"{describe_type(a.result.type)} at {line_of(a)}: {alloc_bytes(a)} bytes"
                        for a in allocs)
    raise error_at(
        first_over,
        f"the shared tiles need {total} bytes, over {target.name}'s {target.lds_bytes} bytes of "
        f"shared memory per block ({listing})",
        hint="use smaller shared tiles or fewer of them (one buffer fewer in a multi-buffered "
             "loop), or keep a tile in registers", what="shared")

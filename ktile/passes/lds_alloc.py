"""lds-alloc: every shared tile and vector has its place in the block's shared memory.

Invariant established: each kt.alloc has an `offset` property (bytes, 16-byte aligned, and
aligned to the target's `mma_shared_alignment` when an mma reads the tile directly, to its
`copy_alignment` when a TMA copy writes it; allocations laid out in program order without
overlap), the kernel function carries the total as `kt.lds_bytes`, and the total fits the
target's shared memory per block. Each tile a TMA copy writes (a kt.copy_async the
tensor-maps pass gave a `map`) has an `arrival` slot (0, 1, ... in program order), every TMA
copy carries its tile's slot, and the tiles' mbarriers (8 bytes each) follow the tiles: the
kernel function carries `kt.arrivals` = [offset, count]. Each kt.block_reduce of a register
tile has an `offset` too: its scratch of one tile per warp (the tree the header combines
through), placed after the allocations, one scratch per op so none waits for another's.
"""
from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from ..ir import ops as kt
from ..ir.query import error_at, kernel_func, warps
from ..ir.types import RegTileType
from ..targets.base import Target
from .common import TiedValues, describe_type, element_bytes, elements, line_of, target_of

ALIGN = 16  # the widest shared-memory access (b128) needs 16-byte aligned addresses
MBARRIER_BYTES = 8


class LdsAlloc(ModulePass):
    name = "lds-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        allocs = [o for o in fn.walk() if isinstance(o, kt.AllocOp)]
        tied = TiedValues(fn)   # a tile carried through a loop is still the tile allocated
        read_by_mma = {tied.find(o.b) for o in fn.walk() if isinstance(o, kt.MmaSharedOp)}
        copies = [o for o in fn.walk()                     # TMA copies (tensor-maps)
                  if isinstance(o, kt.CopyAsyncOp) and o.prop_int("map") is not None]
        copied = {tied.find(o.dst) for o in copies}
        end = 0
        for alloc in allocs:
            alignment = ALIGN
            if tied.find(alloc.result) in read_by_mma:
                alignment = max(alignment, target.mma_shared_alignment)
            if tied.find(alloc.result) in copied:
                alignment = max(alignment, target.copy_alignment)
            offset = align_up(end, alignment)
            alloc.properties["offset"] = IntegerAttr(offset, i64)
            end = offset + alloc_bytes(alloc)
        scratches = tile_reductions(fn)
        for reduction in scratches:
            offset = align_up(end, ALIGN)
            reduction.properties["offset"] = IntegerAttr(offset, i64)
            end = offset + scratch_bytes(reduction, warps(op))
        if copies:
            end = place_arrivals(fn, allocs, copies, copied, tied, end, target)
        fn.attributes["kt.lds_bytes"] = IntegerAttr(end, i64)
        check_fits(allocs + scratches, end, target, warps(op))


def place_arrivals(fn, allocs: list[kt.AllocOp], copies: list[kt.CopyAsyncOp], copied: set,
                   tied: TiedValues, end: int, target: Target) -> int:
    """Slots for the allocations TMA copies write, their mbarriers after `end`; the new end."""
    slots: dict = {}
    for alloc in allocs:
        root = tied.find(alloc.result)
        if root in copied:
            slot = slots.setdefault(root, len(slots))
            alloc.properties["arrival"] = IntegerAttr(slot, i64)
    if len(slots) > target.max_arrivals:
        over = next(a for a in allocs if a.prop_int("arrival") == target.max_arrivals)
        raise error_at(
            over, f"group loads write {len(slots)} shared tiles, over the "
                  f"{target.max_arrivals} that {target.name}'s TMA copies can complete on (one "
                  f"mbarrier each)", hint="load into fewer shared tiles (reuse buffers)",
            what="shared")
    for copy in copies:
        copy.properties["arrival"] = IntegerAttr(slots[tied.find(copy.dst)], i64)
    offset = align_up(end, MBARRIER_BYTES)
    fn.attributes["kt.arrivals"] = ArrayAttr([IntegerAttr(offset, i64),
                                              IntegerAttr(len(slots), i64)])
    return offset + MBARRIER_BYTES * len(slots)


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def alloc_bytes(alloc: kt.AllocOp) -> int:
    ty = alloc.result.type
    return elements(ty) * element_bytes(ty)


def tile_reductions(fn) -> list[kt.BlockReduceOp]:
    """The cross-warp reductions of register tiles: each needs a shared scratch."""
    return [o for o in fn.walk()
            if isinstance(o, kt.BlockReduceOp) and isinstance(o.x.type, RegTileType)]


def scratch_bytes(reduction: kt.BlockReduceOp, warp_count: int) -> int:
    """One tile per warp, stacked by rows (the header's `scratch`)."""
    ty = reduction.x.type
    return warp_count * elements(ty) * element_bytes(ty)


def placed_bytes(op, warp_count: int) -> int:
    if isinstance(op, kt.BlockReduceOp):
        return scratch_bytes(op, warp_count)
    return alloc_bytes(op)


def placed_words(op) -> str:
    if isinstance(op, kt.BlockReduceOp):
        return f"the group reduce's scratch for a {describe_type(op.x.type)} per warp"
    return describe_type(op.result.type)


def check_fits(placed: list, total: int, target: Target, warp_count: int) -> None:
    if total <= target.lds_bytes:
        return
    first_over = next(a for a in placed
                      if a.prop_int("offset") + placed_bytes(a, warp_count) > target.lds_bytes)
    listing = "; ".join(f"{placed_words(a)} at {line_of(a)}: {placed_bytes(a, warp_count)} bytes"
                        for a in placed)
    raise error_at(
        first_over,
        f"the shared tiles need {total} bytes, over {target.name}'s {target.lds_bytes} bytes of "
        f"shared memory per block ({listing})",
        hint="use smaller shared tiles or fewer of them (one buffer fewer in a multi-buffered "
             "loop), or keep a tile in registers", what="shared")

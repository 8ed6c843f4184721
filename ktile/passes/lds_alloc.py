"""lds-alloc: every shared tile and vector has its place in the block's shared memory.

Invariant established: each kt.alloc has an `offset` property (bytes, 16-byte aligned, and
aligned to the target's `mma_shared_alignment` when an mma reads the tile directly, to its
`copy_alignment` when a TMA copy writes it; allocations laid out in program order without
overlap), the kernel function carries the total as `kt.lds_bytes`, and the total fits the
target's shared memory per block. Each tile a TMA copy writes (a kt.copy_async the
tensor-maps pass gave a `map`) has an `arrival` slot (0, 1, ... in program order), every TMA
copy carries its tile's slot, and the tiles' mbarriers (8 bytes each) follow the tiles: the
kernel function carries `kt.arrivals` = [offset, count]; each pipeline's kt.pipeline_init
has the `offset` of its 2 × stages mbarriers, placed after those (its stage tiles, which
kt.stage_copy writes by TMA, are aligned as TMA tiles). Each kt.block_reduce of a register
tile has an `offset` too: its scratch of one tile per warp (the tree the header combines
through), placed after the allocations, one scratch per op so none waits for another's.

The tiles of a list indexed on the device (kt.lds_select) sit one after another in the list's
order, at the place of its first tile in program order, every one aligned as the strictest use
of any of them needs (a use through the list may be a use of each): each kt.lds_select carries
the list's `offset` and `stride`, so its tile is at offset + index × stride. A tile in two
lists that cannot both be laid out so (another order, other companions) is refused.
"""
from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

from ..ir import ops as kt
from ..ir.ops_pipeline import PipelineInitOp, StageCopyOp
from ..ir.query import error_at, kernel_func, warps
from ..ir.types import RegTileType
from ..targets.base import Target
from .common import (OpIndex, TiedValues, describe_type, element_bytes, elements, line_of,
                     target_of)

ALIGN = 16  # the widest shared-memory access (b128) needs 16-byte aligned addresses
MBARRIER_BYTES = 8


class LdsAlloc(ModulePass):
    name = "lds-alloc"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        index = OpIndex(fn)     # the one walk: the ops of each kind below, in program order
        allocs = index.of(kt.AllocOp)
        tied = TiedValues(fn, index)   # a tile carried through a loop is still the tile allocated
        read_by_mma = tiles_used(index, tied, kt.MmaSharedOp, lambda o: o.b)
        read_by_mma |= tiles_used(index, tied, kt.MmaSharedOp,   # a shared a (wgmma "ss")
                                  lambda o: o.a if o.a_shared else o.b)
        copies = [o for o in index.of(kt.CopyAsyncOp)      # TMA copies (tensor-maps)
                  if o.prop_int("map") is not None]
        copied = {tied.find(o.dst) for o in copies}
        copied |= tiles_used(index, tied, StageCopyOp, lambda o: o.dst)   # pipeline stages

        def alignment(root) -> int:
            needs = [ALIGN, *([target.mma_shared_alignment] if root in read_by_mma else []),
                     *([target.copy_alignment] if root in copied else [])]
            return max(needs)

        end = place_tiles(allocs, device_lists(index, tied), tied, alignment)
        scratches = tile_reductions(index)
        for reduction in scratches:
            offset = align_up(end, ALIGN)
            reduction.properties["offset"] = IntegerAttr(offset, i64)
            end = offset + scratch_bytes(reduction, warps(op))
        if copies:
            end = place_arrivals(fn, allocs, copies, copied, tied, end, target)
        end = place_pipelines(index, end)
        fn.attributes["kt.lds_bytes"] = IntegerAttr(end, i64)
        check_fits(allocs + scratches, end, target, warps(op))


def tiles_used(index: OpIndex, tied: TiedValues, kind: type, tile_of) -> set:
    """The allocations an op of `kind` uses through `tile_of(op)`: a tile picked from a list
    on the device may be any tile of the list."""
    used = set()
    for op in index.of(kind):
        used |= {tied.find(v) for v in listed_tiles(tile_of(op))}
    return used


def listed_tiles(value) -> list:
    """`value` itself, or the tiles of the list a kt.lds_select picks it from (flattened)."""
    owner = value.owner
    if type(owner) is not kt.LdsSelectOp:
        return [value]
    return [t for tile in owner.tiles for t in listed_tiles(tile)]


def device_lists(index: OpIndex, tied: TiedValues) -> dict:
    """Each allocation in a list indexed on the device → (its list's allocations in order, the
    kt.lds_select ops over that list). A tile in two different lists is refused."""
    lists: dict = {}
    for select in index.of(kt.LdsSelectOp):
        roots = tuple(tied.find(t) for t in listed_tiles(select.result))
        if len(set(roots)) != len(roots):
            raise listed_twice(select)
        entry = lists.get(roots[0], (roots, []))
        for root in roots:
            known = lists.get(root)
            if known is not None and known[0] != roots:
                raise two_lists(select, known[1][0])
            lists[root] = entry
        entry[1].append(select)
    return lists


def listed_twice(select: kt.LdsSelectOp):
    return error_at(
        select, "a shared tile is twice in this list indexed on the device (the same buffer, "
                "or one carried through a loop from it)", what="shared tile list index",
        hint="list each buffer once: a list indexed on the device is laid out as one block")


def two_lists(select: kt.LdsSelectOp, earlier: kt.LdsSelectOp):
    return error_at(
        select, f"this list of shared tiles shares a tile with the list indexed at "
                f"{line_of(earlier)}, in another order or with other tiles: a list indexed on "
                f"the device is laid out as one block, base + index × size, so a tile can be "
                f"in only one such list", what="shared tile list index",
        hint="index the same list (the same tiles in the same order) everywhere, or copy the "
             "data into a buffer of its own list")


def place_tiles(allocs: list[kt.AllocOp], lists: dict, tied: TiedValues, alignment) -> int:
    """Sets every allocation's `offset` in program order; a list's tiles all at its first
    tile's turn, one stride apart. Returns the end of the last tile."""
    owners = {tied.find(a.result): a for a in allocs}
    placed: set = set()   # the allocations of the lists laid out so far
    end = 0
    for alloc in allocs:
        root = tied.find(alloc.result)
        if root in placed:
            continue
        if root not in lists:
            offset = align_up(end, alignment(root))
            alloc.properties["offset"] = IntegerAttr(offset, i64)
            end = offset + alloc_bytes(alloc)
            continue
        members, selects = lists[root]
        placed.update(members)
        end = place_list([owners[m] for m in members], selects, end,
                         max(alignment(m) for m in members))
    return end


def place_list(members: list[kt.AllocOp], selects: list, end: int, alignment: int) -> int:
    """The list's tiles one `stride` apart from an aligned base; its selects carry both."""
    base, stride = align_up(end, alignment), align_up(alloc_bytes(members[0]), alignment)
    for k, alloc in enumerate(members):
        alloc.properties["offset"] = IntegerAttr(base + k * stride, i64)
    for select in selects:
        select.properties["offset"] = IntegerAttr(base, i64)
        select.properties["stride"] = IntegerAttr(stride, i64)
    return base + len(members) * stride


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


def place_pipelines(index: OpIndex, end: int) -> int:
    """Each pipeline's 2 × stages mbarriers (full, then empty) after `end`; the new end."""
    for init in index.of(PipelineInitOp):
        offset = align_up(end, MBARRIER_BYTES)
        init.properties["offset"] = IntegerAttr(offset, i64)
        end = offset + 2 * MBARRIER_BYTES * init.prop_int("stages")
    return end


def align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def alloc_bytes(alloc: kt.AllocOp) -> int:
    ty = alloc.result.type
    return elements(ty) * element_bytes(ty)


def tile_reductions(index: OpIndex) -> list[kt.BlockReduceOp]:
    """The cross-warp reductions of register tiles: each needs a shared scratch."""
    return [o for o in index.of(kt.BlockReduceOp) if isinstance(o.x.type, RegTileType)]


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
    """The total fits; else the refusal points at the first tile that ends past the limit or,
    where every tile fits, at the last TMA-copied tile, whose mbarrier the limit cuts off."""
    if total <= target.lds_bytes:
        return
    listing = "; ".join(f"{placed_words(a)} at {line_of(a)}: {placed_bytes(a, warp_count)} bytes"
                        for a in placed)
    first_over = next((a for a in placed
                       if a.prop_int("offset") + placed_bytes(a, warp_count) > target.lds_bytes),
                      None)
    if first_over is None:
        raise mbarriers_over(placed, total, target, listing)
    raise error_at(
        first_over,
        f"the shared tiles need {total} bytes, over {target.name}'s {target.lds_bytes} bytes of "
        f"shared memory per block ({listing})",
        hint="use smaller shared tiles or fewer of them (one buffer fewer in a multi-buffered "
             "loop), or keep a tile in registers", what="shared")


def mbarriers_over(placed: list, total: int, target: Target, listing: str):
    """The tiles fit but the mbarriers their TMA copies complete on, placed after them, do
    not."""
    copied = [a for a in placed if a.prop_int("arrival") is not None]
    barriers = len(copied)
    return error_at(
        (copied or placed)[-1],
        f"the shared tiles fit in {target.name}'s {target.lds_bytes} bytes of shared memory per "
        f"block, but the {barriers} mbarrier{'s' if barriers != 1 else ''} "
        f"({MBARRIER_BYTES} bytes each) that the group loads' TMA copies complete on, placed "
        f"after them, bring the total to {total} bytes ({listing})",
        hint=f"free at least {total - target.lds_bytes} bytes: a smaller shared tile, or a "
             f"buffer fewer", what="shared")

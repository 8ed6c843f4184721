"""Aliasing and in-place: which tensors of a call may share memory (docs/runtime.md, "Aliasing
and in-place"). One rule for the interpreter, a GPU call and wave emulation: a written tensor's
bytes meet no other argument's, except an input passed as exactly the same view when the
kernel reads it only where, and before, it writes it — proved from the IR for a one-warp kernel
with one load and one store (`in_place_refusal`), or declared by the kernel
(`@hk.kernel(in_place={"o": "x"})`) and checked against the IR (`_declared_refusal`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import InputError, KernelError

if TYPE_CHECKING:   # arguments.py re-exports this module's names, so it imports this one
    from .arguments import Argument


def check_aliasing(kernel, trace, arguments: list[Argument]) -> None:
    """No written tensor shares memory with another argument: their spans (the bytes from
    their lowest to their highest element) must be disjoint, unless the other is an input that
    is exactly the same view and the kernel reads it only where, and before, it writes
    (`in_place_refusal`). Two inputs may share memory. O(tensors x written tensors), on the
    shapes, strides and data pointers only."""
    written = trace.written_params
    check_declaration(kernel, trace)
    if not written:
        return
    spans = [a.span() for a in arguments]
    for w in written:
        for x, other in enumerate(arguments):
            if x == w or spans[w][1] <= spans[x][0] or spans[x][1] <= spans[w][0]:
                continue
            if same_view(arguments[w], other) and in_place_refusal(trace, x, w) is None:
                continue
            raise _aliasing_error(kernel, trace, arguments, w, x)


def check_declaration(kernel, trace) -> None:
    """A kernel's `in_place` pairs name an output it writes and an input it does not write
    (what the decorator cannot know before the kernel is traced)."""
    written = trace.written_params
    for w, x in getattr(trace, "in_place", {}).items():
        name_w, name_x = trace.params[w].name, trace.params[x].name
        if w not in written:
            raise KernelError(f"in_place declares '{name_w}' an output that may be '{name_x}', "
                              f"but the kernel never writes '{name_w}'", kernel=kernel.name,
                              hint=f"drop '{name_w}' from in_place=, or store to it")
        if x in written:
            raise KernelError(f"in_place declares '{name_w}' may be '{name_x}', but the kernel "
                              f"writes '{name_x}' too", kernel=kernel.name,
                              hint=f"an in-place pair is one output and one input: drop the "
                                   f"pair from in_place=")


def same_view(a: Argument, b: Argument) -> bool:
    """The same elements at the same addresses: data pointer, element type, shape, strides."""
    from .arguments import kernel_strides
    return (a.address == b.address and a.itemsize == b.itemsize and a.shape == b.shape
            and kernel_strides(a) == kernel_strides(b) and a.dtype == b.dtype)


def _aliasing_error(kernel, trace, arguments: list[Argument], w: int, x: int) -> InputError:
    out, other = arguments[w], arguments[x]
    race = ("on a GPU its blocks and warps run in any order, so one's writes could change what "
            "another reads, or overwrite its results")
    if x in trace.written_params:
        what = (f"parameters '{out.name}' and '{other.name}' are both written and share memory "
                f"('{out.name}' starts {out.address - other.address:+d} bytes from "
                f"'{other.name}')")
    elif same_view(out, other):
        what = (f"parameter '{out.name}' is the same tensor as input '{other.name}', but "
                f"{in_place_refusal(trace, x, w)}")
    else:
        what = (f"parameter '{out.name}' is written and overlaps input '{other.name}' in "
                f"memory without being the same view ('{out.name}' starts "
                f"{out.address - other.address:+d} bytes from '{other.name}', shapes "
                f"{out.shape} and {other.shape}, strides {out.strides} and {other.strides})")
    module = "torch" if out.is_torch else "np"
    return InputError(f"{what}; {race}", kernel=kernel.name,
                      hint=f"pass a separate output ({out.name} = {module}.empty_like(...)) "
                           f"and copy it where it belongs afterwards")


_IN_PLACE: dict[int, tuple[object, dict]] = {}   # id(trace) → (trace, {(x, w): refusal})


def in_place_refusal(trace, x: int, w: int) -> str | None:
    """Why input `x` may not be passed as the very tensor `w` the kernel writes; None when it
    may. Undeclared: one warp, which loads `x` once and then stores `w` once, at the same
    coordinates in the same unit (tile or element) with the same tile shape, outside any loop
    or branch; each block then reads exactly the elements it writes, before it writes them, as
    the interpreter does. Declared (`in_place={"w": "x"}`): any number of warps, loads and
    stores, each store of `w` after a load of `x` with the same coordinates and tile type and
    each load of `x` before such a store (`_declared_refusal`)."""
    found = _IN_PLACE.get(id(trace))
    if found is None or found[0] is not trace:
        found = _IN_PLACE[id(trace)] = (trace, {})
    refusals = found[1]
    if (x, w) not in refusals:
        refusals[(x, w)] = _in_place_refusal(trace, x, w)
    return refusals[(x, w)]


def _accesses(trace, x: int, w: int) -> tuple[object, list, list]:
    """(the kernel's body block, the ops using parameter `x`, those using `w`), extents aside."""
    from ..ir.ops import ExtentOp
    from ..ir.query import kernel_func
    fn = kernel_func(trace.module)
    body = fn.body.block
    uses = {x: [], w: []}
    for op in fn.walk():
        for operand in op.operands:
            index = getattr(operand, "index", None)
            if getattr(operand, "block", None) is body and index in uses \
                    and not isinstance(op, ExtentOp):
                uses[index].append(op)
    return body, uses[x], uses[w]


def _in_place_refusal(trace, x: int, w: int) -> str | None:
    from ..ir.ops import LoadOp, StoreOp
    name_x, name_w = trace.params[x].name, trace.params[w].name
    if x in trace.written_params:
        return f"the kernel writes '{name_x}' too"
    if getattr(trace, "in_place", {}).get(w) == x:
        return _declared_refusal(trace, x, w)
    if trace.warps != 1:
        return (f"the kernel's {trace.warps} warps could read a tile of '{name_x}' after "
                f"another warp wrote it (a kernel whose warps each read only what they write "
                f"declares it: @hk.kernel(..., in_place={{'{name_w}': '{name_x}'}}))")
    body, loads, stores = _accesses(trace, x, w)
    if len(loads) != 1 or len(stores) != 1 or not isinstance(loads[0], LoadOp) \
            or not isinstance(stores[0], StoreOp):
        return (f"the kernel does not read '{name_x}' with one load and write '{name_w}' "
                f"with one store")
    load, store = loads[0], stores[0]
    if load.parent is not body or store.parent is not body \
            or body.get_operation_index(load) > body.get_operation_index(store):
        return (f"the kernel's load of '{name_x}' and store of '{name_w}' are not one load "
                f"followed by one store outside any loop or branch")
    return _coordinates_refusal(load, store, name_x, name_w)


def _declared_refusal(trace, x: int, w: int) -> str | None:
    """The IR's side of a declared pair: every access of `x` and `w` is a plain load or store
    in the kernel's body (no loop or branch, so the order below is the order each lane runs
    them in), every store of `w` has a load of `x` before it at the same coordinates with the
    same tile type (the same lane holds the same elements), and every load of `x` a store of
    `w` after it: each lane writes only elements it read first and reads only elements it
    writes. That distinct warps and blocks take distinct coordinates is the declaration."""
    from ..ir.ops import LoadOp, StoreOp
    name_x, name_w = trace.params[x].name, trace.params[w].name
    body, loads, stores = _accesses(trace, x, w)
    if not all(isinstance(op, LoadOp) and op.parent is body for op in loads) or \
            not all(isinstance(op, StoreOp) and op.parent is body for op in stores):
        return (f"the kernel's in_place declaration does not hold: it does not read "
                f"'{name_x}' with plain loads and write '{name_w}' with plain stores outside "
                f"any loop or branch")
    at = body.get_operation_index
    for store in stores:
        if not any(at(load) < at(store) and _same_access(load, store) for load in loads):
            return (f"the kernel's in_place declaration does not hold: a store of "
                    f"'{name_w}' has no load of '{name_x}' before it at the same coordinates "
                    f"with the same tile")
    for load in loads:
        if not any(at(load) < at(store) and _same_access(load, store) for store in stores):
            return (f"the kernel's in_place declaration does not hold: a load of "
                    f"'{name_x}' has no store of '{name_w}' after it at the same coordinates "
                    f"with the same tile")
    return None


def _coordinates_refusal(load, store, name_x: str, name_w: str) -> str | None:
    from ..ir.ops import coord_unit
    if coord_unit(load) != coord_unit(store):   # r = 1 is row 1 in one, row tile 1 in the other
        return (f"the kernel reads '{name_x}' at {coord_unit(load)} coordinates but writes "
                f"'{name_w}' at {coord_unit(store)} coordinates, so the same numbers are other "
                f"elements")
    if not _same_access(load, store, lanes=False):   # one warp: its load precedes its store
        return (f"the kernel reads '{name_x}' at other tile coordinates or with another tile "
                f"shape than it writes '{name_w}'")
    return None


def _same_access(load, store, lanes: bool = True) -> bool:
    """The load and the store reach the same elements: one coordinate unit, equal coordinates,
    one extent; with `lanes`, from the same lanes too (one layout or vector axis)."""
    from ..ir.ops import coord_unit
    return (coord_unit(load) == coord_unit(store) and len(load.coords) == len(store.coords)
            and all(map(_same_index, load.coords, store.coords))
            and _extent(load.result.type) == _extent(store.value.type)
            and (not lanes or _lane_map(load.result.type) == _lane_map(store.value.type)))


_PURE_INDEX_OPS = ("kt.block_idx", "kt.warp_id", "kt.extent")


def _same_index(a, b) -> bool:
    """Whether two index values are one value in every block: the same SSA value, or the
    results of the same pure op (arith, block index, extent) on values that are. The front end
    traces `hk.tile_coord(...)` anew at each use, so a load's and a store's coordinates are
    usually equal values, not one."""
    if a is b:
        return True
    op_a, op_b = getattr(a, "op", None), getattr(b, "op", None)
    if op_a is None or op_b is None or op_a.name != op_b.name or a.index != b.index:
        return False
    if not (op_a.name.startswith("arith.") or op_a.name in _PURE_INDEX_OPS) or op_a.regions:
        return False
    return (op_a.properties == op_b.properties and op_a.attributes == op_b.attributes
            and len(op_a.operands) == len(op_b.operands)
            and all(map(_same_index, op_a.operands, op_b.operands)))


def _extent(tile_type) -> tuple[int, ...]:
    """A register tile's rows and columns, a vector's length: what one coordinate covers."""
    if hasattr(tile_type, "rows"):
        return (tile_type.rows.data, tile_type.cols.data)
    return (tile_type.length.data,)


def _lane_map(tile_type) -> str:
    """What decides which lane holds which element: a tile's layout, a vector's axis."""
    if hasattr(tile_type, "layout"):
        return tile_type.layout.data
    return tile_type.axis.data

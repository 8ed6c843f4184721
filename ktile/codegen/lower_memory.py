"""Lowerings of memory ops: global loads and stores, rows by index, shared memory, asynchronous
copies, waits and barriers.

Trap 1 lives here: `kt.wait_for` becomes `kt::wait<VM, LDS>();` followed, on the same line,
by `kt::bind(vN);` for every register tile or vector it names. A wait instruction carries no
register dependence, so without the bind (an `asm volatile` that reads and writes the tile's
registers) the compiler may hoist a later MMA above the wait.

Trap 4 needs nothing here: a `kt.copy_async` is followed by the `kt.wait_for` the waits pass
derived, and that wait is translated like any other. Which counter each asynchronous op
completes on, per target, is in docs/cpp-api.md.
"""
from __future__ import annotations

from ..ir import ops as kt
from .cpp_types import cpp_type, float_literal, is_register_value
from .emitter import Emitter
from .lower_shared import lower_lds_select
from .names import ARRIVALS, tensor_map_name

DONT_WAIT = -1  # a count of -1: this wait leaves that counter alone


# The C++ aggregate of each coordinate unit (include/ktile/common/tags.hpp): the headers'
# loads, stores and copies take either and find the tile's first element with kt::origin_of.
COORD_TYPES = {"tile": "kt::coord", "element": "kt::elem_coord"}


def coord(e: Emitter, op) -> str:
    """The coordinates of a kt.load / kt.store / kt.copy_async, in their unit."""
    return f"{COORD_TYPES[kt.coord_unit(op)]}{{{e.names(op.coords)}}}"


def lower_load(e: Emitter, op: kt.LoadOp) -> None:
    pad = float_literal(op.prop_float("pad"))
    where = f"{e.name(op.src)}, {coord(e, op)}"
    e.define_by_call(op, op.result, f"kt::load({e.name(op.result)}, {where}, {pad})")


def lower_store(e: Emitter, op: kt.StoreOp) -> None:
    e.statement(op, f"kt::store({e.name(op.dst)}, {e.name(op.value)}, {coord(e, op)});")


def lower_gather(e: Emitter, op: kt.GatherOp) -> None:
    args = e.names([op.result, op.src, op.batch, op.depth, op.rows, op.col])
    e.define_by_call(op, op.result, f"kt::gather({args})")


def lower_scatter(e: Emitter, op: kt.ScatterOp) -> None:
    args = e.names([op.dst, op.value, op.batch, op.depth, op.rows, op.col])
    e.statement(op, f"kt::scatter({args});")


def lower_alloc(e: Emitter, op: kt.AllocOp) -> None:
    """With the offset `lds-alloc` chose: a reference into the block's dynamic shared memory.
    Without one (the pass has not run): a static `__shared__` variable, so the C++ of an
    unchecked module still compiles for a look at it."""
    shared_type = cpp_type(op.result.type)
    offset = op.prop_int("offset")
    name = e.name(op.result)
    if offset is None:
        e.statement(op, f"__shared__ {shared_type} {name};")
        return
    e.statement(op, f"{shared_type}& {name} = kt::shared_at<{shared_type}, {offset}>();")


def lower_copy_async(e: Emitter, op: kt.CopyAsyncOp) -> None:
    """A TMA copy (lds-alloc gave it an mbarrier slot, tensor-maps a map):
    `kt::copy_async<slot>(..., kt_arrivals, kt_mapN)`; any other copy: `kt::copy_async(...)`."""
    args = f"{e.name(op.dst)}, {e.name(op.src)}, {coord(e, op)}"
    slot, tensor_map = op.prop_int("arrival"), op.prop_int("map")
    if slot is None:
        e.statement(op, f"kt::copy_async({args});")
        return
    extra = "" if tensor_map is None else f", {tensor_map_name(tensor_map)}"
    e.statement(op, f"kt::copy_async<{slot}>({args}, {ARRIVALS}{extra});")


def lower_lds_load(e: Emitter, op: kt.LdsLoadOp) -> None:
    args = e.names([op.result, op.src, op.row, op.col])
    e.define_by_call(op, op.result, f"kt::lds_load({args})")


def lower_lds_store(e: Emitter, op: kt.LdsStoreOp) -> None:
    """The whole shared tile, or with coordinates the sub-tile (row, col) of it."""
    coords = "".join(f", {e.name(v)}" for v in op.coords)
    e.statement(op, f"kt::lds_store({e.name(op.dst)}, {e.name(op.value)}{coords});")


def lower_wait_for(e: Emitter, op: kt.WaitForOp) -> None:
    vm, lds = (wait_count(e, op, counter) for counter in ("vm", "lds"))
    binds = [f" kt::bind({name});" for name in _bound_names(e, op)]
    slots = op.properties.get("arrivals")
    arrivals = "" if slots is None else (
        f" kt::wait_arrivals<{', '.join(str(s.value.data) for s in slots.data)}>({ARRIVALS});")
    wgmma = op.prop_int("wgmma")   # sm_90a: an mma from shared's groups (waits_mma.py)
    groups = "" if wgmma is None else f" kt::wgmma_wait<{wgmma}>();"
    e.statement(op, f"kt::wait<{vm}, {lds}>();" + arrivals + groups + "".join(binds))


def wait_count(e: Emitter, op: kt.WaitForOp, counter: str) -> int:
    """The derived count; -1 when the waits pass set none (it has not run, or nothing of that
    kind is in flight) or when the target has no such counter (Hopper's shared→register
    loads are scoreboarded by the hardware)."""
    count = op.prop_int(counter)
    if count is None or e.target.wait_counter(counter) is None:
        return DONT_WAIT
    return count


def _bound_names(e: Emitter, op: kt.WaitForOp) -> list[str]:
    """Register tiles and vectors named by the wait, each once, in the order named. Shared
    tiles need no bind: the wait is a memory clobber, which orders shared-memory accesses."""
    names: list[str] = []
    for value in op.tiles:
        name = e.name(value)
        if is_register_value(value.type) and name not in names:
            names.append(name)
    return names


def lower_barrier(e: Emitter, op: kt.BarrierOp) -> None:
    e.statement(op, "kt::barrier();")


MEMORY_LOWERINGS = {
    kt.LoadOp: lower_load,
    kt.StoreOp: lower_store,
    kt.GatherOp: lower_gather,
    kt.ScatterOp: lower_scatter,
    kt.AllocOp: lower_alloc,
    kt.CopyAsyncOp: lower_copy_async,
    kt.LdsLoadOp: lower_lds_load,
    kt.LdsStoreOp: lower_lds_store,
    kt.LdsSelectOp: lower_lds_select,
    kt.WaitForOp: lower_wait_for,
    kt.BarrierOp: lower_barrier,
}

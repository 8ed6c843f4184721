"""Memory outside registers: windows of a global, shared buffers, and what each warp has in
flight (group copies global → shared, shared loads shared → registers).

A global is its 4-D numpy carrier (batch, depth, rows, cols); reads outside it give a pad
value and writes outside it are dropped. The in-flight rules are the run-time half of the
`waits` pass: a use that a missing wait would let race is an error here.
"""
from __future__ import annotations

from collections import deque

import numpy as np
from xdsl.ir import Operation

from ..errors import KernelError
from ..ir.query import error_at, loc_of, user_op_name
from ..ir.types import SharedVecType
from .values import describe_type

# ---- globals -------------------------------------------------------------------------------


def _inside(g: np.ndarray, b: int, d: int) -> bool:
    return 0 <= b < g.shape[0] and 0 <= d < g.shape[1]


def _clip(start: int, size: int, extent: int) -> tuple[int, int]:
    return max(start, 0), min(start + size, extent)


def read_window(g: np.ndarray, b: int, d: int, r0: int, c0: int, rows: int, cols: int,
                pad) -> np.ndarray:
    """rows × cols of g[b, d] from (r0, c0), a fresh array; elements outside read `pad`."""
    _, _, n_rows, n_cols = g.shape
    inside = _inside(g, b, d)
    if inside and r0 >= 0 and c0 >= 0 and r0 + rows <= n_rows and c0 + cols <= n_cols:
        return g[b, d, r0:r0 + rows, c0:c0 + cols].copy()
    out = np.full((rows, cols), pad, g.dtype)
    lo_r, hi_r = _clip(r0, rows, n_rows)
    lo_c, hi_c = _clip(c0, cols, n_cols)
    if inside and lo_r < hi_r and lo_c < hi_c:
        out[lo_r - r0:hi_r - r0, lo_c - c0:hi_c - c0] = g[b, d, lo_r:hi_r, lo_c:hi_c]
    return out


def write_window(g: np.ndarray, b: int, d: int, r0: int, c0: int, values: np.ndarray) -> None:
    """values (2-D) into g[b, d] at (r0, c0); elements outside the global are dropped."""
    if not _inside(g, b, d):
        return
    rows, cols = values.shape
    lo_r, hi_r = _clip(r0, rows, g.shape[2])
    lo_c, hi_c = _clip(c0, cols, g.shape[3])
    if lo_r < hi_r and lo_c < hi_c:
        g[b, d, lo_r:hi_r, lo_c:hi_c] = values[lo_r - r0:hi_r - r0, lo_c - c0:hi_c - c0]


def gather_rows(g: np.ndarray, b: int, d: int, rows: np.ndarray, c0: int,
                cols: int) -> np.ndarray:
    """Row i is row rows[i] of g[b, d] from column c0; bad indices and columns read zeros."""
    out = np.zeros((len(rows), cols), g.dtype)
    if not _inside(g, b, d):
        return out
    valid = (rows >= 0) & (rows < g.shape[2])
    lo_c, hi_c = _clip(c0, cols, g.shape[3])
    if lo_c < hi_c and valid.any():
        out[valid, lo_c - c0:hi_c - c0] = g[b, d, rows[valid], lo_c:hi_c]
    return out


def scatter_rows(g: np.ndarray, b: int, d: int, rows: np.ndarray, c0: int,
                 values: np.ndarray) -> None:
    """Row i of values to row rows[i] of g[b, d]; bad indices and columns are dropped."""
    if not _inside(g, b, d):
        return
    valid = (rows >= 0) & (rows < g.shape[2])
    lo_c, hi_c = _clip(c0, values.shape[1], g.shape[3])
    if lo_c < hi_c and valid.any():
        g[b, d, rows[valid], lo_c:hi_c] = values[valid, lo_c - c0:hi_c - c0]


# ---- shared memory -------------------------------------------------------------------------

class SharedBuffer:
    """One block's shared tile (a vector is one row). Floats start as NaN so that a read of
    memory nothing wrote shows up in the result; integers start at zero."""
    __slots__ = ("data", "inflight")

    def __init__(self, rows: int, cols: int, carrier: type):
        fill = np.nan if carrier == np.float32 else 0
        self.data = np.full((rows, cols), fill, carrier)
        self.inflight = 0  # group copies into it, issued by any warp, not yet landed


def warp_rows(warp: int, warps: int, rows: int) -> tuple[int, int]:
    """The rows of a group copy that warp `warp` moves: an equal slice each when the rows
    divide evenly among the warps, else all of them by warp 0."""
    if rows % warps == 0:
        share = rows // warps
        return warp * share, (warp + 1) * share
    return (0, rows) if warp == 0 else (0, 0)


# ---- what a warp has in flight -------------------------------------------------------------

class AsyncState:
    """One warp's outstanding group copies and shared loads, oldest first.

    `pending` maps a register slot to (issue number, op) of the latest shared load into it
    that has not completed: reading that slot is the error a missing wait causes."""
    __slots__ = ("copies", "loads", "pending", "_issued")

    def __init__(self):
        self.copies: deque = deque()
        self.loads: deque = deque()
        self.pending: dict[int, tuple[int, Operation]] = {}
        self._issued = 0

    def issue_copy(self, op: Operation, buf: SharedBuffer, lo: int, hi: int,
                   data: np.ndarray, slot: int | None = None) -> None:
        """`slot`: a TMA copy's mbarrier slot (it completes when a wait names the slot, not
        on the counter); None for a copy that completes on the counter."""
        buf.inflight += 1
        self.copies.append((op, buf, lo, hi, data, slot))

    def issue_load(self, op: Operation, slot: int) -> None:
        self._issued += 1
        self.loads.append((slot, self._issued))
        self.pending[slot] = (self._issued, op)

    def wait(self, vm: int | None, lds: int | None, slots: frozenset[int] = frozenset()) -> None:
        """Complete the TMA copies of the mbarrier `slots`, all but the `vm` newest copies that
        complete on the counter, and all but the `lds` newest shared loads; None leaves that
        kind alone."""
        if slots or vm is not None:
            counted = sum(1 for copy in self.copies if copy[5] is None)
            kept: deque = deque()
            for copy in self.copies:
                _, buf, lo, hi, data, slot = copy
                if slot in slots or (slot is None and vm is not None and counted > vm):
                    counted -= slot is None
                    buf.data[lo:hi] = data
                    buf.inflight -= 1
                else:
                    kept.append(copy)
            self.copies = kept
        while lds is not None and len(self.loads) > lds:
            slot, issued = self.loads.popleft()
            if self.pending.get(slot, (None,))[0] == issued:
                del self.pending[slot]

    def check_drained(self, warp: int) -> None:
        if self.copies:
            raise error_at(self.copies[0][0], f"this group load (warp {warp}) is still in "
                           "flight when the block ends: no wait_for completes it",
                           what="group load", hint="hk.wait_for(the shared tile) after the load")
        if self.pending:
            _, op = min(self.pending.values(), key=lambda entry: entry[0])
            raise error_at(op, f"this shared load (warp {warp}) is still in flight when the "
                           "block ends: no wait_for completes it", what="shared load",
                           hint="hk.wait_for(the loaded tile) before it is used")


def wait_count(op: Operation, counter: str, target) -> int | None:
    """How many of a warp's newest `counter` ops ("vm" copies, "lds" shared loads) a wait
    leaves in flight; None: it leaves that counter alone. As the C++ does (codegen's
    `wait_count`): a count the waits pass did not set waits for nothing. A kind the target
    keeps no counter for needs no wait on the hardware (NVIDIA's shared loads are
    scoreboarded); here every wait completes it, so a wait the author left out still shows."""
    if target is not None and target.wait_counter(counter) is None:
        return 0
    return op.prop_int(counter)  # type: ignore[attr-defined]


def arrival_slots(op: Operation) -> frozenset[int]:
    """The mbarrier slots of the TMA copies a wait completes (the waits pass's `arrivals`)."""
    attr = op.properties.get("arrivals")
    return frozenset() if attr is None else frozenset(a.value.data for a in attr.data)


def tensor_copy_slot(op: Operation) -> int | None:
    """A TMA copy's mbarrier slot (it has a tensor map); None for any other copy."""
    return op.prop_int("arrival") if op.properties.get("map") is not None else None  # type: ignore


def line_of(op: Operation) -> str:
    loc = loc_of(op)
    return str(loc.line) if loc else "?"


def read_before_wait(user: Operation, load: Operation) -> KernelError:
    """A register value read while the shared load that fills it is still in flight."""
    what = user_op_name(user) if user.name.startswith("kt.") else None
    carried = user.name.startswith("scf.")
    hint = ("carrying it into a loop, around a loop or out of a branch copies its registers: "
            "hk.wait_for(tile) before the value is carried" if carried else
            "add hk.wait_for(tile) between the shared load and this use; the load is "
            "asynchronous and its registers are not filled until then")
    return error_at(user, f"read of {describe_type(load.results[0].type)} loaded at line "
                    f"{line_of(load)} before its wait", what=what, hint=hint)


def copy_in_flight(op: Operation, verb: str) -> KernelError:
    """A shared tile read or written (`verb`) while a group copy into it has not landed."""
    return error_at(op, f"shared tile {verb} while a copy into it is still in flight",
                    what=user_op_name(op),
                    hint="after the group load, hk.wait_for(the shared tile) and then "
                         "hk.barrier(), so every warp's part has landed before any warp uses it")


def subtile_outside(op: Operation, row: int, col: int, grid: tuple[int, int]) -> KernelError:
    """A shared load's sub-tile coordinates, computed on the device, fall outside its tile."""
    src, part = op.operands[0].type, op.results[0].type
    if isinstance(src, SharedVecType):
        shared = f"{src.length.data}-element shared vector"
        piece = f"{part.length.data} elements"
    else:
        shared = f"{src.rows.data}x{src.cols.data} shared tile"
        piece = f"{part.rows.data}x{part.cols.data}"
    return error_at(op, f"sub-tile (row {row}, col {col}) is outside the {shared}, which holds "
                        f"{grid[0]}x{grid[1]} sub-tiles of {piece}",
                    what=user_op_name(op),
                    hint=f"keep row in [0, {grid[0]}) and col in [0, {grid[1]}): on the GPU "
                         "nothing checks them, and the read returns other shared memory")

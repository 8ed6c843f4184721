"""Reading `ptxas -v` (nvcc -Xptxas -v): registers, stack, spills and shared memory of each
entry function, and the occupancy they allow on a Hopper multiprocessor.

    ptxas info    : Compiling entry function 'add' for 'sm_90a'
    ptxas info    : Function properties for add
        1072 bytes stack frame, 1068 bytes spill stores, 2104 bytes spill loads
    ptxas info    : Used 64 registers, used 0 barriers, 1072 bytes cumulative stack size
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...targets.base import Multiprocessor
from ..gates import Occupancy

_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_CUMULATIVE = re.compile(r"(\d+) bytes cumulative stack size")


@dataclass
class PtxasEntry:
    """One entry function as ptxas reports it."""
    name: str
    registers: int = 0
    stack_frame: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    shared_static: int = 0
    cumulative_stack: int = 0

    @property
    def stack_bytes(self) -> int:
        return max(self.stack_frame, self.cumulative_stack)


def parse_ptxas(log: str) -> dict[str, PtxasEntry]:
    """Every entry function ptxas reports in `log`, by name."""
    entries: dict[str, PtxasEntry] = {}
    current: PtxasEntry | None = None     # the entry being compiled ("Used ..." lines)
    described: str | None = None          # the function the next frame line describes
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = entries.setdefault(m.group(1), PtxasEntry(m.group(1)))
        elif m := _PROPERTIES.search(line):
            described = m.group(1)
        elif m := _FRAME.search(line):
            if described in entries:
                frame, stores, loads = (int(g) for g in m.groups())
                entry = entries[described]
                entry.stack_frame, entry.spill_stores, entry.spill_loads = frame, stores, loads
            described = None
        elif current is not None and (m := _USED.search(line)):
            current.registers = int(m.group(1))
            current.shared_static = _first_int(_SMEM, line)
            current.cumulative_stack = _first_int(_CUMULATIVE, line)
    return entries


def _first_int(pattern: re.Pattern, line: str) -> int:
    m = pattern.search(line)
    return int(m.group(1)) if m else 0


def occupancy(registers: int, warps: int, shared_bytes: int, sm: Multiprocessor) -> Occupancy:
    """Resident warps per multiprocessor (`sm`: the target table's `multiprocessor`): the least
    of what registers, shared memory, the block limit and the thread limit allow."""
    per_warp = -(-max(registers, 1) * 32 // sm.register_unit) * sm.register_unit
    limits = {  # on a tie the first is named: a hardware limit before a resource the kernel uses
        "threads": sm.max_warps // warps,
        "blocks": sm.max_blocks,
        "registers": sm.partitions * (sm.registers // sm.partitions // per_warp) // warps,
        "shared memory": sm.shared_bytes // (shared_bytes + sm.shared_reserved_per_block),
    }
    limited_by = min(limits, key=lambda name: limits[name])
    return Occupancy(limits[limited_by] * warps, sm.max_warps, limited_by)

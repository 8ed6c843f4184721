"""Blocks and warps: each block runs its W warps over the compiled kernel body.

Warps run in lockstep as generators: a warp runs until it reaches a meeting (kt.barrier,
kt.block_reduce), then the next warp runs; when all of them wait at the same meeting, it
completes (a block_reduce combines their values in warp order) and all continue. A warp
that ended, or waits at another meeting, while the others wait is an error at that meeting.
A warp may also stop at a spin (a pipeline stage's wait, ops_pipeline.py: `(op, ready,
SPIN)`): it goes on once `ready()` holds, while the others run; when every warp still running
spins and none is ready, the block is deadlocked, an error at the first spin.
"""
from __future__ import annotations

from xdsl.ir import Operation

from ..ir.query import error_at, user_op_name
from .memory import AsyncState, line_of
from .program import Program

SPIN = object()   # the third item of a spinning warp's stop: waits for `ready()`, meets no one


class Block:
    """One running block: its index (x, y, z) and its shared buffers (by alloc slot)."""
    __slots__ = ("idx", "shared")

    def __init__(self, idx: tuple[int, int, int]):
        self.idx = idx
        self.shared: dict = {}


class Warp:
    """One warp of a block: its id and its asynchronous operations in flight."""
    __slots__ = ("id", "block", "asyn", "pending")

    def __init__(self, warp_id: int, block: Block):
        self.id = warp_id
        self.block = block
        self.asyn = AsyncState()
        self.pending = self.asyn.pending  # read by every in-flight check: one lookup


def run_block(program: Program, arrays: list, idx: tuple[int, int, int]) -> None:
    block = Block(idx)
    warps = [Warp(i, block) for i in range(program.warps)]
    regs = [program.new_registers(arrays) for _ in warps]
    if program.body.is_gen:
        _run_lockstep(program, warps, regs)
    else:  # no meetings: any order of the warps is a valid schedule
        for warp, r in zip(warps, regs):
            program.body.run(r, warp)
    for warp in warps:
        warp.asyn.check_drained(warp.id)


def _run_lockstep(program: Program, warps: list[Warp], regs: list[list]) -> None:
    running = [program.body.run(r, w) for r, w in zip(regs, warps)]
    stops = [_advance(gen, None) for gen in running]
    while True:
        if all(stop is None for stop in stops):
            return
        spinning = [i for i, stop in enumerate(stops) if stop is not None and stop[2] is SPIN]
        ready = [i for i in spinning if stops[i][1]()]
        for i in ready:
            stops[i] = _advance(running[i], None)
        if ready:
            continue
        if spinning:
            raise _deadlock(stops[spinning[0]][0], stops)
        _, _, combine = _meeting(stops)
        reply = None if combine is None else combine([stop[1] for stop in stops])
        stops = [_advance(gen, reply) for gen in running]


def _deadlock(op: Operation, stops: list):
    waits = ", ".join(f"warp {i} {'ended' if s is None else 'at line ' + line_of(s[0])}"
                      for i, s in enumerate(stops))
    return error_at(op, f"{user_op_name(op)} never passes: no warp can make progress ({waits})",
                    what=user_op_name(op), hint="a pipeline's roles wait for each other: "
                    "check that the producer fills every stage the consumers wait for")


def _advance(gen, reply):
    """Run one warp to its next meeting: (op, value, combine), or None once it has ended."""
    try:
        return gen.send(reply)
    except StopIteration:
        return None


def _meeting(stops: list) -> tuple[Operation, object, object]:
    """The meeting all warps wait at; an error when some ended or wait elsewhere."""
    first = next(stop for stop in stops if stop is not None)
    op = first[0]
    if all(stop is not None and stop[0] is op for stop in stops):
        return first
    return _raise_divergence(op, stops)


def _raise_divergence(op: Operation, stops: list) -> tuple:
    name = user_op_name(op)
    others = []
    for i, stop in enumerate(stops):
        if stop is None:
            others.append(f"warp {i} ended")
        elif stop[0] is not op:
            others.append(f"warp {i} waits at line {line_of(stop[0])} "
                          f"({user_op_name(stop[0])})")
    raise error_at(op, f"{name} not reached by all warps: {', '.join(others)}", what=name,
                   hint="every warp must reach the same barriers and group reductions in the "
                        "same order: keep them out of branches and loops whose condition or "
                        "trip count depends on hk.arch.warp_id")


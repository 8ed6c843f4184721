"""What an emulated run reports: a broken ISA precondition (report.hpp's block on stderr) as an
EmulationError at the kernel's Python line, or a crash.

The report carries the reporting lane's stack as return addresses; llvm-symbolizer (LLVM 22,
as `ktile cocheck` finds it) maps them through the executable's line tables, whose `#line`
directives name the kernel's file, to the innermost kernel line. Without llvm-symbolizer the
error has no line but says everything else.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import KernelError, SourceLoc
from ..runtime.cache import run_command

BEGIN, END = "ktile-emulation-violation", "ktile-emulation-end"
VIOLATION_EXIT = 86          # report.hpp's violation_exit

# check → how to fix it, in the kernel author's terms (docs/emulation.md explains each check)
HINTS = {
    "lds-copy-not-waited": "a kt::copy_async (hk.group.load) must be waited for (hk.wait_for: "
                           "kt::wait<0, ...>) and followed by a barrier before its tile is read or "
                           "written again; the waits pass puts both there (trap 4)",
    "lds-race": "put an hk.barrier() between the waves' write and the other waves' read (or the "
                "read and the next write)",
    "lds-uninitialized": "write the shared tile (hk.group.load, or a store) before reading it",
    "lds-bounds": "the shared tile or sub-tile coordinates lie outside the block's shared memory",
    "lds-alignment": "a shared-memory access is misaligned for its width (a header bug)",
    "mma-replicas": "RDNA3 WMMA operands must be replicated across the half-waves; an operand tile "
                    "not made by the headers' frag_a / frag_b paths breaks that (a header bug)",
    "wave-divergence": "a wave instruction (an MMA, a lane shuffle, a wait) sits under a "
                       "condition that differs between lanes of one wave; make it uniform per warp",
    "global-bounds": "the access lies outside the tensor's memory; check the tile coordinates, or "
                     "report the headers' bounds logic",
    "global-alignment": "a global access by address is misaligned for its width",
    "buffer-partial-range": "a buffer access straddles its resource's end (a header bug)",
    "buffer-range": "a buffer resource's range is over 2^31 - 1 bytes",
}


@dataclass
class Violation:
    """report.hpp's block, parsed."""
    check: str
    block: tuple[int, int, int]
    wave: int
    lane: int
    message: str
    base: int
    frames: list[int] = field(default_factory=list)
    issued: list[int] = field(default_factory=list)


def parse_violation(stderr: str) -> Violation | None:
    lines = stderr.splitlines()
    if BEGIN not in lines:
        return None
    fields: dict[str, str] = {}
    for line in lines[lines.index(BEGIN) + 1:]:
        if line == END:
            break
        key, _, value = line.partition(": ")
        fields[key.rstrip(":")] = value
    x, y, z = (int(v) for v in fields.get("block", "0 0 0").split())
    return Violation(fields.get("check", "?"), (x, y, z), int(fields.get("wave", -1)),
                     int(fields.get("lane", -1)), fields.get("message", ""),
                     _address(fields.get("base", "0")), _addresses(fields.get("frames", "")),
                     _addresses(fields.get("issued", "")))


def _address(text: str) -> int:
    try:
        return int(text, 16)
    except ValueError:
        return 0


def _addresses(text: str) -> list[int]:
    return [a for a in (_address(t) for t in text.split()) if a]


def kernel_line(program: Path, base: int, frames: list[int]) -> SourceLoc | None:
    """The innermost frame's line in a Python file (the kernel's), through llvm-symbolizer."""
    from ..runtime.cocheck.llvm import find_tool
    symbolizer = find_tool("llvm-symbolizer")
    if symbolizer is None or not frames:
        return None
    # return addresses point after the call: one byte back lands on the call's own line
    offsets = [f"0x{max(f - base - 1, 0):x}" for f in frames]
    result = run_command([str(symbolizer), f"--obj={program}", "--inlining", "--functions=none",
                          *offsets], timeout=60)
    if result.returncode != 0:
        return None
    for line in result.log.splitlines():
        file, _, rest = line.strip().rpartition(".py:")
        if file and rest.split(":")[0].isdigit():
            return SourceLoc(file + ".py", int(rest.split(":")[0]))
    return None


class EmulationError(KernelError):
    """A kernel run under wave emulation broke an ISA precondition, or the emulator failed."""

    def __init__(self, message: str, *, kernel: str, target: str, check: str | None = None,
                 loc: SourceLoc | None = None, where: str | None = None, hint: str | None = None):
        self.check = check
        self.target = target
        op = f"{target} wave emulation" + (f", {where}" if where else "")
        super().__init__(f"{check}: {message}" if check else message, loc=loc, kernel=kernel, op=op,
                         hint=hint)


def violation_error(violation: Violation, program: Path, kernel: str,
                    target: str) -> EmulationError:
    x, y, z = violation.block
    where = f"block ({x}, {y}, {z}) wave {violation.wave} lane {violation.lane}"
    message = violation.message
    issued = kernel_line(program, violation.base, violation.issued)
    if issued is not None:
        message += f" [the copy was issued at {issued}]"
    return EmulationError(message, kernel=kernel, target=target, check=violation.check,
                          loc=kernel_line(program, violation.base, violation.frames), where=where,
                          hint=HINTS.get(violation.check))


def failure_error(returncode: int, stderr: str, program: Path, kernel: str,
                  target: str) -> EmulationError:
    """An emulator that ended without a report: a crash, a harness refusal, an emulator bug."""
    tail = "\n  ".join(line for line in stderr.strip().splitlines()[-6:]) or "(no output)"
    what = f"killed by signal {-returncode}" if returncode < 0 else f"exit {returncode}"
    return EmulationError(f"the emulated kernel failed ({what}):\n  {tail}", kernel=kernel,
                          target=target,
                          hint=f"the emulator is {program}; report it with the kernel")

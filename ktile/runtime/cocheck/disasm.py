"""The disassembly of a code object as instructions: `llvm-objdump -d -l --mcpu=gfxNNNN`.

Each instruction keeps its address, its text as objdump prints it, and the source `file:line`
objdump gives when the object carries line tables (clang -g, llvm-mc -g). Functions are cut
by symbol address ranges (readelf's FUNC symbols), not by objdump's headers, because every
label of hand-written assembly that is not `.L`-prefixed also becomes a symbol.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .llvm import ToolFailed, run_tool
from .readelf import Symbol

# "\ts_cbranch_scc1 2   // 000000001518: BFA20002 <planted+0x24>": text, address, encoding and
# the branch target objdump names
INSTRUCTION = re.compile(
    r"^\s+(\S.*?)\s*//\s*([0-9A-Fa-f]+):\s*([0-9A-Fa-f ]*?)\s*(?:<[^>]*>)?\s*$")
SOURCE_LINE = re.compile(r"^; (.+:\d+)\s*$")
SECTION = re.compile(r"^Disassembly of section (\S+):")


@dataclass(frozen=True)
class Instruction:
    address: int
    text: str                   # "global_load_b32 v1, v0, s[2:3]"
    size: int                   # bytes, from the printed encoding
    source: str | None = None   # "kernel.s:12" where line tables exist

    @property
    def mnemonic(self) -> str:
        return self.text.split(None, 1)[0]

    @property
    def operands(self) -> str:
        parts = self.text.split(None, 1)
        return parts[1] if len(parts) > 1 else ""

    def where(self) -> str:
        place = f"0x{self.address:x}"
        return f"{place} ({self.source})" if self.source else place


def disassemble(path: Path, arch: str) -> list[Instruction]:
    """Every instruction of the code object's executable sections, in address order."""
    listing = run_tool("llvm-objdump", "-d", "-l", f"--mcpu={arch}", str(path))
    return parse_listing(listing)


def parse_listing(listing: str) -> list[Instruction]:
    """The instructions of the listing; ToolFailed on a code line this reader does not know,
    since a dropped instruction (a branch, a wait) would silently change the check."""
    instructions, source, in_text = [], None, False
    for line in listing.splitlines():
        section = SECTION.match(line)
        if section:
            in_text, source = section.group(1).startswith(".text"), None
            continue
        found_source = SOURCE_LINE.match(line)
        if found_source:
            source = found_source.group(1).strip()
            continue
        if not in_text or not line.startswith("\t") or line.strip() in ("", "..."):
            continue
        found = INSTRUCTION.match(line)
        if not found:
            raise ToolFailed(f"llvm-objdump printed a code line cocheck cannot read: "
                             f"{line.strip()!r}")
        text, address, encoding = found.groups()
        size = len(encoding.replace(" ", "")) // 2
        instructions.append(Instruction(int(address, 16), text, size, source))
    return instructions


def function_ranges(symbols: list[Symbol], instructions: list[Instruction],
                    names: set[str]) -> dict[str, tuple[int, int]]:
    """[start, end) of each FUNC symbol, and of each named kernel entry whatever its type.

    A symbol without a size runs to the next function start or the end of the code."""
    entries = {s.name: s for s in symbols if s.kind == "FUNC" or s.name in names}
    starts = sorted({s.address for s in entries.values()})
    code_end = instructions[-1].address + instructions[-1].size if instructions else 0
    ranges = {}
    for name, symbol in entries.items():
        following = [a for a in starts if a > symbol.address] + [code_end]
        end = symbol.address + symbol.size if symbol.size else following[0]
        ranges[name] = (symbol.address, end)
    return ranges


"""What llvm-readelf says about a code object: its arch, its function symbols, and the AMDGPU
metadata of each kernel (code object v3+: the msgpack note, which readelf prints as YAML).

The YAML is LLVM's own normalized printing, so a line-based reader is enough: each kernel is
a list item under `amdhsa.kernels:` whose scalar keys sit at one indentation; nested lists
(`.args`) are skipped. No YAML library is needed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .llvm import run_tool

FLAGS_ARCH = re.compile(r"^\s*Flags:\s*\S+,\s*(gfx\w+)", re.M)
TARGET_ARCH = re.compile(r"--(gfx\w+)")
SYMBOL = re.compile(r"^\s*\d+:\s+([0-9a-fA-F]+)\s+(\d+)\s+(\w+)\s+\w+\s+\w+\s+\S+\s+(\S+)\s*$")
ITEM_START = re.compile(r"^  - (\.[\w.]+):\s*(.*)$")
ITEM_KEY = re.compile(r"^    (\.[\w.]+):\s*(.*)$")


@dataclass(frozen=True)
class Symbol:
    name: str
    address: int
    size: int
    kind: str           # FUNC, OBJECT, NOTYPE


@dataclass
class ElfFacts:
    arch: str | None                        # gfx name from the metadata, else the ELF flags
    symbols: list[Symbol]
    kernels: list[dict[str, object]]        # one dict of metadata keys per kernel
    has_metadata: bool = False


def read_elf(path: Path) -> ElfFacts:
    text = run_tool("llvm-readelf", "--file-header", "--symbols", "--notes", "--wide", str(path))
    metadata = _metadata_block(text)
    target = _top_level_value(metadata, "amdhsa.target")
    arch = _match(TARGET_ARCH, target or "") or _match(FLAGS_ARCH, text)
    return ElfFacts(arch=arch, symbols=_symbols(text), kernels=_kernels(metadata),
                    has_metadata=bool(metadata))


def _match(pattern: re.Pattern, text: str) -> str | None:
    found = pattern.search(text)
    return found.group(1) if found else None


def _symbols(text: str) -> list[Symbol]:
    seen: dict[tuple[str, int], Symbol] = {}
    for line in text.splitlines():
        found = SYMBOL.match(line)
        if found:
            address, size, kind, name = found.groups()
            symbol = Symbol(name, int(address, 16), int(size), kind)
            seen.setdefault((name, symbol.address), symbol)    # .symtab and .dynsym repeat
    return list(seen.values())


def _metadata_block(text: str) -> list[str]:
    """The lines of the metadata YAML document, between `---` and `...`."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if "AMDGPU Metadata:" in line)
        begin = next(i for i in range(start, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        return []
    end = next((i for i in range(begin + 1, len(lines)) if lines[i].strip() == "..."), len(lines))
    return lines[begin + 1:end]


def _top_level_value(lines: list[str], key: str) -> str | None:
    prefix = f"{key}:"
    for line in lines:
        if line.startswith(prefix):
            return _scalar(line[len(prefix):])
    return None


def _kernels(lines: list[str]) -> list[dict[str, object]]:
    kernels: list[dict[str, object]] = []
    in_kernels = False
    for line in lines:
        if line and not line.startswith(" "):
            in_kernels = line.startswith("amdhsa.kernels:")
            continue
        if not in_kernels:
            continue
        _read_kernel_line(line, kernels)
    return kernels


def _read_kernel_line(line: str, kernels: list[dict[str, object]]) -> None:
    start = ITEM_START.match(line)
    if start:
        kernels.append({})
    found = start or ITEM_KEY.match(line)
    if found and kernels and found.group(2).strip():
        kernels[-1][found.group(1)] = _scalar(found.group(2))


def _scalar(text: str) -> object:
    value = text.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if value in ("true", "false"):
        return value == "true"
    try:
        return int(value, 0)
    except ValueError:
        return value

"""What a file given to cocheck holds: AMDGPU code objects, directly or packed.

- an ELF file for EM_AMDGPU: an `.hsaco`, a linked `.co`, or a relocatable `.o` from `llvm-mc`
  or `clang --cuda-device-only -c --no-gpu-bundle-output`;
- a clang offload bundle (`clang --cuda-device-only -c` without `--no-gpu-bundle-output`);
- a host ELF (object, executable, shared library) whose `.hip_fatbin` section holds bundles,
  as hipcc / `clang -x hip -c` write them; the section is read with llvm-objcopy.
Each amdgcn entry of a bundle is unpacked and checked on its own. Compressed bundles (`CCOB`)
are not unpacked. Anything else is unusable input (exit status 2).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from .llvm import ToolFailed, ToolMissing, run_tool

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_BUNDLE_MAGIC = b"CCOB"
MACHINES = {3: "x86 (i386)", 62: "x86-64", 183: "AArch64", 190: "NVIDIA CUDA", 243: "RISC-V"}


class UnusableInput(Exception):
    """The file is not something cocheck can read; the message says what it is instead."""


@dataclass(frozen=True)
class CodeObjectFile:
    label: str          # how reports name it: the path, with [target] for a bundle entry
    path: Path          # an ELF file on disk (a temporary one for a bundle entry)


def code_objects_in(path: Path, scratch: Path) -> list[CodeObjectFile]:
    """The AMDGPU code objects `path` holds; bundle entries are written under `scratch`."""
    if not path.exists():
        raise UnusableInput(f"{path}: no such file")
    if not path.is_file():
        raise UnusableInput(f"{path}: not a file")
    head = _head(path)
    if not head:
        raise UnusableInput(f"{path}: an empty file, not an AMDGPU code object")
    if head.startswith(ELF_MAGIC):
        machine = _elf_machine(path, head)
        if machine == EM_AMDGPU:
            return [CodeObjectFile(str(path), path)]
        return _from_host_binary(path, machine, scratch)
    if head.startswith(BUNDLE_MAGIC):
        return _unbundle(str(path), path.read_bytes(), scratch)
    if head.startswith(COMPRESSED_BUNDLE_MAGIC):
        raise UnusableInput(_compressed(str(path)))
    raise UnusableInput(f"{path}: not an AMDGPU code object (not an ELF file, nor a clang "
                        f"offload bundle)")


def _head(path: Path) -> bytes:
    """The file's first bytes, enough for any magic and the ELF machine field."""
    try:
        with path.open("rb") as stream:
            return stream.read(64)
    except OSError as error:
        raise UnusableInput(f"{path}: cannot be read ({error.strerror or error})") from error


def _elf_machine(path: Path | str, data: bytes) -> int:
    if len(data) < 20:
        raise UnusableInput(f"{path}: truncated ELF header")
    order = "<" if data[5] == 1 else ">"
    return struct.unpack_from(order + "H", data, 18)[0]


def _from_host_binary(path: Path, machine: int, scratch: Path) -> list[CodeObjectFile]:
    """The bundles in a host binary's .hip_fatbin section (several in a linked binary)."""
    what = MACHINES.get(machine, f"e_machine {machine}")
    section = scratch / f"{path.name}.hip_fatbin"
    try:
        run_tool("llvm-objcopy", "--only-section=.hip_fatbin", "--dump-section",
                 f".hip_fatbin={section}", str(path), str(scratch / f"{path.name}.discard"))
    except ToolMissing as error:
        raise UnusableInput(f"{path}: an ELF file for {what}, not an AMDGPU code object; its "
                            f".hip_fatbin section could not be looked for ({error})") from error
    except ToolFailed as error:
        raise UnusableInput(f"{path}: an ELF file for {what} without a .hip_fatbin section: "
                            f"not an AMDGPU code object, nor a HIP host binary") from error
    data = section.read_bytes()
    if data.startswith(COMPRESSED_BUNDLE_MAGIC):
        raise UnusableInput(_compressed(f"{path} (.hip_fatbin)"))
    return _unbundle(f"{path}[.hip_fatbin]", data, scratch)


def _unbundle(label: str, data: bytes, scratch: Path) -> list[CodeObjectFile]:
    starts = _bundle_starts(data)
    found = []
    for start in starts:
        for triple, offset, size in _bundle_entries(label, data, start):
            if "amdgcn" not in triple:
                continue
            target = triple.rsplit("--", 1)[-1] or triple
            where = f"{label}[{target}]" if len(starts) == 1 else f"{label}@{start:#x}[{target}]"
            out = scratch / f"entry{len(found)}.{target.replace(':', '_')}.o"
            out.write_bytes(data[start + offset:start + offset + size])
            if _elf_machine(where, data[start + offset:start + offset + 64]) != EM_AMDGPU:
                raise UnusableInput(f"{where}: the bundle entry is not an AMDGPU ELF file")
            found.append(CodeObjectFile(where, out))
    if not found:
        raise UnusableInput(f"{label}: a clang offload bundle with no amdgcn entry")
    return found


def _bundle_starts(data: bytes) -> list[int]:
    starts, at = [], data.find(BUNDLE_MAGIC)
    while at >= 0:
        starts.append(at)
        at = data.find(BUNDLE_MAGIC, at + len(BUNDLE_MAGIC))
    return starts


def _bundle_entries(label: str, data: bytes, start: int) -> list[tuple[str, int, int]]:
    """(triple, offset, size) of every entry: magic, u64 count, then per entry u64 offset
    (from the bundle's start), u64 size, u64 triple length and the triple (clang's
    OffloadBundler format, little-endian)."""
    try:
        count, = struct.unpack_from("<Q", data, start + len(BUNDLE_MAGIC))
        cursor, entries = start + len(BUNDLE_MAGIC) + 8, []
        for _ in range(count):
            offset, size, length = struct.unpack_from("<QQQ", data, cursor)
            triple = data[cursor + 24:cursor + 24 + length].decode()
            entries.append((triple, offset, size))
            cursor += 24 + length
    except (struct.error, UnicodeDecodeError) as error:
        raise UnusableInput(f"{label}: a damaged clang offload bundle ({error})") from error
    return entries


def _compressed(label: str) -> str:
    return (f"{label}: a compressed clang offload bundle; unpack it first with "
            f"clang-offload-bundler-22 --unbundle --type=o --input=<bundle> "
            f"--targets=hipv4-amdgcn-amd-amdhsa--<gfx> --output=<gfx>.hsaco")

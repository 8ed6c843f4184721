"""Checking files: each code object's kernels through the resource gate and the wait check."""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import findings as kinds
from .archinfo import ArchInfo, UnknownArch, arch_info
from .disasm import Instruction, disassemble, function_ranges
from .findings import Finding
from .inputs import CodeObjectFile, UnusableInput, code_objects_in
from .llvm import ToolFailed, demangle, require_tool
from .readelf import ElfFacts, read_elf
from .report import FunctionReport, ObjectReport, Report
from .resources import KernelResources, Limits, occupancy, resource_findings
from .waits import check_function

REQUIRED_TOOLS = ("llvm-readelf", "llvm-objdump")


@dataclass(frozen=True)
class Options:
    limits: Limits = Limits()
    mcpu: str | None = None         # overrides the arch the code object names


def check_paths(paths: list[str | Path], options: Options = Options()) -> Report:
    """Every code object in `paths`; raises ToolMissing before reading any of them."""
    for tool in REQUIRED_TOOLS:
        require_tool(tool)
    report = Report()
    with tempfile.TemporaryDirectory(prefix="ktile-cocheck-") as scratch:
        for path in paths:
            report.objects.extend(_check_path(Path(path), Path(scratch), options))
    return report


def _check_path(path: Path, scratch: Path, options: Options) -> list[ObjectReport]:
    try:
        files = code_objects_in(path, scratch)
    except UnusableInput as error:
        return [ObjectReport(str(path), error=str(error))]
    return [check_code_object(file, options) for file in files]


def check_code_object(file: CodeObjectFile, options: Options = Options()) -> ObjectReport:
    try:
        facts = read_elf(file.path)
        arch = arch_info(_arch_name(file, facts, options))
        instructions = disassemble(file.path, arch.name)
    except (UnusableInput, UnknownArch, ToolFailed) as error:
        return ObjectReport(file.label, error=_with_label(file.label, str(error)))
    return ObjectReport(file.label, arch=arch.name,
                        functions=_functions(facts, arch, instructions, options.limits))


def _arch_name(file: CodeObjectFile, facts: ElfFacts, options: Options) -> str:
    if not facts.has_metadata:
        raise UnusableInput(f"{file.label}: no AMDGPU metadata note; cocheck reads HSA code "
                            f"objects of version 3 or newer (clang-22 writes version 6)")
    if options.mcpu or facts.arch:
        return options.mcpu or facts.arch
    raise UnusableInput(f"{file.label}: names no gfx arch in its ELF flags or metadata; "
                        f"pass --mcpu gfxNNNN")


def _functions(facts: ElfFacts, arch: ArchInfo, instructions: list[Instruction],
               limits: Limits) -> list[FunctionReport]:
    kernels = {str(meta.get(".name")): meta for meta in facts.kernels}
    ranges = function_ranges(facts.symbols, instructions, set(kernels))
    names = demangle(sorted(set(kernels) | set(ranges)))
    reports = [_kernel(name, meta, names[name], arch, instructions, ranges, limits)
               for name, meta in kernels.items()]
    reports += [_function(name, names[name], arch, instructions, ranges[name])
                for name in sorted(ranges) if name not in kernels]
    return reports


def _kernel(name: str, meta: dict, display: str, arch: ArchInfo,
            instructions: list[Instruction], ranges: dict, limits: Limits) -> FunctionReport:
    resources = KernelResources.from_metadata(meta)
    found = resource_findings(resources, arch, limits, display)
    if name not in ranges:
        found.append(Finding(kinds.NOT_CHECKED, display, failing=False,
                             message="the metadata names this kernel but the code object "
                                     "has no symbol for its code: waits not checked",
                             fix="keep the kernel's symbol (do not strip .symtab and .dynsym)"))
        return FunctionReport(name, display, True, resources, occupancy(resources, arch), 0,
                              found)
    report = _function(name, display, arch, instructions, ranges[name])
    report.is_kernel, report.resources = True, resources
    report.occupancy = occupancy(resources, arch)
    report.findings = found + report.findings
    return report


def _function(name: str, display: str, arch: ArchInfo, instructions: list[Instruction],
              span: tuple[int, int]) -> FunctionReport:
    start, end = span
    body = [i for i in instructions if start <= i.address < end]
    found, reached = check_function(display, body, arch)
    return FunctionReport(name, display, False, None, None, reached, found)


def _with_label(label: str, message: str) -> str:
    return message if message.startswith(label) else f"{label}: {message}"

"""The outcome of a cocheck run: per code object, per kernel; as text or as JSON.

Exit status: 0 when every input was read and nothing failed, 1 when a kernel failed a check
(spill, scratch, LDS, a limit, a wait hazard), 2 when an input could not be read at all.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from .findings import Finding
from .resources import KernelResources, Occupancy

CLEAN, FAILING, UNUSABLE = 0, 1, 2
JSON_VERSION = 1


@dataclass
class FunctionReport:
    name: str                       # as the code object spells it (mangled)
    display: str                    # demangled where llvm-cxxfilt is present
    is_kernel: bool
    resources: KernelResources | None
    occupancy: Occupancy | None
    instructions_checked: int
    findings: list[Finding]

    @property
    def failing(self) -> bool:
        return any(f.failing for f in self.findings)

    def to_json(self) -> dict:
        return {"name": self.name, "display_name": self.display,
                "kind": "kernel" if self.is_kernel else "function",
                "ok": not self.failing,
                "resources": self.resources.to_json() if self.resources else None,
                "occupancy": self.occupancy.to_json() if self.occupancy else None,
                "instructions_checked": self.instructions_checked,
                "findings": [f.to_json() for f in self.findings]}


@dataclass
class ObjectReport:
    label: str
    arch: str | None = None
    functions: list[FunctionReport] = field(default_factory=list)
    error: str | None = None        # the input could not be read

    @property
    def failing(self) -> bool:
        return any(f.failing for f in self.functions)

    def to_json(self) -> dict:
        return {"input": self.label, "arch": self.arch, "error": self.error,
                "ok": self.error is None and not self.failing,
                "kernels": [f.to_json() for f in self.functions]}

    def to_text(self) -> str:
        if self.error:
            return f"{self.error}"
        kernels = sum(f.is_kernel for f in self.functions)
        lines = [f"{self.label}: {self.arch}, {kernels} kernel{'s' * (kernels != 1)}"]
        for function in self.functions:
            lines.extend(_function_text(function, self.label))
        errors = sum(f.failing for fn in self.functions for f in fn.findings)
        lines.append(f"{self.label}: {'ok' if not errors else f'{errors} failing'}")
        return "\n".join(lines)


@dataclass
class Report:
    objects: list[ObjectReport] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if any(o.error for o in self.objects):
            return UNUSABLE
        return FAILING if any(o.failing for o in self.objects) else CLEAN

    def to_json(self) -> str:
        return json.dumps({"tool": "ktile cocheck", "version": JSON_VERSION,
                           "exit_code": self.exit_code, "ok": self.exit_code == CLEAN,
                           "objects": [o.to_json() for o in self.objects]}, indent=2)


def _function_text(function: FunctionReport, label: str) -> list[str]:
    what = "kernel" if function.is_kernel else "function"
    named = function.display if function.display == function.name else \
        f"{function.display}  [{function.name}]"
    lines = [f"  {what} {named}"]
    if function.resources:
        lines.append(f"    resources  {_resources_text(function.resources)}")
    if function.occupancy:
        lines.append(f"    occupancy  {_occupancy_text(function.occupancy, function.resources)}")
    hazards = sum(f.kind.endswith("hazard") for f in function.findings)
    lines.append(f"    waits      {function.instructions_checked} instructions checked, "
                 f"{hazards or 'no'} hazard{'s' * (hazards != 1)}")
    lines.extend(_indent(f.render(label), "  ") for f in function.findings)
    return lines


def _resources_text(res: KernelResources) -> str:
    wave = f"wave{res.wave_size}" if res.wave_size else "wave size unknown"
    threads = f", up to {res.max_threads} threads per block" if res.max_threads else ""
    return (f"{_count(res.vgprs)} VGPRs ({res.agprs} AGPRs), {_count(res.sgprs)} SGPRs, "
            f"{res.lds_bytes} B static LDS, {res.scratch_bytes} B scratch per lane, "
            f"spills {res.vgpr_spills} VGPR + {res.sgpr_spills} SGPR; {wave}{threads}")


def _occupancy_text(occ: Occupancy, res: KernelResources | None) -> str:
    vgprs = res.vgprs if res else "?"
    return (f"{occ.waves} of {occ.max_waves} waves per SIMD (VGPR-limited estimate: {vgprs} "
            f"VGPRs allocated as {occ.allocated_vgprs} of {occ.file_vgprs} per lane)")


def _count(value: int | None) -> str:
    return "?" if value is None else str(value)


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.splitlines())

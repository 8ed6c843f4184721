"""cocheck: the resource gate and a disassembly wait check on any AMDGPU code object.

    from ktile.runtime.cocheck import check_paths, Options, Limits
    report = check_paths(["k.hsaco"], Options(Limits(max_vgprs=128)))
    report.exit_code, report.to_json()

The data path, one module each: inputs (ELF or offload bundle) → readelf (arch, symbols,
metadata) → resources (the gate) and disasm → isa (what each instruction does) → waits (the
dataflow check) → report. archinfo holds the arch facts; llvm finds the tools. The command
line is `ktile cocheck` (cli.py); docs/cocheck.md has the model and its approximations.
"""
from .check import Options, check_code_object, check_paths
from .llvm import ToolFailed, ToolMissing
from .report import CLEAN, FAILING, UNUSABLE, Report
from .resources import Limits

__all__ = ["Options", "Limits", "check_paths", "check_code_object", "Report", "ToolMissing",
           "ToolFailed", "CLEAN", "FAILING", "UNUSABLE"]

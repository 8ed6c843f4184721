"""ktile-opt: read a kt module, run passes by name, print the result.

    ktile-opt kernel.mlir -p verify,fragments,tensor-maps,lds-alloc,waits,budgets
    ktile-opt kernel.mlir                      # parse and print (round trip)
    ktile-opt bad.mlir -p waits --verify-diagnostics --split-input-file

xDSL's driver with ktile's context (builtin, func, arith, scf, math, kt) and ktile's passes.
A kernel error from a pass is printed as the author would see it, never as a traceback: on
stdout with --verify-diagnostics (exit 0, for FileCheck), else on stderr (exit 1). Warnings
go to stderr.
"""
from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from ..errors import KernelError, KernelWarning


class KtileOptMain(xDSLOptMain):
    version_format = "ktile-opt built on xdsl version {xdsl_version}"

    def register_all_dialects(self) -> None:
        from ..ir.dialect import make_context
        for dialect in make_context().loaded_dialects:
            self.ctx.register_dialect(dialect.name, lambda d=dialect: d)

    def register_all_passes(self) -> None:
        from ..passes import PASSES
        for name, pass_class in PASSES.items():
            self.register_pass(name, lambda p=pass_class: p)

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except KernelError as error:
            raise DiagnosticException(str(error)) from error


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stdout.flush()  # keep a warning after the output of the chunks before it
    if issubclass(category, KernelWarning):
        print(message, file=sys.stderr)
    else:
        sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def main(argv: Sequence[str] | None = None) -> int:
    warnings.showwarning = show_warning
    warnings.simplefilter("always", KernelWarning)
    try:
        KtileOptMain(description="ktile's kt-dialect optimizer and checker", args=argv).run()
    except (KernelError, DiagnosticException, ParseError) as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

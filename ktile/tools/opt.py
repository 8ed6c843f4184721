"""ktile-opt: read a kt module, run passes by name, print the result.

    ktile-opt kernel.mlir -p verify,fragments,tensor-maps,lds-alloc,waits,budgets
    ktile-opt kernel.mlir                      # parse and print (round trip)
    ktile-opt bad.mlir -p waits --verify-diagnostics --split-input-file

xDSL's driver with ktile's context (builtin, func, arith, scf, math, kt) and ktile's passes.
The module is verified after parsing (each kt op's type relations: ktile/ir/verifiers.py) and
after every pass. A kernel error, from a verifier or a pass, is printed as the author would see
it, never as a traceback: on stdout with --verify-diagnostics (exit 0, for FileCheck), else on
stderr (exit 1). Input that is not a kt module (a missing file, a directory, binary or empty
input, a syntax error) exits 1 and an unknown pass or flag exits 2, each with one message.
Warnings go to stderr.
"""
from __future__ import annotations

import io
import sys
import warnings
from collections.abc import Sequence
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import (ArgSpecParseError, DiagnosticException, ParseError,
                                    VerifyException)
from xdsl.xdsl_opt_main import xDSLOptMain

from ..errors import KernelError, KernelWarning
from ..ir.printing import syntax_error
from ..ir.query import located_verify_error
from .inputs import ToolError, read_source


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

    def register_all_arguments(self, arg_parser) -> None:
        arg_parser.prog = "ktile-opt"  # usage lines name the tool, however it was started
        super().register_all_arguments(arg_parser)

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input, read whole and checked (inputs.py); MLIR text whatever its extension."""
        return io.BytesIO(read_source(self.args.input_file).encode()), "mlir"

    def setup_pipeline(self) -> None:
        """Refuses a pass list that does not parse or names a pass ktile-opt does not know,
        before any input is read."""
        try:
            names = [spec.name for spec in parse_pipeline(self.args.passes)]
        except ArgSpecParseError as err:
            raise ToolError(f"cannot read the pass list {self.args.passes!r}: "
                            f"{str(err).splitlines()[-1].strip()}", code=2) from None
        unknown = [name for name in names if name not in self.available_passes]
        if unknown:
            raise ToolError(f"unknown pass {unknown[0]!r}: the passes are "
                            f"{', '.join(self.available_passes)} (-p verify,fragments,...)",
                            code=2)
        try:
            super().setup_pipeline()
        except ValueError as err:  # an option the pass does not take
            raise ToolError(f"bad pass list {self.args.passes!r}: {err}", code=2) from None

    def apply_passes(self, prog: ModuleOp) -> None:
        try:
            super().apply_passes(prog)
        except KernelError as error:
            raise DiagnosticException(str(error)) from error
        except VerifyException as error:  # a func, arith or scf op: name it
            raise DiagnosticException(str(located_verify_error(prog, error))) from error


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
    except ToolError as error:
        print(f"ktile-opt: {error}", file=sys.stderr)
        return error.code
    except ParseError as error:
        print(syntax_error(error), file=sys.stderr)
        return 1
    except (KernelError, DiagnosticException) as error:
        print(str(error).strip(), file=sys.stderr)
        return 1
    except OSError as error:  # the -o file
        print(f"ktile-opt: cannot write {error.filename}: {error.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

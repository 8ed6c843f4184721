"""ktile-translate: a kt module (MLIR text) in, the C++ it translates to out.

    ktile-translate kernel.mlir                  # target: the module's kt.target attribute
    ktile-opt -p ... kernel.mlir | ktile-translate --target sm_90a
    python -m ktile.tools.translate kernel.mlir -o kernel.cpp

The module is translated as given: run the passes first (`ktile-opt`), or the waits carry no
derived counts and the register tiles no fragments. It is verified first (each kt op's type
relations: ktile/ir/verifiers.py). Input that is not a kt module, IR that fails verification
and a module the translation refuses exit 1 with one message; a bad flag or target exits 2.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import KtileError
from .inputs import ToolError, input_name, read_source


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    from ..targets import NAMES
    parser = argparse.ArgumentParser(prog="ktile-translate", description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", default="-",
                        help="a .mlir file holding a kt module; '-' or nothing reads stdin")
    parser.add_argument("--target", choices=NAMES,
                        help="translate for this arch instead of the module's kt.target")
    parser.add_argument("-o", "--output", default="-", help="where to write the C++ ('-': stdout)")
    return parser.parse_args(argv)


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    from ..codegen import translate
    from ..ir.printing import parse_module
    try:
        module = parse_module(read_source(args.input), input_name(args.input), verify=True)
        source = translate(module, args.target)
        _write(args.output, source)
    except ToolError as exc:
        print(f"ktile-translate: {exc}", file=sys.stderr)
        return exc.code
    except KtileError as exc:
        print(f"ktile-translate: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # the -o file
        print(f"ktile-translate: cannot write {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

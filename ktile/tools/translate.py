"""ktile-translate: a kt module (MLIR text) in, the C++ it translates to out.

    ktile-translate kernel.mlir                  # target: the module's kt.target attribute
    ktile-opt -p ... kernel.mlir | ktile-translate --target sm_90a
    python -m ktile.tools.translate kernel.mlir -o kernel.cpp

The module is translated as given: run the passes first (`ktile-opt`), or the waits carry no
derived counts and the register tiles no fragments.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import KtileError


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    from ..targets import NAMES
    parser = argparse.ArgumentParser(prog="ktile-translate", description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", default="-",
                        help="a .mlir file holding a kt module; '-' or nothing reads stdin")
    parser.add_argument("--target", choices=NAMES,
                        help="translate for this arch instead of the module's kt.target")
    parser.add_argument("-o", "--output", default="-", help="where to write the C++ ('-': stdout)")
    return parser.parse_args(argv)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stdout.write(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    from xdsl.utils.exceptions import ParseError, VerifyException

    from ..codegen import translate
    from ..ir.printing import parse_module
    try:
        module = parse_module(_read(args.input))
        module.verify()
        source = translate(module, args.target)
    except (KtileError, OSError, ParseError, VerifyException) as exc:
        print(f"ktile-translate: {exc}", file=sys.stderr)
        return 1
    _write(args.output, source)
    return 0


if __name__ == "__main__":
    sys.exit(main())

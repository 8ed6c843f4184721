"""`ktile cocheck FILE...`: the resource gate and the wait check on AMDGPU code objects.

    ktile cocheck kernel.hsaco                     # report; exit 1 on spill / scratch / hazard
    ktile cocheck a.hsaco b.o --json               # machine-readable report on stdout
    ktile cocheck k.hsaco --max-vgprs 128 --min-occupancy 4
    ktile cocheck k.hsaco --mcpu gfx950            # override the arch the ELF names

Exit status 0 clean, 1 failing, 2 unusable input or missing LLVM tools.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .check import Options, check_paths
from .llvm import ToolMissing
from .report import UNUSABLE
from .resources import Limits


def build_parser(prog: str = "ktile cocheck") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Check AMDGPU code objects: refuse register spills and scratch "
        "use, report VGPRs / SGPRs / LDS / occupancy, and find registers read before the "
        "wait that covers the load writing them.")
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="code objects (.hsaco, .o) or clang offload bundles")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--max-vgprs", type=_positive, metavar="N",
                        help="fail a kernel using more than N VGPRs (AGPRs included on gfx90a+)")
    parser.add_argument("--min-occupancy", type=_positive, metavar="N",
                        help="fail a kernel whose VGPRs allow fewer than N waves per SIMD")
    parser.add_argument("--mcpu", metavar="gfxNNNN",
                        help="the arch to check for (default: the one the code object names)")
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "ktile cocheck") -> int:
    args = build_parser(prog).parse_args(argv)
    options = Options(Limits(args.max_vgprs, args.min_occupancy), args.mcpu)
    try:
        report = check_paths(args.files, options)
    except ToolMissing as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return UNUSABLE
    if args.json:
        print(report.to_json())
    else:
        _print_text(report)
    return report.exit_code


def _print_text(report) -> None:
    for result in report.objects:
        stream = sys.stderr if result.error else sys.stdout
        prefix = "error: " if result.error else ""
        print(prefix + result.to_text(), file=stream)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


if __name__ == "__main__":
    sys.exit(main())

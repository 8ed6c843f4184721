"""`ktile tune OP --target T [--shapes RxC,...] [--dtype D] [--rounds N] [--out PATH]
[--static] [--[no-]alternatives] [--dry-run] [--json] [--progress]`: tune one op, write its routing table.

    ktile tune rms_norm --target sm_90a --shapes 1x1024,512x1024,1x4096,512x4096
    ktile tune rms_norm --target sm_90a --dry-run          # build + gate only, no GPU needed
    ktile tune rms_norm --target gfx950 --static           # AMD: by the static quality report

Without --out the table goes into the package: ktile/ops/routes/<target>/<op>.json. A dry run
writes nothing. Exit status 0 done, 1 failed (every candidate of a bucket refused, no GPU to
time on), 2 unusable input. With --json the last line of stdout is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ..errors import InputError

DEFAULT_SHAPES = "1x1024,256x1024,1x2048,256x2048,1x4096,256x4096,1x8192,256x8192"


class _Parser(argparse.ArgumentParser):
    def error(self, message):                  # exit 2 through main, with --json's object
        raise _Usage(f"{message}\n{self.format_usage().strip()}")


class _Usage(Exception):
    pass


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Tune one op on one target: candidate routes from "
                     "the op's table, built and gated, timed interleaved on the GPU, a route "
                     "replacing the default only when faster beyond the noise (docs/tuning.md).")
    parser.add_argument("op", help="the op's name (rms_norm, softmax, ...)")
    parser.add_argument("--target", required=True, help="the target (sm_90a, gfx950, ...)")
    parser.add_argument("--shapes", default=None,
                        help=f"rows x cols problems, comma-separated (default {DEFAULT_SHAPES}; "
                             f"with --static, 1, 512 and 16384 rows at 1024-16384 columns)")
    parser.add_argument("--dtype", default="bf16", help="the dtype timed (default bf16); "
                        "candidates are gated for every dtype of the op")
    parser.add_argument("--rounds", type=int, default=30, help="timed rounds (default 30)")
    parser.add_argument("--out", help="where to write the table (default: into the package)")
    parser.add_argument("--static", action="store_true", help="AMD targets: choose by the "
                        "static quality report (occupancy, hot-loop mix), not by timing; the "
                        "table is marked not measured")
    parser.add_argument("--alternatives", action=argparse.BooleanOptionalAction, default=None,
                        help="the op's torch and triton alternatives join the timed candidates "
                             "(default: on when timing; off with --static or --dry-run)")
    parser.add_argument("--dry-run", action="store_true", help="build and gate only")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    parser.add_argument("--progress", action="store_true", help="a progress bar on stderr "
                        "even when it is not a terminal")
    return parser


def _static_shapes() -> str:
    from .static import SHAPES
    return SHAPES


def parse_shapes(text: str) -> list[tuple[int, int]]:
    shapes = []
    for part in text.split(","):
        rows, sep, cols = part.strip().lower().partition("x")
        if not sep or not rows.isdigit() or not cols.isdigit() or int(rows) < 1 or int(cols) < 1:
            raise InputError(f"--shapes: {part!r} is not ROWSxCOLS of positive ints",
                             hint="--shapes 1x4096,512x4096")
        shapes.append((int(rows), int(cols)))
    return shapes


def main(argv: Sequence[str] | None = None, prog: str = "ktile tune", *, timer=None) -> int:
    """`timer`: a synthetic timer (tests); None times on the GPU."""
    try:
        args = build_parser(prog).parse_args(argv)
        shapes = parse_shapes(args.shapes or (_static_shapes() if args.static
                                              else DEFAULT_SHAPES))
    except _Usage as usage:
        return _fail(prog, str(usage), 2, json_out="--json" in (argv or []))
    except InputError as err:
        return _fail(prog, str(err), 2, json_out=args.json)
    from .progress import Progress
    from .result import report_json, report_text
    from .tuner import TuneError, tune
    progress = Progress(0, enabled=True if args.progress else None)
    try:
        result = tune(args.op, args.target, shapes, dtype=args.dtype, rounds=args.rounds,
                      timer=timer, dry_run=args.dry_run, progress=progress, static=args.static,
                      command=_command(prog, argv),
                      alternatives=(not (args.static or args.dry_run)
                                    if args.alternatives is None else args.alternatives))
    except TuneError as err:
        return _fail(prog, str(err), 1, json_out=args.json)
    except InputError as err:
        return _fail(prog, str(err), 2, json_out=args.json)
    finally:
        progress.close()
    written = _write(result, args.out)
    print(report_text(result, written))
    if args.json:
        print(json.dumps(report_json(result, written), sort_keys=True))
    return 0 if result.ok else 1


def _command(prog: str, argv) -> str:
    """The command the table records: as given, less `--out PATH` (where the table is written
    does not change it)."""
    words, found = list(argv or []), []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--out":
            skip = True
        elif not word.startswith("--out="):
            found.append(word)
    return " ".join([prog, *found])


def _write(result, out: str | None) -> str | None:
    if result.table is None:
        return None
    from ..ops._shipped import table_path, write_table
    path = out or table_path(result.op, result.target)
    return str(write_table(result.table, path))


def _fail(prog: str, message: str, code: int, *, json_out: bool) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    if json_out:
        print(json.dumps({"ok": False, "error": message, "exit": code}, sort_keys=True))
    return code

"""`ktile check KERNEL_OR_OP --target T`: trace, gates, build and reference check, one line each.

    ktile check rms_norm --target sm_90a --build-only      # no execution: no GPU needed
    ktile check rms_norm --target all --sweep --json       # every route and dtype, 5 targets
    ktile check softmax --target gfx950 --emulate          # reference under wave emulation
    ktile check examples/02_rmsnorm.py:rmsnorm --target gfx1100 --shape 4x1000

KERNEL_OR_OP is an op of ktile.ops (its routes for each target: check_plan.py) or a kernel
in a file, `path/to/file.py:kernel_name`. The reference check runs on the GPU for sm_90a when
one is present, under wave emulation for AMD targets with --emulate, else on the CPU
interpreter (for the target's routes and constants). Progress goes to stderr; --json prints
one JSON object, {"target", "results", "ok"}, as the last line of stdout.

Exit status 0 every item ok, 1 an item failed (trace, build, gate, mismatch), 2 unusable input
(unknown op, file, kernel or target, a bad flag, a missing toolchain), with the fix.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .. import targets
from ..errors import KernelError
from .check_plan import ALL, Execution, file_items, find_op, is_file_spec, op_items, \
    parse_shape, target_names
from .check_run import check_item

FAILED, UNUSABLE = 1, 2


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Check an op of ktile.ops, or a kernel of a file, for a target: "
        "trace (the passes' checks), build (nvcc for sm_90a, clang-22 for gfx*) through the "
        "gates (spills, stack, shared memory, cocheck), and the reference check where it "
        "can run.")
    parser.add_argument("subject", metavar="KERNEL_OR_OP",
                        help="an op name (rms_norm, softmax, ...) or path/to/file.py:kernel_name")
    parser.add_argument("--target", required=True, metavar="T",
                        help=f"one of {', '.join(targets.NAMES)}, or `all`")
    parser.add_argument("--build-only", action="store_true",
                        help="trace, build and gate only: run nothing (no GPU needed)")
    parser.add_argument("--sweep", action="store_true",
                        help="an op's every route for T in every dtype (default: every route "
                             "for T in the op's first dtype)")
    parser.add_argument("--shape", metavar="ROWSxCOLS",
                        help="an op: only the route its table chooses at this shape, checked "
                             "at this shape (default: each route at its sample shape)")
    parser.add_argument("--emulate", action="store_true",
                        help="run the reference check of AMD targets under wave emulation "
                             "(the generated C++ on this CPU) instead of the interpreter")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object (last line of stdout) instead of the table")
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "ktile check") -> int:
    try:
        args = build_parser(prog).parse_args(argv)
    except SystemExit as exit_:      # argparse's own exit: 2 on a bad flag, 0 on --help
        return int(exit_.code or 0)
    try:
        names = target_names(args.target)
        plans = [(name, _items(args, name), _execution(args, name)) for name in names]
    except KernelError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return UNUSABLE
    results = _run(plans)
    ok = all(r.ok for r in results)
    if args.json:
        print(json.dumps({"target": args.target, "subject": args.subject,
                          "results": [r.to_json() for r in results], "ok": ok}))
    else:
        print(table(results))
        print(summary(results))
    return 0 if ok else FAILED


def _items(args, target: str) -> list:
    """The subject's items for `target`; the subject is resolved before the toolchain is
    looked for, so a typo is named as such on any machine."""
    if is_file_spec(args.subject):
        if args.shape or args.sweep:
            raise KernelError(f"--shape and --sweep choose an op's routes; {args.subject} is a "
                              f"kernel file", hint="leave them out for a kernel file")
        items = file_items(args.subject, target)
    else:
        items = op_items(find_op(args.subject), target, sweep=args.sweep,
                         shape=parse_shape(args.shape))
    _check_toolchain(target)
    return items


def _check_toolchain(target: str) -> None:
    """Building is part of every check: a missing compiler is unusable input, found first."""
    from ..runtime.build import toolchain_for
    toolchain_for(targets.get(target)).identity   # the compiler exists and answers --version


def _execution(args, target: str) -> Execution | None:
    """Where `target`'s reference checks run (None: not at all)."""
    if args.build_only:
        return None
    vendor = targets.get(target).vendor
    if args.emulate and vendor == "amd":
        from ..emulate import find_host_compiler
        find_host_compiler()
        return Execution("emulation", target)
    if args.emulate and args.target != ALL:
        raise KernelError(f"--emulate runs AMD targets under wave emulation; {target} is not "
                          f"one", hint="leave --emulate out for sm_90a (its check runs on the "
                                       "GPU where one is present, else on the interpreter)")
    if vendor == "nvidia" and _gpu_present():
        return Execution("gpu", target)
    return Execution("interpreter", target)


def _gpu_present() -> bool:
    import torch
    return torch.cuda.is_available()


def _run(plans: list) -> list:
    total = sum(len(items) for _, items, _ in plans)
    results, done = [], 0
    for _, items, execution in plans:
        for item in items:
            done += 1
            print(f"[{done}/{total}] {item.name} {item.target}", file=sys.stderr, flush=True)
            results.append(check_item(item, execution))
    return results


# ---- the table --------------------------------------------------------------------------------

WHERE = {"interpreter": "on the CPU interpreter", "gpu": "on the GPU",
         "emulation": "under wave emulation"}
COLUMNS = ("kernel", "target", "trace", "gates", "build", "regs", "spills", "occupancy",
           "reference (max err / tol)", "status")


def table(results: list) -> str:
    rows = [COLUMNS] + [_row(r) for r in results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    lines = []
    for row, result in zip(rows, [None, *results]):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if result is not None and (not result.ok or result.gates == "warn"):
            lines += [f"    {line}" for text in result.detail for line in text.splitlines()]
    return "\n".join(lines)


def _row(r) -> tuple[str, ...]:
    return (r.name, r.target, r.trace, r.gates, r.build, _text(r.registers),
            _text(r.spill_bytes), r.occupancy or "-", _reference_text(r.reference), r.status)


def _text(value) -> str:
    return "-" if value is None else str(value)


def _reference_text(reference: dict | None) -> str:
    if reference is None:
        return "-"
    if "max_error" not in reference:
        return "none" if "note" not in reference or "build-only" not in reference["note"] \
            else "not run"
    err, tol = reference["max_error"], reference["tolerance"]
    number = lambda x: x if isinstance(x, str) else f"{x:.3g}"  # noqa: E731
    return f"{number(err)} / {number(tol)} ({reference['where']})"


def summary(results: list) -> str:
    """How many passed; where the reference checks ran; why others had none."""
    lines = [f"{sum(r.ok for r in results)} of {len(results)} ok"]
    ran: dict[str, int] = {}
    for r in results:
        if r.reference and "where" in r.reference:
            key = f"{WHERE[r.reference['where']]} ({r.target})"
            ran[key] = ran.get(key, 0) + 1
    lines += [f"reference checks: {n} {key}" for key, n in ran.items()]
    notes = sorted({r.reference["note"] for r in results
                    if r.reference and "note" in r.reference})
    lines += [f"reference: {note}" for note in notes]
    return "\n".join(lines)

if __name__ == "__main__":
    sys.exit(main())

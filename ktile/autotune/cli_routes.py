"""`ktile routes [OP] [--target T] [--json]`: the routing tables, built-in and shipped.

    ktile routes                        # every op, every target
    ktile routes rms_norm --target sm_90a --json

For each op and target: the built-in routes (the op's config.py), and the table the package
ships (ktile/ops/routes/<target>/<op>.json): measured (timed on the target's GPU) or not (the
AMD targets' tables, chosen by the static quality report: `ktile tune --static`), with its
metadata and, per bucket, the route and whether the op loads it (why not, when not). Exit status 0, 1 when a shipped table
cannot be read or names a route the op ignores, 2 unusable input (an unknown op or target).
With --json the last line of stdout is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _Usage(f"{message}\n{self.format_usage().strip()}")


def build_parser(prog: str) -> argparse.ArgumentParser:
    parser = _Parser(prog=prog, description="Show the routing tables: built-in and shipped.")
    parser.add_argument("op", nargs="?", help="one op (default: every op)")
    parser.add_argument("--target", help="one target (default: every target)")
    parser.add_argument("--json", action="store_true", help="end with one JSON object")
    return parser


def main(argv: Sequence[str] | None = None, prog: str = "ktile routes") -> int:
    from ..ops._library import TARGETS, all_ops
    try:
        args = build_parser(prog).parse_args(argv)
    except _Usage as usage:
        return _fail(prog, str(usage), json_out="--json" in (argv or []))
    ops = [op for op in all_ops() if args.op in (None, op.name)]
    if not ops:
        names = ", ".join(sorted(op.name for op in all_ops()))
        return _fail(prog, f"no op named {args.op!r} (ops: {names})", json_out=args.json)
    if args.target is not None and args.target not in TARGETS:
        return _fail(prog, f"unknown target {args.target!r} (targets: {', '.join(TARGETS)})",
                     json_out=args.json)
    targets = [args.target] if args.target else list(TARGETS)
    entries = [describe(op, target) for op in ops for target in targets]
    print("\n".join(_text(e) for e in entries))
    ok = all(e["shipped"] is None or e["shipped"]["ok"] for e in entries)
    if args.json:
        print(json.dumps({"ok": ok, "tables": entries}, sort_keys=True))
    return 0 if ok else 1


def describe(op, target: str) -> dict:
    """One op on one target: its built-in routes and its shipped table, as JSON data."""
    from .result import route_json
    builtin = [{**route_json(r), "max_rows": r.max_rows, "max_cols": r.max_cols}
               for r in op.table.routes if r.targets is None or target in r.targets]
    return {"op": op.name, "target": target, "builtin": builtin, "shipped": _shipped(op, target)}


def _shipped(op, target: str) -> dict | None:
    from ..ops._shipped import kept_default, read_table, route_of, table_path
    path = table_path(op.name, target)
    if not path.is_file():
        return None
    try:
        table = read_table(path)
    except (OSError, ValueError) as err:
        return {"path": str(path), "ok": False, "error": str(err)}
    buckets = []
    for bucket in table["buckets"]:
        if kept_default(table, bucket):          # not loaded by design: the built-in serves
            buckets.append({**bucket, "loaded": False, "ignored_because": None,
                            "builtin": True})
            continue
        route, why = route_of(op, target, bucket)
        buckets.append({**bucket, "loaded": route is not None, "ignored_because": why,
                        "builtin": False})
    return {"path": str(path), "ok": all(b["loaded"] or b["builtin"] for b in buckets),
            "measured": table.get("measured") is True,
            "method": table.get("method", "timed" if table.get("measured") else None),
            "rule": table.get("rule"), "dtype": table.get("dtype"),
            "metadata": table.get("metadata", {}), "check": table.get("check"),
            "buckets": buckets}


def _text(entry: dict) -> str:
    lines = [f"{entry['op']} on {entry['target']}:"]
    for r in entry["builtin"]:
        bound = f"cols <= {r['max_cols']}" if r["max_cols"] else "any width"
        lines.append(f"  built-in  {r['kernel']} {r['constants']} ({bound})")
    shipped = entry["shipped"]
    if shipped is None:
        lines.append("  shipped   none (the built-in routes serve every shape)")
        return "\n".join(lines)
    if "error" in shipped:
        lines.append(f"  shipped   {shipped['path']}: unreadable: {shipped['error']}")
        return "\n".join(lines)
    meta = shipped["metadata"]
    if shipped["measured"]:
        how = f"measured on {meta.get('device')}"
    else:
        how = f"NOT measured: chosen by the {shipped['method'] or 'an unknown method'}"
    lines.append(f"  shipped   {shipped['path']} ({how}, {meta.get('utc')}, by "
                 f"`{meta.get('command')}`)")
    for b in shipped["buckets"]:
        state = ("  (the default stayed: the built-in routes serve it)" if b["builtin"] else
                 "" if b["loaded"] else f"  IGNORED: {b['ignored_because']}")
        lines.append(f"    rows {b['rows'][0]}-{b['rows'][1]}, cols {b['cols'][0]}-"
                     f"{b['cols'][1]}: {_route_text(b['route'])}"
                     f"{' (replaces the default)' if b.get('replaced') else ''}{state}")
    return "\n".join(lines)


def _route_text(spec: dict) -> str:
    kind = spec.get("kind", "ktile")
    if kind != "ktile":
        return f"{kind} (an alternative: ktile/ops/alternatives.py)"
    return f"{spec.get('kernel')} {spec.get('constants')}"


def _fail(prog: str, message: str, *, json_out: bool) -> int:
    print(f"{prog}: {message}", file=sys.stderr)
    if json_out:
        print(json.dumps({"ok": False, "error": message, "exit": 2}, sort_keys=True))
    return 2

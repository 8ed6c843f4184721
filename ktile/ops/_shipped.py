"""The routing tables shipped in the package: `ktile/ops/routes/<target>/<op>.json`.

A table (written by `ktile tune`, docs/tuning.md) lists shape buckets, each with the route
that won there:

    {"format": 1, "op": "rms_norm", "target": "sm_90a", "measured": true, "dtype": "bf16",
     "metadata": {"command": ..., "utc": ..., "device": ..., "torch": ..., ...},
     "buckets": [{"rows": [1, 512], "cols": [1025, 2048],
                  "route": {"kind": "ktile", "kernel": "rms_norm_held",
                            "constants": {"VEC": 64, "HELD": 2, "WARPS": 16}},
                  "default": {...}, "default_us": 6.1, "winner_us": 5.2, "p_value": 1e-5,
                  "replaced": true}, ...],
     "check": {"never_slower": true, "lines": [...]}}

A route's `kind` is "ktile" (a kernel of the op at constants), or "torch" / "triton": an
alternative implementation (ktile/ops/alternatives.py; the registered op runs it at the shapes
of its bucket, on the GPU). An alternative route the op has no such alternative for is not
loaded; "triton" routes are not loaded where triton does not import (one warning for the
table, naming its buckets). A ktile route whose kernel the op no longer has, or whose
constants fail the kernel's requirements or its trace for the target (the op's own call at the bucket's corner shapes, in build-only mode,
for every dtype of the op) is not loaded either. Each ignored route gives one warning, when the
table is first read; a table that cannot be read gives one warning and loads nothing. Shapes
outside every loaded bucket take the op's built-in routes. A static table's (`"measured":
false`, `ktile tune --static`) buckets where the default stayed are not loaded at all: the
built-in routes serve them, as they are now.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

from ..errors import KernelWarning, KtileError

FORMAT = 1
ROUTES_DIR = Path(__file__).resolve().parent / "routes"
KINDS = ("ktile", "torch", "triton")      # the kinds a table may name


def table_path(op_name: str, target: str, root: Path | None = None) -> Path:
    return Path(root or ROUTES_DIR) / target / f"{op_name}.json"


def read_table(path: Path) -> dict:
    """A table's JSON, checked for the keys this module reads; ValueError naming the fault."""
    table = json.loads(Path(path).read_text())
    if not isinstance(table, dict) or table.get("format") != FORMAT:
        raise ValueError(f"not a format-{FORMAT} routing table")
    buckets = table.get("buckets")
    if not isinstance(buckets, list):
        raise ValueError("'buckets' is not a list")
    for bucket in buckets:
        if not isinstance(bucket, dict) or not isinstance(bucket.get("route"), dict) \
                or not _bounds(bucket.get("rows")) or not _bounds(bucket.get("cols")):
            raise ValueError(f"bucket {bucket!r} lacks rows: [lo, hi], cols: [lo, hi] or a route")
    return table


def write_table(table: dict, path: Path) -> Path:
    """Write `table` (a tuner's result) as JSON, read back through `read_table` first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(text)
    read_table(tmp)
    tmp.replace(path)
    return path


def _bounds(pair) -> bool:
    return (isinstance(pair, list) and len(pair) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in pair)
            and pair[0] <= pair[1])


def shipped_routes(op, target: str, root: Path | None = None) -> list:
    """The loadable routes of `op`'s shipped table for `target`, in bucket order; [] when
    there is none. Warns once per ignored route, once for an unreadable table."""
    path = table_path(op.name, target, root)
    if not path.is_file():
        return []
    try:
        table = read_table(path)
    except (OSError, ValueError) as err:
        _warn(f"the routing table {path} is not read ({err}); {op.name} takes its built-in "
              f"routes on {target}")
        return []
    routes, no_triton = [], []
    for bucket in table["buckets"]:
        if kept_default(table, bucket):
            continue
        route, why = route_of(op, target, bucket)
        if route is not None:
            routes.append(route)
        elif bucket["route"].get("kind") == "triton" and why.startswith("triton does not"):
            no_triton.append((bucket, why))
        else:
            _warn(f"{path.name} ({target}): the route {bucket['route']!r} for rows "
                  f"{bucket['rows']}, cols {bucket['cols']} is ignored: {why}; those shapes "
                  f"take {op.name}'s built-in routes")
    if no_triton:
        where = "; ".join(f"rows {b['rows']}, cols {b['cols']}" for b, _ in no_triton)
        _warn(f"{path.name} ({target}): its triton routes are not loaded: {no_triton[0][1]}; "
              f"those shapes ({where}) take {op.name}'s built-in routes")
    return routes


def kept_default(table: dict, bucket: dict) -> bool:
    """A bucket of a static table (not measured) where the default stayed: not loaded, so the
    op's built-in routes serve it as they are now, not as they were when the table was made
    (a measured table pins its defaults: they were timed)."""
    return table.get("measured") is False and bucket.get("replaced") is False


def route_of(op, target: str, bucket: dict):
    """(the Route of one bucket, None) when `op` can take it on `target`, else (None, why)."""
    from ._library import Route
    spec = bucket["route"]
    kind = spec.get("kind", "ktile")
    if kind != "ktile":
        return alternative_route(op, target, bucket, kind)
    kernel, constants = spec.get("kernel"), spec.get("constants", {})
    if kernel not in op.kernels:
        return None, f"{op.name} has no kernel {kernel!r} (it has {', '.join(op.kernels)})"
    if not isinstance(constants, dict):
        return None, "its constants are not a JSON object"
    multiple = spec.get("cols_multiple", 1)
    if isinstance(multiple, bool) or not isinstance(multiple, int) or multiple < 1:
        return None, f"cols_multiple {multiple!r} is not a positive int"
    (rows_lo, rows_hi), (cols_lo, cols_hi) = bucket["rows"], bucket["cols"]
    route = Route(kernel, dict(constants), max_rows=rows_hi, max_cols=cols_hi,
                  targets=(target,), sample=(rows_lo, cols_lo), min_rows=rows_lo,
                  min_cols=cols_lo, **({"cols_multiple": multiple} if multiple > 1 else {}))
    why = refusal(op, route, target)
    return (route, None) if why is None else (None, why)


def alternative_route(op, target: str, bucket: dict, kind: str):
    """(the Route of a "torch" or "triton" bucket, None), or (None, why): the route's
    `kernel` is the kind; it has no constants."""
    from ._library import Route
    from .alternatives import unavailable
    if kind not in KINDS:
        return None, f"unknown route kind {kind!r} (kinds: {', '.join(KINDS)})"
    why = unavailable(op.name, kind)
    if why is not None:
        return None, why
    (rows_lo, rows_hi), (cols_lo, cols_hi) = bucket["rows"], bucket["cols"]
    return Route(kind, {}, max_rows=rows_hi, max_cols=cols_hi, targets=(target,),
                 sample=(rows_lo, cols_lo), min_rows=rows_lo, min_cols=cols_lo), None


def refusal(op, route, target: str) -> str | None:
    """Why `op` cannot take `route` on `target` at the corners of its bucket, or None: the
    op's own call, pinned to the route, in build-only mode without compiling (requirements
    and the trace's checks), at the bucket's smallest and largest shapes the route takes
    (widths a multiple of its `cols_multiple`); without a warm-up call for the op, the
    kernel's trace only. Any failure of the call refuses the route, with its reason."""
    from ._library import pinned
    from .warmup import CALLS, call_op
    from ..runtime.builds import building
    calls = [c.name for c in CALLS.values() if c.op == op.name][:1]
    multiple = getattr(route, "cols_multiple", 1)
    low = -(-(route.min_cols or 1) // multiple) * multiple
    high = route.max_cols // multiple * multiple
    if low > high:
        return f"no width from {route.min_cols} to {route.max_cols} is a multiple of {multiple}"
    corners = {(route.min_rows or 1, low), (route.max_rows, high)}
    try:
        for dtype in op.dtypes:
            if not calls:
                op.kernel(route, dtype).trace(target, **route.constants)
                continue
            traced: list = []
            with building(target, compile=False, collect=traced), pinned(op.table, route):
                for rows, cols in corners:
                    call_op(calls[0], rows, cols, _torch_dtype(dtype))
            if not any(_is_route(t, op.kernel(route, dtype), route) for t in traced):
                return (f"the op's call did not launch {route.kernel} at these constants (it "
                        f"does not choose through its table's `choose`)")
    except KtileError as err:
        return str(err).strip().splitlines()[0]
    except Exception as err:   # noqa: BLE001 - any failure of the op's own call refuses it
        return f"the op's call fails: {type(err).__name__}: {err}"
    return None


def _is_route(trace, kernel, route) -> bool:
    """Whether `trace` is `kernel` traced at `route`'s constants."""
    return trace.name == kernel.name and all(trace.constants.get(k) == v
                                             for k, v in route.constants.items())


def _torch_dtype(name: str):
    import torch
    from .. import dtypes as kt
    return getattr(torch, getattr(kt, name).torch_name)


def _warn(message: str) -> None:
    warnings.warn(message, KernelWarning, stacklevel=4)

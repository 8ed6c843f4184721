"""Every route of silu_and_mul / gelu_and_mul and of dropout timed on the GPU, pinned one at a
time, beside the Triton kernel of the op benchmark and torch, with the copy bandwidth (issue #13).

    python benchmarks/act_variants.py --quick --out /tmp/act     # 4 token counts, 2 sizes
    python benchmarks/act_variants.py --out DIR                  # the op benchmark's sweep

Each route's output is checked against the op's reference tolerance (dropout: exactly, against
the default route) before it is timed; a route that fails is reported, not timed. Times are
ktile.bench.timing's (median of 30, L2 flushed, host cost covered). Writes DIR/act_variants.json
and prints one line per shape: each candidate's µs and its share of the copy bandwidth.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import torch  # noqa: E402

import ktile  # noqa: E402
from ktile.bench.timing import copy_gbps, time_call  # noqa: E402
from ktile.ops import _library as lib  # noqa: E402
from ktile.ops.activations import config as act_config  # noqa: E402
from ktile.ops.activations import reference as act_ref  # noqa: E402
from ktile.ops.dropout import op as dropout_op  # noqa: E402
from ktile import dtypes  # noqa: E402

TOKENS = (1, 8, 32, 256, 4096, 16384)
INTERMEDIATE = (12288, 14336)
QUICK_TOKENS = (1, 32, 4096, 16384)
ELEMENTS = (1 << 20, 1 << 24, 1 << 26)
P, SEED = 0.1, 1234


def _triton(name: str):
    try:
        from ktile.bench.triton_kernels import KERNELS
        return KERNELS[name]
    except Exception:                      # no triton here: its column is left out
        return None


def _act_routes(act: str, d: int) -> list:
    """The table's routes that fit d, for this activation (one per kernel and constants)."""
    seen, routes = set(), []
    for route in act_config.TABLE.routes:
        key = (route.kernel, tuple(sorted((k, v) for k, v in route.constants.items()
                                          if k != "ACT")))
        if d % route.cols_multiple or key in seen:
            continue
        seen.add(key)
        routes.append(route)
    return routes


def _label(route) -> str:
    consts = ",".join(f"{k}={v}" for k, v in sorted(route.constants.items()) if k != "ACT")
    return f"{route.kernel}({consts})"


def _time(fn) -> float:
    return time_call(fn).ms * 1000.0


def act_case(name: str, tokens: int, d: int, copy: float) -> dict:
    act = "silu" if name == "silu_and_mul" else "gelu"
    fn = getattr(ktile.ops, name)
    x = torch.randn(tokens, 2 * d, device="cuda").bfloat16()
    want = (act_ref.silu_and_mul if act == "silu" else act_ref.gelu_and_mul)(
        x.float().cpu().numpy(), dtypes.bf16)
    tol = act_ref.tolerance(want, dtypes.bf16)
    nbytes = 3 * 2 * tokens * d
    row = {"op": name, "tokens": tokens, "intermediate": d, "bytes": nbytes, "us": {}}
    for route in _act_routes(act, d):
        with lib.pinned(act_config.TABLE, route):
            got = fn(x)
            err = float((got.float().cpu() - torch.from_numpy(want)).abs().max())
            if err > tol:
                row["us"][_label(route)] = f"wrong: max error {err} > {tol}"
                continue
            row["us"][_label(route)] = _time(lambda: fn(x))
    triton = _triton(name)
    if triton is not None:
        row["us"]["triton"] = _time(lambda: triton(x))
    torch_fn = (lambda: torch.nn.functional.silu(x[:, :d]) * x[:, d:]) if act == "silu" else \
        (lambda: torch.nn.functional.gelu(x[:, :d]) * x[:, d:])
    row["us"]["torch"] = _time(torch_fn)
    row["copy_us"] = nbytes / copy / 1e3
    return row


def dropout_case(elements: int, copy: float) -> dict:
    x = torch.randn(elements, device="cuda").bfloat16()
    nbytes = 2 * 2 * elements
    row = {"op": "dropout", "elements": elements, "bytes": nbytes, "us": {}}
    base = ktile.ops.dropout(x, P, SEED)
    for route in dropout_op.TABLE.routes:
        with lib.pinned(dropout_op.TABLE, route):
            if not torch.equal(ktile.ops.dropout(x, P, SEED), base):
                row["us"][_label(route)] = "wrong: differs from the default route"
                continue
            row["us"][_label(route)] = _time(lambda: ktile.ops.dropout(x, P, SEED))
    triton = _triton("dropout")
    if triton is not None:
        row["us"]["triton"] = _time(lambda: triton(x))
    row["us"]["torch"] = _time(lambda: torch.nn.functional.dropout(x, P, training=True))
    row["copy_us"] = nbytes / copy / 1e3
    return row


def _print(row: dict) -> None:
    shape = f"{row.get('tokens', '')}x{row.get('intermediate', row.get('elements'))}"
    cells = []
    for label, us in row["us"].items():
        share = f" {100 * row['copy_us'] / us:.0f}%" if isinstance(us, float) else ""
        cells.append(f"{label}: {us:.1f}{share}" if isinstance(us, float) else f"{label}: {us}")
    print(f"{row['op']:13s} {shape:12s} " + " | ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 token counts at 14336, 2 sizes")
    parser.add_argument("--out", help="write DIR/act_variants.json")
    parser.add_argument("--ops", default="silu_and_mul,gelu_and_mul,dropout")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("act_variants: no CUDA GPU here", file=sys.stderr)
        return 2
    copy = copy_gbps()
    ops = args.ops.split(",")
    tokens, sizes = (QUICK_TOKENS, (14336,)) if args.quick else (TOKENS, INTERMEDIATE)
    rows = []
    for name in ("silu_and_mul", "gelu_and_mul"):
        if name in ops:
            rows += [act_case(name, t, d, copy) for d in sizes for t in tokens]
    if "dropout" in ops:
        rows += [dropout_case(n, copy) for n in (ELEMENTS[1:] if args.quick else ELEMENTS)]
    for row in rows:
        _print(row)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "act_variants.json"), "w") as f:
            json.dump({"copy_gbps": copy, "device": torch.cuda.get_device_name(), "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Time rms_norm at head-dim widths on the GPU: the narrow-row kernel's routes (rows.py) and
EXPLORE's constants against the row-tile route these widths took before (one 1-warp block a row,
16 x 64 flat tiles), torch and a copy (the bandwidth floor). Each route is pinned in turn
(`_library.pinned`) and checked against torch before it is timed (sweep.py's timing: L2 flushed
before each of REPEAT launches, the median).

    python -m ktile.ops.rmsnorm.sweep_rows [--json FILE] [--shapes 65536x128,16384x128]

Default shapes: a 2048-token Qwen3-8B prefill's q_norm (2048 x 32 heads = 65536 rows of 128)
and k_norm (16384 rows), decode's at batch 1 and 32 (32 / 1024 rows), and 64 / 256-wide rows.
Writes JSON (one record per shape, dtype and route) and prints the shipped and the fastest
route per shape. Needs a CUDA GPU."""
from __future__ import annotations

import argparse
import json

import torch

from ...errors import InputError, KernelError
from .. import _library as lib
from . import config
from .sweep import DTYPES, median_us, rms_case
from .rows import rows_route
from .tiles import tiles_route

SHAPES = [(65536, 128), (16384, 128), (32, 128), (1024, 128), (32768, 64), (16384, 256),
          (2048, 128)]
# (C, WARPS, SPLIT) beside the shipped ones, where C x SPLIT covers the width
EXPLORE = [(64, 1, 1), (64, 2, 1), (64, 4, 1), (64, 8, 1), (128, 1, 1), (128, 2, 1),
           (128, 4, 1), (64, 2, 2), (128, 2, 2), (64, 4, 4), (256, 1, 1), (256, 2, 1)]
BEFORE = tiles_route(1024, 1, 64)     # the row-tile route head-dim widths took before


def candidates(cols: int) -> list:
    routes = [r for r in config.ROUTES if r.kernel == "rms_norm_rows" and r.max_cols >= cols]
    seen = {tuple(sorted(r.constants.items())) for r in routes}
    for c, warps, split in EXPLORE:
        if c * split >= cols:
            route = rows_route(c * split, c, warps, split)
            key = tuple(sorted(route.constants.items()))
            if key not in seen:
                seen.add(key)
                routes.append(route)
    return [*routes, BEFORE]


def time_shape(rows: int, cols: int, dtype: str) -> list[dict]:
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(rows, cols, device="cuda", generator=g).to(DTYPES[dtype])
    w = torch.randn(cols, device="cuda", generator=g).to(DTYPES[dtype])
    call, result, want = rms_case(x, None, w)
    out = torch.empty_like(x)
    base = {"rows": rows, "cols": cols, "dtype": dtype}
    records = [{**base, "route": "torch", "us": median_us(
                   lambda: torch.nn.functional.rms_norm(x, (cols,), w, 1e-6))},
               {**base, "route": "copy", "us": median_us(lambda: out.copy_(x))}]
    shipped = config.TABLE.choose(rows, cols, lib.target_of(x))
    for route in candidates(cols):
        try:
            with lib.pinned(config.TABLE, route):
                call()
                err = (result().float() - want).abs().max().item()
                us = median_us(call)
        except (InputError, KernelError) as e:
            print(f"  {route.kernel} {route.constants}: skipped: {str(e).splitlines()[0]}")
            continue
        records.append({**base, "route": route.kernel, "constants": route.constants, "us": us,
                        "max_err": err, "shipped": (route.kernel, route.constants)
                        == (shipped.kernel, shipped.constants)})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", default="rms_rows_sweep.json", help="where to write results")
    parser.add_argument("--shapes", help="comma-separated ROWSxCOLS instead of the defaults")
    args = parser.parse_args()
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(",")]
    records = []
    for rows, cols in shapes:
        for dtype in DTYPES:
            found = time_shape(rows, cols, dtype)
            records += found
            timed = found[2:] or found[:1]
            best = min(timed, key=lambda r: r["us"])
            shipped = next((r for r in timed if r.get("shipped")), best)
            before = next((r for r in timed if r.get("route") == BEFORE.kernel), None)
            print(f"rms_norm {rows:>6} x {cols:<4} {dtype}: torch {found[0]['us']:7.1f} us | "
                  f"copy {found[1]['us']:7.1f} | before {before['us'] if before else 0:7.1f} | "
                  f"shipped {shipped.get('constants')} {shipped['us']:7.1f} (err "
                  f"{shipped.get('max_err', 0):.3g}) | best {best.get('route')} "
                  f"{best.get('constants')} {best['us']:7.1f}", flush=True)
    with open(args.json, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "records": records}, f, indent=1)


if __name__ == "__main__":
    main()

"""Time every softmax route at each shape on the GPU, against torch.softmax and a copy: the
data that choose config.py's switches (held or loop at 4096 x 32000, the split paths' row limits,
row-tile against chunk (chunks.py) splits and loops, and the splits' blocks per multiprocessor:
each of SPLIT_BLOCKS_PER_SM is timed). Each route is pinned
in turn (`_library.pinned`); a route whose kernel refuses the shape (a held route too narrow)
is skipped. Every timed result is checked against torch first. `--explore` also times EXPLORE:
row-tile constants the table does not ship (wider or narrower tiles, other warp counts), each
where its kernel takes the shape.

    python -m ktile.ops.softmax.sweep [--quick] [--explore] [--json FILE]
        [--shape ROWSxCOLS ...] [--dtype fp32|bf16 ...]

Every kernel it will time is built first, in parallel (`prebuild`). Writes JSON: one record per (shape, dtype, route, "torch" or "copy": x copied to out, the
bandwidth floor) with the median microseconds of REPEAT launches, each after an L2 flush (a
256 MiB write), and prints the fastest route per shape. Needs a CUDA GPU."""
from __future__ import annotations

import argparse
import json

import torch

from ...errors import InputError, KernelError, KtileError
from .. import _library as lib
from . import config, op

ROWS = (1, 8, 32, 128, 256, 4096, 16384)
COLS = (1024, 4096, 8192, 16384, 32000, 128256, 151936)
QUICK = [(32, 151936), (1, 128256), (1, 32000), (32, 32000), (128, 32000), (4096, 32000),
         (4096, 151936), (4096, 4096), (32, 4096), (8, 16384), (16384, 4096)]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
REPEAT = 20
TIMED = ("softmax_held", "softmax_stats", "softmax_loop", "softmax_chunk_stats",
         "softmax_chunk_loop")
SPLITS = ("softmax_stats", "softmax_chunk_stats")     # timed at each SPLIT_BLOCKS_PER_SM
SPLIT_BLOCKS_PER_SM = (1, 2, 4, 8)
EXPLORE = [             # not shipped: timed with --explore where the kernel takes the shape
    lib.Route("softmax_held", {"C": 32, "HELD": 1, "WARPS": 2}, cols_multiple=config.TILE),
    lib.Route("softmax_held", {"C": 128, "HELD": 1, "WARPS": 4}, cols_multiple=config.TILE),
    lib.Route("softmax_held", {"C": 32, "HELD": 1, "WARPS": 16}, cols_multiple=config.TILE),
    lib.Route("softmax_held", {"C": 64, "HELD": 2, "WARPS": 8}, cols_multiple=config.TILE),
    lib.Route("softmax_held", {"C": 32, "HELD": 4, "WARPS": 16}, cols_multiple=config.TILE),
    lib.Route("softmax_held", {"C": 32, "HELD": 1, "WARPS": 8}, cols_multiple=config.TILE),
    lib.Route("softmax_held", {"C": 16, "HELD": 2, "WARPS": 16}, cols_multiple=config.TILE),
    lib.Route("softmax_stats", {"C": 64, "WARPS": 8}, cols_multiple=config.TILE),
    lib.Route("softmax_stats", {"C": 32, "WARPS": 4}, cols_multiple=config.TILE),
    lib.Route("softmax_stats", {"C": 32, "WARPS": 8}, cols_multiple=config.TILE),
    lib.Route("softmax_loop", {"C": 32, "WARPS": 8}, cols_multiple=config.TILE),
    lib.Route("softmax_loop", {"C": 64, "WARPS": 16}, cols_multiple=config.TILE),
    lib.Route("softmax_loop", {"C": 64, "WARPS": 4}, cols_multiple=config.TILE),
    config.chunk_split(config.SPLIT_MAX_ROWS, constants={"C": 16, "WARPS": 4}),
    config.chunk_split(config.SPLIT_MAX_ROWS, constants={"C": 32, "WARPS": 8}),
    config.chunk_split(config.SPLIT_MAX_ROWS, constants={"C": 64, "WARPS": 4}),
    config.chunk_split(config.SPLIT_MAX_ROWS, constants={"C": 16, "WARPS": 8}),
    lib.Route("softmax_chunk_loop", {"C": 32, "WARPS": 8}, cols_multiple=32),
    lib.Route("softmax_chunk_loop", {"C": 64, "WARPS": 4}, cols_multiple=64),
    lib.Route("softmax_chunk_loop", {"C": 32, "WARPS": 16}, cols_multiple=32),
]


def median_us(fn) -> float:
    """`fn`'s device time in µs, the op benchmark's way (ktile/bench/timing.py: L2 flushed before
    each of REPEAT calls, the host's cost kept out, the median)."""
    from ...bench.timing import time_call
    return time_call(fn, repeats=REPEAT).ms * 1000.0


def candidates(explore: bool = False) -> list:
    """Every distinct row-tile route (a split route's twin is launched with it; the 16-row
    kernels serve only widths that are not a multiple of 16), and EXPLORE's with `explore`."""
    seen, routes = set(), []
    for route in config.ROUTES + (EXPLORE if explore else []):
        key = (route.kernel, tuple(sorted(route.constants.items())))
        if route.kernel in TIMED and key not in seen:
            seen.add(key)
            routes.append(route)
    return routes


def time_route(route, x, out, want, per_sm) -> dict | None:
    """{route, constants, us, max_err} of `route` pinned (the split path at `per_sm` blocks
    per multiprocessor), or None where its kernel's requirements refuse the shape or its build
    is refused (an EXPLORE constant that spills: said so)."""
    shipped_per_sm = config.BLOCKS_PER_SM
    config.BLOCKS_PER_SM = per_sm or shipped_per_sm
    try:
        with lib.pinned(config.TABLE, route):
            op.softmax(x, out=out)
            err = (out.float() - want).abs().max().item()
            us = median_us(lambda: op.softmax(x, out=out))
    except InputError:
        return None
    except KernelError as e:     # an explored constant whose build is refused (spills)
        print(f"  {route.kernel} {route.constants}: not built: {str(e).splitlines()[0]}")
        return None
    finally:
        config.BLOCKS_PER_SM = shipped_per_sm
    return {"route": route.kernel, "constants": route.constants, "blocks_per_sm": per_sm,
            "us": us, "max_err": err}


def time_shape(rows: int, cols: int, dtype: str, explore: bool = False) -> list[dict]:
    x = (torch.randn(rows, cols, device="cuda") * 3).to(DTYPES[dtype])
    out = torch.empty_like(x)
    want = torch.softmax(x.float(), -1)
    shipped = config.TABLE.choose(rows, cols, lib.target_of(x))
    records = [{"rows": rows, "cols": cols, "dtype": dtype, "route": "torch",
                "us": median_us(lambda: torch.softmax(x, -1, out=out))},
               {"rows": rows, "cols": cols, "dtype": dtype, "route": "copy",
                "us": median_us(lambda: out.copy_(x))}]
    for route in candidates(explore):
        for per_sm in SPLIT_BLOCKS_PER_SM if route.kernel in SPLITS else (None,):
            record = time_route(route, x, out, want, per_sm)
            if record is not None:
                records.append({"rows": rows, "cols": cols, "dtype": dtype, **record,
                                "shipped": route == shipped and per_sm in (
                                    None, config.BLOCKS_PER_SM)})
    return records


def parse_shape(text: str) -> tuple[int, int]:
    """ROWSxCOLS as two ints (argparse's type for --shape)."""
    rows, sep, cols = text.lower().partition("x")
    if not (sep and rows.isdigit() and cols.isdigit() and int(rows) > 0 and int(cols) > 0):
        raise argparse.ArgumentTypeError(f"shape {text!r} is not ROWSxCOLS, e.g. 32x4096")
    return int(rows), int(cols)


def prebuild(shapes, dtypes, explore: bool, target: str) -> int:
    """Build every kernel the sweep will time at `shapes` (each candidate route pinned, its
    split twin too) for `target`, in parallel on every CPU before anything is timed (one nvcc at
    a time otherwise, most of a cold run); the number of traces built. The calls run nothing:
    CPU tensors, never touched, under `building`. A build that fails is left to the timing,
    which says so."""
    from ...runtime.builds import build_traces, building
    traces = []
    with building(target, compile=False, collect=traces):
        for rows, cols in shapes:
            for dtype in dtypes:
                x = torch.empty(rows, cols, dtype=DTYPES[dtype])
                for route in candidates(explore):
                    try:
                        with lib.pinned(config.TABLE, route):
                            op.softmax(x, out=torch.empty_like(x))
                    except (InputError, KernelError):   # the route refuses the shape
                        continue
    try:
        build_traces(traces)
    except KtileError:              # one refused (spills): the rest one by one
        for trace in traces:
            try:
                build_traces([trace])
            except KtileError:
                pass
    return len(traces)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="nine shapes instead of the grid")
    parser.add_argument("--explore", action="store_true",
                        help="also time EXPLORE's constants (not shipped)")
    parser.add_argument("--json", default="softmax_sweep.json", help="where to write results")
    parser.add_argument("--shape", action="append", type=parse_shape, metavar="ROWSxCOLS",
                        help="only these shapes (repeatable; instead of --quick or the grid)")
    parser.add_argument("--dtype", action="append", choices=sorted(DTYPES),
                        help="only these dtypes (repeatable; default both)")
    args = parser.parse_args()
    shapes = args.shape or (QUICK if args.quick else [(r, c) for r in ROWS for c in COLS])
    dtypes = args.dtype or list(DTYPES)
    target = lib.target_of(torch.empty(1, device="cuda"))
    print(f"prebuilt {prebuild(shapes, dtypes, args.explore, target)} kernel traces for "
          f"{target}", flush=True)
    records = []
    for rows, cols in shapes:
        for dtype in dtypes:
            found = time_shape(rows, cols, dtype, args.explore)
            records += found
            best = min(found[2:], key=lambda r: r["us"])
            shipped = next((r for r in found if r.get("shipped")), found[0])
            print(f"{rows:>5} x {cols:<6} {dtype}: torch {found[0]['us']:8.1f} us | copy "
                  f"{found[1]['us']:8.1f} | shipped {shipped['route']} "
                  f"{shipped.get('constants')} {shipped['us']:8.1f} | best {best['route']} "
                  f"{best['constants']} {best.get('blocks_per_sm') or ''} {best['us']:8.1f}",
                  flush=True)
    with open(args.json, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "records": records}, f, indent=1)


if __name__ == "__main__":
    main()

"""Time the row-tile routes of rms_norm, fused_add_rms_norm and layer_norm on the GPU, against torch and a
copy: the data that choose config.py's routes (shipped: one flat 16 x 64 tile per warp, width /
1024 warps). Each route is pinned in turn (`_library.pinned`); one whose kernel refuses the
shape (too narrow) is skipped. Every timed result is checked against torch first. `--explore`
also times EXPLORE: constants the tables do not ship (two tiles per warp on 4 warps at 8192,
16 x 128 tiles, 16 x 32 on 7 warps at 3584, ...), each where its kernel takes the shape; they
may warn of the budgets' occupancy estimate (why they are not shipped: docs/ops.md).

    python -m ktile.ops.rmsnorm.sweep [--quick] [--explore] [--json FILE] [--only OPS]
                                      [--shapes 1x4096,4096x8192]

Writes JSON: one record per (op, shape, dtype, route, or "torch" / "copy": x copied to out, the
bandwidth floor) with the median microseconds of REPEAT launches, each after an L2 flush (a
256 MiB write), and prints the shipped and the fastest route per shape. Needs a CUDA GPU."""
from __future__ import annotations

import argparse
import json

import torch

from ...errors import InputError, KernelError
from .. import _library as lib
from ..fused_add_rmsnorm import config as fused_config, op as fused_op
from ..layernorm import config as ln_config, op as ln_op
from . import config, op

COLS = (2048, 2880, 3584, 4096, 5120, 7168, 8192, 14336, 16384)
ROWS = (1, 32, 4096, 16384)
QUICK = [(1, 4096), (4096, 4096), (16384, 4096), (4096, 8192), (4096, 3584), (4096, 14336),
         (32, 2048), (32, 4096), (8, 5120), (1, 8192), (256, 8192), (32, 14336)]
DTYPES = {"bf16": torch.bfloat16}
REPEAT = 20
EXPLORE = [(64, 2, 4), (128, 1, 4), (32, 1, 7), (32, 1, 4), (64, 2, 8), (128, 1, 8),
           (64, 1, 7), (64, 2, 7), (128, 1, 2), (64, 1, 8), (64, 1, 16), (32, 4, 4),
           (32, 2, 8), (32, 4, 8), (16, 1, 16), (16, 1, 8), (32, 1, 16), (16, 1, 32),
           (32, 1, 32), (32, 2, 16), (64, 1, 14), (16, 2, 8), (32, 4, 7)]     # (C, HELD, WARPS)
# layer_norm_rows only: when the weight and bias load (row_tiles.weights_when), at shares per
# warp where more than one way fits the registers
EXPLORE_WEIGHTS = [(32, 2, 8, "per_tile"), (32, 2, 8, "after"), (32, 4, 4, "after"),
                   (32, 4, 4, "early"), (64, 2, 4, "early"), (32, 2, 16, "per_tile")]


def median_us(fn) -> float:
    """`fn`'s device time in µs, the op benchmark's way (ktile/bench/timing.py: L2 flushed before
    each of REPEAT calls, the host's cost kept out, the median)."""
    from ...bench.timing import time_call
    return time_call(fn, repeats=REPEAT).ms * 1000.0


def rms_case(x, r, w):
    """(call writing out, the fp32 result torch gives) for rms_norm."""
    out = torch.empty_like(x)
    want = torch.nn.functional.rms_norm(x.float(), (x.shape[-1],), w.float(), 1e-6)
    return (lambda: op.rms_norm(x, w, 1e-6, out=out)), (lambda: out), want


def fused_case(x, r, w):
    out, h = torch.empty_like(x), torch.empty_like(x)
    hf = (x.float() + r.float()).to(x.dtype).float()
    want = torch.nn.functional.rms_norm(hf, (x.shape[-1],), w.float(), 1e-6)
    return (lambda: fused_op.fused_add_rms_norm(x, r, w, 1e-6, out=out, residual_out=h)), \
        (lambda: out), want


def ln_case(x, r, w):
    out, b = torch.empty_like(x), w.flip(0)
    want = torch.nn.functional.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), 1e-5)
    return (lambda: ln_op.layer_norm(x, w, b, 1e-5, out=out)), (lambda: out), want


class LayerNormTable:
    """layer_norm's forward table as the sweep reads a config (TABLE, ROUTES)."""
    TABLE = ln_config.FORWARD
    ROUTES = ln_config.FORWARD.routes


OPS = {"rms_norm": (config, "rms_norm_tiles", rms_case),
       "fused_add_rms_norm": (fused_config, "fused_add_rms_norm_tiles", fused_case),
       "layer_norm": (LayerNormTable, "layer_norm_rows", ln_case)}
LIBRARY_OPS = {"rms_norm": op.OP, "fused_add_rms_norm": fused_op.OP,
               "layer_norm": ln_op.FORWARD_OP}
TORCH = {"rms_norm": lambda x, r, w: torch.nn.functional.rms_norm(x, (x.shape[-1],), w, 1e-6),
         "fused_add_rms_norm":
             lambda x, r, w: torch.nn.functional.rms_norm(x + r, (x.shape[-1],), w, 1e-6),
         "layer_norm": lambda x, r, w: torch.nn.functional.layer_norm(x, (x.shape[-1],), w,
                                                                      w.flip(0), 1e-5)}


def candidates(cfg, kernel: str, explore: bool) -> list:
    """The op's distinct row-tile routes, and EXPLORE's with `explore`."""
    routes, seen = [], set()
    for r in cfg.ROUTES:     # each set of constants once (routes for other row counts share some)
        key = tuple(sorted(r.constants.items()))
        if r.kernel == kernel and key not in seen:
            seen.add(key)
            routes.append(r)
    extra = [(c, held, warps, {}) for c, held, warps in EXPLORE]
    if kernel == "layer_norm_rows":
        extra += [(c, held, warps, {"WEIGHTS": when}) for c, held, warps, when in EXPLORE_WEIGHTS]
    for c, held, warps, more in extra if explore else ():
        route = lib.Route(kernel, {"C": c, "HELD": held, "WARPS": warps, **more},
                          cols_multiple=16)
        key = tuple(sorted(route.constants.items()))
        if key not in seen:
            seen.add(key)
            routes.append(route)
    return routes


def prebuild(names: list[str], explore: bool, jobs: int, target: str = "sm_90a") -> None:
    """Build every candidate of `names` for `target` in each dtype, `jobs` at a time (the
    timing loop then finds them in the build cache): one nvcc build after another would take
    most of a 10-minute run with --explore. A candidate its kernel refuses is left to
    time_shape, which says so."""
    from concurrent.futures import ThreadPoolExecutor
    builds = []
    for name in names:
        cfg, kernel, _ = OPS[name]
        for route in candidates(cfg, kernel, explore):
            if route.targets is None or target in route.targets:
                builds += [(LIBRARY_OPS[name].kernel(route, dtype), route.constants)
                           for dtype in DTYPES]

    def build(item):
        kernel, constants = item
        try:
            kernel.build(target=target, **constants)
        except (InputError, KernelError):
            pass
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(build, builds))
    print(f"prebuilt {len(builds)} kernels for {target}", flush=True)


def time_shape(name: str, rows: int, cols: int, dtype: str, explore: bool,
               device: str = "cuda", timer=median_us) -> list[dict]:
    """The records of one op at one shape (`device` and `timer`: a CPU smoke run)."""
    cfg, kernel, case = OPS[name]
    g = torch.Generator(device=device).manual_seed(0)
    x, r = (torch.randn(rows, cols, device=device, generator=g).to(DTYPES[dtype])
            for _ in range(2))
    w = torch.randn(cols, device=device, generator=g).to(DTYPES[dtype])
    call, result, want = case(x, r, w)
    out = torch.empty_like(x)
    base = {"op": name, "rows": rows, "cols": cols, "dtype": dtype}
    torch_call = lambda: TORCH[name](x, r, w)     # noqa: E731
    records = [{**base, "route": "torch", "us": timer(torch_call)},
               {**base, "route": "copy", "us": timer(lambda: out.copy_(x))}]
    shipped = cfg.TABLE.choose(rows, cols, lib.target_of(x))
    for route in candidates(cfg, kernel, explore):
        try:
            with lib.pinned(cfg.TABLE, route):
                call()
                err = (result().float() - want).abs().max().item()
                us = timer(call)
        except InputError:
            continue
        except KernelError as e:
            print(f"  {route.constants}: not built: {str(e).splitlines()[0]}")
            continue
        records.append({**base, "route": route.kernel, "constants": route.constants, "us": us,
                        "max_err": err, "shipped": (route.kernel, route.constants)
                        == (shipped.kernel, shipped.constants)})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="twelve shapes (few rows and the bandwidth ones), not the grid")
    parser.add_argument("--explore", action="store_true",
                        help="also time EXPLORE's constants (not shipped)")
    parser.add_argument("--json", default="rms_sweep.json", help="where to write results")
    parser.add_argument("--only", help="comma-separated ops (default: all three)")
    parser.add_argument("--shapes", help="comma-separated ROWSxCOLS instead of the grid")
    parser.add_argument("--jobs", type=int, default=8,
                        help="kernels built at once before timing (default 8)")
    args = parser.parse_args()
    shapes = QUICK if args.quick else [(r, c) for r in ROWS for c in COLS]
    if args.shapes:
        shapes = [tuple(int(v) for v in s.lower().split("x")) for s in args.shapes.split(",")]
    names = args.only.split(",") if args.only else list(OPS)
    unknown = [n for n in names if n not in OPS]
    if unknown:
        raise InputError(f"--only: no op {unknown[0]!r} in the sweep",
                         hint=f"choose from {', '.join(OPS)}")
    prebuild(names, args.explore, args.jobs)
    records = []
    for name in names:
        for rows, cols in shapes:
            for dtype in DTYPES:
                found = time_shape(name, rows, cols, dtype, args.explore)
                records += found
                timed = found[2:] or found[:1]
                best = min(timed, key=lambda r: r["us"])
                shipped = next((r for r in timed if r.get("shipped")), best)
                print(f"{name:>18} {rows:>5} x {cols:<5} {dtype}: torch {found[0]['us']:7.1f} us"
                      f" | copy {found[1]['us']:7.1f} | shipped {shipped.get('constants')} "
                      f"{shipped['us']:7.1f} (err {shipped.get('max_err', 0):.3g}) | best "
                      f"{best.get('constants')} {best['us']:7.1f}", flush=True)
    with open(args.json, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "records": records}, f, indent=1)


if __name__ == "__main__":
    main()

"""Time the per-token quantisation routes on the GPU against torch, Triton and a copy: the data
that choose config.py's block routes. Each candidate is pinned in turn (`_library.pinned`; a
route whose kernel refuses the shape, too narrow, is skipped) and checked bit for bit against
the shipped route's result before it is timed:

- `block C64` (shipped): one block per token, hidden / 1024 warps of one flat 16 x 64 tile;
- `block C128`: half the warps, one 16 x 128 tile each (wider accesses, fewer warps);
- `block C64 x2`: half the warps, two 16 x 64 tiles each (two loads in flight per warp);
- `block C32`: twice the warps, 16 x 32 tiles (shorter per-warp work: the 1-token latency);
- `rows`: one warp per token looping over the row (token_rows.py, the route before these).

    python -m ktile.ops.quant.sweep [--quick] [--json FILE]

Writes JSON: one record per (op, shape, candidate, or "torch" / "triton" / "copy": x copied to
a tensor of its size, the bandwidth floor) with the median µs (ktile/bench/timing.py: L2
flushed before each call, the host's cost kept out), and prints the shipped and the fastest
candidate per shape. Needs a CUDA GPU."""
from __future__ import annotations

import argparse
import json

import torch

from ...errors import InputError, KernelError
from .. import _library as lib
from . import config, op

ROWS = (1, 8, 32, 256, 4096, 16384)
COLS = (4096, 8192, 14336)
QUICK = [(1, 4096), (32, 4096), (4096, 4096), (16384, 4096), (16384, 8192), (4096, 14336)]
REPEAT = 20
FP8_MAX = 448.0


def median_us(fn) -> float:
    from ...bench.timing import time_call
    return time_call(fn, repeats=REPEAT).ms * 1000.0


def _torch_int8(x):
    xf = x.float()
    amax = xf.abs().amax(dim=-1, keepdim=True)
    return torch.round(xf * (127.0 / amax)).clamp(-128, 127).to(torch.int8), amax / 127.0


def _torch_fp8(x):
    xf = x.float()
    scale = (xf.abs().amax(dim=-1, keepdim=True) / FP8_MAX).clamp(min=1.0 / (FP8_MAX * 512.0))
    return (xf * (1.0 / scale)).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn), scale


OPS = {"scaled_int8_quant": (config.INT8, "int8_per_token", op.scaled_int8_quant, _torch_int8,
                             "int8_per_token"),
       "scaled_fp8_quant": (config.FP8, "fp8_per_token",
                            lambda x: op.scaled_fp8_quant(x, use_per_token_if_dynamic=True),
                            _torch_fp8, "fp8_per_token")}


def candidates(table, family: str, cols: int, target) -> dict:
    """name -> route: the block variants sized for `cols`, and the one-warp-per-token route."""
    tiles = -(-cols // 16)          # the view's columns

    def block(c: int, held: int) -> lib.Route:
        warps = -(-tiles // (c * held))
        return lib.Route(f"{family}_block", {"C": c, "HELD": held, "WARPS": warps},
                         cols_multiple=16)
    found = {"block C64": block(64, 1), "block C128": block(128, 1),
             "block C64 x2": block(64, 2), "block C32": block(32, 1),
             "rows": config.route(table, f"{family}_rows")}
    shipped = config.per_token_route(table, family, cols, target)
    return {name: r for name, r in found.items() if r.constants.get("WARPS", 1) <= 32} | \
        {"shipped": shipped}


def time_shape(name: str, rows: int, cols: int, device: str = "cuda",
               timer=median_us) -> list[dict]:
    """The records of one op at one shape (`device` and `timer`: a CPU smoke run)."""
    table, family, call, formula, triton_key = OPS[name]
    g = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(rows, cols, device=device, generator=g).bfloat16()
    x[0] = 0                                       # a row of zeros: the scale's edge
    base = {"op": name, "rows": rows, "cols": cols, "dtype": "bf16"}
    out = torch.empty_like(x)
    records = [{**base, "route": "torch", "us": timer(lambda: formula(x))},
               {**base, "route": "copy", "us": timer(lambda: out.copy_(x))}]
    if device == "cuda":
        try:
            from ...bench.triton_kernels import KERNELS
            records.append({**base, "route": "triton", "us": timer(lambda: KERNELS[triton_key](x))})
        except ImportError:
            pass
    want_q, want_s = call(x)
    target = op.fp8_target(name, x) if family.startswith("fp8") else lib.target_of(x)
    routes = candidates(table, family, cols, target)
    shipped = routes.pop("shipped")
    for label, route in routes.items():
        try:
            with lib.pinned(table, route):
                q, s = call(x)
                same = torch.equal(q.view(torch.int8), want_q.view(torch.int8)) and \
                    torch.equal(s, want_s)
                us = timer(lambda: call(x))
        except InputError:
            continue
        except KernelError as e:
            print(f"  {label} {route.constants}: not built: {str(e).splitlines()[0]}")
            continue
        records.append({**base, "route": label, "kernel": route.kernel,
                        "constants": route.constants, "us": us, "same": same,
                        "shipped": (route.kernel, route.constants) == (shipped.kernel,
                                                                        shipped.constants)})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="six shapes instead of the grid")
    parser.add_argument("--json", default="quant_sweep.json", help="where to write results")
    args = parser.parse_args()
    shapes = QUICK if args.quick else [(r, c) for r in ROWS for c in COLS]
    records = []
    for name in OPS:
        for rows, cols in shapes:
            found = time_shape(name, rows, cols)
            records += found
            timed = [r for r in found if "kernel" in r]
            best = min(timed, key=lambda r: r["us"])
            shipped = next((r for r in timed if r["shipped"]), best)
            others = {r["route"]: r["us"] for r in found if "kernel" not in r}
            print(f"{name} {rows}x{cols}: shipped {shipped['route']} {shipped['us']:.1f} µs, "
                  f"best {best['route']} {best['us']:.1f} µs, "
                  + ", ".join(f"{k} {v:.1f}" for k, v in others.items())
                  + ("" if all(r["same"] for r in timed) else "  MISMATCH"))
    with open(args.json, "w") as f:
        json.dump(records, f, indent=1)


if __name__ == "__main__":
    main()

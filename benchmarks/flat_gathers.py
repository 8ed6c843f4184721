"""embedding and NeoX rotary timed on the GPU with and without their flat kernels (the ones that
place flat tiles at a row `hk.load_scalar` reads), beside the op benchmark's Triton kernels and
torch, to check the routes chosen without a GPU: embedding's `embedding_flat` (widths a multiple
of 256) against `embedding_rows`, rotary's `rope_neox_flat` against `rope_neox_qk` at each
token count (where it crosses over sets ktile/ops/rotary/config.py FLAT_TOKENS).

    python benchmarks/flat_gathers.py --quick --out /tmp/fg      # the op benchmark's shapes
    python benchmarks/flat_gathers.py --out DIR                  # more token counts

Each variant's output is checked against the default's (bit for bit) before it is timed.
Times are ktile.bench.timing's (median, L2 flushed). Writes DIR/flat_gathers.json and prints
one line per shape.
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
from ktile.ops.embedding import op as embedding_op  # noqa: E402
from ktile.ops.rotary import config as rotary_config  # noqa: E402
from ktile.ops.rotary import reference as rotary_ref  # noqa: E402

QUICK_TOKENS = (1, 32, 4096, 16384)
TOKENS = (1, 2, 8, 16, 32, 64, 128, 256, 4096, 16384)
HIDDEN, VOCAB = 4096, 32000
Q_HEADS, K_HEADS, HEAD = 32, 8, 128


def _us(fn) -> float:
    return time_call(fn).ms * 1000.0


def _triton(name: str):
    try:
        from ktile.bench.triton_kernels import KERNELS
        return KERNELS.get(name)
    except Exception:                      # no triton here: its column is left out
        return None


def embedding_case(tokens: int) -> dict:
    weight = torch.randn(VOCAB, HIDDEN, device="cuda").bfloat16()
    ids = torch.randint(0, VOCAB, (tokens,), device="cuda")
    row = {"op": "embedding", "tokens": tokens, "hidden": HIDDEN, "us": {},
           "bytes": 2 * 2 * tokens * HIDDEN}
    base = ktile.ops.embedding(ids, weight)
    for route in embedding_op.TABLE.routes:
        if not route.fits(tokens, HIDDEN, "sm_90a"):
            continue
        label = f"{route.kernel}(COLS={route.constants['COLS']})"
        with lib.pinned(embedding_op.TABLE, route):
            if not torch.equal(ktile.ops.embedding(ids, weight), base):
                row["us"][label] = "wrong: differs from the default route"
                continue
            row["us"][label] = _us(lambda: ktile.ops.embedding(ids, weight))
    row["us"]["torch"] = _us(lambda: torch.nn.functional.embedding(ids, weight))
    triton = _triton("embedding")
    if triton is not None:
        row["us"]["triton"] = _us(lambda: triton(ids, weight))
    return row


def rotary_case(tokens: int) -> dict:
    positions = torch.randint(0, 8192, (tokens,), device="cuda")
    cache = torch.from_numpy(rotary_ref.cos_sin_cache(8192, HEAD)).cuda()
    q = torch.randn(tokens, Q_HEADS * HEAD, device="cuda").bfloat16()
    k = torch.randn(tokens, K_HEADS * HEAD, device="cuda").bfloat16()
    row = {"op": "rotary_embedding", "tokens": tokens, "heads": [Q_HEADS, K_HEADS], "us": {},
           "bytes": 2 * 2 * tokens * (Q_HEADS + K_HEADS) * HEAD}
    results, saved = {}, rotary_config.FLAT_TOKENS
    try:
        for label, flat_tokens in (("rope_neox_flat", 1 << 30), ("rope_neox_qk", 0)):
            rotary_config.FLAT_TOKENS = flat_tokens
            qc, kc = q.clone(), k.clone()
            ktile.ops.rotary_embedding(positions, qc, kc, HEAD, cache, True)
            results[label] = (qc, kc)
            row["us"][label] = _us(lambda: ktile.ops.rotary_embedding(positions, qc, kc, HEAD,
                                                                       cache, True))
    finally:
        rotary_config.FLAT_TOKENS = saved
    (fq, fk), (gq, gk) = results["rope_neox_flat"], results["rope_neox_qk"]
    if not (torch.equal(fq, gq) and torch.equal(fk, gk)):
        row["us"]["rope_neox_flat"] = "wrong: differs from rope_neox_qk"
    triton = _triton("rotary_neox")
    if triton is not None:
        qc, kc = q.clone(), k.clone()
        row["us"]["triton"] = _us(lambda: triton(positions, qc, kc, cache, HEAD))
    return row


def _print(row: dict, copy: float) -> None:
    cells = []
    for label, us in row["us"].items():
        if isinstance(us, float):
            cells.append(f"{label}: {us:.1f} ({100 * row['bytes'] / copy / 1e3 / us:.0f}%)")
        else:
            cells.append(f"{label}: {us}")
    print(f"{row['op']:17s} {row['tokens']:6d} " + " | ".join(cells), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the op benchmark's token counts")
    parser.add_argument("--out", help="write DIR/flat_gathers.json")
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("flat_gathers: no CUDA GPU here", file=sys.stderr)
        return 2
    copy = copy_gbps()
    rows = []
    for tokens in QUICK_TOKENS if args.quick else TOKENS:
        rows += [embedding_case(tokens), rotary_case(tokens)]
        _print(rows[-2], copy)
        _print(rows[-1], copy)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "flat_gathers.json"), "w") as f:
            json.dump({"copy_gbps": copy, "device": torch.cuda.get_device_name(), "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

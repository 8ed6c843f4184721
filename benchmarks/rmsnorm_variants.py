"""RMSNorm variants timed on the GPU against F.rms_norm and the copy bandwidth, in one run.

Each variant is the example's kernel with other warps / column-tile widths, and with the column
loop either a runtime loop (scf.for) or unrolled in Python (WIDTH a constant), to find what
keeps enough bytes in flight. Prints a table; --json PATH writes the numbers."""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "scripts")]

import ktile as hk  # noqa: E402


def runtime_loop(warps: int, cols: int):
    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=warps)
    def rmsnorm_loop(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                     eps: hk.Constexpr[float] = 1e-6):
        b, r, warp = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
        tiles = hk.cdiv(x.cols, cols)
        t = hk.RT(hk.bf16, 16, cols)
        squares = hk.zeros(hk.RV(hk.fp32, 16))
        for c in range(warp, tiles, warps):
            xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
            squares += hk.row_sum(xs * xs)
        inv = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
        for c in range(warp, tiles, warps):
            xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
            ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, cols, "col")).to(hk.fp32)
            o[hk.tile_coord(b, 0, r, c)] = (xs * inv * ws).to(hk.bf16)
    return rmsnorm_loop


def unrolled(warps: int, cols: int):
    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=warps)
    def rmsnorm_unrolled(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                         WIDTH: hk.Constexpr[int] = 4096, eps: hk.Constexpr[float] = 1e-6):
        b, r, warp = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
        t = hk.RT(hk.bf16, 16, cols)
        steps = WIDTH // (cols * warps)
        squares = hk.zeros(hk.RV(hk.fp32, 16))
        for i in range(steps):                      # Python loop: independent loads
            xs = x[hk.tile_coord(b, 0, r, warp + i * warps)].load(t).to(hk.fp32)
            squares += hk.row_sum(xs * xs)
        inv = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
        for i in range(steps):
            c = warp + i * warps
            xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
            ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, cols, "col")).to(hk.fp32)
            o[hk.tile_coord(b, 0, r, c)] = (xs * inv * ws).to(hk.bf16)
    return rmsnorm_unrolled


def resident(warps: int, cols: int):
    """x read once: each warp keeps its column tiles (a Python list) between the reduction and
    the store."""
    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=warps)
    def rmsnorm_resident(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                         WIDTH: hk.Constexpr[int] = 4096, eps: hk.Constexpr[float] = 1e-6):
        b, r, warp = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
        t = hk.RT(hk.bf16, 16, cols)
        columns = [warp + i * warps for i in range(WIDTH // (cols * warps))]
        tiles = [x[hk.tile_coord(b, 0, r, c)].load(t) for c in columns]
        squares = hk.zeros(hk.RV(hk.fp32, 16))
        for xs in tiles:
            xf = xs.to(hk.fp32)
            squares += hk.row_sum(xf * xf)
        inv = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
        for c, xs in zip(columns, tiles):
            ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, cols, "col")).to(hk.fp32)
            o[hk.tile_coord(b, 0, r, c)] = (xs.to(hk.fp32) * inv * ws).to(hk.bf16)
    return rmsnorm_resident


def staged(warps: int, cols: int):
    """x read once, into shared memory (one 16 x WIDTH group load); each warp reads its column
    tiles from there twice (sub-tile shared loads)."""
    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=warps)
    def rmsnorm_staged(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                       WIDTH: hk.Constexpr[int] = 4096, eps: hk.Constexpr[float] = 1e-6):
        b, r, warp = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id
        rows = hk.shared(hk.ST(hk.bf16, 16, WIDTH))
        hk.group.load(rows, x[hk.tile_coord(b, 0, r, 0)])
        hk.wait_for(rows)
        hk.barrier()
        t = hk.RT(hk.bf16, 16, cols)
        columns = [warp + i * warps for i in range(WIDTH // (cols * warps))]
        squares = hk.zeros(hk.RV(hk.fp32, 16))
        for c in columns:
            xs = rows.load(t, col=c)
            hk.wait_for(xs)
            xf = xs.to(hk.fp32)
            squares += hk.row_sum(xf * xf)
        inv = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
        for c in columns:
            xs = rows.load(t, col=c)
            hk.wait_for(xs)
            ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, cols, "col")).to(hk.fp32)
            o[hk.tile_coord(b, 0, r, c)] = (xs.to(hk.fp32) * inv * ws).to(hk.bf16)
    return rmsnorm_staged


VARIANTS = {
    "loop w4 c64": runtime_loop(4, 64), "loop w16 c64": runtime_loop(16, 64),
    "unrolled w16 c64": unrolled(16, 64),
    "resident w8 c64": resident(8, 64),
    "staged w4 c64": staged(4, 64), "staged w8 c64": staged(8, 64),
    "staged w16 c64": staged(16, 64), "staged w8 c128": staged(8, 128),
    "staged w16 c128": staged(16, 128), "staged w32 c64": staged(32, 64),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json")
    args = parser.parse_args()
    import torch
    from gpu_suite import copy_bandwidth, cuda_time_ms
    from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance
    copy = copy_bandwidth(torch)
    x = torch.randn(1, 1, 16384, 4096, device="cuda").to(torch.bfloat16)
    w = torch.randn(1, 1, 1, 4096, device="cuda").to(torch.bfloat16)
    o = torch.empty_like(x)
    moved = 2 * x.numel() * 2 + w.numel() * 2
    want = reference(x[0, 0, :256].float().cpu().numpy(), w.float().cpu().numpy(), 1e-6, hk.bf16)
    ref_ms = cuda_time_ms(torch, lambda: torch.nn.functional.rms_norm(x, (4096,), w.reshape(-1), 1e-6))
    rows = {"copy_GBps": copy, "F.rms_norm_ms": ref_ms, "variants": {}}
    for name, kernel in VARIANTS.items():
        try:
            constants = {} if name.startswith("loop") else {"WIDTH": 4096}
            regs = kernel.build("sm_90a", **constants).resources.registers
            o.fill_(float("nan"))
            kernel(x, w, o, **constants)
            err = float((o[0, 0, :256].float().cpu() - torch.from_numpy(want)).abs().max())
            ms = cuda_time_ms(torch, lambda: kernel(x, w, o, **constants))
            rows["variants"][name] = {"ms": ms, "GBps": moved / ms / 1e6, "regs": regs,
                                      "ok": err <= tolerance(want)}
        except Exception as exc:  # report and go on to the next variant
            rows["variants"][name] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
    print(f"copy {copy:.0f} GB/s; F.rms_norm {ref_ms * 1e3:.1f} us "
          f"({moved / ref_ms / 1e6:.0f} GB/s)")
    for name, r in rows["variants"].items():
        if "error" in r:
            print(f"{name:<20} {r['error']}")
        else:
            print(f"{name:<20} {r['ms'] * 1e3:7.1f} us {r['GBps']:6.0f} GB/s "
                  f"{r['GBps'] / copy:5.0%} of copy  {r['regs']} regs  {'ok' if r['ok'] else 'WRONG'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Times examples/04_gemm.py's `gemm_wgmma` (block shapes and warp counts as given) and
`gemm_warps` against cuBLAS (torch.matmul, bf16 out) in one process on one GPU, C = A·Bᵀ at
M = N = K = 4096 bf16 unless told otherwise, timed as the GPU suite times (`gpu_suite.
cuda_time_ms`: back-to-back calls queued behind a GPU sleep, device time per call). Each
result is checked against torch's fp32 product first. Prints one line per kernel and, with
--json, writes them all.

    python3 benchmarks/wgmma_gemm.py [--size 4096] [--json PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for sub in ("", "examples", "tests", "scripts"):
    sys.path.insert(0, os.path.join(ROOT, sub))

from gpu_suite import cuda_time_ms  # noqa: E402  (the GPU suite's timing: device time per call)

# (label, kernel attribute, warps, constants)
CONFIGS = [
    ("gemm_warps 64x64x32, 4 warps", "gemm_warps", 4, {}),
    ("gemm_wgmma 128x128x64 3 stages, 8 warps", "gemm_wgmma", 8, {}),
    ("gemm_wgmma 128x128x64 2 stages, 8 warps", "gemm_wgmma", 8, {"STAGES": 2}),
    ("gemm_wgmma 128x128x32 4 stages, 8 warps", "gemm_wgmma", 8, {"BK": 32, "STAGES": 4}),
    ("gemm_wgmma 256x128x64 3 stages, 16 warps", "gemm_wgmma", 16, {"BM": 256}),
    ("gemm_wgmma 256x128x64 2 stages, 16 warps", "gemm_wgmma", 16, {"BM": 256, "STAGES": 2}),
]


def kernel_for(name: str, warps: int):
    from examples_index import load
    from ktile.lang.kernel import Kernel
    kernel = getattr(load("04_gemm"), name)
    return kernel if warps == kernel.warps else Kernel(kernel.fn, kernel.grid, warps, kernel.arch)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    import torch
    size = args.size
    a = torch.randn((1, 1, size, size), device="cuda").to(torch.bfloat16)
    b = torch.randn((1, 1, size, size), device="cuda").to(torch.bfloat16)
    c = torch.empty((1, 1, size, size), device="cuda")
    want = a[0, 0].float() @ b[0, 0].float().T
    flops = 2.0 * size ** 3
    results = [{"kernel": "cuBLAS (torch.matmul, bf16 out)",
                "ms": cuda_time_ms(torch, lambda: torch.matmul(a[0, 0], b[0, 0].T))}]
    for label, name, warps, constants in CONFIGS:
        kernel = kernel_for(name, warps)
        try:
            kernel(a, b, c, **constants)
            torch.cuda.synchronize()
            error = float((c[0, 0] - want).abs().max())
            ms = cuda_time_ms(torch, lambda: kernel(a, b, c, **constants))
            results.append({"kernel": label, "ms": ms, "max_error": error})
        except Exception as exc:   # one failing configuration must not hide the others
            results.append({"kernel": label, "error": f"{type(exc).__name__}: {exc}"[:2000]})
    base = results[0]["ms"]
    for r in results:
        if "ms" in r:
            r["tflops"] = flops / r["ms"] / 1e9
            r["of_cublas"] = base / r["ms"]
            print(f"{r['kernel']:<40} {r['ms']:8.3f} ms  {r['tflops']:6.1f} TFLOP/s  "
                  f"{r['of_cublas']:5.2f}x cuBLAS  err {r.get('max_error', 0):.3g}", flush=True)
        else:
            print(f"{r['kernel']:<40} FAILED {r['error']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "size": size,
                       "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

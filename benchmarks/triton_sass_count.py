"""Static sm_90a SASS counts of the Triton comparison kernels of the norms (issue #13), to set
beside `benchmarks/sass_count.py`'s counts of ktile's kernels: no GPU needed.

Compiles `ktile/ops/alternatives_triton.py`'s `_rms_norm` (plain and ADD, the fused form) and
`_layer_norm` ahead of time for sm_90a (`triton.compile` with a GPUTarget, bf16, the launchers'
BLOCK and warps for each width), disassembles the cubin and counts it by class with
sass_count's classes. Triton's kernels are one straight path (masked loads, no slow paths), so
their static count is close to what a warp executes; compare with sass_count's `hot` column.

    python benchmarks/triton_sass_count.py 2048 4096 5120 8192 14336 [--json F]

Needs triton importable (not a ktile dependency; e.g. `pip install --target /tmp/tritonpkg
triton==3.6.0` and `--path /tmp/tritonpkg`) and nvdisasm (sass_count.find_tool).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

RMS_SIGNATURE = {"x": "*bf16", "res": "*bf16", "w": "*bf16", "out": "*bf16", "res_out": "*bf16",
                 "cols": "i32", "eps": "fp32", "ADD": "constexpr", "BLOCK": "constexpr"}
LN_SIGNATURE = {"x": "*bf16", "w": "*bf16", "b": "*bf16", "out": "*bf16", "cols": "i32",
                "eps": "fp32", "BLOCK": "constexpr"}


def compile_counts(fn, signature: dict, constexprs: dict, warps: int, tool: list) -> dict:
    """`fn` compiled for sm_90a at `constexprs` on `warps` warps, its SASS counted by class."""
    import triton
    from triton.backends.compiler import GPUTarget
    import sass_count
    source = triton.compiler.ASTSource(fn=fn, signature=signature, constexprs=constexprs)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": warps})
    path = os.path.join(tempfile.mkdtemp(prefix="ktile_triton_sass_"), "kernel.cubin")
    with open(path, "wb") as f:
        f.write(compiled.asm["cubin"])
    return sass_count.count_sass(sass_count.disassemble(tool, path))


def cases(cols: int) -> list[tuple[str, object, dict, dict]]:
    """(name, kernel, signature, constexprs) of the three norms at `cols` columns."""
    import triton
    from ktile.ops import alternatives_triton as alt
    block = triton.next_power_of_2(cols)
    return [("rms_norm", alt._rms_norm, RMS_SIGNATURE, {"ADD": False, "BLOCK": block}),
            ("fused_add_rms_norm", alt._rms_norm, RMS_SIGNATURE, {"ADD": True, "BLOCK": block}),
            ("layer_norm", alt._layer_norm, LN_SIGNATURE, {"BLOCK": block})]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cols", nargs="*", type=int, default=[2048, 4096, 5120, 8192, 14336])
    parser.add_argument("--path", help="a folder to import triton from (pip --target)")
    parser.add_argument("--json", help="write the counts to this file")
    args = parser.parse_args(argv)
    if args.path:
        sys.path.insert(0, args.path)
    import sass_count
    from ktile.ops import alternatives_triton as alt
    tool, results = sass_count.find_tool(), []
    for cols in args.cols:
        for name, fn, signature, constexprs in cases(cols):
            warps = alt._row_warps(constexprs["BLOCK"])
            counts = compile_counts(fn, signature, constexprs, warps, tool)
            results.append({"op": name, "cols": cols, "warps": warps, **counts})
            classes = " ".join(f"{k}={v}" for k, v in counts["classes"].items())
            print(f"triton {name:<20} {cols:>6} cols {warps:>2} warps {counts['total']:>5}  "
                  f"{classes}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"target": "sm_90a", "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

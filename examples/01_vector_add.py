"""01 vector add: the seed's `add`, verbatim, on bf16 tensors with ragged edges."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch),
           requires=[(lambda p: p.o.depth == 1,
                      "o.depth must be 1: the grid does not cover depth (reshape it into rows)")])
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


KERNELS = [(add, {})]
CASES = [(1, 1, 16, 64), (2, 1, 48, 192), (1, 1, 37, 100), (3, 1, 5, 70)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.elementwise.reference import add as reference
    a, b = torch_rand(shape, torch.bfloat16, 1), torch_rand(shape, torch.bfloat16, 2)
    o = torch.full(shape, float("nan"), dtype=torch.bfloat16)
    runner(add, backend, device)(a, b, o, target=target)
    want = reference(a.float().numpy(), b.float().numpy(), hk.bf16)
    return max_abs_error(o.float().numpy(), want), 0.0


# ---- the library op ----------------------------------------------------------------------------
# In a program, call the library instead of launching the kernel: `ktile.ops.add(a, b)` has
# torch's semantics (1-4-D tensors, broadcasting, `out=`), runs CPU tensors on the interpreter
# and CUDA tensors on the GPU, and is a torch.library op (docs/ops.md). `library_case` checks it
# as run_case checks the kernel above.

def library_case(shape=(40, 300)):
    import torch
    import ktile.ops
    from ktile.ops.elementwise.reference import add as reference
    a, b = torch_rand(shape, torch.bfloat16, 1), torch_rand(shape, torch.bfloat16, 2)
    want = reference(a.float().numpy(), b.float().numpy(), hk.bf16)
    return max_abs_error(ktile.ops.add(a, b).float().numpy(), want), 0.0


if __name__ == "__main__":
    example_main(globals())

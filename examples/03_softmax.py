"""03 softmax: row max, exp, sum and normalise, online over column tiles (ragged columns read -inf)."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, p.ROWS), p.x.depth, p.x.batch))
def softmax(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *,
            ROWS: hk.Constexpr[int] = 16, COLS: hk.Constexpr[int] = 64):
    b, d, r = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    t = hk.RT(hk.fp32, ROWS, COLS)
    tiles = hk.cdiv(x.cols, COLS)
    row_max = hk.neg_infty(hk.RV(hk.fp32, ROWS))
    row_sum = hk.zeros(hk.RV(hk.fp32, ROWS))
    for c in range(tiles):                       # one pass: running max, rescaled sum
        xs = x[hk.tile_coord(b, d, r, c)].load(t, pad=float("-inf"))
        new_max = hk.maximum(row_max, hk.row_max(xs))
        row_sum = row_sum * hk.exp(row_max - new_max) + hk.row_sum(hk.exp(xs - new_max))
        row_max = new_max
    for c in range(tiles):
        xs = x[hk.tile_coord(b, d, r, c)].load(t, pad=float("-inf"))
        o[hk.tile_coord(b, d, r, c)] = hk.exp(xs - row_max) / row_sum


KERNELS = [(softmax, {})]
CASES = [(1, 1, 16, 64), (2, 2, 33, 130), (1, 1, 5, 1000), (1, 3, 50, 17)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.softmax.reference import softmax as reference, tolerance
    x = torch_rand(shape, torch.float32, 5, scale=3.0)
    o = torch.full_like(x, float("nan"))
    runner(softmax, backend, device)(x, o, target=target)
    return max_abs_error(o.numpy(), reference(x.numpy(), hk.fp32)), tolerance(hk.fp32)


# ---- the library op ----------------------------------------------------------------------------
# In a program, call the library instead: `ktile.ops.softmax(x, dim=-1)` is torch.softmax for
# bf16, fp16 and fp32 tensors of 1 to 4 dimensions, with rows of any width up to the largest
# vocabularies (a wide row splits across blocks), and a torch.library op (docs/ops.md).
# `library_case` checks it as run_case checks the kernel above.

def library_case(shape=(7, 1000)):
    import torch
    import ktile.ops
    from ktile.ops.softmax.reference import softmax as reference, tolerance
    x = torch_rand(shape, torch.float32, 5, scale=3.0)
    got = ktile.ops.softmax(x, -1)
    return max_abs_error(got.numpy(), reference(x.numpy(), hk.fp32)), tolerance(hk.fp32)


if __name__ == "__main__":
    example_main(globals())

"""02 RMSNorm: a runtime loop over column tiles, a row reduction, a cross-warp combine, broadcasts."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, p.ROWS), p.x.batch), warps=4)
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
            ROWS: hk.Constexpr[int] = 16, COLS: hk.Constexpr[int] = 64,
            eps: hk.Constexpr[float] = 1e-6):
    b, r = hk.arch.block_idx.y, hk.arch.block_idx.x
    warp, warps = hk.arch.warp_id, hk.arch.num_warps
    tiles = hk.cdiv(x.cols, COLS)
    t = hk.RT(hk.bf16, ROWS, COLS)
    # each warp sums the squares of every `warps`-th column tile of these rows
    squares = hk.zeros(hk.RV(hk.fp32, ROWS))
    for c in range(warp, tiles, warps):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        squares += hk.row_sum(xs * xs)
    squares = hk.group.sum(squares)          # every warp gets the whole row's sum
    inv_rms = hk.rsqrt(squares / hk.to_float(x.cols) + eps)
    for c in range(warp, tiles, warps):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, COLS, "col")).to(hk.fp32)
        o[hk.tile_coord(b, 0, r, c)] = (xs * inv_rms * ws).to(hk.bf16)


KERNELS = [(rmsnorm, {})]
CASES = [(1, 16, 64), (2, 40, 256), (1, 21, 300), (3, 7, 1000)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance
    batch, rows, cols = shape
    x = torch_rand((batch, 1, rows, cols), torch.bfloat16, 3)
    w = torch_rand((1, 1, 1, cols), torch.bfloat16, 4)
    o = torch.full_like(x, float("nan"))
    runner(rmsnorm, backend, device)(x, w, o, target=target)
    want = reference(x.float().numpy(), w.float().numpy(), 1e-6, hk.bf16)
    return max_abs_error(o.float().numpy(), want), tolerance(want)


if __name__ == "__main__":
    example_main(globals())

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


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=16)
def rmsnorm_staged(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                   WIDTH: hk.Constexpr[int] = 1024, COLS: hk.Constexpr[int] = 64,
                   eps: hk.Constexpr[float] = 1e-6):
    """x is read from global memory once: 16 rows of up to WIDTH columns go to shared memory in
    one group load, and each warp reads its column tiles from there twice (sub-tile loads)."""
    b, r, warp, warps = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
    rows = hk.shared(hk.ST(hk.bf16, 16, WIDTH))
    hk.group.load(rows, x[hk.tile_coord(b, 0, r, 0)])
    hk.wait_for(rows)
    hk.barrier()
    t = hk.RT(hk.bf16, 16, COLS)
    columns = [warp + i * warps for i in range(WIDTH // (COLS * warps))]   # unrolled in Python
    squares = hk.zeros(hk.RV(hk.fp32, 16))
    for c in columns:
        xs = rows.load(t, col=c)
        hk.wait_for(xs)
        xf = xs.to(hk.fp32)
        squares += hk.row_sum(xf * xf)
    inv_rms = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
    for c in columns:
        xs = rows.load(t, col=c)
        hk.wait_for(xs)
        ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, COLS, "col")).to(hk.fp32)
        o[hk.tile_coord(b, 0, r, c)] = (xs.to(hk.fp32) * inv_rms * ws).to(hk.bf16)


def staged_width(cols: int) -> int:
    """WIDTH for rows `cols` wide: whole 64-column tiles for each of the 16 warps. (Rows of 4096
    take 128 KB of shared memory: sm_90a and gfx950 have it, gfx1100 does not.)"""
    return -(-cols // 1024) * 1024


KERNELS = [(rmsnorm, {}), (rmsnorm_staged, {})]
CASES = [(1, 16, 64), (2, 40, 256), (1, 21, 300), (3, 7, 1000)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    """Both kernels against the reference; the larger error counts."""
    import torch
    from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance
    batch, rows, cols = shape
    x = torch_rand((batch, 1, rows, cols), torch.bfloat16, 3)
    w = torch_rand((1, 1, 1, cols), torch.bfloat16, 4)
    want = reference(x.float().numpy(), w.float().numpy(), 1e-6, hk.bf16)
    errors = []
    for kernel, constants in ((rmsnorm, {}), (rmsnorm_staged, {"WIDTH": staged_width(cols)})):
        o = torch.full_like(x, float("nan"))
        runner(kernel, backend, device)(x, w, o, target=target, **constants)
        errors.append(max_abs_error(o.float().numpy(), want))
    return max(errors), tolerance(want)


if __name__ == "__main__":
    example_main(globals())

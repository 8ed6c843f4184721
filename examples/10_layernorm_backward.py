"""10 LayerNorm backward (Triton's tutorial): row reductions for dx, column reductions for dw
and db as per-block partial sums, then reduced in a fixed order — no atomics, no locks."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=2,
           requires=[(lambda p: p.x.batch == 1,
                      "x.batch must be 1: the grid does not cover batch (one call per batch)"),
                     (lambda p: p.x.depth == 1,
                      "x.depth must be 1: the grid does not cover depth (reshape it into rows)")])
def layernorm_dx(x: hk.Tensor[hk.fp32], dy: hk.Tensor[hk.fp32], w: hk.Tensor[hk.fp32],
                 mean: hk.Tensor[hk.fp32], rstd: hk.Tensor[hk.fp32], dx: hk.Tensor[hk.fp32],
                 dw_part: hk.Tensor[hk.fp32], db_part: hk.Tensor[hk.fp32]):
    r, warp, warps = hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
    t = hk.RT(hk.fp32, 16, 64)
    mu = mean[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.fp32, 16))
    rs = rstd[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.fp32, 16))
    tiles = hk.cdiv(x.cols, 64)
    c1 = hk.zeros(hk.RV(hk.fp32, 16))          # Σ x̂·w·dy per row
    c2 = hk.zeros(hk.RV(hk.fp32, 16))          # Σ w·dy per row
    for c in range(warp, tiles, warps):
        idx = hk.tile_coord(0, 0, r, c)
        xhat = (x[idx].load(t) - mu) * rs
        wdy = dy[idx].load(t) * w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.fp32, 64, "col"))
        c1 += hk.row_sum(xhat * wdy)
        c2 += hk.row_sum(wdy)
    n = hk.to_float(x.cols)
    c1 = hk.group.sum(c1) / n
    c2 = hk.group.sum(c2) / n
    for c in range(warp, tiles, warps):
        idx = hk.tile_coord(0, 0, r, c)
        g = dy[idx].load(t)
        xhat = (x[idx].load(t) - mu) * rs
        xhat = hk.where(hk.iota(hk.RT(hk.i32, 16, 64), "row") + r * 16 < x.rows, xhat, 0.0)
        wdy = g * w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.fp32, 64, "col"))
        dx[idx] = (wdy - (xhat * c1 + c2)) * rs
        dw_part[hk.tile_coord(0, 0, r, c)] = hk.col_sum(g * xhat)   # this block's partial
        db_part[hk.tile_coord(0, 0, r, c)] = hk.col_sum(g)


@hk.kernel(grid=lambda p: (hk.cdiv(p.part.cols, 64),),
           requires=[(lambda p: p.part.batch == 1,
                      "part.batch must be 1: the grid does not cover batch (one call per batch)"),
                     (lambda p: p.part.depth == 1,
                      "part.depth must be 1: the grid does not cover depth (reshape it into rows)")])
def column_sum(part: hk.Tensor[hk.fp32], total: hk.Tensor[hk.fp32]):
    c = hk.arch.block_idx.x
    acc = hk.zeros(hk.RV(hk.fp32, 64, "col"))
    for r in range(hk.cdiv(part.rows, 16)):        # partials summed in block order, every run
        acc += hk.col_sum(part[hk.tile_coord(0, 0, r, c)].load(hk.RT(hk.fp32, 16, 64)))
    total[hk.tile_coord(0, 0, 0, c)] = acc


KERNELS = [(layernorm_dx, {}), (column_sum, {})]
CASES = [(16, 64), (50, 200), (33, 1000), (7, 30)]   # (rows, cols)


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.layernorm.reference import forward_stats, layernorm_backward, tolerance
    rows, cols = shape
    x = torch_rand((1, 1, rows, cols), torch.float32, 18)
    dy = torch_rand((1, 1, rows, cols), torch.float32, 19)
    w = torch_rand((1, 1, 1, cols), torch.float32, 20)
    mean, rstd = (torch.from_numpy(s).reshape(1, 1, 1, rows)
                  for s in forward_stats(x[0, 0].numpy(), 1e-5))
    blocks = -(-rows // 16)
    dx = torch.full_like(x, float("nan"))
    dw_part, db_part = (torch.full((1, 1, blocks, cols), float("nan")) for _ in range(2))
    dw, db = (torch.full((1, 1, 1, cols), float("nan")) for _ in range(2))
    runner(layernorm_dx, backend, device)(x, dy, w, mean, rstd, dx, dw_part, db_part, target=target)
    runner(column_sum, backend, device)(dw_part, dw, target=target)
    runner(column_sum, backend, device)(db_part, db, target=target)
    want = layernorm_backward(x[0, 0].numpy(), dy[0, 0].numpy(), w[0, 0].numpy(),
                              mean.reshape(-1).numpy(), rstd.reshape(-1).numpy())
    got = (dx[0, 0].numpy(), dw.reshape(-1).numpy(), db.reshape(-1).numpy())
    return max(max_abs_error(g, e) for g, e in zip(got, want)), tolerance(*want)


if __name__ == "__main__":
    example_main(globals())

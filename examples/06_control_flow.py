"""06 control flow: for / if / while on device values, carried scalars and tiles (see --dump ir|cpp).

For each block of 16 rows: add up the column tiles whose largest value passes THRESHOLD and
subtract half of the others (an `if` on a device value inside a `for` over a device extent),
counting the kept tiles; then halve the sums until they are small (a `while` whose condition
and counter are device values). Tiles past the edge read zeros."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch),
           requires=[(lambda p: p.x.depth == 1,
                      "x.depth must be 1: the grid does not cover depth (reshape it into rows)")])
def control_flow(x: hk.Tensor[hk.fp32], sums: hk.Tensor[hk.fp32], counts: hk.Tensor[hk.fp32], *,
                 THRESHOLD: hk.Constexpr[float] = 2.5, LIMIT: hk.Constexpr[float] = 4.0):
    b, r = hk.arch.block_idx.y, hk.arch.block_idx.x
    total = hk.zeros(hk.RV(hk.fp32, 16))
    kept = 0                                    # a Python int the loop changes: carried as a scalar
    for c in range(hk.cdiv(x.cols, 32)):        # scf.for over a device extent
        t = x[hk.tile_coord(b, 0, r, c)].load(hk.RT(hk.fp32, 16, 32))
        if hk.sum(hk.row_max(t)) > THRESHOLD * 16:   # scf.if on a device value
            total += hk.row_sum(t)
            kept += 1
        else:
            total -= hk.row_sum(t) * 0.5
    halvings = 0
    while (hk.sum(hk.abs(total)) > LIMIT * 16) & (halvings < 30):   # scf.while
        total = total * 0.5
        halvings += 1
    sums[hk.tile_coord(b, 0, 0, r)] = total
    counts[hk.tile_coord(b, 0, 0, r)] = hk.zeros(hk.RV(hk.fp32, 16)) + hk.to_float(kept * 100 + halvings)


def reference(x, threshold=2.5, limit=4.0):
    import numpy as np
    batch, rows, cols = x.shape[0], x.shape[2], x.shape[3]
    blocks, col_tiles = -(-rows // 16), -(-cols // 32)
    padded = np.zeros((batch, blocks * 16, col_tiles * 32), np.float32)
    padded[:, :rows, :cols] = x[:, 0]
    sums = np.zeros((batch, blocks * 16), np.float32)
    counts = np.zeros((batch, blocks * 16), np.float32)
    for b in range(batch):
        for r in range(blocks):
            total, kept = np.zeros(16, np.float32), 0
            for c in range(col_tiles):
                t = padded[b, r * 16:(r + 1) * 16, c * 32:(c + 1) * 32]
                if t.max(axis=1).sum(dtype=np.float32) > threshold * 16:
                    total, kept = total + t.sum(axis=1, dtype=np.float32), kept + 1
                else:
                    total = total - t.sum(axis=1, dtype=np.float32) * np.float32(0.5)
            halvings = 0
            while np.abs(total).sum(dtype=np.float32) > limit * 16 and halvings < 30:
                total, halvings = total * np.float32(0.5), halvings + 1
            sums[b, r * 16:(r + 1) * 16] = total
            counts[b, r * 16:(r + 1) * 16] = kept * 100 + halvings
    return sums[:, :rows], counts[:, :rows]


KERNELS = [(control_flow, {})]
CASES = [(1, 16, 64), (2, 40, 100), (1, 7, 300)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    import torch
    batch, rows, cols = shape
    x = torch_rand((batch, 1, rows, cols), torch.float32, 11, scale=2.0) + 0.3
    sums = torch.full((batch, 1, 1, rows), float("nan"))
    counts = torch.full((batch, 1, 1, rows), float("nan"))
    runner(control_flow, backend, device)(x, sums, counts, target=target)
    want_sums, want_counts = reference(x.numpy())
    err = max(max_abs_error(sums[:, 0, 0].numpy(), want_sums),
              max_abs_error(counts[:, 0, 0].numpy(), want_counts))
    return err, 1e-3


if __name__ == "__main__":
    example_main(globals())

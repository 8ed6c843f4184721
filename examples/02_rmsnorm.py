"""02 RMSNorm: a runtime loop over column tiles, a row reduction, a cross-warp combine, broadcasts.
`rmsnorm` reads x twice from global memory; `rmsnorm_staged` stages it in shared memory once;
`rmsnorm_persistent` is the fast one on the H200 (docs/performance.md): a persistent grid that
copies the next row block while it stores this one."""
import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


# what every RMSNorm kernel's grid and loads assume of a call: the grid covers batches and row
# blocks (not depth), w is read one weight per column of x, o is written where x is read
ROWS_OF_X = [
    (lambda p: p.x.depth == 1,
     "x must have depth 1 (the grid covers batch and rows): fold depth into rows, "
     "x.reshape(batch, 1, depth * rows, cols)"),
    (lambda p: p.o.shape == p.x.shape, "o must have x's shape"),
    (lambda p: p.w.cols == p.x.cols, "w must hold one weight per column of x (w.cols == x.cols)"),
]


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, p.ROWS), p.x.batch), warps=4, requires=ROWS_OF_X)
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


# the staged kernels hold WIDTH columns of a row block, as WIDTH // (COLS × 16) column tiles per
# warp: fewer columns than the row would leave the rest unnormalised, and a WIDTH that is no
# multiple of COLS × 16 holds fewer columns than it says (WIDTH=5120, COLS=128 holds 4096), so
# such calls are refused (on every backend)
WIDTH_COVERS_ROWS = ROWS_OF_X + [
    (lambda p: p.WIDTH >= p.x.cols,
     "WIDTH (the columns a block holds) must be at least x.cols: pass WIDTH=staged_width(x.cols)"),
    (lambda p: p.WIDTH % (p.COLS * 16) == 0,
     "WIDTH must be a multiple of COLS x 16 (whole COLS-wide tiles for each of the 16 warps): "
     "round it up (staged_width(x.cols) is one for COLS=64)"),
]


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=16, requires=WIDTH_COVERS_ROWS)
def rmsnorm_staged(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                   WIDTH: hk.Constexpr[int] = 1024, COLS: hk.Constexpr[int] = 64,
                   eps: hk.Constexpr[float] = 1e-6):
    """x is read from global memory once: 16 rows of up to WIDTH columns go to shared memory in
    one group load, and each warp reads its column tiles from there twice (sub-tile loads).
    WIDTH must be at least the row length and a multiple of COLS × 16 (`staged_width`; a call
    with another is refused)."""
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


@hk.kernel(grid=lambda p: (p.BLOCKS, p.x.batch), warps=16,
           requires=WIDTH_COVERS_ROWS + [(lambda p: p.BLOCKS >= 1, "BLOCKS must be at least 1")])
def rmsnorm_persistent(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *,
                       WIDTH: hk.Constexpr[int] = 1024, COLS: hk.Constexpr[int] = 64,
                       BLOCKS: hk.Constexpr[int] = 132, eps: hk.Constexpr[float] = 1e-6):
    """A persistent grid of BLOCKS blocks (one per SM: 132 on the H200), each looping over
    16-row blocks. A row block is copied into shared memory and read from there once, into
    registers, where it stays; as soon as every warp holds its tiles, the next row block is
    copied into the same shared tile (on sm_90a one TMA copy, issued by one warp) while this
    one is reduced, normalised and stored. WIDTH (a multiple of COLS × 16, at least the row
    length) is what each block holds; the caller picks it (`staged_width`): a call with a
    WIDTH under the row length, or no multiple of COLS × 16, is refused."""
    b, first, warp, warps = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
    blocks = hk.cdiv(x.rows, 16)
    rows = hk.shared(hk.ST(hk.bf16, 16, WIDTH))
    t = hk.RT(hk.bf16, 16, COLS)
    columns = [warp + i * warps for i in range(WIDTH // (COLS * warps))]   # unrolled in Python
    if first < blocks:
        hk.group.load(rows, x[hk.tile_coord(b, 0, first, 0)])
    for r in range(first, blocks, BLOCKS):
        hk.wait_for(rows)
        hk.barrier()
        tiles = [rows.load(t, col=c) for c in columns]
        hk.wait_for(*tiles)
        hk.barrier()                  # every warp holds its tiles: the shared tile is free
        if r + BLOCKS < blocks:
            hk.group.load(rows, x[hk.tile_coord(b, 0, r + BLOCKS, 0)])
        squares = hk.zeros(hk.RV(hk.fp32, 16))
        for xs in tiles:
            xf = xs.to(hk.fp32)
            squares += hk.row_sum(xf * xf)
        inv_rms = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
        hk.wait_for(*tiles)           # binds them again, so their fp32 copies are not kept
        for c, xs in zip(columns, tiles):
            ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, COLS, "col")).to(hk.fp32)
            o[hk.tile_coord(b, 0, r, c)] = (xs.to(hk.fp32) * inv_rms * ws).to(hk.bf16)
    hk.wait_for(rows)


def staged_width(cols: int) -> int:
    """WIDTH for rows `cols` wide: whole 64-column tiles for each of the 16 warps. (Rows of 4096
    take 128 KB of shared memory: sm_90a and gfx950 have it, gfx1100 does not.)"""
    return -(-cols // 1024) * 1024


KERNELS = [(rmsnorm, {}), (rmsnorm_staged, {}), (rmsnorm_persistent, {})]
CASES = [(1, 16, 64), (2, 40, 256), (1, 21, 300), (3, 7, 1000)]


def run_case(shape, backend="interpret", target=None, device="cpu"):
    """The three kernels against the reference; the largest error counts. The persistent one
    runs with 2 blocks, so that a block loops over several row blocks."""
    import torch
    from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance
    batch, rows, cols = shape
    x = torch_rand((batch, 1, rows, cols), torch.bfloat16, 3)
    w = torch_rand((1, 1, 1, cols), torch.bfloat16, 4)
    want = reference(x.float().numpy(), w.float().numpy(), 1e-6, hk.bf16)
    errors = []
    width = staged_width(cols)
    for kernel, constants in ((rmsnorm, {}), (rmsnorm_staged, {"WIDTH": width}),
                              (rmsnorm_persistent, {"WIDTH": width, "BLOCKS": 2})):
        o = torch.full_like(x, float("nan"))
        runner(kernel, backend, device)(x, w, o, target=target, **constants)
        errors.append(max_abs_error(o.float().numpy(), want))
    return max(errors), tolerance(want)


# ---- the library op ----------------------------------------------------------------------------
# In a model, call the library instead: `ktile.ops.rms_norm(x, weight, eps)` takes x of 1 to 4
# dimensions and a weight of x.shape[-1] values, routes each width to a kernel of its own (the
# kernels above are the tutorial's), and is a torch.library op that torch.compile and CUDA graphs
# accept (docs/ops.md). `library_case` checks it as run_case checks the kernels.

def library_case(shape=(21, 300)):
    import torch
    import ktile.ops
    from ktile.ops.rmsnorm.reference import rmsnorm as reference, tolerance
    x = torch_rand(shape, torch.bfloat16, 3)
    w = torch_rand(shape[-1:], torch.bfloat16, 4)
    want = reference(x.float().numpy(), w.float().numpy(), 1e-6, hk.bf16)
    got = ktile.ops.rms_norm(x, w, 1e-6)
    return max_abs_error(got.float().numpy(), want), tolerance(want)


if __name__ == "__main__":
    example_main(globals())

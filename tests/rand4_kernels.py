"""Kernels of hk.rand4's tests (tier 0 interprets them, tier 3 runs them on the GPU): draws at
the offsets a tensor gives, in a flat tile (sm_90a's one-call-per-run path and its fallback)
and in a row-layout tile (element by element), and the case builder both tiers check."""
import ktile as hk


@hk.kernel(grid=lambda p: (hk.cdiv(p.offs.cols, 32), hk.cdiv(p.offs.rows, 16)), warps=1)
def draw4_flat(offs: hk.Tensor[hk.i32], o: hk.Tensor[hk.fp32], seed: int):
    at = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    o[at] = hk.rand4(seed, offs[at].load(hk.RT(hk.i32, 16, 32, "flat")))


@hk.kernel(grid=lambda p: (hk.cdiv(p.offs.cols, 32), hk.cdiv(p.offs.rows, 16)), warps=1)
def draw4_row(offs: hk.Tensor[hk.i32], o: hk.Tensor[hk.fp32], seed: int):
    at = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    o[at] = hk.rand4(seed, offs[at].load(hk.RT(hk.i32, 16, 32)))


def offsets_case(seed: int = 0):
    """A 32 x 64 int32 offsets array: rows 0-15 are runs (each row's flat index plus a multiple
    of 4: one Philox call per four elements on sm_90a's flat path), rows 16-31 are not
    (shifted by one, then random values with negatives and the int32 extremes: the fallback)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    offs = np.arange(32 * 64, dtype=np.int64).reshape(32, 64) + 4 * 1000
    offs[16:24] += 1
    offs[24:] = rng.integers(-2 ** 31, 2 ** 31, size=(8, 64))
    offs[31, :4] = (-2 ** 31, 2 ** 31 - 1, -1, 0)
    return offs.astype(np.int32)

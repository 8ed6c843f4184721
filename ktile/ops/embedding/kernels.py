"""The embedding kernel, one per dtype of the table: out[t] = table[ids[t]]. A block takes 16
tokens; each of its WARPS warps fetches their rows' column tile of COLS with `hk.gather` (an id
outside the table reads a zero row) and stores it. The ids are `[tokens, W]` int32: W = 1 for
int32 ids, W = 2 for int64 ones viewed as their 32-bit words (no conversion kernel)."""
import functools

import ktile as hk

SHAPES = [
    (lambda p: p.ids.batch * p.ids.depth == 1 and p.ids.cols in (1, 2),
     "ids must be [tokens, 1] int32 or [tokens, 2] (int64 viewed as int32 words)"),
    (lambda p: p.out.rows == p.ids.rows and p.out.cols == p.table.cols,
     "out must be [tokens, hidden]: one row of table per id"),
    (lambda p: p.table.batch * p.table.depth * p.out.batch * p.out.depth == 1,
     "table and out must be 2-D"),
]


def row_ids(ids, r):
    """Ids of tokens [16r, 16r + 16) as an i32 row vector, from `[tokens, W]` int32 words (one
    row reduction): the low word where the high word is 0 (or absent: W = 1), else -1, a row
    no gather reads (an int64 that is negative, or 2^31 and more)."""
    tile = hk.RT(hk.i32, 16, 16)
    words = ids[hk.tile_coord(0, 0, r, 0)].load(tile, pad=0)
    col = hk.iota(tile, "col")
    high = hk.where((col == 1) & (words != 0), -1, hk.full(tile, 2 ** 31 - 1))
    return hk.row_min(hk.where(col == 0, words, high))


@functools.cache
def embedding(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.COLS * p.WARPS), hk.cdiv(p.ids.rows, 16)),
               warps="WARPS", requires=SHAPES)
    def embedding_rows(ids: hk.Tensor[hk.i32], table: hk.Tensor[dt], out: hk.Tensor[dt], *,
                       COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4):
        t = hk.arch.block_idx.y
        c = hk.arch.block_idx.x * WARPS + hk.arch.warp_id
        rows = row_ids(ids, t)                                          # 16 token ids
        out[hk.tile_coord(0, 0, t, c)] = hk.gather(table, rows, hk.RT(dt, 16, COLS), col=c)
    return embedding_rows


KERNELS = {"embedding_rows": embedding}

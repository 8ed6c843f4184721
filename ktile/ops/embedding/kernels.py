"""The embedding kernel, one per dtype of the table: out[t] = table[ids[t]], 16 tokens by COLS
columns a block, rows fetched with `hk.gather` (an id outside the table reads a zero row)."""
import functools

import ktile as hk

SHAPES = [
    (lambda p: p.ids.batch * p.ids.depth * p.ids.rows == 1, "ids must be one row of token ids"),
    (lambda p: p.out.rows == p.ids.cols and p.out.cols == p.table.cols,
     "out must be [tokens, hidden]: one row of table per id"),
    (lambda p: p.table.batch * p.table.depth * p.out.batch * p.out.depth == 1,
     "table and out must be 2-D"),
]


@functools.cache
def embedding(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.out.cols, p.COLS), hk.cdiv(p.ids.cols, 16)),
               requires=SHAPES)
    def embedding_rows(ids: hk.Tensor[hk.i32], table: hk.Tensor[dt], out: hk.Tensor[dt], *,
                       COLS: hk.Constexpr[int] = 64):
        t, c = hk.arch.block_idx.y, hk.arch.block_idx.x
        rows = ids[hk.tile_coord(0, 0, 0, t)].load(hk.RV(hk.i32, 16), pad=-1)   # 16 token ids
        out[hk.tile_coord(0, 0, t, c)] = hk.gather(table, rows, hk.RT(dt, 16, COLS), col=c)
    return embedding_rows


KERNELS = {"embedding_rows": embedding}

"""The embedding kernels, one per dtype of the table: out[t] = table[ids[t]].
`embedding_flat` (widths a multiple of 16 · COLS): one token a block, its row copied as flat
tiles at the row `hk.load_scalar` reads from ids. `embedding_rows` (any width): a block takes 16
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


FLAT_SHAPES = [
    (lambda p: p.ids.batch * p.ids.depth == 1 and p.ids.cols in (1, 2),
     "ids must be [tokens, 1] int32 or [tokens, 2] (int64 viewed as int32 words)"),
    (lambda p: p.table.cols == p.COLS and p.out.cols == p.COLS,
     "table and out must be viewed as rows of COLS (the op reflows them)"),
    (lambda p: p.table.batch * p.table.depth * p.out.batch * p.out.depth == 1,
     "table and out must be 2-D"),
]


@functools.cache
def embedding_flat(dtype: str):
    """out[t] = table[ids[t]] as flat copies: table `[vocab, H]` and out `[tokens, H]` reflowed
    as rows of COLS (`per_token` = H / COLS rows a token, a multiple of 16), so a token's row
    is per_token / 16 flat 16 x COLS tiles, each one contiguous run of 16 · COLS elements. Block
    (t, g): token t (its id read with two scalar loads, no reduction), warps taking tiles
    g · WARPS · HELD + ..., every load issued before the first store. An id outside the table,
    or an int64 id whose high word is not 0, puts the tile's rows outside the table: zeros are
    read (the flat load's pad). A warp past the token's last tile gets row -16 for both
    accesses: nothing read, nothing written."""
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (p.ids.rows, hk.cdiv(p.out.rows // p.ids.rows,
                                                   16 * p.WARPS * p.HELD)),
               warps="WARPS", requires=FLAT_SHAPES)
    def embedding_flat_rows(ids: hk.Tensor[hk.i32], table: hk.Tensor[dt], out: hk.Tensor[dt],
                            per_token: int, *, COLS: hk.Constexpr[int] = 64,
                            WARPS: hk.Constexpr[int] = 4, HELD: hk.Constexpr[int] = 1):
        token, group = hk.arch.block_idx.x, hk.arch.block_idx.y
        low, high = hk.load_scalar(ids, token, 0), hk.load_scalar(ids, token, 1)
        row = hk.where(high == 0, low, -1)                    # 2^31 and up, negatives: -1
        t = hk.RT(dt, 16, COLS, "flat")
        first = (group * WARPS * HELD + hk.arch.warp_id) * 16
        starts = [first + i * WARPS * 16 for i in range(HELD)]   # rows within the token
        inside = [s < per_token for s in starts]
        tiles = [table[hk.elem_coord(0, 0, hk.where(ok, row * per_token + s, -16), 0)].load(t)
                 for s, ok in zip(starts, inside)]
        for s, ok, tile in zip(starts, inside, tiles):
            out[hk.elem_coord(0, 0, hk.where(ok, token * per_token + s, -16), 0)] = tile
    return embedding_flat_rows


KERNELS = {"embedding_rows": embedding, "embedding_flat": embedding_flat}

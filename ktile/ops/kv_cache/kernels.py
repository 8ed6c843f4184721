"""The paged KV-cache write, one kernel per dtype: key and value rows (`[tokens, heads ·
head_size]`) scattered into key_cache and value_cache viewed as rows (`[blocks · block_size,
heads · head_size]`, vLLM's flash layout) at slot_mapping; a negative slot is padding and
writes nothing. 16 tokens by COLS columns a block, both caches in one launch."""
import functools

import ktile as hk

SHAPES = [
    (lambda p: p.value.shape == p.key.shape, "value must have key's shape"),
    (lambda p: p.slots.cols == p.key.rows and p.slots.rows == 1,
     "slots must hold one slot per token of key"),
    (lambda p: p.key_cache.cols == p.key.cols and p.value_cache.shape == p.key_cache.shape,
     "key_cache and value_cache must be rows of heads * head_size, like key"),
    (lambda p: p.key.batch * p.key.depth * p.key_cache.batch * p.key_cache.depth == 1,
     "key and the caches must be 2-D views [rows, heads * head_size]"),
]


@functools.cache
def kv_cache_write(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.key.cols, p.COLS), hk.cdiv(p.key.rows, 16)),
               requires=SHAPES)
    def kv_scatter(key: hk.Tensor[dt], value: hk.Tensor[dt], slots: hk.Tensor[hk.i32],
                   key_cache: hk.Tensor[dt], value_cache: hk.Tensor[dt], *,
                   COLS: hk.Constexpr[int] = 64):
        t, c = hk.arch.block_idx.y, hk.arch.block_idx.x
        where = slots[hk.tile_coord(0, 0, 0, t)].load(hk.RV(hk.i32, 16), pad=-1)
        idx = hk.tile_coord(0, 0, t, c)
        tile = hk.RT(dt, 16, COLS)
        hk.scatter(key_cache, where, key[idx].load(tile), col=c)
        hk.scatter(value_cache, where, value[idx].load(tile), col=c)
    return kv_scatter


KERNELS = {"kv_scatter": kv_cache_write}

"""05 flash-attention forward: online softmax, causal mask, grouped-query attention."""
import math

import ktile as hk

from common import example_main, max_abs_error, runner, torch_rand


@hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, 16 * 4), p.q.depth, p.q.batch), warps=4)
def attention(q: hk.Tensor[hk.bf16], k: hk.Tensor[hk.bf16], v: hk.Tensor[hk.bf16],
              o: hk.Tensor[hk.bf16], *, D: hk.Constexpr[int] = 64,
              BK: hk.Constexpr[int] = 32, CAUSAL: hk.Constexpr[bool] = True):
    z, h = hk.arch.block_idx.z, hk.arch.block_idx.y
    qt = hk.arch.block_idx.x * hk.arch.num_warps + hk.arch.warp_id   # this warp's 16 queries
    kv_head = h // (q.depth // k.depth)                               # GQA: shared K/V heads
    scale = 1.0 / math.sqrt(D)
    Q = q[hk.tile_coord(z, h, qt, 0)].load(hk.RT(hk.bf16, 16, D))
    row_max = hk.neg_infty(hk.RV(hk.fp32, 16))
    row_sum = hk.zeros(hk.RV(hk.fp32, 16))
    acc = hk.zeros(hk.RT(hk.fp32, 16, D))
    keys = k.rows
    if CAUSAL:                                  # a Python branch: traced once, no scf.if
        keys = hk.minimum(keys, (qt + 1) * 16)
    for j in range(hk.cdiv(keys, BK)):
        K = k[hk.tile_coord(z, kv_head, j, 0)].load(hk.RT(hk.bf16, BK, D))
        s = (Q @ K.T) * scale                                        # 16 × BK scores, fp32
        key_index = hk.iota(hk.RT(hk.i32, 16, BK), "col") + j * BK
        s = hk.where(key_index >= k.rows, float("-inf"), s)          # ragged last key tile
        if CAUSAL:
            s = hk.causal_mask(s, qt * 16, j * BK)
        new_max = hk.maximum(row_max, hk.row_max(s))
        p = hk.exp(s - new_max)
        rescale = hk.exp(row_max - new_max)
        row_sum = row_sum * rescale + hk.row_sum(p)
        V = v[hk.tile_coord(z, kv_head, j, 0)].load(hk.RT(hk.bf16, BK, D, "col"))
        acc = acc * rescale
        acc += p.to(hk.bf16) @ V
        row_max = new_max
    o[hk.tile_coord(z, h, qt, 0)] = (acc / row_sum).to(hk.bf16)


KERNELS = [(attention, {}), (attention, {"CAUSAL": False})]
# (batch, query heads, key/value heads, sequence, causal)
CASES = [(1, 2, 2, 64, True), (1, 4, 2, 100, True), (2, 2, 1, 45, False), (1, 3, 1, 70, True)]


def run_case(case, backend="interpret", target=None, device="cpu"):
    import torch
    from ktile.ops.attention.reference import attention as reference, tolerance
    batch, heads, kv_heads, n, causal = case
    q = torch_rand((batch, heads, n, 64), torch.bfloat16, 8)
    k = torch_rand((batch, kv_heads, n, 64), torch.bfloat16, 9)
    v = torch_rand((batch, kv_heads, n, 64), torch.bfloat16, 10)
    o = torch.full_like(q, float("nan"))
    runner(attention, backend, device)(q, k, v, o, target=target, CAUSAL=causal)
    want = reference(q.float().numpy(), k.float().numpy(), v.float().numpy(), causal)
    return max_abs_error(o.float().numpy(), want), tolerance(v.float().numpy())


if __name__ == "__main__":
    example_main(globals())

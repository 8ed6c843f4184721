"""The grouped GEMM over vLLM's fused-MoE layout, one kernel per dtype: for every padded slot s
of a BM-slot block whose id t = sorted_ids[s] is below the slot count (tokens · top_k),
out[t] = x[t / TOP_K] · w[expert]ᵀ (× weights[t] when ROUTED), expert = expert_ids[block].

Block (n, b) owns slot block b and BN columns of the output (BN rows of the expert's weight
[N, K]). Its expert and the live block count (`padded`: num_tokens_post_padded) are two scalar
loads; a block past the live ones, or of expert -1 (vLLM's mark for an expert not on this
rank), does nothing. Otherwise the block's BM slot ids are one i32 vector (a slot past the
array reads -1), a slot id at or past the slot count (the padding) becomes -1, and token
rows are the ids / TOP_K (a truncating division: the ids are ≥ 0 there). Its warps split the
K tiles (warp w takes w, w + WARPS, ...; UNROLL of them a step, every load of the step
issued before its MMAs): each K tile is a gather of the BM tokens' rows of x
(row -1 reads 0) and one load of the expert's BN × BK weight tile, multiplied into the warp's
own fp32 BM × BN tile; `hk.group.sum` adds the warps' tiles in a fixed tree (the same bits
every run) and warp 0 scales by the routed weights (gathered as a 16-wide tile of the [slots,
1] weights, only column 0 inside: its row sum is the weight) and scatters the rows, rounded
once, to out at the slot ids (-1: dropped). The expert's weight tile is read once per slot
block: at decode, one block per active expert, every weight read once."""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes
import functools

import ktile as hk

SHAPES = [
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D [tokens, K]"),
    (lambda p: p.w.batch == 1 and p.w.cols == p.x.cols,
     "w must be [experts, N, K] with x's K columns"),
    (lambda p: p.sorted_ids.batch * p.sorted_ids.depth * p.sorted_ids.rows == 1,
     "sorted_ids must be viewed as one row [1, padded slots]"),
    (lambda p: p.expert_ids.batch * p.expert_ids.depth * p.expert_ids.rows == 1
     and p.expert_ids.cols * p.BM == p.sorted_ids.cols,
     "expert_ids must be one row [1, blocks] with one expert per BM slots of sorted_ids"),
    (lambda p: p.out.batch * p.out.depth == 1 and p.out.cols == p.w.rows
     and p.out.rows == p.x.rows * p.TOP_K, "out must be [tokens * TOP_K, N]"),
    (lambda p: p.weights.rows == p.out.rows and p.weights.cols == 1,
     "weights must be the routed weights viewed as [tokens * TOP_K, 1]"),
]


@functools.cache
def moe_gemm(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.w.rows, p.BN), p.expert_ids.cols), warps="WARPS",
               requires=SHAPES)
    def moe_gemm_nt(x: hk.Tensor[DT], w: hk.Tensor[DT], sorted_ids: hk.Tensor[hk.i32],
                    expert_ids: hk.Tensor[hk.i32], padded: hk.Tensor[hk.i32],
                    weights: hk.Tensor[hk.fp32], out: hk.Tensor[DT], *,
                    TOP_K: hk.Constexpr[int] = 1, ROUTED: hk.Constexpr[int] = 0,
                    BM: hk.Constexpr[int] = 16, BN: hk.Constexpr[int] = 32,
                    BK: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4,
                    UNROLL: hk.Constexpr[int] = 1):
        n, b, warp = hk.arch.block_idx.x, hk.arch.block_idx.y, hk.arch.warp_id
        expert = hk.load_scalar(expert_ids, 0, b, pad=-1)
        live = hk.load_scalar(padded, 0, 0)
        if (expert >= 0) & (b * BM < live):
            slots = sorted_ids[hk.tile_coord(0, 0, 0, b)].load(hk.RV(hk.i32, BM), pad=-1)
            valid = (slots >= 0) & (slots < out.rows)
            slots = hk.where(valid, slots, -1)
            tokens = hk.where(valid, slots / TOP_K, -1)
            acc = hk.zeros(hk.RT(hk.fp32, BM, BN))
            for k0 in range(warp, hk.cdiv(x.cols, BK), WARPS * UNROLL):
                ks = [k0 + u * WARPS for u in range(UNROLL)]     # unrolled: loads in flight
                ws = [w[hk.tile_coord(0, expert, n, k)].load(hk.RT(DT, BN, BK)) for k in ks]
                xs = [hk.gather(x, tokens, hk.RT(DT, BM, BK), col=k) for k in ks]
                for xt, wt in zip(xs, ws):
                    acc += xt @ wt.T
            total = hk.group.sum(acc)
            if warp == 0:
                if ROUTED:
                    total = total * hk.row_sum(hk.gather(weights, slots, hk.RT(hk.fp32, BM, 16)))
                hk.scatter(out, slots, total.to(DT), col=n)
    return moe_gemm_nt


KERNELS = {"moe_gemm_nt": moe_gemm}

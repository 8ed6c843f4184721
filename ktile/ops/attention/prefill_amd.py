"""`attention_amd`: attention prefill for the AMD targets (gfx950 / gfx942 MFMA, gfx1100 /
gfx1201 WMMA; issue #12), K and V shared through LDS.

A block is WARPS waves of one (batch, head), each wave owning ROWS query rows (BM = WARPS ·
ROWS rows a block). Key tile j (K [BK, D]) and the transposed value tile (Vᵀ [D, BK]) are
copied into LDS once per block by all its waves (`hk.group.load`: the global→LDS DMA on
gfx942 / gfx950, register-staged copies on RDNA) and read by every wave: S = Q·Kᵀ with Q in
registers (loaded once; Q_LDS: the block's Q in LDS, read at each S, for gfx1100 at D 128,
whose replicated WMMA operands otherwise spill) and K from LDS, the online softmax in fp32
registers (in base 2: the scale times log2 e, then exp2), O += P·V with P from registers and
Vᵀ from LDS. Both LDS operands are read as rows of 16-byte chunks (`ds_read_b128` /
`ds_load_b128`), the targets' fast layout.

Two LDS buffers of each: while tile j is computed, the copy of tile j+1 is in flight; at the
end of step j (after a barrier: every wave is done with its buffer) the copy of tile j+2 is
issued into it. The loop runs pairs of tiles with the buffers as Python ints (each wait names
one buffer exactly; a buffer picked on the device would make the waits conservative and
drain the other copy: docs/language.md, "A list of shared tiles").

Ragged edges are outside the steady-state loop: it runs the pairs of key tiles that need no
mask (every key < S and, causal, every key ≤ the block's first query row); the tail (the
ragged last key tile, the causal diagonal, an odd tile: at most 2 tiles when BM ≤ 2·BK, which
`requires` checks) runs after it, unrolled, with the -inf masks and no copies. Causal blocks
stop at their last query row. Query rows past L are loaded as zeros and never stored; key
tiles past S are zero-filled by the copies and masked.

V is read transposed as Vᵀ rows, the nearest form: the op hands the kernel Vᵀ [B, H_kv, D,
S'] made by one torch copy (op.transposed_values). gfx950's transposing LDS read
(`ds_read_b64_tr_b16`) is not used: the AMD headers read a `kt::col` tile from LDS element by
element (docs/amd-headers.md, "Not done"), so reading V [BK, D] as the col operand of `p @ V`
would cost a 16-bit LDS read per element.

Why BK 32 and not 64: at 64 the gfx950 build spills 5-7 SGPRs (the cdna4 accumulator →
operand move of P holds its lane masks in SGPR pairs, hoisted out of the loop). The quality
report's figures are in docs/attention.md, "AMD".
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

LOG2_E = 1.4426950408889634

SHAPES = [
    (lambda p: p.q.cols == p.D and p.k.cols == p.D and p.vt.rows == p.D and p.o.cols == p.D,
     "q, k and o must be [B, H, L, D] and vt [B, H_kv, D, S'] with D the kernel's D"),
    (lambda p: p.q.depth % p.k.depth == 0,
     "q's heads must be a multiple of k's heads (grouped-query attention)"),
    (lambda p: p.vt.cols >= p.k.rows, "vt must hold every key (vt.cols >= k.rows)"),
    (lambda p: p.WARPS * p.ROWS <= 2 * p.BK,
     "WARPS * ROWS (the block's query rows) must be at most 2 * BK: the masked tail after the "
     "steady-state loop holds 2 key tiles, and a causal block's diagonal spans BM / BK + 1"),
]


@functools.lru_cache(maxsize=None)
def attention_amd(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, p.WARPS * p.ROWS), p.q.depth, p.q.batch),
               requires=SHAPES, warps="WARPS")
    def attention_amd(q: hk.Tensor[DT], k: hk.Tensor[DT], vt: hk.Tensor[DT],
                      o: hk.Tensor[DT], scale: float, *, D: hk.Constexpr[int] = 128,
                      BK: hk.Constexpr[int] = 64, ROWS: hk.Constexpr[int] = 16,
                      WARPS: hk.Constexpr[int] = 4, CAUSAL: hk.Constexpr[bool] = False,
                      Q_LDS: hk.Constexpr[bool] = False):
        z, h, block = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
        w = hk.arch.warp_id
        kv_head = h // (q.depth // k.depth)
        BM = WARPS * ROWS
        scale_log2 = scale * LOG2_E                  # the softmax in base 2 (exp2)
        sk = [hk.shared(hk.ST(DT, BK, D)) for _ in range(2)]
        svt = [hk.shared(hk.ST(DT, D, BK)) for _ in range(2)]

        keys = k.rows
        plain = k.rows // BK                         # key tiles every key of which is < S
        if CAUSAL:                                   # key tiles up to the block's last row
            keys = hk.minimum(keys, (block + 1) * BM)
            plain = hk.minimum(plain, (block * BM + 1) // BK)   # and none past its first
        steps = hk.cdiv(keys, BK)
        pairs = plain // 2                           # the steady-state loop's pairs

        def copy(buffer, j):
            hk.group.load(sk[buffer], k[hk.tile_coord(z, kv_head, j, 0)])
            hk.group.load(svt[buffer], vt[hk.tile_coord(z, kv_head, 0, j)])

        def step(buffer, j, masked, row_max, row_sum, acc):
            """Key tile j from `buffer`; `masked`: the ragged and causal masks (the tail)."""
            hk.wait_for(sk[buffer], svt[buffer])
            hk.barrier()                             # tile j landed for every wave
            s = hk.zeros(hk.RT(hk.fp32, ROWS, BK))
            s += qa @ sk[buffer].T                   # Q from registers (or LDS: Q_LDS)
            s = s * scale_log2                       # scores in base 2: exp2, not exp
            if masked:
                key_index = hk.iota(hk.RT(hk.i32, ROWS, BK), "col") + j * BK
                s = hk.where(key_index >= k.rows, float("-inf"), s)
                if CAUSAL:
                    s = hk.causal_mask(s, (block * WARPS + w) * ROWS, j * BK)
            new_max = hk.maximum(row_max, hk.row_max(s))
            p = hk.exp2(s - new_max)
            rescale = hk.exp2(row_max - new_max)
            row_sum = row_sum * rescale + hk.row_sum(p)
            acc = acc * rescale
            acc += p.to(DT) @ svt[buffer].T          # O += P·V, Vᵀ rows from LDS
            if not masked:                           # the tail's tiles are the last ones
                hk.barrier()                         # every wave is done with `buffer`
                copy(buffer, j + 2)                  # a tail tile, or past it (unread)
            return new_max, row_sum, acc

        if Q_LDS:                                    # the block's Q in LDS, this wave's rows
            qa = hk.shared(hk.ST(DT, BM, D))         # read at each S (fewer live registers)
            hk.group.load(qa, q[hk.tile_coord(z, h, block, 0)])
        else:                                        # this wave's rows of Q in registers
            qa = q[hk.tile_coord(z, h, block * WARPS + w, 0)].load(hk.RT(DT, ROWS, D))
        row_max = hk.neg_infty(hk.RV(hk.fp32, ROWS))
        row_sum = hk.zeros(hk.RV(hk.fp32, ROWS))
        acc = hk.zeros(hk.RT(hk.fp32, ROWS, D))
        copy(0, 0)
        copy(1, 1)
        if Q_LDS:
            hk.wait_for(qa)                          # the tiles' copies stay in flight
            hk.barrier()
        for i in range(pairs):                       # steady state: no mask, no bound
            row_max, row_sum, acc = step(0, 2 * i, False, row_max, row_sum, acc)
            row_max, row_sum, acc = step(1, 2 * i + 1, False, row_max, row_sum, acc)
        for t in range(2):                           # the tail, masked: at most 2 tiles
            if 2 * pairs + t < steps:                # (BM <= 2 BK), already in flight
                row_max, row_sum, acc = step(t, 2 * pairs + t, True, row_max, row_sum, acc)
        hk.wait_for(*sk, *svt)                       # the last copies (past the edge)
        o[hk.tile_coord(z, h, block * WARPS + w, 0)] = (acc / row_sum).to(DT)
    return attention_amd

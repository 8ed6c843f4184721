"""`attention_ws`: attention prefill on sm_90a as a warp-specialised pipeline (issue #12).

Three warpgroups a block of BM = 128 query rows of one (batch, head): warps 8..11 the
producer (24 registers), issuing the TMA copies of key tile j (K [BK, D]) and value tile j
(V [BK, D], as it lies in memory) into STAGES shared stages; warps 0..7 two consumer
warpgroups (240 registers), each warp owning 16 query rows (a warpgroup's m64). Per key tile
a consumer warp computes S = Q·Kᵀ by wgmma (Q from registers, K by descriptor), the online
softmax in fp32 registers (scale, ragged and causal masks), then O += P·V by wgmma with P from
registers (bf16/fp16, the accumulator's fragment) and V by an N-major descriptor (`p @ sv`,
wgmma's transposed-B form). The K/V tiles are loaded once per block and read by all eight
consumer warps.

Pinnable forms (docs/attention.md, with their SASS): OVERLAP (P_(j-1)·V issued after S_j),
PINGPONG (the consumer warpgroups take turns at their MMAs on named barriers), BM 192 with
WARPS 16 (three consumer warpgroups, D 64), EXP2_FAST (the softmax's exp2 one MUFU.EX2),
FUSED_SCALE (the scale in the exp2's multiply-add; scale ≥ 0, op.keys_for sees to it).

VT=True is the earlier form: the kernel takes Vᵀ [B, H_kv, D, N'] (made by op.py with one
torch copy; N' = N rounded up to 8 for TMA's 16-byte rows) and multiplies `p @ svt.T`, the
K-major form every target has; it is the form that traces for targets without the
transposed-B MMA.

Ragged edges: the TMA zero-fills key / value tiles past N (so no uninitialised value can
meet a P of 0 and make a NaN), scores of keys ≥ N are -inf (P exactly 0 there), query rows past
N are loaded as zeros and never stored. Causal is torch's top-left form (key i is masked for
query j < i); block b reads key tiles up to its last query row only, and with LONGEST_FIRST
the grid's first blocks (launched first) take the last query rows, the longest.

On targets without warp specialisation (the interpreter traced for AMD, the AMD targets) the
VT form traces with every warp playing both roles in turn (pipeline_forms.py; it matches the
reference on the interpreter), but op.py routes it on sm_90a only and refuses the others
(docs/attention.md): no AMD build of it has been checked.
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

SHAPES = [
    (lambda p: p.q.cols == p.D and p.k.cols == p.D and p.o.cols == p.D,
     "q, k and o must be [B, H, N, D] with D the kernel's D"),
    (lambda p: (p.v.rows == p.D and p.v.cols >= p.k.rows) if p.VT else
     (p.v.cols == p.D and p.v.rows == p.k.rows),
     "v must be [B, H_kv, N, D] as k (with VT: Vᵀ [B, H_kv, D, N'], N' >= N)"),
    (lambda p: p.q.depth % p.k.depth == 0,
     "q's heads must be a multiple of k's heads (grouped-query attention)"),
    (lambda p: p.PINGPONG in (0, 1) or (p.PINGPONG == 2 and not p.OVERLAP),
     "PINGPONG is 0, 1 (a turn: S_j, with OVERLAP also P_(j-1)·V) or 2 (a turn: P_j·V and "
     "S_(j+1), without OVERLAP)"),
    (lambda p: p.BM % 64 == 0 and p.WARPS == 4 * (1 + p.BM // 64),
     "BM must be 64 rows per consumer warpgroup and WARPS 4 × (1 + BM / 64): BM 128 with "
     "WARPS 12, BM 192 with WARPS 16"),
]


# PINGPONG: the consumer warpgroups take turns at their MMAs (FlashAttention-3's inter-
# warpgroup overlap): warpgroup g syncs on named barrier 1 + g, counting its own 128 threads
# and the 128 of the warpgroup before it, which arrive there when their MMAs are issued
TURN_THREADS = 256
PRODUCER_REGISTERS = 24
REGISTER_FILE = 65536         # 32-bit registers a multiprocessor; one block a multiprocessor


def consumer_registers(warps: int) -> int:
    """The consumers' setmaxnreg: what the launch pool (65536 / threads a thread, rounded down
    to 8) leaves after the producer's 128 threads at 24, at most 240 (384 threads: 240; 512
    threads, 3 consumer warpgroups: 160)."""
    threads = warps * 32
    pool = REGISTER_FILE // threads // 8 * 8 * threads
    return min(240, (pool - 128 * PRODUCER_REGISTERS) // (threads - 128) // 8 * 8)

# exp(x·scale) = exp2(x·scale·log2 e): one multiply folded into the scale, and exp2f is
# sm_90a's MUFU.EX2 with a denormal fix-up where expf adds a range reduction
LOG2_E = 1.4426950408889634


@functools.lru_cache(maxsize=None)
def attention_ws(dtype: str):
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.rows, p.BM), p.q.depth, p.q.batch),
               requires=SHAPES, warps="WARPS")
    def attention_ws(q: hk.Tensor[DT], k: hk.Tensor[DT], v: hk.Tensor[DT],
                     o: hk.Tensor[DT], scale: float, *, D: hk.Constexpr[int] = 128,
                     BM: hk.Constexpr[int] = 128, BK: hk.Constexpr[int] = 64,
                     STAGES: hk.Constexpr[int] = 3, CAUSAL: hk.Constexpr[bool] = False,
                     VT: hk.Constexpr[bool] = False,
                     LONGEST_FIRST: hk.Constexpr[bool] = False,
                     OVERLAP: hk.Constexpr[bool] = False,
                     PINGPONG: hk.Constexpr[int] = 0,
                     WARPS: hk.Constexpr[int] = 12,
                     EXP2_FAST: hk.Constexpr[bool] = False,
                     FUSED_SCALE: hk.Constexpr[bool] = False):
        z, h, block = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
        if CAUSAL and LONGEST_FIRST:                 # the last query rows read the most keys
            block = hk.cdiv(q.rows, BM) - 1 - block
        kv_head = h // (q.depth // k.depth)
        keys = k.rows
        if CAUSAL:                                   # key tiles up to the block's last row
            keys = hk.minimum(keys, (block + 1) * BM)
        tiles = hk.cdiv(keys, BK)
        scale_log2 = scale * LOG2_E                  # the softmax in base 2 (exp2)
        value_tile = hk.ST(DT, D, BK) if VT else hk.ST(DT, BK, D)
        # OVERLAP: step j holds K_j and V_(j-1) (one step more: the last holds only V), so
        # P_(j-1)·V_(j-1) is issued after S_j and runs under the softmax of tile j
        pipe = hk.pipeline(STAGES, hk.ST(DT, BK, D), value_tile,
                           steps=tiles + 1 if OVERLAP else tiles)

        @pipe.producer(warpgroups=1, registers=24)
        def load(j, sk, sv):
            hk.group.load(sk, k[hk.tile_coord(z, kv_head, j, 0)])
            jv = hk.maximum(j - 1, 0) if OVERLAP else j   # step 0's V: any tile, times P = 0
            if VT:
                hk.group.load(sv, v[hk.tile_coord(z, kv_head, 0, jv)])
            else:
                hk.group.load(sv, v[hk.tile_coord(z, kv_head, jv, 0)])

        def scores(j, sk, qr):
            """This warp's 16 rows of S_j = Q·K_jᵀ (wgmma, left in flight), not yet read."""
            s = hk.zeros(hk.RT(hk.fp32, BM // pipe.consumer_warps, BK))
            s += qr @ sk.T
            return s

        def softmax(j, s, row_max, row_sum):
            """Scale, masks (keys past N, causal) and the online softmax of tile j: P_j (fp32),
            the new row max and sum, and O's rescale. A tile past the last (OVERLAP's extra
            step: keys ≥ N or causal-masked) is all -inf: P 0 and rescale 1."""
            rows = BM // pipe.consumer_warps
            if not FUSED_SCALE:                      # scores in base 2: exp2, not exp
                s = s * scale_log2
            reach = (j + 1) * BK                     # masks only on the tiles that need them
            if reach > k.rows:                       # the ragged last tile (or past it)
                key_index = hk.iota(hk.RT(hk.i32, rows, BK), "col") + j * BK
                s = hk.where(key_index >= k.rows, float("-inf"), s)
            if CAUSAL:
                if reach > block * BM:               # keys above the block's first row
                    s = hk.causal_mask(
                        s, (block * pipe.consumer_warps + hk.arch.warp_id) * rows, j * BK)
            new_max = hk.maximum(row_max, hk.row_max(s))
            exp2 = hk.exp2_fast if EXP2_FAST else hk.exp2   # one MUFU.EX2, P < 2^-126 is 0
            if FUSED_SCALE:                          # max and sums of raw scores (scale ≥ 0:
                shift = new_max * scale_log2         # the op negates k for a negative one);
                p = exp2(s * scale_log2 - shift)     # the scale in the exp2's FFMA
                rescale = exp2((row_max - new_max) * scale_log2)
            else:
                p = exp2(s - new_max)
                rescale = exp2(row_max - new_max)
            return p, new_max, row_sum * rescale + hk.row_sum(p), rescale

        def times_values(acc, p, sv):
            if VT:
                acc += p @ sv.T                      # O += P·V, Vᵀ [D, BK] K-major
            else:
                acc += p @ sv                        # O += P·V, V [BK, D] read N-major
            return acc

        groups = BM // 64                            # consumer warpgroups, 16 rows a warp

        def take_turn(j):
            """PINGPONG: wait for this warpgroup's turn at the tensor cores (barrier 1 + its
            index). The first turn is warpgroup 0's: the last warpgroup gives it at step 0."""
            group = hk.arch.warp_id // 4
            if j == 0:
                if group == groups - 1:
                    hk.bar_arrive(1, TURN_THREADS)
            wait_turn()

        def wait_turn():
            group = hk.arch.warp_id // 4
            for g in range(groups):                  # the ids are constants: a branch each
                if group == g:
                    hk.bar_sync(1 + g, TURN_THREADS)

        def pass_turn():
            """PINGPONG: this warpgroup's MMAs are issued: the next one's turn."""
            group = hk.arch.warp_id // 4
            for g in range(groups):
                if group == g:
                    hk.bar_arrive(1 + (g + 1) % groups, TURN_THREADS)

        @pipe.consumer(warpgroups=groups, registers=consumer_registers(WARPS))
        def step(j, sk, sv, qr, row_max, row_sum, acc, p_prev):
            # PINGPONG 1: a turn is S_j (and OVERLAP's P_(j-1)·V); 2: a turn is P_(j-1)·V and
            # S_j (FlashAttention-3's pair), the first S_0 alone, the last P·V alone
            if PINGPONG == 1:
                take_turn(j)
            if PINGPONG == 2:
                if j == 0:
                    take_turn(j)
            if OVERLAP:                              # the extra step's K is past the keys:
                s = hk.zeros(hk.RT(hk.fp32, BM // pipe.consumer_warps, BK))   # no S wgmma
                if j < tiles:                        # (its masks make the tile all -inf)
                    s = scores(j, sk, qr)
            else:
                s = scores(j, sk, qr)
            if OVERLAP:                              # the older tile's P·V, after S_j: the
                acc = times_values(acc, p_prev, sv)  # softmax waits for S_j alone (wait 1)
            if PINGPONG:                             # the other warpgroup's GEMMs run under
                pass_turn()                          # this one's softmax
            p, row_max, row_sum, rescale = softmax(j, s, row_max, row_sum)
            acc = acc * rescale
            if OVERLAP:
                return qr, row_max, row_sum, acc, p.to(DT)
            if PINGPONG == 2:                        # P_j·V opens this warpgroup's next
                wait_turn()                          # turn, closed after S_(j+1)
            acc = times_values(acc, p.to(DT), sv)
            if PINGPONG == 2:
                if j == tiles - 1:                   # no S follows the last P·V
                    pass_turn()
            return qr, row_max, row_sum, acc, p_prev

        @pipe.finish
        def store(qr, row_max, row_sum, acc, p_prev):
            rows = block * pipe.consumer_warps + hk.arch.warp_id
            o[hk.tile_coord(z, h, rows, 0)] = (acc / row_sum).to(DT)

        rows = 16                                    # a warp's rows: a warpgroup's m64
        mine = block * (BM // rows) + hk.arch.warp_id   # the producer's warps load zeros or
        qr = q[hk.tile_coord(z, h, mine, 0)].load(hk.RT(DT, rows, D))   # rows unused
        pipe.run(qr, hk.neg_infty(hk.RV(hk.fp32, rows)), hk.zeros(hk.RV(hk.fp32, rows)),
                 hk.zeros(hk.RT(hk.fp32, rows, D)), hk.zeros(hk.RT(DT, rows, BK)))
    return attention_ws

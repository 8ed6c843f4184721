"""The Triton baseline of benchmarks/paged_decode.py: a plain paged decode attention kernel,
written here for the comparison (issue #12), over the same cache layout as
`ktile.ops.paged_attention_decode` (vLLM's flash layout: `[blocks, 16, kv_heads, head_size]`).

A program per (sequence, kv head, partition) takes the kv head's query heads together (padded
to 16 rows for `tl.dot`) and walks its tokens BLOCK_N at a time: each token's page from the
block table, K and V rows loaded with a mask (tokens past the length read zeros: a stale NaN
never enters), S = Q·Kᵀ, an online softmax in fp32, O += P·V. Few (sequence, kv head) pairs
split the context into partitions of PART_TOKENS, each writing its unnormalised O and (m, l),
then a combine program per (sequence, kv head) folds them in order (no atomics). Importing
this module needs triton."""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

BLOCK_N = 64            # tokens an iteration (four pages)
PART_TOKENS = 512       # a partition's tokens when the context is split
SPLIT_BELOW = 1024      # (sequence, kv head) pairs under which the context is split


@triton.jit
def _decode(q_ptr, k_ptr, v_ptr, bt_ptr, lens_ptr, out_ptr, po_ptr, ps_ptr, scale, bt_stride,
            parts, KV_HEADS: tl.constexpr, GROUP: tl.constexpr, GROUP_PAD: tl.constexpr,
            D: tl.constexpr, BLOCK_N: tl.constexpr, PART_TOKENS: tl.constexpr,
            SPLIT: tl.constexpr):
    seq, kv_head, part = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    seq_len = tl.load(lens_ptr + seq)
    start = part * PART_TOKENS
    end = tl.minimum(seq_len, start + PART_TOKENS)
    g, d, n = tl.arange(0, GROUP_PAD), tl.arange(0, D), tl.arange(0, BLOCK_N)
    heads = (seq * KV_HEADS + kv_head) * GROUP + g
    q = tl.load(q_ptr + heads[:, None] * D + d[None, :], mask=(g < GROUP)[:, None], other=0.0)
    m = tl.full([GROUP_PAD], -1.0e30, tl.float32)
    l = tl.zeros([GROUP_PAD], tl.float32)
    acc = tl.zeros([GROUP_PAD, D], tl.float32)
    for first in range(start, end, BLOCK_N):
        token = first + n
        valid = token < end
        page = tl.load(bt_ptr + seq * bt_stride + token // 16, mask=valid, other=0)
        rows = (page.to(tl.int64) * 16 + token % 16) * KV_HEADS + kv_head
        at = rows[:, None] * D + d[None, :]
        k = tl.load(k_ptr + at, mask=valid[:, None], other=0.0)
        v = tl.load(v_ptr + at, mask=valid[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        s = tl.where(valid[None, :], s, float("-inf"))
        new_m = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - new_m[:, None])
        alpha = tl.exp(m - new_m)
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = new_m
    keep = (g < GROUP)[:, None]
    if SPLIT:
        slot = ((seq * KV_HEADS + kv_head) * parts + part) * GROUP + g
        tl.store(po_ptr + slot[:, None] * D + d[None, :], acc, mask=keep)
        tl.store(ps_ptr + slot * 2, m, mask=g < GROUP)
        tl.store(ps_ptr + slot * 2 + 1, l, mask=g < GROUP)
    else:
        o = acc / tl.maximum(l, 1e-30)[:, None]
        tl.store(out_ptr + heads[:, None] * D + d[None, :], o.to(out_ptr.dtype.element_ty),
                 mask=keep)


@triton.jit
def _combine(po_ptr, ps_ptr, lens_ptr, out_ptr, parts, KV_HEADS: tl.constexpr,
             GROUP: tl.constexpr, GROUP_PAD: tl.constexpr, D: tl.constexpr,
             PART_TOKENS: tl.constexpr):
    seq, kv_head = tl.program_id(0), tl.program_id(1)
    used = tl.minimum(tl.cdiv(tl.load(lens_ptr + seq), PART_TOKENS), parts)
    g, d = tl.arange(0, GROUP_PAD), tl.arange(0, D)
    keep = g < GROUP
    m = tl.full([GROUP_PAD], -1.0e30, tl.float32)
    l = tl.zeros([GROUP_PAD], tl.float32)
    acc = tl.zeros([GROUP_PAD, D], tl.float32)
    for part in range(0, used):
        slot = ((seq * KV_HEADS + kv_head) * parts + part) * GROUP + g
        pm = tl.load(ps_ptr + slot * 2, mask=keep, other=-1.0e30)
        pl = tl.load(ps_ptr + slot * 2 + 1, mask=keep, other=0.0)
        po = tl.load(po_ptr + slot[:, None] * D + d[None, :], mask=keep[:, None], other=0.0)
        new_m = tl.maximum(m, pm)
        old, this = tl.exp(m - new_m), tl.exp(pm - new_m)
        l = l * old + pl * this
        acc = acc * old[:, None] + po * this[:, None]
        m = new_m
    heads = (seq * KV_HEADS + kv_head) * GROUP + g
    o = acc / tl.maximum(l, 1e-30)[:, None]
    tl.store(out_ptr + heads[:, None] * D + d[None, :], o.to(out_ptr.dtype.element_ty),
             mask=keep[:, None])


def paged_decode(query, key_cache, value_cache, block_tables, seq_lens, scale=None):
    """Paged decode attention, `[seqs, heads, head_size]` (the ktile op's semantics)."""
    seqs, heads, d = query.shape
    kv_heads = key_cache.shape[2]
    group = heads // kv_heads
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    context = block_tables.shape[1] * 16
    split = seqs * kv_heads < SPLIT_BELOW and context > PART_TOKENS
    parts = triton.cdiv(context, PART_TOKENS) if split else 1
    out = torch.empty_like(query)
    rows = seqs * kv_heads * parts * group if split else 1
    part_out = torch.empty((rows, d), dtype=torch.float32, device=query.device)
    part_stats = torch.empty((rows, 2), dtype=torch.float32, device=query.device)
    pad = max(16, triton.next_power_of_2(group))
    _decode[(seqs, kv_heads, parts)](
        query, key_cache, value_cache, block_tables, seq_lens, out, part_out, part_stats, scale,
        block_tables.stride(0), parts, KV_HEADS=kv_heads, GROUP=group, GROUP_PAD=pad, D=d,
        BLOCK_N=BLOCK_N, PART_TOKENS=PART_TOKENS if split else 1 << 30, SPLIT=split,
        num_warps=4)
    if split:
        _combine[(seqs, kv_heads)](part_out, part_stats, seq_lens, out, parts,
                                   KV_HEADS=kv_heads, GROUP=group, GROUP_PAD=pad, D=d,
                                   PART_TOKENS=PART_TOKENS, num_warps=4)
    return out

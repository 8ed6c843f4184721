"""`ktile.ops.paged_attention_decode(query, key_cache, value_cache, block_tables, seq_lens,
scale=None, out=None)`: one decode step of attention over a paged KV cache in vLLM's flash
layout (what `ktile.ops.kv_cache_write` writes), `torch.ops.ktile.paged_attention_decode`.

query `[seqs, heads, head_size]`; key_cache, value_cache `[blocks, 16, kv_heads, head_size]`;
block_tables int32 `[seqs, max_blocks]` (sequence s's token t lies in block
`block_tables[s, t // 16]`, row `t % 16`); seq_lens int32 `[seqs]`. heads a multiple of
kv_heads (GQA: query head h reads kv head h // (heads / kv_heads)); head_size 64 or 128;
bf16 or fp16. Returns `[seqs, heads, head_size]` of query's dtype (or writes `out`). A length
of 0 gives zeros; a length past the table's max_blocks · 16 tokens is cut to them (the
lengths stay on the device: no check reads them).

Routing (kernels.py): by (seqs · kv_heads, max_blocks · 16). Few (seq, kv head) pairs split the
context into partitions (PART_PAGES pages each; partials, then the combine kernel); many run one
block per pair over the whole context. Targets: sm_90a, gfx1100, gfx1201 and the interpreter;
gfx942 and gfx950 are refused (their MFMA needs a K of 32: kernels.py).
"""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from .._library import Route, RoutingTable
from ..elementwise.launch import run_kernel
from . import kernels, ring, streams
from .checks import BLOCK_SIZE, DTYPES, HEAD_SIZES, NAME, check, check_scale
TARGETS = ("sm_90a", "gfx1100", "gfx1201")
WHOLE = 1 << 20        # PART_PAGES past any table: one partition, no combine
SPLIT_BELOW = 2048     # (seq, kv head) pairs under which the context is split: 2048 blocks of
                       # D / 64 warps fill an H200's 132 multiprocessors without splitting


FEW_PAIRS = 128        # under it, long contexts take smaller partitions (more blocks)
PART_SIZES = (8, 16, 32, 64, 128)
AMD = ("gfx1100", "gfx1201")
# sm_90a's kernels: paged_decode_ring (routed: pages copied to shared memory two steps ahead,
# ring.py) and paged_decode_streams (the benchmark's variant: pages in registers, streams.py),
# at these constants unless a variant says otherwise. Registers by ptxas (bf16, split):
# ring 213 at D 128, 96 at D 64 (WARPS 4, STAGES 2); streams 255 at D 128 PAGES 1, 168 at
# D 64 PAGES 2
SM90 = {"paged_decode_ring": {64: {"WARPS": 4}, 128: {"WARPS": 4}},
        "paged_decode_streams": {64: {"WARPS": 4, "PAGES": 2}, 128: {"WARPS": 4, "PAGES": 1}}}
SM90_KERNEL = "paged_decode_ring"
# the ring at D 128 holds a whole head of O (16 x 128 fp32) and a page of V a warp: about 188
# registers a lane estimated (ptxas 213), 2 blocks of 4 warps a multiprocessor, under the
# occupancy floor
RING_EXEMPT = ("paged_decode_ring's bytes in flight are its shared-memory stages, not its "
               "warps: STAGES 2 x 32 KiB a block, 2 blocks a multiprocessor (128 KiB, over the "
               "~30 KiB an H200 multiprocessor needs at its copy bandwidth); not measured yet")


def _decode_route(d: int, part_pages: int, max_pairs: int | None,
                  max_cols: int | None, target: str) -> Route:
    split = {"PART_PAGES": part_pages, "SPLIT": part_pages != WHOLE}
    if target == "sm_90a":
        return Route(SM90_KERNEL, {"D": d, **SM90[SM90_KERNEL][d], **split}, max_rows=max_pairs,
                     max_cols=max_cols, targets=("sm_90a",), sample=(4, 1024),
                     occupancy_exempt=RING_EXEMPT if d == 128 else None)
    return Route("paged_decode", {"D": d, "WARPS": d // 64, **split},
                 max_rows=max_pairs, max_cols=max_cols, targets=AMD, sample=(4, 1024))


# per target and head size, under 2048 pairs: contexts up to 2048 tokens in partitions of 8
# pages (128 tokens); under 128 pairs, up to 16K tokens in partitions of 16 pages (1 x 4096:
# 128 blocks), longer in partitions of 64 (1 x 32K: 256 blocks, about one wave of the ring's 2
# blocks a multiprocessor, and 32 partitions for the combine, not 128); else partitions of 32
# (512 tokens; 16 x 4096: 1024 blocks); from 2048 pairs one block a (seq, kv head) over the
# whole context. A first guess (the previous kernel's, with 1 x 32K's partitions made larger),
# not measured for the ring: benchmarks/paged_decode.py --constants PART_PAGES=... sweeps it.
# Measured once (H200, eighth session, docs/results/h200_2026-12-02_s8_r17): from 128 pairs
# the ring takes partitions of 128 pages (16 x 4096: 105 us against 148 at 32; 64 x 4096: 354
# against 455); 1 x 32K stays at 64 (102 us against 115 at 128), 256 x 512 whole (231 / 248).
# sm_90a runs paged_decode_ring (a block's warps on different pages, ring.py), the AMD targets
# paged_decode (a block's warps on different columns, kernels.py: a whole head a warp passes
# gfx1100's 256 VGPRs)
TABLE = RoutingTable([route for target in ("sm_90a", "gfx1100") for d in HEAD_SIZES
                      for route in (
    _decode_route(d, 8, SPLIT_BELOW - 1, 2048, target),
    _decode_route(d, 16, FEW_PAIRS - 1, 16384, target),
    _decode_route(d, 64, FEW_PAIRS - 1, None, target),
    _decode_route(d, 128 if target == "sm_90a" else 32, SPLIT_BELOW - 1, None, target),
    _decode_route(d, WHOLE, None, None, target))])
COMBINE = tuple(Route("paged_decode_combine", {"D": d, "WARPS": d // 64, "PART_PAGES": pp},
                      targets=TARGETS, sample=(4, 1024))
                for d in HEAD_SIZES for pp in PART_SIZES)


def route_for(d: int, pairs: int, context: int, target: str | None) -> Route:
    """The first route of head size `d` that fits (pairs, context) on `target`; refused naming
    the target where none does (gfx942, gfx950)."""
    pin = TABLE.pinned
    if pin is not None:
        return pin
    for route in TABLE.measured.get(target, []) + TABLE.routes:
        if route.constants["D"] == d and route.fits(pairs, context, target):
            return route
    where = target or "the CPU interpreter (tracing for its default target)"
    raise InputError(f"{NAME}: no paged decode kernel for {where} yet: P·V takes one 16-token "
                     f"page at a time, and this target's 16-bit MMA needs 32 (issue #12)",
                     hint="run on sm_90a, gfx1100 or gfx1201 (or the CPU interpreter with "
                          "KTILE_TARGET unset); elsewhere gather the pages and call torch")


def _launch(query, key_cache, value_cache, block_tables, seq_lens, scale: float, out) -> None:
    seqs, _, d = query.shape
    route = route_for(d, seqs * key_cache.shape[2], block_tables.shape[1] * BLOCK_SIZE,
                      lib.target_of(query))
    launch(route.kernel, route.constants, query, key_cache, value_cache, block_tables,
           seq_lens, scale, out)


def launch(kernel: str, constants: dict, query, key_cache, value_cache, block_tables,
           seq_lens, scale: float, out) -> None:
    """`kernel` (paged_decode, paged_decode_streams or paged_decode_ring) at `constants`,
    then, split, the combine at the same PART_PAGES: what a call runs, and what the
    benchmark's pinned variants (`--constants`) run."""
    seqs, heads, d = query.shape
    kv_heads = key_cache.shape[2]
    pairs, target = seqs * kv_heads, lib.target_of(query)
    c, dtype = constants, lib.kt_dtype(query)
    q = query.view(pairs, heads // kv_heads, d)
    o = out.view(pairs, heads // kv_heads, d)
    k_rows, v_rows = key_cache.view(-1, kv_heads * d), value_cache.view(-1, kv_heads * d)
    lengths = seq_lens.view(1, seqs)
    parts = 1 if not c["SPLIT"] else -(-block_tables.shape[1] // c["PART_PAGES"])
    rows = pairs * parts if c["SPLIT"] else 1
    part_out = query.new_empty((rows, q.shape[1], d), dtype=torch.float32)
    part_stats = query.new_empty((rows, q.shape[1], 2), dtype=torch.float32)
    run_kernel(OP.kernels[kernel](dtype), q, k_rows, v_rows, block_tables, lengths, o,
               part_out, part_stats, scale, target=target, **c)
    if c["SPLIT"]:
        run_kernel(OP.kernels["paged_decode_combine"](dtype), part_out, part_stats, lengths, o,
                   target=target, D=d, WARPS=d // 64, PART_PAGES=c["PART_PAGES"])


def _decode(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
            block_tables: torch.Tensor, seq_lens: torch.Tensor, scale: float) -> torch.Tensor:
    out = torch.empty_like(query)
    _launch(query, key_cache, value_cache, block_tables, seq_lens, scale, out)
    return out


def _decode_fake(query, key_cache, value_cache, block_tables, seq_lens, scale):
    return torch.empty_like(query)


def _decode_out(query: torch.Tensor, key_cache: torch.Tensor, value_cache: torch.Tensor,
                block_tables: torch.Tensor, seq_lens: torch.Tensor, scale: float,
                out: torch.Tensor) -> None:
    _launch(query, key_cache, value_cache, block_tables, seq_lens, scale, out)


def _decode_out_fake(query, key_cache, value_cache, block_tables, seq_lens, scale, out):
    return None


_FUNCTIONAL = lib.define("ktile::paged_attention_decode", _decode, _decode_fake)
_OUT = lib.define("ktile::paged_attention_decode_out", _decode_out, _decode_out_fake,
                  mutates_args=("out",))


def paged_attention_decode(query: torch.Tensor, key_cache: torch.Tensor,
                           value_cache: torch.Tensor, block_tables: torch.Tensor,
                           seq_lens: torch.Tensor, scale: float | None = None,
                           out: torch.Tensor | None = None) -> torch.Tensor:
    """softmax(q · kᵀ · scale) · v per sequence over its cached tokens: `[seqs, heads,
    head_size]`."""
    check(query, key_cache, value_cache, block_tables, seq_lens)
    scale = check_scale(scale, query.shape[-1])
    if out is None:
        return _FUNCTIONAL(query, key_cache, value_cache, block_tables, seq_lens, scale)
    lib.check_out(NAME, out, query, "query")
    _OUT(query, key_cache, value_cache, block_tables, seq_lens, scale, out)
    return out


OP = lib.Op(NAME, {NAME: paged_attention_decode},
            {**kernels.KERNELS, "paged_decode_streams": streams.paged_decode_streams,
             "paged_decode_ring": ring.paged_decode_ring}, DTYPES, TABLE,
            "ktile.ops.paged_attention.reference", also=COMBINE)
OPS = [OP]

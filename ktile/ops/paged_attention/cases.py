"""Paged decode inputs for the tests and the benchmark: a cache of shuffled blocks (each
sequence's pages scattered over the cache, as a serving engine's allocator leaves them), its
unused rows holding NaN (a stale value the kernels must never let into P·V), and the checks
of a result against the float64 reference."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from . import reference


@dataclass
class PagedCase:
    query: torch.Tensor          # [seqs, heads, d]
    key_cache: torch.Tensor      # [blocks, 16, kv_heads, d]
    value_cache: torch.Tensor
    block_tables: torch.Tensor   # int32 [seqs, max_blocks]
    seq_lens: torch.Tensor       # int32 [seqs]

    @property
    def args(self) -> tuple:
        return (self.query, self.key_cache, self.value_cache, self.block_tables, self.seq_lens)


def make_case(lengths, heads: int, kv_heads: int, d: int, *, dtype=torch.bfloat16,
              device="cpu", seed: int = 0, max_blocks: int | None = None,
              stale=float("nan")) -> PagedCase:
    """Sequences of `lengths` tokens, made on `device` (its own generator, so a large cache is
    made where it is used); two blocks are spare; rows no sequence reads hold `stale`."""
    g = torch.Generator(device=device).manual_seed(seed)
    seqs = len(lengths)
    max_blocks = max_blocks or max(max(-(-n // 16) for n in lengths), 1)
    blocks = seqs * max_blocks + 2
    order = torch.randperm(blocks, generator=g, device=device)
    table = order[:seqs * max_blocks].view(seqs, max_blocks).to(torch.int32).contiguous()
    lens = torch.tensor(lengths, dtype=torch.int32, device=device)
    shape = (blocks, 16, kv_heads, d)
    key = torch.randn(shape, generator=g, device=device, dtype=dtype)
    value = torch.randn(shape, generator=g, device=device, dtype=dtype)
    token = torch.arange(max_blocks * 16, device=device)
    valid = token[None, :] < lens[:, None]                     # [seqs, tokens]
    used = torch.zeros(blocks, 16, dtype=torch.bool, device=device)
    used[table[:, token // 16].long()[valid], (token % 16).expand(seqs, -1)[valid]] = True
    key[~used], value[~used] = stale, stale
    query = torch.randn((seqs, heads, d), generator=g, device=device, dtype=dtype)
    return PagedCase(query, key, value, table, lens)


def want(case: PagedCase, scale: float | None = None) -> np.ndarray:
    """The reference on the case (stale rows read as zeros: the reference gathers only the
    tokens each sequence has, so they never matter)."""
    def host(t):
        return torch.nan_to_num(t.float().cpu()).numpy()
    return reference.paged_decode(host(case.query), host(case.key_cache),
                                  host(case.value_cache), case.block_tables.cpu().numpy(),
                                  case.seq_lens.cpu().numpy(), scale)


def error(case: PagedCase, got: torch.Tensor, scale: float | None = None) -> tuple[float, float]:
    """(max |got - reference|, tolerance); NaN anywhere in `got` is an infinite error."""
    got = got.float().cpu().numpy()
    if not np.isfinite(got).all():
        return float("inf"), 0.0
    tol = reference.tolerance(torch.nan_to_num(case.value_cache.float().cpu()).numpy())
    return float(np.abs(got - want(case, scale)).max(initial=0.0)), tol


def torch_reference(case: PagedCase, scale: float | None = None, chunk: int = 16):
    """The result by torch on the case's device: each sequence's pages gathered, then
    `F.scaled_dot_product_attention` (GQA by repeating the kv heads), `chunk` sequences at a
    time of equal length (the benchmark's cases); rounded to the query's dtype."""
    import torch.nn.functional as F
    seqs, heads, d = case.query.shape
    kv_heads = case.key_cache.shape[2]
    out = torch.empty_like(case.query)
    lengths = case.seq_lens.tolist()
    for s0 in range(0, seqs, chunk):
        part = slice(s0, min(seqs, s0 + chunk))
        n = max(lengths[part])
        assert all(x == n for x in lengths[part]), "torch_reference takes equal lengths"
        pages = case.block_tables[part, :-(-n // 16)].long()

        def gathered(cache):
            rows = cache[pages].flatten(1, 2)[:, :n]              # [s, n, kv_heads, d]
            return rows.transpose(1, 2).repeat_interleave(heads // kv_heads, 1)
        q = case.query[part].unsqueeze(2)                          # [s, heads, 1, d]
        o = F.scaled_dot_product_attention(q, gathered(case.key_cache),
                                           gathered(case.value_cache), scale=scale)
        out[part] = o.squeeze(2)
    return out

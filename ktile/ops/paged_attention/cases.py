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
    """Sequences of `lengths` tokens; blocks beyond what they use are spare; rows no sequence
    reads hold `stale` (on the CPU: NaN by default)."""
    g = torch.Generator().manual_seed(seed)
    pages = [-(-n // 16) for n in lengths]
    max_blocks = max_blocks or max(max(pages), 1)
    blocks = len(lengths) * max_blocks + 2
    order = torch.randperm(blocks, generator=g)
    table = order[:len(lengths) * max_blocks].view(len(lengths), max_blocks).to(torch.int32)
    shape = (blocks, 16, kv_heads, d)
    key = torch.randn(shape, generator=g)
    value = torch.randn(shape, generator=g)
    used = torch.zeros(blocks, 16, dtype=torch.bool)
    for s, n in enumerate(lengths):
        for t in range(n):
            used[table[s, t // 16], t % 16] = True
    key[~used], value[~used] = stale, stale
    query = torch.randn((len(lengths), heads, d), generator=g)
    return PagedCase(query.to(dtype).to(device), key.to(dtype).to(device),
                     value.to(dtype).to(device), table.contiguous().to(device),
                     torch.tensor(lengths, dtype=torch.int32).to(device))


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

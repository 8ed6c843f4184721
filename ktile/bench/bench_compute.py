"""The compute-bound ops as benches, for examples/validate.py only: matmul, linear, scaled_mm,
awq_gemm, awq_dequantize, the three MoE ops, paged_attention_decode and
scaled_dot_product_attention. Their sweeps and baselines live in their own benchmarks
(benchmarks/wgmma_gemm.py, matmul_fp8.py, awq.py, moe.py, paged_decode.py, attention.py), so
`cases.benches()` (what benchmarks/ops.py sweeps) leaves these out; `BENCHES` lists them.

Each bench has one typical GPU shape (`quick`), a tiny interpreter shape (`extra["small"]`), a
torch formula and the op's own tolerance (its reference module's bound, doubled: ktile and
torch each stay within it of the exact result). `compare` reads the inputs the last `make`
built (kept in `_MADE`), since the bounds depend on them.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .cases import Bench, Shape, dev, library

_MADE: dict[str, tuple] = {}   # bench name -> the inputs its last make() returned


def _shape(**dims) -> Shape:
    return Shape(dims, next(iter(dims.values())), "")


def _np(t) -> np.ndarray:
    return t.float().cpu().numpy()


def _abs_error(got, want) -> float:
    return (got.float() - want.float()).abs().max().item() if want.numel() else 0.0


def _rand(*shape, scale: float = 1.0, dtype=torch.bfloat16, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=gen) * scale).to(dtype).to(dev())


def _remember(name, make):
    def wrapped(s):
        _MADE[name] = make(s)
        return _MADE[name]
    return wrapped


def _bench(name, typical, small, make, torch_fn, compare, ktile=None, nbytes=None, **extra):
    return Bench(name, (typical,), (typical,), make=_remember(name, make),
                 ktile=ktile or library(name), torch=torch_fn, compare=compare,
                 nbytes=nbytes or (lambda s: 0), axis="m", extra={"small": small, **extra})


# ---- matmul, linear ----

def _matmul_inputs(s):
    m, n, k = s.dims["m"], s.dims["n"], s.dims["k"]
    return _rand(m, k, seed=1), _rand(k, n, scale=k ** -0.5, seed=2)


def _linear_inputs(s):
    a, b = _matmul_inputs(s)
    return a, b.t().contiguous()


def _matmul_close(name, transposed=False):
    from ktile.ops.matmul.reference import tolerance

    def compare(got, want):
        a, b = _MADE[name][:2]
        b = b.t() if transposed else b
        return _abs_error(got, want), 2 * tolerance(_np(a), _np(b), _np(want), "bf16")
    return compare


# ---- scaled_mm (fp8 e4m3, per-tensor scales, bf16 out) ----

def _scaled_mm_inputs(s):
    m, n, k = s.dims["m"], s.dims["n"], s.dims["k"]
    a = _rand(m, k, dtype=torch.float32, seed=3).clamp(-448, 448).to(torch.float8_e4m3fn)
    bt = _rand(n, k, dtype=torch.float32, seed=4).clamp(-448, 448).to(torch.float8_e4m3fn)
    scale_a = torch.tensor(0.5, device=dev())
    scale_b = torch.tensor(k ** -0.5, device=dev())
    return a, bt.t(), scale_a, scale_b       # b column-major, as torch._scaled_mm wants


def _scaled_mm_torch(a, b, scale_a, scale_b):
    if a.is_cuda:
        return torch._scaled_mm(a, b, scale_a, scale_b, out_dtype=torch.bfloat16)
    return (a.float() @ b.float() * scale_a * scale_b).to(torch.bfloat16)   # float reference


def _scaled_mm_close(got, want):
    from ktile.ops.scaled_mm.reference import tolerance_of
    a, b, scale_a, scale_b = _MADE["scaled_mm"]
    tol = tolerance_of(a.shape[-1], a.float().abs().max().item(), b.float().abs().max().item(),
                       (scale_a * scale_b).abs().item(), want.float().abs().max().item(), "bf16")
    return _abs_error(got, want), 2 * tol


# ---- AWQ (4-bit weights, fp16 activations, group 128 on the GPU) ----

def _awq_inputs(s):
    from ktile.ops.awq.reference import pack
    m, n, k, g = s.dims["m"], s.dims["n"], s.dims["k"], s.dims["group"]
    rng = np.random.default_rng(5)
    qweight = torch.from_numpy(pack(rng.integers(0, 16, (k, n)))).to(dev())
    qzeros = torch.from_numpy(pack(rng.integers(0, 16, (k // g, n)))).to(dev())
    scales = _rand(k // g, n, scale=0.02, dtype=torch.float16, seed=6).abs() + 1e-3
    return _rand(m, k, dtype=torch.float16, seed=7), qweight, scales, qzeros, g


def _awq_weights(qweight, scales, qzeros, group):
    """w [K, N] = (q − z) · s in the scales' dtype: the reference's dequantisation (its nibble
    order, REVERSE) in torch; exact in fp32 (a 4-bit difference times an fp16 scale)."""
    from ktile.ops.awq.reference import REVERSE
    shifts = 4 * torch.tensor(REVERSE, dtype=torch.int32, device=qweight.device)

    def unpack(words):
        return ((words[:, :, None] >> shifts) & 0xF).reshape(words.shape[0], -1)
    q, z = unpack(qweight), unpack(qzeros).repeat_interleave(group, 0)
    s = scales.float().repeat_interleave(group, 0)
    return ((q - z).float() * s).to(scales.dtype)


def _awq_gemm_torch(x, qweight, scales, qzeros, group):
    return torch.matmul(x, _awq_weights(qweight, scales, qzeros, group))


def _awq_gemm_close(got, want):
    from ktile.ops.awq.reference import dequantize, tolerance
    x, qweight, scales, qzeros, group = _MADE["awq_gemm"]
    w = dequantize(qweight.cpu().numpy(), _np(scales), qzeros.cpu().numpy(), group)
    tol = tolerance(_np(x), w, _np(want), "fp16", rounded_weights=True)
    return _abs_error(got, want), 2 * tol


def _dequantize_inputs(s):
    return _awq_inputs(Shape({**s.dims, "m": 1}, s.x, s.group))[1:]


def _awq_dequantize_close(got, want):
    """Exact: each weight rounded once from (q − z) · s; and torch's equals the reference's."""
    from ktile.ops.awq.reference import dequantize
    qweight, scales, qzeros, group = _MADE["awq_dequantize"]
    exact = dequantize(qweight.cpu().numpy(), _np(scales), qzeros.cpu().numpy(), group)
    rounded = torch.from_numpy(exact).to(scales.dtype).to(want.device)
    return max(_abs_error(got, want), _abs_error(want, rounded)), 0.0


# ---- MoE (bf16, a seeded softmax router) ----

def _routing(tokens, experts, top_k):
    gen = torch.Generator().manual_seed(8)
    weights, ids = torch.randn(tokens, experts, generator=gen).softmax(-1).topk(top_k)
    return weights.to(dev()), ids.to(dev())


def _align_inputs(s):
    return _routing(s.dims["tokens"], s.dims["experts"], s.dims["top_k"])[1], \
        s.dims["experts"], s.dims["block_m"]


def _align_torch(ids, experts, block_m):
    """The layout's definition: each expert's slots in order, padded to block_m with the
    sentinel tokens·top_k; the unused tail the sentinel and expert -1."""
    from ktile.ops.moe.align import capacity
    flat, slots = ids.reshape(-1), ids.numel()
    order = torch.argsort(flat, stable=True)
    sorted_ids, expert_ids = [], []
    for e in range(experts):
        run = order[flat[order] == e].to(torch.int32)
        pad = torch.full((-run.numel() % block_m,), slots, dtype=torch.int32, device=ids.device)
        sorted_ids.append(torch.cat([run, pad]))
        expert_ids += [e] * ((run.numel() + pad.numel()) // block_m)
    live = torch.cat(sorted_ids)
    total = capacity(slots, experts, block_m)
    full = torch.full((total,), slots, dtype=torch.int32, device=ids.device)
    full[:live.numel()] = live
    blocks = torch.full((total // block_m,), -1, dtype=torch.int32, device=ids.device)
    blocks[:len(expert_ids)] = torch.tensor(expert_ids, dtype=torch.int32, device=ids.device)
    return full, blocks, torch.tensor([live.numel()], dtype=torch.int32, device=ids.device)


def _align_close(got, want):
    """Exact on the live part (past num_tokens_post_padded the layout is unspecified)."""
    (gs, ge, gp), (ws, we, wp) = got, want
    live = int(wp.reshape(-1)[0])
    block_m = _MADE["moe_align_block_size"][2]
    same = (int(gp.reshape(-1)[0]) == live and torch.equal(gs[:live].cpu(), ws[:live].cpu())
            and torch.equal(ge[:live // block_m].cpu(), we[:live // block_m].cpu()))
    return (0.0 if same else 1.0), 0.0


def _grouped_inputs(s):
    tokens, experts, top_k, n, k = (s.dims[d] for d in ("tokens", "experts", "top_k", "n", "k"))
    weights, ids = _routing(tokens, experts, top_k)
    import ktile.ops as ops
    layout = ops.moe_align_block_size(ids, experts, s.dims["block_m"])
    return (_rand(tokens, k, seed=9), _rand(experts, n, k, scale=k ** -0.5, seed=10),
            *layout, weights, ids)


def _grouped_ktile(x, w, sorted_ids, expert_ids, padded, weights, ids):
    import ktile.ops as ops
    return ops.moe_grouped_gemm(x, w, sorted_ids, expert_ids, padded, weights,
                                top_k=ids.shape[1], mul_routed_weight=True)


def _grouped_torch(x, w, sorted_ids, expert_ids, padded, weights, ids):
    """One matmul per expert over the slots routed to it, scaled by the routed weights."""
    top_k = ids.shape[1]
    out = torch.empty(ids.numel(), w.shape[1], dtype=x.dtype, device=x.device)
    flat, routed = ids.reshape(-1), weights.reshape(-1, 1)
    for e in range(w.shape[0]):
        slots = (flat == e).nonzero()[:, 0]
        y = x[slots // top_k].float() @ w[e].float().t()
        out[slots] = (y * routed[slots]).to(x.dtype)
    return out.view(*ids.shape, w.shape[1])


def _grouped_close(got, want):
    from ktile.ops.moe.reference import gemm_tolerance
    x, w, *_, weights, _ids = _MADE["moe_grouped_gemm"]
    tol = gemm_tolerance(_np(x), _np(w), _np(want), _np(weights), "bf16")
    return _abs_error(got, want), 2 * tol


def _fused_inputs(s):
    tokens, experts, top_k, h, i = (s.dims[d] for d in ("tokens", "experts", "top_k",
                                                        "hidden", "inter"))
    weights, ids = _routing(tokens, experts, top_k)
    return (_rand(tokens, h, seed=11), _rand(experts, 2 * i, h, scale=h ** -0.5, seed=12),
            _rand(experts, h, i, scale=i ** -0.5, seed=13), weights, ids)


def _fused_torch(x, w13, w2, weights, ids):
    """vLLM's chain, one expert at a time over its slots: each stage rounded to x's dtype,
    the top-k sum in fp32."""
    top_k, inter = ids.shape[1], w13.shape[1] // 2
    out = torch.zeros(x.shape, dtype=torch.float32, device=x.device)
    flat, routed = ids.reshape(-1), weights.reshape(-1, 1).float()
    for e in range(w13.shape[0]):
        slots = (flat == e).nonzero()[:, 0]
        tokens = slots // top_k
        h = x[tokens] @ w13[e].t()
        act = (F.silu(h[:, :inter].float()) * h[:, inter:].float()).to(x.dtype)
        out.index_add_(0, tokens, (act @ w2[e].t()).float() * routed[slots])
    return out.to(x.dtype)


def _fused_close(got, want):
    from ktile import dtypes
    from ktile.ops.moe.reference import fused_moe, fused_tolerance
    x, w13, w2, weights, ids = _MADE["fused_moe"]
    args = [_np(t) for t in (x, w13, w2, weights)] + [ids.cpu().numpy()]
    exact, stages = fused_moe(*args, dtypes.bf16)
    return _abs_error(got, want), 2 * fused_tolerance(*args, exact, stages, "bf16")


# ---- attention ----

def _paged_inputs(s):
    seqs, heads, kv_heads, d, length, block = (s.dims[k] for k in (
        "seqs", "heads", "kv_heads", "head", "len", "block"))
    pages = -(-length // block)
    key_cache = _rand(seqs * pages, block, kv_heads, d, seed=14)
    value_cache = _rand(seqs * pages, block, kv_heads, d, seed=15)
    gen = torch.Generator().manual_seed(16)
    tables = torch.randperm(seqs * pages, generator=gen).view(seqs, pages).to(torch.int32)
    lengths = torch.full((seqs,), length, dtype=torch.int32)
    lengths[0] = max(1, length - block // 2 - 1)            # one ragged sequence
    return (_rand(seqs, heads, d, seed=17), key_cache, value_cache, tables.to(dev()),
            lengths.to(dev()))


def _paged_torch(query, key_cache, value_cache, tables, lengths):
    """Gather each sequence's pages, then SDPA (grouped heads repeated)."""
    out = torch.empty_like(query)
    group = query.shape[1] // key_cache.shape[2]
    for s in range(query.shape[0]):
        length = int(lengths[s])
        k = key_cache[tables[s].long()].flatten(0, 1)[:length]           # [L, kv, D]
        v = value_cache[tables[s].long()].flatten(0, 1)[:length]
        k = k.repeat_interleave(group, 1).transpose(0, 1)                 # [H, L, D]
        v = v.repeat_interleave(group, 1).transpose(0, 1)
        out[s] = F.scaled_dot_product_attention(query[s][:, None], k, v)[:, 0]
    return out


def _paged_close(got, want):
    from ktile.ops.paged_attention.reference import tolerance
    return _abs_error(got, want), 2 * tolerance(_np(_MADE["paged_attention_decode"][2]))


def _sdpa_inputs(s):
    b, h, n, d = s.dims["batch"], s.dims["heads"], s.dims["len"], s.dims["head"]
    return tuple(_rand(b, h, n, d, seed=seed) for seed in (18, 19, 20))


def _sdpa_close(got, want):
    from ktile.ops.attention.reference import tolerance
    return _abs_error(got, want), 2 * tolerance(_np(_MADE["scaled_dot_product_attention"][2]))


MM, MM_SMALL = _shape(m=4096, n=4096, k=4096), _shape(m=8, n=32, k=32)
BENCHES = [
    _bench("matmul", MM, MM_SMALL, _matmul_inputs, torch.matmul, _matmul_close("matmul"),
           nbytes=lambda s: 2 * (s.dims["m"] * s.dims["k"] + s.dims["k"] * s.dims["n"]
                                 + s.dims["m"] * s.dims["n"])),
    _bench("linear", MM, MM_SMALL, _linear_inputs, F.linear, _matmul_close("linear", True)),
    _bench("scaled_mm", MM, MM_SMALL, _scaled_mm_inputs, _scaled_mm_torch, _scaled_mm_close,
           ktile=lambda a, b, sa, sb: library("scaled_mm")(a, b, sa, sb,
                                                            out_dtype=torch.bfloat16)),
    _bench("awq_gemm", _shape(m=256, n=4096, k=4096, group=128),
           _shape(m=3, n=32, k=128, group=128), _awq_inputs, _awq_gemm_torch, _awq_gemm_close),
    _bench("awq_dequantize", _shape(n=4096, k=4096, group=128),
           _shape(n=32, k=128, group=128), _dequantize_inputs, _awq_weights,
           _awq_dequantize_close),
    _bench("moe_align_block_size", _shape(tokens=4096, experts=64, top_k=8, block_m=16),
           _shape(tokens=5, experts=4, top_k=2, block_m=16), _align_inputs, _align_torch,
           _align_close),
    _bench("moe_grouped_gemm",
           _shape(tokens=64, experts=8, top_k=2, n=2048, k=2048, block_m=16),
           _shape(tokens=3, experts=4, top_k=2, n=32, k=32, block_m=16),
           _grouped_inputs, _grouped_torch, _grouped_close, ktile=_grouped_ktile),
    _bench("fused_moe", _shape(tokens=64, experts=8, top_k=2, hidden=2048, inter=768),
           _shape(tokens=3, experts=4, top_k=2, hidden=32, inter=16),
           _fused_inputs, _fused_torch, _fused_close),
    _bench("paged_attention_decode",
           _shape(seqs=16, heads=32, kv_heads=8, head=128, len=4096, block=16),
           _shape(seqs=2, heads=4, kv_heads=2, head=64, len=40, block=16),
           _paged_inputs, _paged_torch, _paged_close),
    _bench("scaled_dot_product_attention", _shape(batch=4, heads=16, len=4096, head=128),
           _shape(batch=1, heads=1, len=128, head=64), _sdpa_inputs,
           F.scaled_dot_product_attention, _sdpa_close, targets=("sm_90a",)),
]

"""What the GPU suite times for each example: inputs at a size that fills the H200, the ktile
call, and the torch baseline run in the same process (eager; cuBLAS for the GEMM, SDPA for
attention). Each `make` returns (args, constants). The baselines return their result as torch
does (a fresh tensor) rather than copying it into the output, so torch is not charged a copy.
The embedding's id tensor is converted to int64 inside its step, as F.embedding needs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass
class Replay:
    """An example that is checked and replayed from a CUDA graph but not timed."""
    example: str
    kernel: str
    make: Callable


@dataclass
class Bench:
    example: str
    kernel: str                 # attribute of the example module
    make: Callable              # (torch, device) -> (args, constants)
    baseline: str               # what torch runs
    torch_step: Callable        # (torch, args) -> None
    bytes_moved: Callable       # (args) -> fewest bytes that must cross device memory


def _randn(torch, shape, dtype, device, scale=1.0):
    return (torch.randn(shape, device=device) * scale).to(dtype)


def _add_make(torch, dev):
    shape = (1, 1, 16384, 16384)                      # 256M bf16 elements
    a, b = _randn(torch, shape, torch.bfloat16, dev), _randn(torch, shape, torch.bfloat16, dev)
    return (a, b, torch.empty_like(a)), {}


def _rms_make(torch, dev):
    x = _randn(torch, (1, 1, 16384, 4096), torch.bfloat16, dev)
    w = _randn(torch, (1, 1, 1, 4096), torch.bfloat16, dev)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count   # one block per SM
    return (x, w, torch.empty_like(x)), {"WIDTH": 4096, "COLS": 128, "BLOCKS": sms}


def _rms_torch(torch, args):
    x, w, _ = args
    torch.nn.functional.rms_norm(x, (x.shape[-1],), w.reshape(-1), eps=1e-6)


def _softmax_make(torch, dev):
    x = _randn(torch, (1, 1, 16384, 4096), torch.float32, dev)
    return (x, torch.empty_like(x)), {}


def _gemm_make(torch, dev):
    m = n = k = 4096
    a = _randn(torch, (1, 1, m, k), torch.bfloat16, dev)
    b = _randn(torch, (1, 1, n, k), torch.bfloat16, dev)
    return (a, b, torch.empty((1, 1, m, n), device=dev)), {}


def _gemm_torch(torch, args):
    a, b, _ = args
    torch.matmul(a[0, 0], b[0, 0].T)        # cuBLAS, bf16 out (ktile writes fp32: 2x the C bytes)


def _attn_make(torch, dev):
    q = _randn(torch, (4, 16, 4096, 64), torch.bfloat16, dev)
    k = _randn(torch, (4, 4, 4096, 64), torch.bfloat16, dev)
    v = _randn(torch, (4, 4, 4096, 64), torch.bfloat16, dev)
    return (q, k, v, torch.empty_like(q)), {"CAUSAL": True}


def _attn_torch(torch, args):
    q, k, v, _ = args
    torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def _dropout_make(torch, dev):
    x = _randn(torch, (1, 1, 8192, 8192), torch.float32, dev)
    return (x, torch.empty_like(x)), {"P": 0.5, "SEED": 123}


def _embedding_make(torch, dev):
    ids = torch.randint(0, 32000, (1, 1, 1, 16384), device=dev, dtype=torch.int32)
    table = _randn(torch, (1, 1, 32000, 4096), torch.bfloat16, dev)
    return (ids, table, torch.empty((1, 1, 16384, 4096), dtype=torch.bfloat16, device=dev)), {}


def _embedding_torch(torch, args):
    ids, table, _ = args
    torch.nn.functional.embedding(ids.reshape(-1).long(), table[0, 0])


def _kv_make(torch, dev):
    tokens, slots, heads = 16384, 65536, 8
    new = _randn(torch, (1, heads, tokens, 128), torch.bfloat16, dev)
    where = torch.randperm(slots, device=dev)[:tokens].to(torch.int32).reshape(1, 1, 1, tokens)
    cache = _randn(torch, (1, heads, slots, 128), torch.bfloat16, dev)
    return (new, where, cache), {}


def _kv_torch(torch, args):
    new, where, cache = args
    cache[0].index_copy_(1, where.reshape(-1).long(), new[0])


def _control_flow_make(torch, dev):
    x = _randn(torch, (2, 1, 4096, 1000), torch.float32, dev, scale=2.0)
    sums = torch.empty((2, 1, 1, 4096), device=dev)
    return (x, sums, torch.empty_like(sums)), {}


def _layernorm_dx_make(torch, dev):
    rows, cols = 4096, 1024
    x, dy = (_randn(torch, (1, 1, rows, cols), torch.float32, dev) for _ in range(2))
    w = _randn(torch, (1, 1, 1, cols), torch.float32, dev)
    mean = _randn(torch, (1, 1, 1, rows), torch.float32, dev)
    rstd = torch.rand((1, 1, 1, rows), device=dev) + 0.5
    parts = [torch.empty((1, 1, rows // 16, cols), device=dev) for _ in range(2)]
    return (x, dy, w, mean, rstd, torch.empty_like(x), *parts), {}


def _column_sum_make(torch, dev):
    part = _randn(torch, (1, 1, 256, 1024), torch.float32, dev)
    return (part, torch.empty((1, 1, 1, 1024), device=dev)), {}


def _bytes(*tensors):
    return sum(t.numel() * t.element_size() for t in tensors)


BENCHES = [
    Bench("01_vector_add", "add", _add_make, "torch.add",
          lambda torch, a: torch.add(a[0], a[1], out=a[2]), lambda a: _bytes(*a)),
    Bench("02_rmsnorm", "rmsnorm_persistent", _rms_make, "F.rms_norm", _rms_torch, lambda a: _bytes(*a)),
    Bench("03_softmax", "softmax", _softmax_make, "torch.softmax",
          lambda torch, a: torch.softmax(a[0], dim=-1, out=a[1]), lambda a: _bytes(*a)),
    Bench("04_gemm", "gemm_wgmma", _gemm_make, "cuBLAS (torch.matmul)", _gemm_torch, lambda a: _bytes(*a)),
    Bench("05_attention", "attention", _attn_make, "SDPA", _attn_torch, lambda a: _bytes(*a)),
    Bench("07_dropout", "dropout", _dropout_make, "F.dropout",
          lambda torch, a: torch.nn.functional.dropout(a[0], 0.5), lambda a: _bytes(*a)),
    Bench("08_embedding", "embedding", _embedding_make, "F.embedding", _embedding_torch,
          lambda a: _bytes(a[0], a[2]) * 2),
    Bench("09_kv_scatter", "kv_write", _kv_make, "index_copy_", _kv_torch,
          lambda a: _bytes(a[0], a[1]) * 2),
]

# the examples without a Bench: each kernel is still captured and replayed from a CUDA graph
REPLAYS = [
    Replay("06_control_flow", "control_flow", _control_flow_make),
    Replay("10_layernorm_backward", "layernorm_dx", _layernorm_dx_make),
    Replay("10_layernorm_backward", "column_sum", _column_sum_make),
]

# The (WIDTH, COLS) pairs the GPU suite passes to 02's `rmsnorm_persistent`, at each row width:
# each call must match the reference or be refused (KernelError) before it runs. WIDTH from a
# fraction of a row to past the H200's 227 KiB of shared memory per block (8192 × 16 rows of
# bf16 is 256 KiB), COLS the register tile widths a caller may pick; rows ragged and not.
# (160 calls took 116 s on the H200, mostly nvcc; these 60 keep every verdict kind seen there.)
RMS_SWEEP_WIDTHS = (1024, 2048, 5120, 6144, 8192)
RMS_SWEEP_COLS = (16, 64, 128, 256)
RMS_SWEEP_ROW_WIDTHS = (300, 1024, 5120)
RMS_SWEEP_ROWS = 40             # three row blocks, the last ragged; BLOCKS=2 loops over them

"""The op benchmark's Triton column: `KERNELS` maps a bench's `triton` key to a launcher taking
the bench's inputs and returning the result as the torch formula does.

The kernels are the package's (ktile/ops/alternatives_triton.py and
alternatives_triton_pointwise.py), the same ones a routing table's "triton" routes run. Importing
this module needs triton (the benchmark catches the ImportError and times no Triton alternative).
"""
from __future__ import annotations

import torch

from ..ops import alternatives_triton as rows
from ..ops import alternatives_triton_pointwise as pointwise
from .bench_norms import EPS
from .bench_pointwise import DROPOUT_P, DROPOUT_SEED

BINARY = ("add", "sub", "mul", "maximum", "minimum")
UNARY = ("exp", "relu", "gelu", "silu", "neg", "abs")


def _binary(op: str):
    return lambda x, y: pointwise.elementwise(op, x, y)


def _unary(op: str):
    return lambda x: pointwise.elementwise(op, x)


KERNELS = {
    "rms_norm": lambda x, w: rows.rms_norm(x, w, EPS),
    "fused_add_rms_norm": lambda x, r, w: rows.fused_add_rms_norm(x, r, w, EPS),
    "fused_add_rms_norm_": lambda x, r, w: rows.fused_add_rms_norm(x, r, w, EPS, x, r),
    "layer_norm": lambda x, w, b: rows.layer_norm(x, w, b, EPS),
    "softmax": rows.softmax,
    "dropout": lambda x: pointwise.dropout(x, DROPOUT_P, DROPOUT_SEED),
    **{f"binary_{op}": _binary(op) for op in BINARY},
    **{f"unary_{op}": _unary(op) for op in UNARY},
    "silu_and_mul": lambda x: pointwise.act_and_mul("silu", x),
    "gelu_and_mul": lambda x: pointwise.act_and_mul("gelu", x),
    "rotary_neox": pointwise.rotary_neox,
    "int8_per_token": lambda x: pointwise.quant_per_token(x, torch.int8, False),
    "fp8_per_token": lambda x: pointwise.quant_per_token(x, torch.float8_e4m3fn, True),
    "embedding": pointwise.embedding,
}

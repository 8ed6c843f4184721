"""Elementwise benches: the binary and unary functions, silu_and_mul / gelu_and_mul, dropout
(bf16). Sizes from 4K to 256M elements, laid out as rows of 4096 (the ops see a 2-D tensor)."""
from __future__ import annotations

import torch
import torch.nn.functional as F

import ktile.ops as ops
from ktile.ops.alternatives import act_and_mul_torch as _act_and_mul_torch

from .cases import Bench, Shape, dev, library

E = 2   # bf16 bytes
SIZES = (1 << 12, 1 << 16, 1 << 20, 1 << 24, 1 << 26, 1 << 28)
QUICK_SIZES = (1 << 20, 1 << 26, 1 << 28)
TOKENS = (1, 8, 32, 256, 4096, 16384)
INTERMEDIATE = (12288, 14336)
DROPOUT_P, DROPOUT_SEED = 0.1, 1234


def sized(sizes) -> tuple:
    return tuple(Shape({"elements": n}, n, "bf16") for n in sizes)


def rand_elements(s, shift: float = 0.0):
    n = s.dims["elements"]
    return (torch.randn(max(n // 4096, 1), min(n, 4096), device=dev()) + shift).bfloat16()


BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul,
          "maximum": torch.maximum, "minimum": torch.minimum}
UNARY = {"exp": torch.exp, "relu": torch.relu, "gelu": F.gelu, "silu": F.silu,
         "neg": torch.neg, "abs": torch.abs}
TIMED_QUICK = ("add", "exp", "silu")      # the others time one size under --quick


def _binary(name: str) -> Bench:
    quick = QUICK_SIZES if name in TIMED_QUICK else (1 << 26,)
    return Bench(name, sized(SIZES), sized(quick),
                 make=lambda s: (rand_elements(s), rand_elements(s)),
                 ktile=library(name), torch=BINARY[name],
                 nbytes=lambda s: 3 * E * s.dims["elements"], triton=f"binary_{name}",
                 axis="elements")


def _unary(name: str) -> Bench:
    quick = QUICK_SIZES if name in TIMED_QUICK else (1 << 26,)
    # exp of N(0,1) stays well inside bf16's range; the shift keeps exp's values O(1)
    return Bench(name, sized(SIZES), sized(quick),
                 make=lambda s: (rand_elements(s, shift=-1.0 if name == "exp" else 0.0),),
                 ktile=library(name), torch=UNARY[name],
                 nbytes=lambda s: 2 * E * s.dims["elements"], triton=f"unary_{name}",
                 axis="elements")


def silu_and_mul_torch(x):
    return _act_and_mul_torch(x, "silu")


def gelu_and_mul_torch(x):
    return _act_and_mul_torch(x, "gelu")


def _activation(name: str, torch_fn) -> Bench:
    shapes = tuple(Shape({"tokens": t, "intermediate": i}, t, i)
                   for i in INTERMEDIATE for t in TOKENS)
    quick = tuple(Shape({"tokens": t, "intermediate": 14336}, t, 14336)
                  for t in (1, 32, 4096, 16384))
    return Bench(name, shapes, quick,
                 make=lambda s: (torch.randn(s.dims["tokens"], 2 * s.dims["intermediate"],
                                             device=dev()).bfloat16(),),
                 ktile=library(name), torch=torch_fn,
                 nbytes=lambda s: 3 * E * s.dims["tokens"] * s.dims["intermediate"],
                 triton=name, axis="tokens")


def dropout_torch(x):
    return F.dropout(x, DROPOUT_P, training=True)


BENCHES = [
    *(_binary(name) for name in BINARY),
    *(_unary(name) for name in UNARY),
    _activation("silu_and_mul", silu_and_mul_torch),
    _activation("gelu_and_mul", gelu_and_mul_torch),
    Bench("dropout", sized(SIZES), sized((1 << 20, 1 << 26)),
          make=lambda s: (rand_elements(s),),
          ktile=lambda x: ops.dropout(x, DROPOUT_P, DROPOUT_SEED), torch=dropout_torch,
          nbytes=lambda s: 2 * E * s.dims["elements"], triton="dropout", axis="elements",
          unchecked=("torch", "torch.compile"),
          notes="torch's dropout draws other random numbers (and writes a mask): timed, not "
                "compared; the Triton kernel is the seeded one ktile's semantics follow"),
]

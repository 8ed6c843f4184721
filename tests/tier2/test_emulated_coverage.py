"""What the examples do not reach (coverage_kernels.py), under wave emulation of all four AMD
families, agrees with the interpreter: bit for bit where the interpreter is exact (layout changes,
shared tiles and vectors, gather / scatter), within fp32 rounding and accumulation order
elsewhere (transcendentals, reductions, MMAs)."""
import numpy as np
import pytest
import torch

import coverage_kernels as kernels
from ktile import targets
from ktile.emulate import emulate

pytestmark = pytest.mark.tier2

AMD = [t.name for t in targets.all_targets() if t.vendor == "amd"]


def _rand(shape, dtype, seed, scale=1.0):
    return (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale).to(dtype)


def _mma_k(target: str, dtype: str) -> int:
    return targets.get(target).mma_shape_for(dtype).k


def _zeros(rows, cols, dtype=torch.float32):
    return torch.zeros((1, 1, rows, cols), dtype=dtype)


def _cases(target: str) -> dict:
    """kernel name -> (its tensors, constants, the largest relative difference: 0 = bit for bit)."""
    bf16, fp16, fp32, i32 = torch.bfloat16, torch.float16, torch.float32, torch.int32
    i8 = torch.randint(-100, 100, (1, 1, 64, 128), dtype=torch.int8,
                       generator=torch.Generator().manual_seed(4))
    rows = [3, -1, 7, 49, 50, 0, 12, 8, *range(20, 44)]   # -1 and 50 are outside x
    cases = {
        "elementwise": ([_rand((1, 1, 32, 32), fp32, 1), _zeros(64, 32).fill_(float("nan")),
                         _zeros(64, 32, bf16), _zeros(64, 32, i32)], {}, 1e-5),
        "reductions": ([_rand((1, 1, 32, 32), fp32, 2), _zeros(48, 32)], {}, 1e-5),
        "matrix_products": ([_rand((1, 1, 64, 64), bf16, 3), _rand((1, 1, 64, 64), fp16, 5), i8,
                             _zeros(64, 32), _zeros(32, 32, i32)],
                            {"K": _mma_k(target, "bf16"), "KI": _mma_k(target, "i8")}, 1e-4),
        "shared_tiles": ([_rand((1, 1, 32, 64), bf16, 6), _rand((1, 1, 1, 64), fp32, 7),
                          _zeros(64, 64, bf16), _zeros(2, 64)], {}, 0),
        "gathered_rows": ([_rand((1, 1, 50, 64), bf16, 8), torch.tensor([[[rows]]], dtype=i32),
                           _zeros(50, 64, bf16)], {}, 0),
    }
    if targets.get(target).mma_shape_for("fp8") is not None:
        k = _mma_k(target, "fp8")
        cases["fp8_product"] = ([_rand((1, 1, 64, k), fp32, 9, 30.0), _zeros(64, max(32, k))],
                                {"K": k}, 1e-5)
    return cases


def _relative_difference(got: torch.Tensor, want: torch.Tensor) -> float:
    g, w = got.float().numpy().astype(np.float64), want.float().numpy().astype(np.float64)
    both_nan = np.isnan(g) & np.isnan(w)
    diff = np.abs(np.where(both_nan, 0.0, g - w))
    diff[np.isnan(diff)] = np.inf
    return float((diff / np.maximum(1.0, np.abs(np.nan_to_num(w)))).max())


KERNELS = ("elementwise", "reductions", "matrix_products", "shared_tiles", "gathered_rows")
RUNS = [(t, k) for t in AMD for k in KERNELS] + \
    [(t, "fp8_product") for t in AMD if targets.get(t).mma_shape_for("fp8") is not None]


@pytest.mark.parametrize("target, name", RUNS)
def test_coverage_kernel_agrees_with_the_interpreter(target, name):
    kernel = getattr(kernels, name)
    tensors, constants, tolerance = _cases(target)[name]
    want = [t.clone() for t in tensors]
    kernel.interpret(*want, target=target, **constants)
    got = [t.clone() for t in tensors]
    emulate(kernel, *got, target=target, **constants)
    for index, (g, w) in enumerate(zip(got, want)):
        difference = _relative_difference(g, w)
        assert difference <= tolerance, f"{name} argument {index} on {target}: {difference:.3g}"

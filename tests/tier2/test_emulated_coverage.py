"""What the examples do not reach (coverage_kernels.py), under wave emulation of all four AMD
families, agrees with the interpreter: bit for bit where the interpreter is exact (layout changes,
shared tiles and vectors, gather / scatter), within fp32 rounding and accumulation order
elsewhere (transcendentals, reductions, MMAs). Every unary function of the elementwise table, from
a kernel generated from it, on special values on gfx1100 and gfx950: bit for bit for the
roundings, abs and relu, within an ulp or two for the rest."""
import numpy as np
import pytest
import torch

import coverage_kernels as kernels
from ktile import targets
from ktile.emulate import emulate
from ktile.ir import elementwise

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


# ---- every unary function of the table, on special values ------------------------------------
# round ties (half to even), values either side of .5, negatives, -0, subnormals, floats already
# integral (|x| >= 2^23), large magnitudes, inf and NaN; then random values at three scales.

SPECIAL = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7, 8388607.5,
           8388609.0, -16777216.0, 123456.5, -123457.5, 1e30, -1e30, 1e-40, -1e-40, 0.0, -0.0,
           1e-8, -1e-8, 1.0, -1.0, 88.0, -88.0, 100.0, -100.0, 6.9e15, 7e15, 1e20,
           float("inf"), float("-inf"), float("nan")]
UNARY_NAMED = [f for f in elementwise.UNARY if f.hk is not None]
# functions every target computes exactly (the interpreter's numpy gives the IEEE result too)
EXACT = ("abs", "relu", "round", "floor", "ceil", "trunc")
# the others: within this many ulps of the interpreter's (each side is within about an ulp of
# the correctly rounded result)
ULPS = {"fp32": 2, "bf16": 1}
# gelu: the targets' float erf is within 2 ulp, the interpreter's correctly rounded, and 1 + erf
# cancels for x < 0: within |x|·2^-22 in fp32 (elementwise.py), plus one step of bf16's rounding
GELU_BOUND = 2.0 ** -22
# silu_fast: exp2 of the rounded product x·log2 e (its error grows with |x|), docs/language.md
SILU_FAST_BOUND = 2.0 ** -20


def _function_inputs() -> torch.Tensor:
    rng = np.random.default_rng(11)
    random = np.concatenate([rng.standard_normal(160) * scale for scale in (0.3, 4.0, 60.0)])
    x = np.concatenate([np.array(SPECIAL), random])[:16 * 32].astype(np.float32)
    return torch.from_numpy(x.reshape(1, 1, 16, 32).copy())


def _ulps_apart(got: np.ndarray, want: np.ndarray, dtype) -> np.ndarray:
    """|got - want| in ulps of `dtype` at want; 0 where both are NaN or the same infinity."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (np.isnan(g) & np.isnan(w)) | (g == w)
    spacing = np.spacing(np.abs(w).astype(np.float32)).astype(np.float64)
    if dtype == "bf16":
        spacing = spacing * 2.0 ** 16
    with np.errstate(invalid="ignore"):
        apart = np.abs(g - w) / spacing
    return np.where(same, 0.0, np.nan_to_num(apart, nan=np.inf))


@pytest.fixture(scope="module")
def every_function(tmp_path_factory):
    return kernels.every_function(tmp_path_factory.mktemp("every_function"), UNARY_NAMED)


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_every_table_function_agrees_with_the_interpreter(every_function, target):
    rows = len(UNARY_NAMED) * 16
    tensors = [_function_inputs(), _zeros(rows, 32), _zeros(rows, 32, torch.bfloat16)]
    want = [t.clone() for t in tensors]
    every_function.interpret(*want, target=target)
    got = [t.clone() for t in tensors]
    emulate(every_function, *got, target=target)
    for k, row in enumerate(UNARY_NAMED):
        for dtype, index in (("fp32", 1), ("bf16", 2)):
            g = got[index][0, 0, 16 * k:16 * k + 16].float().numpy()
            w = want[index][0, 0, 16 * k:16 * k + 16].float().numpy()
            limit = 0 if row.name in EXACT else ULPS[dtype]
            apart = _ulps_apart(g, w, dtype)
            if row.name == "gelu":
                x_abs = np.abs(tensors[0][0, 0].numpy().astype(np.float64))
                step = _ulps_apart(w + np.sign(w) * x_abs * GELU_BOUND, w, dtype)   # the bound in ulps
                apart = np.where(np.isfinite(x_abs), apart - step - (dtype == "bf16"), apart)
                limit = 0
            if row.name == "silu_fast":   # 2^-20 + |x|·2^-23 relative, ±0 below x = -87
                xs = tensors[0][0, 0].numpy().astype(np.float64)
                with np.errstate(invalid="ignore"):
                    bound = np.abs(w) * (SILU_FAST_BOUND + np.abs(xs) * 2.0 ** -23) \
                        + np.where(xs < -87.0, 2.0 ** -119, 0.0)
                step = _ulps_apart(w + np.sign(w) * bound, w, dtype)
                apart = np.where(np.isfinite(xs), apart - step - (dtype == "bf16"), apart)
                limit = 0
            worst = np.unravel_index(np.argmax(apart), apart.shape)
            x = tensors[0][0, 0][worst].item()
            assert apart.max() <= limit, (f"{row.hk}({x!r}) in {dtype} on {target}: "
                                          f"{g[worst]!r}, the interpreter {w[worst]!r}")
            numbers = ~np.isnan(w)   # a NaN's sign means nothing
            if row.name in EXACT:
                assert np.array_equal(np.signbit(g[numbers]), np.signbit(w[numbers])), \
                    f"{row.hk}: the sign of a zero in {dtype} on {target}"

"""Element coordinates under wave emulation (gfx1100, wave32 and gfx950, wave64 with its
global→LDS DMA): the generated AMD C++ of the tier-0 element-offset kernels agrees bit for bit
with the interpreter, at aligned offsets (the wide paths) and unaligned ones (the per-element
paths), ragged edges included; and the warps constant runs at two counts."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from ktile.emulate import emulate

pytestmark = pytest.mark.tier2
TIER0 = Path(__file__).resolve().parents[1] / "tier0"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"_w4b_{name}", TIER0 / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


offsets = _module("test_element_offsets")
warps = _module("test_warps_constant")


def _rand(shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


CASES = {
    "shifted": lambda: [_rand((1, 1, 40, 100)), torch.zeros((1, 1, 40, 95))],
    "store_shifted": lambda: [_rand((1, 1, 32, 64)), torch.zeros((1, 1, 40, 70))],
    "vector_at": lambda: [_rand((1, 1, 32, 50)), torch.zeros((1, 1, 32, 32))],
    "group_at": lambda: [_rand((1, 1, 32, 140), torch.bfloat16),
                         torch.zeros((1, 1, 32, 128), dtype=torch.bfloat16)],
}
RUNS = [("shifted", {"C0": 4}), ("shifted", {"R0": 3, "C0": 5}), ("shifted", {"R0": -2, "C0": -3}),
        ("store_shifted", {"C0": 4}), ("store_shifted", {"R0": 5, "C0": 17}),
        ("vector_at", {"C0": 7}), ("group_at", {"C0": 8}), ("group_at", {"C0": 3})]


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("name, constants", RUNS,
                         ids=[f"{n}-" + "-".join(f"{k}{v}" for k, v in c.items()) for n, c in RUNS])
def test_an_element_offset_kernel_agrees_with_the_interpreter(target, name, constants):
    kernel = getattr(offsets, name)
    tensors = CASES[name]()
    want = [t.clone() for t in tensors]
    kernel.interpret(*want, target=target, **constants)
    got = [t.clone() for t in tensors]
    emulate(kernel, *got, target=target, **constants)
    for g, w in zip(got, want):
        assert torch.equal(g, w)


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
@pytest.mark.parametrize("count", [2, 4])
def test_the_warps_constant_runs_at_each_count(target, count):
    x = _rand((1, 1, 200, 32))
    o = torch.zeros_like(x)
    emulate(warps.doubled, x, o, target=target, WARPS=count)
    assert torch.equal(o, 2 * x)

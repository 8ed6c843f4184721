"""Runtime scalar kernels with the real compilers: the C++ taking `float`/`int32_t` by value after
the globals compiles for all five targets with zero spills (clang-22 for AMD, nvcc for sm_90a),
and on the sm_90a GPU path (a fake loader: no GPU needed) calls with different values build once."""
import os
import shutil
import sys
import types

import pytest

import ktile as hk
from ktile.runtime import build as build_mod
from ktile.runtime import gpu
from ktile.runtime.cache import BuildCache
from ktile.runtime.devices import Device
from ktile.runtime.toolchains import amd
from toolchain_checks import has_nvcc

torch = pytest.importorskip("torch")


HAS_CLANG = bool(shutil.which("clang++-22") or os.access(amd.CLANG_FALLBACK, os.X_OK))
NEEDS = {"sm_90a": (has_nvcc(), "nvcc")}
NEEDS.update({t: (HAS_CLANG, "clang++-22") for t in ("gfx1100", "gfx1201", "gfx942", "gfx950")})
pytestmark = pytest.mark.tier1


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16)))
def dropout(x: hk.Tensor[hk.fp32], seed: int, o: hk.Tensor[hk.fp32], *,
            p: hk.Scalar[hk.fp32] = 0.5):
    r, c = hk.arch.block_idx.y, hk.arch.block_idx.x
    idx = hk.tile_coord(0, 0, r, c)
    rows = hk.iota(hk.RT(hk.i32, 16, 64), "row") + r * 16
    cols = hk.iota(hk.RT(hk.i32, 16, 64), "col") + c * 64
    keep = hk.rand(seed, rows * x.cols + cols) > p
    xs = x[idx].load(hk.RT(hk.fp32, 16, 64))
    o[idx] = hk.where(keep, xs / (1 - p), 0.0)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16), p.x.batch), warps=4)
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], eps: float,
            tiles: int):
    b, r, warp, warps = hk.arch.block_idx.y, hk.arch.block_idx.x, hk.arch.warp_id, \
        hk.arch.num_warps
    t = hk.RT(hk.bf16, 16, 64)
    squares = hk.zeros(hk.RV(hk.fp32, 16))
    for c in range(warp, tiles, warps):                # a runtime scalar as a loop bound
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        squares += hk.row_sum(xs * xs)
    inv_rms = hk.rsqrt(hk.group.sum(squares) / hk.to_float(x.cols) + eps)
    for c in range(warp, tiles, warps):
        xs = x[hk.tile_coord(b, 0, r, c)].load(t).to(hk.fp32)
        ws = w[hk.tile_coord(0, 0, 0, c)].load(hk.RV(hk.bf16, 64, "col")).to(hk.fp32)
        o[hk.tile_coord(b, 0, r, c)] = (xs * inv_rms * ws).to(hk.bf16)


@pytest.mark.parametrize("kernel", [dropout, rmsnorm], ids=["dropout", "rmsnorm"])
@pytest.mark.parametrize("target", sorted(NEEDS))
def test_compiles_for_every_target_without_spills(kernel, target, tmp_path):
    have, tool = NEEDS[target]
    if not have:
        pytest.skip(f"tier 1: needs {tool}")
    built = build_mod.build_trace(kernel.trace(target), cache=BuildCache(tmp_path))
    assert not built.resources.spills, built.report()
    assert "float v" in built.entry.source_path.read_text()


@pytest.mark.skipif(not has_nvcc(), reason="tier 1: needs nvcc")
def test_sm_90a_calls_with_new_values_build_once(monkeypatch, tmp_path):
    log, builds = [], []

    class Loaded:
        def bind(self, grid, pointers):
            return lambda: log.append(grid)
    loader = types.ModuleType("fake_scalar_build_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)
    loader.load = lambda built, index: Loaded()
    real = build_mod.build_trace
    monkeypatch.setitem(sys.modules, "fake_scalar_build_loader", loader)
    monkeypatch.setitem(gpu.LOADERS, "nvidia", "fake_scalar_build_loader")
    monkeypatch.setattr(build_mod, "build_trace",
                        lambda trace: builds.append(real(trace, cache=BuildCache(tmp_path))))
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "nvidia", "9.0", "fake H200"))
    monkeypatch.setattr(gpu, "_LOADED", {})
    dropout._traces.clear()
    call = gpu.GpuCall(dropout, "sm_90a", {})
    x = torch.rand(1, 1, 32, 128)
    o = torch.zeros_like(x)
    for seed, p in ((1, 0.5), (2, 0.25), (3, 0.75)):
        call.fast((x, o, seed, p))
    assert len(log) == 3 and len(builds) == 1 and not builds[0].cache_hit
    assert len(dropout._traces) == 1

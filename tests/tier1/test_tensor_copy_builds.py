"""TMA copies on sm_90a with the real compiler (no GPU needed): the host's box rule
(`Target.tensor_box`) is the header's (`kt::tensor_box`), a build with tensor maps issues
`cp.async.bulk.tensor` and waits on mbarriers where the build without them issues cp.async and
waits on the group counter, and every example kernel whose group loads are TMA copies also
compiles without spills when traced without them (the build a call whose tensors have no map
runs)."""
from __future__ import annotations

import subprocess

import pytest

from examples_index import load
from ktile import targets
from test_hopper_headers import FLAGS, NVCC, example_kernels, nvcc_build

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(NVCC is None, reason="tier 1: nvcc not found")]

SM90A = targets.get("sm_90a")
CPP_TYPES = {1: "int8_t", 2: "kt::bf16", 4: "float"}
SHAPES = [(16, 64, 2), (16, 4096, 2), (32, 128, 2), (16, 32, 2), (16, 16, 2), (16, 48, 2),
          (16, 80, 2), (512, 64, 2), (272, 64, 2), (16, 32, 4), (16, 16, 4), (32, 128, 1),
          (16, 64, 1), (16, 32, 1)]


def test_the_host_and_the_header_agree_on_every_box(tmp_path):
    lines = ['#include "ktile/nvidia/hopper/kernel.hpp"']
    for rows, cols, size in SHAPES:
        box = SM90A.tensor_box(rows, cols, size)
        t = f"kt::tensor_box<{CPP_TYPES[size]}, {rows}, {cols}>"
        if box is None:
            lines.append(f"static_assert(!{t}::usable, \"{rows}x{cols}x{size}\");")
        else:
            lines.append(f"static_assert({t}::usable && {t}::cols == {box.cols} && "
                         f"{t}::rows == {box.rows} && {t}::swizzle_bytes == {box.swizzle_bytes}, "
                         f"\"{rows}x{cols}x{size}\");")
    lines.append('extern "C" __global__ void boxes() {}')
    build = nvcc_build("\n".join(lines) + "\n", tmp_path, "boxes")
    assert build.returncode == 0, build.log[-3000:]
    # the rule itself: one swizzle atom wide, at most 256 rows dividing the tile's
    assert SM90A.tensor_box(16, 4096, 2).cols == 64 and SM90A.tensor_box(272, 64, 2).rows == 136
    assert SM90A.tensor_box(16, 48, 2) is None and SM90A.tensor_box(16, 16, 4).swizzle_bytes == 64


def ptx(source: str, folder, name: str) -> str:
    cu, out = folder / f"{name}.cu", folder / f"{name}.ptx"
    cu.write_text(source)
    flags = [f for f in FLAGS if f not in ("-cubin", "-Xptxas", "-v")]
    result = subprocess.run([NVCC, *flags, "-ptx", str(cu), "-o", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return out.read_text()


def test_a_tma_build_copies_by_tensor_and_waits_on_mbarriers(tmp_path):
    gemm = load("04_gemm").gemm_wgmma
    with_maps = ptx(gemm.trace_copies("sm_90a", True, {}).source(), tmp_path, "tma")
    without = ptx(gemm.trace_copies("sm_90a", False, {}).source(), tmp_path, "cp_async")
    assert "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
        in with_maps
    assert "mbarrier.try_wait.parity" in with_maps and "mbarrier.arrive.expect_tx" in with_maps
    assert "cp.async.cg" not in with_maps and "cp.async.wait_group" not in with_maps
    assert "cp.async.cg" in without and "cp.async.wait_group" in without
    assert "cp.async.bulk" not in without and "mbarrier" not in without


def tma_kernels() -> list[tuple[str, int]]:
    out = []
    for name, index in example_kernels():
        kernel, constants = load(name).KERNELS[index]
        if "kt_map0" in kernel.trace("sm_90a", **constants).source():
            out.append((name, index))
    return out


@pytest.mark.parametrize("name,index", tma_kernels(), ids=[f"{n}[{i}]" for n, i in tma_kernels()])
def test_the_build_without_tma_copies_compiles_without_spills(tmp_path, name, index):
    kernel, constants = load(name).KERNELS[index]
    build = nvcc_build(kernel.trace_copies("sm_90a", False, constants).source(), tmp_path, name)
    assert build.returncode == 0, build.log[-3000:]
    res = build.functions[kernel.name]
    assert (res.spill_stores, res.spill_loads, res.stack_frame) == (0, 0, 0), res

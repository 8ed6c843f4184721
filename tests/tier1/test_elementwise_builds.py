"""Every elementwise function of the table (ktile/ir/elementwise.py) compiles for all five
targets: a kernel applying each one to a tile and storing it, built through the real toolchain
(clang-22 for AMD, nvcc for sm_90a) and its resource gate. The kernel is written from the
table, so a new row is compiled here with no edit."""
import importlib.util

import pytest

from ktile import targets
from ktile.ir import elementwise
from ktile.runtime.build import build_trace
from ktile.runtime.cache import BuildCache
from ktile.runtime.cocheck.llvm import find_tool
from toolchain_checks import has_nvcc

FLOAT_TILE_ROWS = [f for f in elementwise.UNARY if f.hk is not None]


def _toolchain_missing(target: str) -> str | None:
    if target == "sm_90a":
        return None if has_nvcc() else "nvcc"
    return None if find_tool("clang++") else "clang++-22"


def kernel_source(rows) -> str:
    """A kernel storing f(a) at row tile k for the k-th of the unary `rows`."""
    lines = ["import ktile as hk", "", "",
             f"@hk.kernel(grid=lambda p: (1, 1, 1))",
             "def every_function(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):",
             "    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16))"]
    for k, row in enumerate(rows):
        lines.append(f"    o[hk.tile_coord(0, 0, {k}, 0)] = hk.{row.hk}(a)")
    lines.append(f"    o[hk.tile_coord(0, 0, {len(rows)}, 0)] = "
                 "hk.maximum(a, 0.5) + hk.minimum(a, -0.5)")
    return "\n".join(lines) + "\n"


def _kernel(folder, rows):
    path = folder / "every_function.py"
    path.write_text(kernel_source(rows))
    spec = importlib.util.spec_from_file_location("every_function", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.every_function


@pytest.fixture(scope="module")
def every_function(tmp_path_factory):
    return _kernel(tmp_path_factory.mktemp("elementwise"), FLOAT_TILE_ROWS)


def _builds(kernel, target, folder, rows):
    missing = _toolchain_missing(target)
    if missing:
        pytest.skip(f"tier 1: needs {missing}")
    source = kernel.source(target=target)
    for row in rows:
        assert f"{row.cpp}(" in source, row.cpp
    built = build_trace(kernel.trace(target), cache=BuildCache(folder))
    assert built.code_path.exists()


@pytest.mark.tier1
@pytest.mark.parametrize("target", [t for t in targets.NAMES if t != "sm_90a"])
def test_every_function_compiles_for_each_amd_target(every_function, target, tmp_path):
    _builds(every_function, target, tmp_path, FLOAT_TILE_ROWS)


@pytest.mark.tier1
def test_every_function_compiles_for_sm_90a(every_function, tmp_path):
    """sin and cos included: they are common/math_double.hpp's, which keep no stack (CUDA's
    sinf / cosf keep a local array, which the stack gate refuses)."""
    _builds(every_function, "sm_90a", tmp_path, FLOAT_TILE_ROWS)

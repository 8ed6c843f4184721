"""docs/patterns.md's kernels (examples/patterns/) compile for every target with zero spills:
clang++-22 for gfx1100, gfx1201, gfx942 and gfx950 with the cocheck gate (no spill, no scratch,
waits and LDS races checked, no device-library call), nvcc for sm_90a with ptxas's spill and
stack counts. Built once per module, two at a time."""
import functools
import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytestmark = pytest.mark.tier1

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "patterns"
AMD_TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950")


@functools.lru_cache(maxsize=None)
def load(name: str):
    spec = importlib.util.spec_from_file_location(f"pattern_{name}", FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernels() -> list[tuple[str, int]]:
    """(pattern file, index in its KERNELS) of every kernel the page shows."""
    names = sorted(p.stem for p in FOLDER.glob("*.py"))
    return [(name, i) for name in names for i in range(len(load(name).KERNELS))]


def _amd():
    amd = pytest.importorskip("test_amd_headers")
    if amd.MISSING:
        pytest.skip(f"tier 1: needs Debian's LLVM 22 (missing {', '.join(amd.MISSING)})")
    return amd


def _hopper():
    hopper = pytest.importorskip("test_hopper_headers")
    if hopper.NVCC is None:
        pytest.skip("tier 1: nvcc not found")
    return hopper


@pytest.fixture(scope="module")
def amd_builds(tmp_path_factory) -> dict:
    """(pattern, index, target) -> (kernel name, build)."""
    amd = _amd()
    folder = tmp_path_factory.mktemp("pattern_amd")

    def build(key):
        name, index, target = key
        kernel, constants = load(name).KERNELS[index]
        source = kernel.trace(target, **constants).source()
        return key, (kernel.name, amd.amd_build(source, folder, f"{name}_{index}", target))
    jobs = [(name, index, target) for name, index in kernels() for target in AMD_TARGETS]
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, jobs))


@pytest.fixture(scope="module")
def hopper_builds(tmp_path_factory) -> dict:
    """(pattern, index) -> (kernel name, build)."""
    hopper = _hopper()
    folder = tmp_path_factory.mktemp("pattern_sm90a")

    def build(key):
        name, index = key
        kernel, constants = load(name).KERNELS[index]
        source = kernel.trace("sm_90a", **constants).source()
        return key, (kernel.name, hopper.nvcc_build(source, folder, f"{name}_{index}"))
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, kernels()))


@pytest.mark.parametrize("target", AMD_TARGETS)
@pytest.mark.parametrize("name,index", kernels(), ids=[f"{n}[{i}]" for n, i in kernels()])
def test_amd_build_is_clean(amd_builds, name, index, target):
    entry, build = amd_builds[(name, index, target)]
    _amd().assert_clean(build, entry, f"{name} kernel {index} on {target}")


@pytest.mark.parametrize("name,index", kernels(), ids=[f"{n}[{i}]" for n, i in kernels()])
def test_sm90a_build_has_no_spills(hopper_builds, name, index):
    entry, build = hopper_builds[(name, index)]
    assert build.returncode == 0, f"nvcc failed for {name}:\n{build.log[-4000:]}"
    res = build.functions[entry]
    assert (res.stack_frame, res.spill_stores, res.spill_loads) == (0, 0, 0), res

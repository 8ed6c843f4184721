"""docs/patterns.md's kernels (examples/patterns/) compile for every target with zero spills:
clang++-22 for gfx1100, gfx1201, gfx942 and gfx950 with the cocheck gate (no spill, no scratch,
waits and LDS races checked, no device-library call), nvcc for sm_90a with ptxas's spill and
stack counts. Built once per module, two at a time."""
import functools
import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import build_gates

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


@pytest.fixture(scope="module")
def amd_builds(tmp_path_factory) -> dict:
    """(pattern, index, target) -> (kernel name, build)."""
    amd = build_gates.amd()
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
    hopper = build_gates.hopper()
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
    build_gates.amd().assert_clean(build, entry, f"{name} kernel {index} on {target}")


@pytest.mark.parametrize("name,index", kernels(), ids=[f"{n}[{i}]" for n, i in kernels()])
def test_sm90a_build_has_no_spills(hopper_builds, name, index):
    entry, build = hopper_builds[(name, index)]
    build_gates.assert_sm90a_clean(build, entry)

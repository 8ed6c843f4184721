"""Every kernel of the op library at its shipped configurations (`ktile.ops.all_kernels()`: each
route of each op's routing table, for each target the route is for) compiles with zero spills:
clang++-22 for gfx1100, gfx1201, gfx942 and gfx950 with the cocheck gate (no spill, no scratch,
waits and LDS races checked), nvcc for sm_90a with ptxas's spill and stack counts. An op added to
ktile/ops/ (a folder with op.py) is checked here with no change to this file.

Bounded (< 3 min on 2 cores for the norms): in each op's first dtype, every route for sm_90a
(the GPU the library ships for first) and the first and last route (the narrowest and the
widest, where spills would show) for each AMD target; the other dtypes at the first route for
sm_90a and gfx1100 (a dtype changes the element type of the same code). Built once per
module, two at a time."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from ktile.ops import all_kernels, all_ops

pytestmark = pytest.mark.tier1

AMD_TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950")


def shipped() -> list:
    """The bounded selection the docstring describes, in a stable order."""
    chosen = []
    for op in all_ops():
        routes = [*op.table.routes, *op.also]
        ends = {id(op.table.routes[0]), id(op.table.routes[-1]), *map(id, op.also)}
        for k in all_kernels_of(op):
            route = next(r for r in routes if op.kernel(r, k.dtype) is k.kernel
                         and r.constants == k.constants)
            first_dtype = k.dtype == op.dtypes[0]
            if k.target == "sm_90a" and first_dtype:
                chosen.append(k)
            elif first_dtype and id(route) in ends:
                chosen.append(k)
            elif k.target in ("sm_90a", "gfx1100") and id(route) in ends - {id(routes[-1])}:
                chosen.append(k)
    return list({k.id: k for k in chosen}.values())


def all_kernels_of(op):
    return [k for k in all_kernels() if k.op == op.name]


KERNELS = shipped()


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


def _file_name(k) -> str:
    return "".join(c if c.isalnum() else "_" for c in k.id)


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict:
    """ShippedKernel id -> build."""
    folder = tmp_path_factory.mktemp("ops")

    def build(k):
        source = k.kernel.trace(k.target, **k.constants).source()
        if k.target == "sm_90a":
            return k.id, _hopper().nvcc_build(source, folder, _file_name(k))
        return k.id, _amd().amd_build(source, folder, _file_name(k), k.target)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, KERNELS))


def test_every_op_has_kernels_for_every_target():
    assert {k.target for k in KERNELS} == {*AMD_TARGETS, "sm_90a"}
    assert {k.op for k in KERNELS} >= {"rms_norm"}


@pytest.mark.parametrize("k", [k for k in KERNELS if k.target in AMD_TARGETS],
                         ids=lambda k: k.id)
def test_amd_build_is_clean(builds, k):
    _amd().assert_clean(builds[k.id], k.kernel.name, k.id)


@pytest.mark.parametrize("k", [k for k in KERNELS if k.target == "sm_90a"], ids=lambda k: k.id)
def test_sm90a_build_has_no_spills(builds, k):
    build = builds[k.id]
    assert build.returncode == 0, f"nvcc failed for {k.id}:\n{build.log[-4000:]}"
    res = build.functions[k.kernel.name]
    assert (res.stack_frame, res.spill_stores, res.spill_loads) == (0, 0, 0), res

"""The kernels of the op library at their shipped configurations (`ktile.ops.all_kernels()`:
the routes of each op's routing table, for each target a route is for) compile with zero
spills: clang++-22 for gfx1100, gfx1201, gfx942 and gfx950 with the cocheck gate (no spill, no
scratch, waits and LDS races checked), nvcc for sm_90a with ptxas's spill and stack counts. An
op added to ktile/ops/ (a folder with op.py) is checked here with no change to this file.

CI's selection (< 90 s on 2 cores), in each op's first dtype: for sm_90a and gfx950 the
narrowest and the widest route for the target (where spills would show), for gfx1100 the
narrowest; an op's `also` kernels (a final reduction) at each of those targets. gfx1201 shares
gfx1100's routes and wave size, gfx942 gfx950's: they are built in the full sweep.
Every route of every op traces for its targets with no budget error or warning in tier 0
(tests/tier0/test_ops_routes.py), the cheap guard for the rest. KTILE_OPS_FULL_BUILD=1
(ktile/config.py) builds everything `all_kernels()` lists instead: every route, target and
dtype (minutes: a developer's sweep before changing a table or a kernel). Built once per module,
two at a time."""
from concurrent.futures import ThreadPoolExecutor

import pytest

import build_gates

from ktile import config
from ktile.ops import all_kernels, all_ops

pytestmark = pytest.mark.tier1

AMD_TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950")
BOTH_ENDS = ("sm_90a", "gfx950")     # the targets built at their narrowest and widest route
CI_TARGETS = ("gfx1100", "gfx950", "sm_90a")


def ends(routes: list, target: str) -> list:
    """The narrowest and the widest of `routes` for `target` (first and last: tables list
    routes narrowest first), or the narrowest alone where `target` is not in BOTH_ENDS."""
    mine = [r for r in routes if r.targets is None or target in r.targets]
    if not mine:
        return []
    return [mine[0], mine[-1]] if target in BOTH_ENDS else [mine[0]]


def shipped() -> list:
    """CI's bounded selection the docstring describes (all of `all_kernels()` under
    KTILE_OPS_FULL_BUILD=1), in a stable order, each kernel once."""
    everything = list(all_kernels())
    if config.OPS_FULL_BUILD.get() == "1":
        return everything
    chosen = {}
    for op in all_ops():
        for target in CI_TARGETS:
            routes = [*ends(op.table.routes, target), *ends(list(op.also), target)[:1]]
            for route in routes:
                for k in everything:
                    if (k.op == op.name and k.target == target and k.route.kernel == route.kernel
                            and k.constants == route.constants
                            and k.dtype == op.dtypes[0]):
                        chosen.setdefault(k.id, k)
    return list(chosen.values())


KERNELS = shipped()


def _file_name(k) -> str:
    return "".join(c if c.isalnum() else "_" for c in k.id)


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict:
    """ShippedKernel id -> build."""
    folder = tmp_path_factory.mktemp("ops")

    def build(k):
        source = k.kernel.trace(k.target, **k.constants).source()
        if k.target == "sm_90a":
            return k.id, build_gates.hopper().nvcc_build(source, folder, _file_name(k))
        return k.id, build_gates.amd().amd_build(source, folder, _file_name(k), k.target)
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, KERNELS))


def test_every_op_has_kernels_for_every_target():
    assert {k.target for k in KERNELS} >= set(CI_TARGETS)
    assert {k.op for k in KERNELS} >= {"rms_norm"}


@pytest.mark.parametrize("k", [k for k in KERNELS if k.target in AMD_TARGETS],
                         ids=lambda k: k.id)
def test_amd_build_is_clean(builds, k):
    build_gates.amd().assert_clean(builds[k.id], k.kernel.name, k.id)


@pytest.mark.parametrize("k", [k for k in KERNELS if k.target == "sm_90a"], ids=lambda k: k.id)
def test_sm90a_build_has_no_spills(builds, k):
    build = builds[k.id]
    build_gates.assert_sm90a_clean(build, k.kernel.name)

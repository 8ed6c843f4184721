"""The trace-time register estimate (the budgets pass, kt.vgpr_estimate) against ptxas's count
(`nvcc -Xptxas -v`) for every example kernel on sm_90a (issue #10): the estimate is within
MARGIN of the registers the build reports.

The model is the target table's (ktile/targets/sm_90a.py): live tiles and vectors per lane,
vectors replicated as the Hopper layouts hold them, the registers a global load holds while it
runs, and a fixed overhead, fitted to these kernels.
"""
import pytest

from examples_index import EXAMPLE_NAMES, load
from ktile.errors import KernelError
from ktile.ir.query import kernel_func
from ktile.runtime.toolchains import nvcc

MARGIN = 0.45   # |estimate - ptxas| at most this share of ptxas's count (the worst today:
                # rmsnorm, 66 estimated for 112, whose loop ptxas unrolls; column_sum, 96 for 72)


def _has_nvcc() -> bool:
    try:
        nvcc.find_nvcc()
    except KernelError:
        return False
    return True


pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(not _has_nvcc(), reason="tier 1: needs nvcc (set KTILE_NVCC)")]

KERNELS = [(name, kernel, constants) for name in EXAMPLE_NAMES
           for kernel, constants in load(name).KERNELS]
# Known gap, tracked: since gemm_wgmma keeps its wgmma in flight with both operands in shared
# memory (84ae80c), ptxas allocates 140 registers where the estimate (its 16 x 128 fp32
# accumulator, 64, and the overhead) gives 72; ktile.ops.matmul's wgmma_nt, the same tile
# shape, builds at 112. The cause is not found yet; strict, so a fix shows.
KNOWN_GAPS = {"04_gemm:gemm_wgmma": "estimate 72 vs ptxas 140 since the in-flight wgmma"}
KERNELS = [pytest.param(*k, marks=pytest.mark.xfail(strict=True,
                                                     reason=KNOWN_GAPS[f"{k[0]}:{k[1].name}"]))
           if f"{k[0]}:{k[1].name}" in KNOWN_GAPS else k for k in KERNELS]


@pytest.mark.parametrize("name,kernel,constants", KERNELS,
                         ids=[f"{v[0]}:{v[1].name}" for v in
                              (getattr(k, "values", k) for k in KERNELS)])
def test_the_estimate_is_near_ptxas(name, kernel, constants):
    trace = kernel.trace("sm_90a", **constants)
    estimate = kernel_func(trace.module).attributes["kt.vgpr_estimate"].value.data
    registers = kernel.build("sm_90a", **constants).resources.registers
    assert abs(estimate - registers) <= MARGIN * registers, \
        f"estimated {estimate} registers, ptxas allocates {registers}"

"""Tier 1: no sm_90a decode kernel reads a wgmma accumulator's registers while its wgmma may
still write them. PTX leaves that to the program ("accessing the accumulator ... before a
wgmma.wait_group that waits on it is undefined") and ptxas does not warn: on the H200
`skinny_wgmma_nt` stored stale rows 16 and up (warps 1-3, which issue no TMA and reach the
store first) because nvcc bit-cast the accumulator for the store at the K loop's exit, above
the drain the waits pass had merged into `hk.wait_for(*sa, *sb)`. The waits pass now binds
such an accumulator after that wait (passes/waits_mma.py, `unbound`) and `kt::bind` binds
fp32 in place, so the PTX has no access to those registers between a `wgmma.mma_async` and
the next `wgmma.wait_group 0` (in text order: the loop's body and its exit).

CI builds the routed constants (PTX only, ~10 s on 2 busy cores); KTILE_OPS_FULL_BUILD=1 every
pinnable set of benchmarks/gemv_sweep.py."""
import os
import re
import subprocess

import pytest

from ktile.ops import _library as lib
from ktile.ops.matmul import config
from ktile.ops.matmul.op import OP
from test_hopper_headers import FLAGS, NVCC

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(NVCC is None, reason="tier 1: nvcc not found")]

FULL = pytest.mark.skipif(not os.environ.get("KTILE_OPS_FULL_BUILD"),
                          reason="every pinnable set: KTILE_OPS_FULL_BUILD=1")
ROUTED = [(config.SKINNY_WGMMA_ROUTES[0].kernel, config.SKINNY_WGMMA_ROUTES[0].constants)]
PINNABLE = [(config.WGMMA_GEMV_ROUTES[0].kernel, config.WGMMA_GEMV_ROUTES[0].constants),
            ("skinny_wgmma_nt", {"BN": 128, "BK": 64, "STAGES": 4}),
            ("skinny_wgmma_nt", {"BN": 64, "BK": 64, "STAGES": 4}),
            ("skinny_wgmma_nt", {"BN": 128, "BK": 64, "STAGES": 4, "A_REGS": 1}),
            ("skinny_wgmma_nt", {"BN": 128, "BK": 64, "STAGES": 4, "IN_FLIGHT": 0}),
            ("wgmma_gemv_nt", {"BN": 32, "BK": 128, "STAGES": 8}),
            ("wgmma_gemv_nt", {"BN": 32, "BK": 128, "STAGES": 8, "A_REGS": 1}),
            ("wgmma_gemv_nt", {"BN": 64, "BK": 128, "STAGES": 4}),
            ("swap_gemv_nt", {"MN": 16, "BK": 128, "STAGES": 6}),
            ("swap_gemv_nt", {"MN": 32, "BK": 128, "STAGES": 6})]


def unwaited_accesses(ptx: str) -> list[str]:
    """PTX lines naming a register of a wgmma's accumulator after a `wgmma.mma_async` and
    before the next `wgmma.wait_group 0`, in text order (other wgmmas excepted)."""
    registers: set[str] = set()
    flying, found = False, []
    for line in ptx.splitlines():
        if "wgmma.mma_async" in line:
            registers |= set(re.findall(r"%f\d+\b", line.split("}")[0]))
            flying = True
        elif re.search(r"wgmma\.wait_group\.sync\.aligned 0;", line):
            flying = False
        elif flying and registers & set(re.findall(r"%f\d+\b", line)):
            found.append(line.strip())
    return found


def ptx_of(kernel: str, constants: dict, folder) -> str:
    route = lib.Route(kernel, constants, targets=config.SM90)
    source = OP.kernel(route, "bf16").trace("sm_90a", **constants).source()
    cu, ptx = folder / "k.cu", folder / "k.ptx"
    cu.write_text(source)
    flags = [f for f in FLAGS if f not in ("-cubin", "-Xptxas", "-v")]
    done = subprocess.run([NVCC, *flags, "-ptx", str(cu), "-o", str(ptx)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return ptx.read_text()


def test_the_checker_sees_a_read_before_the_drain():
    ptx = ("wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%f1, %f2}, %rd1, %rd2;\n"
           "mov.b32 %r7, %f2;\nwgmma.wait_group.sync.aligned 0;\nmov.b32 %r8, %f1;\n")
    assert unwaited_accesses(ptx) == ["mov.b32 %r7, %f2;"]


@pytest.mark.parametrize("kernel,constants",
                         ROUTED + [pytest.param(k, c, marks=FULL) for k, c in PINNABLE],
                         ids=str)
def test_no_accumulator_access_while_its_wgmma_is_in_flight(kernel, constants, tmp_path):
    ptx = ptx_of(kernel, constants, tmp_path)
    assert "wgmma.mma_async" in ptx
    assert unwaited_accesses(ptx) == []

"""Tier 1 builds of `acc += a @ s` (B held K×N in shared memory) on sm_90a: the small kernel of
tests/kn_kernels.py (two of its shapes; all with KTILE_OPS_FULL_BUILD=1) compiles with no
spill and no wgmma serialized by ptxas, each of its wgmmas takes A from registers and B by descriptor with imm-trans-b 1 (B
N-major), at the widths that cover N (K/16 steps of them)."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

import build_gates
from ktile import config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from kn_kernels import SHAPES, rows_times_kn  # noqa: E402

pytestmark = pytest.mark.tier1

# CI builds two (several 128-byte column blocks, and 64-byte rows); all with
# KTILE_OPS_FULL_BUILD=1
BUILT = SHAPES if config.OPS_FULL_BUILD.get() == "1" else [("fp16", 64, 128), ("bf16", 48, 32)]

WIDTHS = (256, 192, 128, 64, 32, 16)


def covering(n: int) -> list[int]:
    """The widths mma_shared_kn.hpp issues for N columns, widest first."""
    out = []
    while n:
        out.append(next(w for w in WIDTHS if w <= n))
        n -= out[-1]
    return out


@pytest.mark.parametrize("dtype,k,n", BUILT, ids=[f"{d}-{k}x{n}" for d, k, n in BUILT])
def test_a_times_s_builds_clean_as_transposed_b_wgmma(tmp_path, dtype, k, n):
    hopper = build_gates.hopper()
    kernel = rows_times_kn(dtype, k, n)
    cu = tmp_path / "k.cu"
    cu.write_text(kernel.trace("sm_90a").source())
    result = subprocess.run([hopper.NVCC, *hopper.FLAGS, "-keep", "-keep-dir", str(tmp_path),
                             str(cu), "-o", str(tmp_path / "k.cubin")],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    log = result.stdout + result.stderr
    build = hopper.Build(result.returncode, log, hopper.parse_ptxas(log))
    build_gates.assert_sm90a_clean(build, kernel.name)
    assert "C7514" not in log and "C7517" not in log, log[-3000:]
    ptx = next(tmp_path.glob("*.ptx")).read_text()
    ptx_type = {"bf16": "bf16", "fp16": "f16"}[dtype]
    issues = re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.f32\.{ptx_type}\."
                        rf"{ptx_type}\s*\{{[^}}]*\}},\s*\{{[^}}]*\}},\s*%rd\d+,\s*p,\s*"
                        rf"1,\s*1,\s*(\d);", ptx)
    per_op = sorted(covering(n) * (k // 16))     # the instructions of one `a @ s`
    widths = sorted(int(w) for w, _ in issues)
    copies = len(widths) // len(per_op)           # ptxas input may hold the op on several paths
    assert copies >= 1 and widths == sorted(per_op * copies), issues
    assert {t for _, t in issues} == {"1"}, issues

"""What the tier-1 build tests of new kernels share: the toolchain modules (skipping, saying
which tool is missing, where it is not installed) and the sm_90a no-spill assertion. The AMD
gate's assertion is `test_amd_headers.assert_clean`."""
import pytest


def amd():
    """`test_amd_headers` (amd_build, assert_clean), or a skip naming the missing LLVM tools."""
    module = pytest.importorskip("test_amd_headers")
    if module.MISSING:
        pytest.skip(f"tier 1: needs Debian's LLVM 22 (missing {', '.join(module.MISSING)})")
    return module


def hopper():
    """`test_hopper_headers` (nvcc_build), or a skip where no nvcc is found."""
    module = pytest.importorskip("test_hopper_headers")
    if module.NVCC is None:
        pytest.skip("tier 1: nvcc not found")
    return module


def assert_sm90a_clean(build, kernel_name: str) -> None:
    """The nvcc build succeeded and ptxas reports no stack frame and no spills for the kernel."""
    assert build.returncode == 0, build.log[-4000:]
    res = build.functions[kernel_name]
    assert (res.stack_frame, res.spill_stores, res.spill_loads) == (0, 0, 0), res

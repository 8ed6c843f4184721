"""The resource gate on recorded `ptxas -v` output (nvcc 13.0, -arch sm_90a): the parser, the
report, and the refusal of spills and stack frames."""
import pytest

from ktile import targets
from ktile.errors import KernelError, SourceLoc
from ktile.runtime.gates import ResourceReport, resource_gate
from ktile.runtime.toolchains.nvcc import Nvcc
from ktile.runtime.toolchains.ptxas import occupancy, parse_ptxas

RECORDED = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'ok' for 'sm_90a'
ptxas info    : Function properties for ok
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 1 barriers, 4096 bytes smem
ptxas info    : Compile time = 19.166 ms
ptxas info    : Compiling entry function 'local_array' for 'sm_90a'
ptxas info    : Function properties for local_array
    1024 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 1024 bytes cumulative stack size
ptxas info    : Compile time = 72.949 ms
ptxas info    : Compiling entry function 'press' for 'sm_90a'
ptxas info    : Function properties for press
    1072 bytes stack frame, 1068 bytes spill stores, 2104 bytes spill loads
ptxas info    : Used 64 registers, used 0 barriers, 1072 bytes cumulative stack size
ptxas info    : Compile time = 316.131 ms
"""
SM90A = targets.get("sm_90a")


def test_parser_reads_every_entry():
    entries = parse_ptxas(RECORDED)
    assert list(entries) == ["ok", "local_array", "press"]
    ok, local, press = entries["ok"], entries["local_array"], entries["press"]
    assert (ok.registers, ok.shared_static, ok.stack_bytes, ok.spill_stores) == (10, 4096, 0, 0)
    assert (local.registers, local.stack_bytes, local.spill_stores) == (40, 1024, 0)
    assert (press.registers, press.spill_stores, press.spill_loads, press.stack_bytes) == \
        (64, 1068, 2104, 1072)


def test_parser_ignores_non_entry_functions():
    log = ("ptxas info    : Function properties for _Z6helperv\n"
           "    48 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
           "ptxas info    : Function properties for k\n"
           "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
           "ptxas info    : Used 12 registers, used 0 barriers, 48 bytes cumulative stack size\n")
    entries = parse_ptxas(log)
    assert list(entries) == ["k"]
    assert entries["k"].stack_bytes == 48          # the callee's frame counts


def report_of(name: str, warps: int = 4, lds_bytes: int = 0) -> ResourceReport:
    return Nvcc("nvcc").resources(RECORDED, name, SM90A, warps=warps, lds_bytes=lds_bytes)


def test_report_of_a_clean_kernel_passes_the_gate():
    report = report_of("ok", warps=4, lds_bytes=16384)
    assert resource_gate(report) is report
    assert (report.registers, report.shared_static, report.shared_dynamic, report.threads) == \
        (10, 4096, 16384, 128)
    text = report.report()
    assert "10 per thread" in text and "20480 bytes (4096 static + 16384 dynamic)" in text
    assert "occupancy" in text and "warps per multiprocessor" in text


def test_spill_is_refused_with_counts_and_fix():
    report = report_of("press")
    with pytest.raises(KernelError) as info:
        resource_gate(report, SourceLoc("kernels.py", 12))
    message = str(info.value)
    assert info.value.kernel == "press" and info.value.loc == SourceLoc("kernels.py", 12)
    assert "spills registers" in message
    assert "1068 bytes spill stores, 2104 bytes spill loads, 1072 bytes stack frame" in message
    assert "64 registers per thread" in message
    assert "fix: use smaller tiles, keep fewer tiles live" in message and "more warps" in message


def test_stack_frame_without_spill_is_refused():
    with pytest.raises(KernelError, match="uses a stack frame .* 1024 bytes stack frame"):
        resource_gate(report_of("local_array"))


def test_missing_entry_is_an_error_naming_what_was_found():
    with pytest.raises(KernelError, match="no entry function named 'nope' .*ok, local_array"):
        report_of("nope")


@pytest.mark.parametrize("registers, warps, shared, want", [
    (32, 4, 0, (64, "threads")),                # 16 blocks of 4 warps fill the 64 warps
    (128, 4, 0, (16, "registers")),             # 128 regs × 32 lanes = 4096 per warp → 16 warps
    (32, 1, 0, (32, "blocks")),                 # 32 blocks of one warp
    (82, 1, 0, (20, "registers")),              # 2816 per warp: 5 in each 16384-register quarter
    (32, 4, 100 * 1024, (8, "shared memory")),  # two blocks of 100 KiB (+1 KiB each) fit
])
def test_occupancy(registers, warps, shared, want):
    occ = occupancy(registers, warps, shared, targets.get("sm_90a").multiprocessor)
    assert (occ.warps, occ.limited_by) == want and occ.max_warps == 64

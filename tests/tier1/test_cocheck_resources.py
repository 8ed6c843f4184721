"""cocheck's resource gate on kernels compiled by clang++-22 (device only, no ROCm): clean
kernels pass on every AMD target, a spill and a scratch array are refused with their messages,
the limits fail what they should, and the occupancy estimate is LLVM's own."""
import re
import subprocess
from pathlib import Path

import pytest

from ktile.runtime.cocheck import Limits, Options, check_paths
from ktile.runtime.cocheck.llvm import find_tool

DATA = Path(__file__).resolve().parents[1] / "data" / "cocheck"
AMD = ("gfx1100", "gfx1201", "gfx942", "gfx950")
TOOLS = {name: find_tool(name) for name in ("clang++", "llvm-readelf", "llvm-objdump")}
MISSING = [name for name, path in TOOLS.items() if path is None]

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs LLVM 22 "
                                 f"(missing {', '.join(MISSING)}; apt-get install clang-22 "
                                 f"lld-22 llvm-22)")]


def compile_hip(name: str, arch: str, out_dir: Path, *flags: str) -> tuple[Path, str]:
    """(code object, clang's stderr) of tests/data/cocheck/<name>.hip for `arch`."""
    out = out_dir / f"{name}.{arch}.hsaco"
    result = subprocess.run(
        [str(TOOLS["clang++"]), "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only",
         "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O2", "-I", str(DATA), *flags,
         str(DATA / f"{name}.hip"), "-o", str(out)], capture_output=True, text=True, check=True)
    return out, result.stderr


def kernels(code: Path, options: Options = Options()):
    [result] = check_paths([code], options).objects
    assert result.error is None, result.error
    return {k.display.split("(")[0]: k for k in result.functions if k.is_kernel}


@pytest.mark.parametrize("arch", AMD)
def test_clean_kernels_pass_on_every_target(arch, tmp_path):
    code, _ = compile_hip("clean", arch, tmp_path)
    report = check_paths([code])
    assert report.exit_code == 0
    found = kernels(code)
    assert set(found) == {"add", "staged_sum"}
    staged = found["staged_sum"]
    assert staged.findings == []
    assert staged.resources.lds_bytes == 1024
    assert staged.resources.wave_size == (32 if arch in ("gfx1100", "gfx1201") else 64)
    assert staged.instructions_checked > 10
    assert staged.occupancy.waves == staged.occupancy.max_waves


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_a_waited_global_to_lds_copy_passes(arch, tmp_path):
    code, _ = compile_hip("lds_dma", arch, tmp_path)
    assert kernels(code)["copy_through_lds"].findings == []


def test_a_spilling_kernel_is_refused_with_its_counts_and_the_fix(tmp_path):
    code, _ = compile_hip("spill", "gfx1100", tmp_path)
    report = check_paths([code])
    assert report.exit_code == 1
    kernel = kernels(code)["spills"]
    [finding] = kernel.findings
    res = kernel.resources
    assert finding.kind == "spill" and finding.kernel == "spills(float const*, float*, int)"
    assert res.vgpr_spills > 0 and res.scratch_bytes > 0 and res.sgpr_spills > 0
    assert finding.message == (
        f"spills registers on gfx1100: {res.vgpr_spills} VGPRs go through scratch memory "
        f"({res.scratch_bytes} bytes per lane), and {res.sgpr_spills} SGPRs into VGPR lanes or "
        f"scratch memory, at {res.vgprs} VGPRs. Spill traffic is reordered against the "
        f"kernel's hand-placed waits, so a spilling kernel is refused, not run slowly")
    assert finding.fix.startswith("keep fewer values live at once")
    assert "amdgpu_num_vgpr" in finding.fix
    rendered = finding.render(str(code))
    assert rendered.startswith(f"{code}: error: in kernel 'spills(float const*, float*, int)': "
                               f"spills registers")


def test_a_runtime_indexed_array_is_refused_as_scratch_use(tmp_path):
    code, _ = compile_hip("scratch", "gfx942", tmp_path)
    [finding] = kernels(code)["indexed"].findings
    assert finding.kind == "scratch"
    assert finding.message.startswith("uses ") and "bytes of private (scratch) memory per lane " \
        "on gfx942 without spilling: a local array indexed at run time" in finding.message
    assert finding.fix.startswith("index local arrays only with compile-time constants")


@pytest.mark.parametrize("arch", AMD)
def test_the_occupancy_estimate_is_llvms_own(arch, tmp_path):
    code, remarks = compile_hip("occupancy", arch, tmp_path,
                                "-Rpass-analysis=kernel-resource-usage")
    llvm = dict(re.findall(r"Function Name: (\S+).*?Occupancy \[waves/SIMD\]: (\d+)", remarks,
                           flags=re.S))
    [result] = check_paths([code]).objects
    ours = {k.name: k.occupancy.waves for k in result.functions if k.is_kernel}
    assert len(ours) == 5
    assert ours == {name: int(waves) for name, waves in llvm.items()}
    assert len(set(ours.values())) >= 3        # the sizes span several occupancies


def test_limits_fail_with_the_budget_that_would_pass(tmp_path):
    code, _ = compile_hip("occupancy", "gfx1100", tmp_path)
    options = Options(Limits(max_vgprs=128, min_occupancy=12))
    found = kernels(code, options)
    biggest = max(found.values(), key=lambda k: k.resources.vgprs)
    by_kind = {f.kind: f for f in biggest.findings}
    assert set(by_kind) == {"max-vgprs", "min-occupancy"}
    vgprs = biggest.resources.vgprs
    assert by_kind["max-vgprs"].message == (f"uses {vgprs} VGPRs, above the limit of 128 "
                                            f"(--max-vgprs)")
    occ = biggest.occupancy
    assert by_kind["min-occupancy"].message == (
        f"fits {occ.waves} waves per SIMD on gfx1100, below the required 12 (--min-occupancy): "
        f"its {vgprs} VGPRs are allocated as {occ.allocated_vgprs} of the 1536 each SIMD lane "
        f"holds")
    assert by_kind["min-occupancy"].fix == "use at most 120 VGPRs to fit 12 waves per SIMD"
    smallest = min(found.values(), key=lambda k: k.resources.vgprs)
    assert smallest.findings == []
    assert check_paths([code], options).exit_code == 1


def test_the_wave64_occupancy_on_a_wave32_part_halves_the_file(tmp_path):
    code, remarks = compile_hip("occupancy", "gfx1100", tmp_path, "-mwavefrontsize64",
                                "-Rpass-analysis=kernel-resource-usage")
    llvm = dict(re.findall(r"Function Name: (\S+).*?Occupancy \[waves/SIMD\]: (\d+)", remarks,
                           flags=re.S))
    [result] = check_paths([code]).objects
    for kernel in result.functions:
        assert kernel.resources.wave_size == 64
        if not kernel.resources.vgpr_spills:
            assert kernel.occupancy.waves == int(llvm[kernel.name])
            assert kernel.occupancy.file_vgprs == 768

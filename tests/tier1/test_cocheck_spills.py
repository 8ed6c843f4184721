"""cocheck's words for each kind of spill: SGPRs into VGPR lanes alone (no memory traffic,
refused all the same), SGPRs with scratch, VGPRs through scratch. The planted kernel is
hand-written assembly (tests/data/cocheck/spills/, whose metadata says what spilled); the
compiled one shows that clang-22 spills SGPRs the way the planted kernel says."""
import subprocess
from pathlib import Path

import pytest

from ktile.runtime.cocheck import check_paths
from ktile.runtime.cocheck.llvm import find_tool

DATA = Path(__file__).resolve().parents[1] / "data" / "cocheck"
LANES = DATA / "spills" / "sgpr_lanes.gfx1100.s"
TOOLS = {name: find_tool(name) for name in
         ("llvm-mc", "ld.lld", "clang++", "llvm-readelf", "llvm-objdump")}
MISSING = [name for name, path in TOOLS.items() if path is None]

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs LLVM 22 "
                                 f"(missing {', '.join(MISSING)}; apt-get install clang-22 "
                                 f"lld-22 llvm-22)")]


def assemble(source: Path, out_dir: Path) -> Path:
    obj, code = out_dir / f"{source.stem}.o", out_dir / f"{source.stem}.hsaco"
    subprocess.run([str(TOOLS["llvm-mc"]), "-triple", "amdgcn-amd-amdhsa", "-mcpu=gfx1100",
                    "-filetype=obj", "-I", str(DATA), str(source), "-o", str(obj)], check=True)
    subprocess.run([str(TOOLS["ld.lld"]), "-shared", str(obj), "-o", str(code)], check=True)
    return code


def only_finding(code: Path):
    report = check_paths([code])
    [function] = [f for f in report.objects[0].functions if f.is_kernel]
    [finding] = function.findings
    return report, function, finding


def test_sgprs_spilled_into_vgpr_lanes_are_refused_without_a_word_of_scratch(tmp_path):
    report, function, finding = only_finding(assemble(LANES, tmp_path))
    assert report.exit_code == 1 and finding.failing and finding.kind == "spill"
    assert function.resources.scratch_bytes == 0 and function.resources.vgpr_spills == 0
    assert finding.message == (
        "spills 3 SGPRs into VGPR lanes on gfx1100 (v_writelane / v_readlane; no scratch "
        "memory) at 106 SGPRs: the kernel keeps more scalar values live than its SGPRs hold. "
        "No memory traffic, so its waits are not at stake, but every spill is refused (trap "
        "2): the compiler adds a v_writelane / v_readlane per spill and reload, and a VGPR to "
        "hold the lanes")
    assert finding.fix == ("keep fewer scalar values live at once: fewer uniform values (tile "
                           "coordinates, strides, bounds, buffer descriptors) held across the "
                           "loop, or smaller tiles, whose unrolled code holds fewer of them")
    assert finding.details == {"vgpr_spills": 0, "sgpr_spills": 3, "scratch_bytes": 0}


def test_sgprs_spilled_with_scratch_in_use_name_both_places(tmp_path):
    source = tmp_path / "sgpr_scratch.gfx1100.s"
    source.write_text(LANES.read_text().replace(".private_segment_fixed_size: 0",
                                                ".private_segment_fixed_size: 16"))
    _, _, finding = only_finding(assemble(source, tmp_path))
    assert finding.kind == "spill"
    assert finding.message.startswith(
        "spills registers on gfx1100: 3 SGPRs into VGPR lanes or scratch memory (16 bytes of "
        "scratch per lane) at 8 VGPRs. Spill traffic is reordered against")
    assert finding.fix.startswith("keep fewer scalar values live at once")


def test_vgpr_spills_go_through_scratch_and_sgprs_are_not_said_to(tmp_path):
    source = tmp_path / "vgpr_scratch.gfx1100.s"
    source.write_text(LANES.read_text().replace(".private_segment_fixed_size: 0",
                                                ".private_segment_fixed_size: 48")
                      .replace(".vgpr_spill_count: 0", ".vgpr_spill_count: 12"))
    _, _, finding = only_finding(assemble(source, tmp_path))
    assert finding.message.startswith(
        "spills registers on gfx1100: 12 VGPRs go through scratch memory (48 bytes per lane), "
        "and 3 SGPRs into VGPR lanes or scratch memory, at 8 VGPRs.")
    assert finding.fix.startswith("keep fewer values live at once")


def test_clang_spills_sgprs_into_vgpr_lanes_as_planted(tmp_path):
    code = tmp_path / "sgpr_spill.hsaco"
    subprocess.run([str(TOOLS["clang++"]), "-x", "hip", "--offload-arch=gfx1100",
                    "--cuda-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib",
                    "-O2", "-I", str(DATA), str(DATA / "sgpr_spill.hip"), "-o", str(code)],
                   check=True, capture_output=True)
    _, function, finding = only_finding(code)
    res = function.resources
    assert (res.vgpr_spills, res.scratch_bytes) == (0, 0) and res.sgpr_spills > 0
    assert finding.message.startswith(f"spills {res.sgpr_spills} SGPRs into VGPR lanes on "
                                      f"gfx1100 (v_writelane / v_readlane; no scratch memory)")

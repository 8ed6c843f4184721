"""`ktile cocheck` from the command line: exit statuses, text and JSON reports, unusable
inputs, missing tools, offload bundles and HIP host binaries, and both `python -m` forms."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ktile.runtime.cocheck.llvm import find_tool
from ktile.tools import cli

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "cocheck"
TOOLS = {name: find_tool(name) for name in
         ("clang++", "llvm-mc", "ld.lld", "llvm-readelf", "llvm-objdump", "llvm-objcopy")}
MISSING = [name for name, path in TOOLS.items() if path is None]

pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(bool(MISSING), reason=f"tier 1: needs LLVM 22 "
                                 f"(missing {', '.join(MISSING)}; apt-get install clang-22 "
                                 f"lld-22 llvm-22)")]

# clang++ bundles the code objects of several arches (and a HIP host compile's fatbin) with
# clang-offload-bundler, from Debian's clang-tools-22: without it clang++ dies in posix_spawn
needs_bundler = pytest.mark.skipif(
    find_tool("clang-offload-bundler") is None,
    reason="tier 1: needs clang-offload-bundler (apt-get install clang-tools-22)")

# a HIP host compile needs the launch entry points declared; nothing links against them
HOST_DECLARATIONS = """
struct dim3 { unsigned x, y, z; };
typedef struct ihipStream_t* hipStream_t;
extern "C" int __hipPushCallConfiguration(dim3, dim3, unsigned long, hipStream_t);
extern "C" int __hipPopCallConfiguration(dim3*, dim3*, unsigned long*, hipStream_t*);
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, hipStream_t);
"""


def assemble(name: str, tmp_path: Path) -> Path:
    source = DATA / f"{name}.s"
    arch = source.suffixes[-2].lstrip(".")
    obj, code = tmp_path / f"{name}.o", tmp_path / f"{name}.hsaco"
    subprocess.run([str(TOOLS["llvm-mc"]), "-triple", "amdgcn-amd-amdhsa", f"-mcpu={arch}",
                    "-filetype=obj", "-I", str(DATA), str(source), "-o", str(obj)], check=True)
    subprocess.run([str(TOOLS["ld.lld"]), "-shared", str(obj), "-o", str(code)], check=True)
    return code


def clang_hip(tmp_path: Path, out: str, *flags: str, source: Path = DATA / "clean.hip") -> Path:
    subprocess.run([str(TOOLS["clang++"]), "-x", "hip", "-nogpuinc", "-nogpulib", "-O2",
                    "-I", str(DATA), *flags, str(source), "-o", str(tmp_path / out)],
                   check=True)
    return tmp_path / out


def test_clean_exits_0_and_prints_the_report(tmp_path, capsys):
    code = assemble("vmcnt_waited.gfx1100", tmp_path)
    assert cli.main(["cocheck", str(code)]) == 0
    out = capsys.readouterr().out
    assert f"{code}: gfx1100, 1 kernel" in out
    assert "  kernel planted" in out
    assert "resources  8 VGPRs (0 AGPRs), 8 SGPRs, 0 B static LDS" in out
    assert "occupancy  16 of 16 waves per SIMD" in out
    assert "waits      7 instructions checked, no hazards" in out
    assert out.rstrip().endswith(f"{code}: ok")


def test_a_hazard_exits_1_with_the_instruction_the_load_and_the_fix(tmp_path, capsys):
    code = assemble("vmcnt_missing.gfx1100", tmp_path)
    assert cli.main(["cocheck", str(code)]) == 1
    out = capsys.readouterr().out
    assert f"{code}+0x" in out                       # no line tables: the address
    assert "error: in kernel 'planted': `v_add_f32_e32 v2, v1, v1` at 0x" in out
    assert "fix: insert `s_waitcnt vmcnt(0)` before this instruction" in out
    assert out.rstrip().endswith(f"{code}: 1 failing")


def test_json_parses_and_carries_every_field(tmp_path, capsys):
    clean = assemble("split_waited.gfx1201", tmp_path)
    hazard = assemble("split_counters.gfx1201", tmp_path)
    assert cli.main(["cocheck", "--json", str(clean), str(hazard)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["tool"] == "ktile cocheck" and report["exit_code"] == 1 and not report["ok"]
    first, second = report["objects"]
    assert first["input"] == str(clean) and first["ok"] and first["arch"] == "gfx1201"
    [kernel] = second["kernels"]
    assert kernel["name"] == "planted" and kernel["kind"] == "kernel" and not kernel["ok"]
    assert kernel["resources"]["vgprs"] == 8 and kernel["resources"]["wave_size"] == 32
    assert kernel["occupancy"] == {"waves": 16, "max_waves": 16, "allocated_vgprs": 24,
                                   "file_vgprs": 1536}
    [finding] = kernel["findings"]
    assert finding["kind"] == "wait-hazard" and finding["failing"]
    assert finding["instruction"] == "v_add_f32_e32 v4, v1, v1"
    assert finding["registers"] == "v1" and finding["access"] == "reads"
    assert finding["load"]["instruction"] == "global_load_b32 v1, v0, s[2:3]"
    assert finding["counters"] == ["loadcnt"] and finding["wait"] == ["s_wait_loadcnt 0"]
    assert isinstance(finding["address"], int) and finding["source"] is None


@pytest.mark.parametrize("make, says", [
    (lambda p: p / "missing.hsaco", "no such file"),
    (lambda p: p, "not a file"),
    (lambda p: _write(p / "notes.txt", b"hello\n"), "not an AMDGPU code object (not an ELF"),
    (lambda p: Path(os.path.realpath(sys.executable)), "without a .hip_fatbin section"),
])
def test_unusable_input_exits_2_with_what_it_is(make, says, tmp_path, capsys):
    path = make(tmp_path)
    assert cli.main(["cocheck", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: ") and says in err


def test_unusable_input_is_reported_beside_checked_ones(tmp_path, capsys):
    code = assemble("vmcnt_waited.gfx1100", tmp_path)
    assert cli.main(["cocheck", "--json", str(code), str(tmp_path / "gone.hsaco")]) == 2
    report = json.loads(capsys.readouterr().out)
    assert [o["error"] is None for o in report["objects"]] == [True, False]
    assert report["objects"][1]["error"].endswith("gone.hsaco: no such file")


def test_missing_tools_exit_2_naming_the_tool_and_the_package(tmp_path, capsys, monkeypatch):
    code = assemble("vmcnt_waited.gfx1100", tmp_path)
    monkeypatch.setenv("KTILE_LLVM_BIN", str(tmp_path))
    assert cli.main(["cocheck", str(code)]) == 2
    err = capsys.readouterr().err
    assert err == (f"ktile cocheck: error: llvm-readelf not found in KTILE_LLVM_BIN={tmp_path}; "
                   f"install Debian's LLVM 22 (apt-get install -y llvm-22), or point "
                   f"KTILE_LLVM_BIN at a folder holding LLVM 22's tools\n")


def test_mcpu_overrides_the_arch_and_an_unknown_one_is_unusable(tmp_path, capsys):
    code = assemble("vmcnt_waited.gfx1100", tmp_path)
    assert cli.main(["cocheck", "--mcpu", "gfx1101", "--json", str(code)]) == 0
    [result] = json.loads(capsys.readouterr().out)["objects"]
    assert result["arch"] == "gfx1101" and result["kernels"][0]["occupancy"] is None
    assert cli.main(["cocheck", "--mcpu", "sm_90a", str(code)]) == 2
    assert "'sm_90a' is not an AMDGPU arch name" in capsys.readouterr().err


@needs_bundler
def test_an_offload_bundle_is_checked_per_target(tmp_path, capsys):
    bundle = clang_hip(tmp_path, "clean.o", "--offload-arch=gfx1100", "--offload-arch=gfx950",
                       "--cuda-device-only", "-c")
    assert bundle.read_bytes().startswith(b"__CLANG_OFFLOAD_BUNDLE__")
    assert cli.main(["cocheck", "--json", str(bundle)]) == 0
    objects = json.loads(capsys.readouterr().out)["objects"]
    assert [(o["input"], o["arch"]) for o in objects] == [
        (f"{bundle}[gfx1100]", "gfx1100"), (f"{bundle}[gfx950]", "gfx950")]


@needs_bundler
def test_a_hip_host_binary_is_checked_through_its_fatbin(tmp_path, capsys):
    source = tmp_path / "host.hip"
    source.write_text(HOST_DECLARATIONS + (DATA / "clean.hip").read_text())
    host = clang_hip(tmp_path, "host.o", "--offload-arch=gfx942", "-c", source=source)
    assert cli.main(["cocheck", str(host)]) == 0
    out = capsys.readouterr().out
    assert f"{host}[.hip_fatbin][gfx942]: gfx942, 2 kernels" in out


def test_no_subcommand_or_an_unknown_one_prints_usage(capsys):
    assert cli.main([]) == 2
    assert "cocheck" in capsys.readouterr().out
    assert cli.main(["frobnicate"]) == 2
    assert "unknown subcommand 'frobnicate'" in capsys.readouterr().err


@pytest.mark.parametrize("module", [["ktile.tools.cli", "cocheck"], ["ktile.runtime.cocheck"]])
def test_python_dash_m(module, tmp_path):
    code = assemble("smem_out_of_order.gfx1100", tmp_path)
    result = subprocess.run([sys.executable, "-m", *module, "--json", str(code)],
                            capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1, result.stderr
    [finding] = json.loads(result.stdout)["objects"][0]["kernels"][0]["findings"]
    assert finding["wait"] == ["s_waitcnt lgkmcnt(0)"]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path

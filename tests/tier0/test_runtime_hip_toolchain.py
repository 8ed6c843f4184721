"""The AMD (HIP) toolchain driver without a compiler: which compiler it picks, its flags,
clang's errors turned into kernel errors (recorded logs), and cocheck's findings turned into
refusals. The instruction mix is tests/tier0/test_amd_quality_model.py."""
import os
import stat
from pathlib import Path

import pytest

from ktile import config, targets
from ktile.errors import KernelError
from ktile.runtime import build as build_mod
from ktile.runtime.build import BuildLimits, toolchain_for
from ktile.runtime.cache import BuildFailed, CompileResult
from ktile.runtime.cocheck.findings import Finding
from ktile.runtime.cocheck.report import FunctionReport
from ktile.runtime.toolchains import amd

GFX1100 = targets.get("gfx1100")


# ---- which compiler -----------------------------------------------------------------------

def fake_compiler(folder: Path, name: str, version: str) -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{version}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


@pytest.fixture
def no_compilers(monkeypatch, tmp_path):
    """Nothing on PATH, no environment variables, no Debian fallback."""
    for variable in (config.HIPCC, config.CLANG):
        monkeypatch.delenv(variable.name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    (tmp_path / "bin").mkdir()
    monkeypatch.setattr(amd, "CLANG_FALLBACK", str(tmp_path / "no-clang"))
    return tmp_path / "bin"


def test_rocm_hipcc_on_path_wins_over_clang(no_compilers):
    fake_compiler(no_compilers, "clang++-22", "Debian clang version 22.1.8")
    hipcc = fake_compiler(no_compilers, "hipcc", "HIP version: 6.4.43482-0\nAMD clang 19")
    assert amd.find_compiler() == ("hipcc", hipcc)


def test_debian_bookworms_hipcc_5_is_passed_over(no_compilers):
    clang = fake_compiler(no_compilers, "clang++-22", "Debian clang version 22.1.8")
    fake_compiler(no_compilers, "hipcc", "HIP version: 5.2.21153-0\nclang version 15.0.6")
    assert amd.find_compiler() == ("clang", clang)


def test_the_environment_names_the_compiler(no_compilers, monkeypatch):
    fake_compiler(no_compilers, "hipcc", "HIP version: 6.4.43482-0")
    clang = fake_compiler(no_compilers.parent, "my-clang++", "clang version 22.1.8")
    monkeypatch.setenv(config.CLANG.name, clang)
    assert amd.find_compiler() == ("clang", clang)
    old_hipcc = fake_compiler(no_compilers.parent, "old-hipcc", "HIP version: 5.2")
    monkeypatch.setenv(config.HIPCC.name, old_hipcc)     # named, so used as told
    assert amd.find_compiler() == ("hipcc", old_hipcc)


def test_a_named_compiler_that_is_not_there_is_an_error(no_compilers, monkeypatch):
    monkeypatch.setenv(config.CLANG.name, "/nowhere/clang++")
    with pytest.raises(KernelError, match="KTILE_CLANG=/nowhere/clang.. is not an executable"):
        amd.find_compiler()


def test_no_compiler_says_how_to_install_one(no_compilers):
    with pytest.raises(KernelError) as info:
        amd.find_compiler()
    assert "needs ROCm's hipcc or Debian's clang++-22; found neither" in info.value.message
    assert "apt-get install -y clang-22 lld-22 llvm-22" in info.value.hint


def test_the_identity_is_the_compilers_path_and_version(no_compilers):
    clang = fake_compiler(no_compilers, "clang++-22", "Debian clang version 22.1.8")
    chain = amd.AmdToolchain(clang, "clang")
    assert chain.identity == f"clang {os.path.realpath(clang)}\nDebian clang version 22.1.8"
    assert chain.name == "clang++-22"


def test_amd_targets_get_the_amd_driver(monkeypatch):
    monkeypatch.setattr(amd, "find_compiler", lambda: ("clang", "/usr/bin/clang++-22"))
    for arch in ("gfx1100", "gfx1201", "gfx942", "gfx950"):
        assert isinstance(toolchain_for(targets.get(arch)), amd.AmdToolchain)


def test_the_flags_give_one_plain_code_object_per_target():
    chain = amd.AmdToolchain("/usr/bin/clang++-22", "clang")
    assert chain.flags(targets.get("gfx950")) == [
        "-x", "hip", "--offload-arch=gfx950", "--cuda-device-only", "--no-gpu-bundle-output",
        "-nogpuinc", "-nogpulib", "-O3", "-std=c++17"]


# ---- clang's errors, from recorded logs --------------------------------------------------

def failure(tmp_path: Path, log: str) -> BuildFailed:
    source = tmp_path / "kernel.hip"
    source.write_text("// generated\n")
    return BuildFailed(tmp_path, source, CompileResult(["clang++-22"], 1, log))


def error_of(tmp_path: Path, log: str, kernel: str = "add", arch: str = "gfx1100"):
    chain = amd.AmdToolchain("/usr/bin/clang++-22", "clang")
    return chain.error(failure(tmp_path, log), kernel, targets.get(arch),
                       [tmp_path / "include"])


def test_an_error_at_a_kernel_line(tmp_path):
    log = ("/home/me/kernels.py:25:7: error: no member named 'add' in namespace 'kt'\n"
           "   25 |   kt::rt<kt::bf16, 16, 64, kt::row, kt::frag_none> v9; kt::add(v9, v7, v8);\n"
           "      |                                                         ~~~~^\n"
           "1 error generated when compiling for gfx1100.\n")
    error = error_of(tmp_path, log)
    assert str(error.loc) == "/home/me/kernels.py:25" and error.kernel == "add"
    assert error.message == ("clang++-22 rejects the gfx1100 C++ generated for this line:\n  "
                             "/home/me/kernels.py:25:7: error: no member named 'add' in "
                             "namespace 'kt'")
    assert str(tmp_path) in error.hint


def test_a_header_error_instantiated_from_a_kernel_line(tmp_path):
    include = tmp_path / "include"
    log = (f"In file included from {tmp_path}/kernel.hip:3:\n"
           f"{include}/ktile/amd/rdna3/mma.hpp:40:3: error: static assertion failed: kt::mma: "
           f"operand a must carry frag_a\n"
           f"{include}/ktile/amd/rdna3/ops.hpp:12:5: note: in instantiation of function "
           f"template specialization 'kt::mma_AB<...>' requested here\n"
           f"/home/me/gemm.py:31:3: note: in instantiation of function template "
           f"specialization 'kt::ops<...>' requested here\n"
           f"{include}/ktile/amd/rdna3/mma.hpp:40:17: note: expression evaluates to '1 == 0'\n")
    error = error_of(tmp_path, log, "gemm")
    assert str(error.loc) == "/home/me/gemm.py:31"
    assert "operand a must carry frag_a" in error.message


def test_a_header_error_without_a_kernel_line_names_the_headers(tmp_path):
    log = f"{tmp_path}/include/ktile/amd/cdna4/tile.hpp:7:2: error: expected ';'\n"
    error = error_of(tmp_path, log, "gemm", "gfx950")
    assert error.loc is None and "ktile's gfx950 tile headers do not compile" in error.message


def test_a_missing_family_header_says_to_install_the_headers(tmp_path):
    log = (f"{tmp_path}/kernel.hip:3:10: fatal error: 'ktile/amd/rdna4/kernel.hpp' file not "
           f"found\n")
    error = error_of(tmp_path, log, "add", "gfx1201")
    assert error.loc is None and "'ktile/amd/rdna4/kernel.hpp' file not found" in error.message
    assert "check that ktile's gfx1201 headers are installed" in error.hint


def test_a_backend_or_linker_failure_shows_the_log(tmp_path):
    log = ("fatal error: error in backend: Cannot select: intrinsic "
           "%llvm.amdgcn.wmma.f32.16x16x16.bf16\n")
    error = error_of(tmp_path, log, "gemm", "gfx1201")
    assert error.message.startswith("clang++-22 failed for gfx1201 (exit 1): fatal error: "
                                    "error in backend: Cannot select")


def test_command_line_diagnostics_are_not_kernel_lines(tmp_path):
    log = "<command line>:1:9: error: macro name must be an identifier\n"
    assert error_of(tmp_path, log).loc is None


# ---- cocheck's findings as refusals -------------------------------------------------------

def checked(*findings: Finding) -> FunctionReport:
    return FunctionReport("k", "k", True, None, None, 12, list(findings))


def test_a_failing_finding_refuses_with_cocheck_message_and_fix():
    spill = Finding("spill", "k", "spills registers on gfx1100: 40 VGPRs ...", "keep fewer")
    hazard = Finding("wait-hazard", "k", "reads v0 while ...", "insert a wait", address=0x1630)
    with pytest.raises(KernelError) as info:
        amd._refuse_failing(checked(spill, hazard), GFX1100, None, "k")
    assert info.value.message == ("the gfx1100 build is refused by the code-object check "
                                  "(spill): spills registers on gfx1100: 40 VGPRs ...; also: "
                                  "wait-hazard")
    assert info.value.hint == "keep fewer"


def test_warnings_do_not_refuse():
    note = Finding("not-checked", "k", "waits not checked", "keep symbols", failing=False)
    amd._refuse_failing(checked(note), GFX1100, None, "k")


def test_limits_are_false_when_unset_and_refused_by_a_log_reading_driver(monkeypatch):
    assert not BuildLimits() and BuildLimits(max_vgprs=128)

    class LogDriver:
        name = "nvcc"
    with pytest.raises(KernelError, match="the nvcc driver does not check max_vgprs"):
        build_mod._gate(LogDriver(), None, "k", targets.get("sm_90a"), warps=1, lds_bytes=0,
                        limits=BuildLimits(min_occupancy=2), loc=None)

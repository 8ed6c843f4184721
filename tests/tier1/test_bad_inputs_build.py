"""The bad-input corpus (issue #9), the cases that need a compiler: a C++ error in the generated
code surfaces as a KernelError at the kernel's Python line (the `#line` directives), the gate
refuses what the compiler made (scratch on AMD, limits a build cannot meet), and `ktile cocheck`
refuses an arch it does not know for a real code object.

The planted errors are edits of the C++ ktile generated, built through the same driver as a
kernel's own build (`build_source`), so the path from the compiler's log to the KernelError is
the one a user meets.
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import ktile as hk
from ktile.errors import KernelError, SourceLoc
from ktile.runtime.build import BuildLimits, build_source

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bad_inputs import cli_refused, marked_line, refused, run_cli  # noqa: E402

CLANG = "/usr/lib/llvm-22/bin/clang++"
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None)
needs_clang = pytest.mark.skipif(not os.path.exists(CLANG), reason="tier 1: needs Debian's "
                                 "clang-22")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="tier 1: needs nvcc")
pytestmark = [pytest.mark.tier1]

TARGETS = [pytest.param("gfx942", marks=needs_clang), pytest.param("gfx1100", marks=needs_clang),
           pytest.param("sm_90a", marks=needs_nvcc)]


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "cache"))


@hk.kernel(grid=(1, 1, 1))
def copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    t = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))
    o[0, 0, 0, 0] = t  # <- here


def planted(target: str, old: str, new: str) -> tuple[str, object]:
    """The kernel's generated C++ for `target` with one edit, and the trace."""
    trace = copy.trace(target=target)
    source = trace.source()
    assert old in source, source
    return source.replace(old, new, 1), trace


def build_planted(source: str, trace, **kwargs):
    loc = SourceLoc(copy.def_loc.file, copy.def_loc.line)
    return build_source(source, trace.target, trace.name, warps=trace.warps, loc=loc, **kwargs)


@pytest.mark.parametrize("target", TARGETS)
def test_a_compiler_error_points_at_the_python_line_it_was_generated_for(target):
    source, trace = planted(target, "kt::store(v1, ", "kt::store(v1, undeclared_tile, ")
    err = refused(lambda: build_planted(source, trace), "rejects", target, "undeclared_tile",
                  "generated C++ is")
    assert err.loc is not None and err.loc.line == marked_line(copy), str(err)
    assert "o[0, 0, 0, 0] = t" in str(err)


SCRATCH = ("  return;\n}", "  { volatile int i = 5; volatile float big[1024]; big[i] = 1.0f; "
                           "big[i + 1] = big[i]; }\n  return;\n}")


@pytest.mark.parametrize("target", TARGETS[:2])
def test_an_amd_build_using_scratch_memory_is_refused_with_the_fix(target):
    source, trace = planted(target, *SCRATCH)
    err = refused(lambda: build_planted(source, trace), f"the {target} build is refused",
                  "scratch", "index local arrays only with compile-time constants")
    assert err.loc is not None and err.loc.line == copy.def_loc.line


@needs_clang
@pytest.mark.parametrize("limits,words", [
    (BuildLimits(max_vgprs=1), ("max-vgprs", "above the limit of 1", "fewer registers live")),
    (BuildLimits(min_occupancy=64), ("more waves per SIMD than gfx1100 holds (16)",
                                     "at most 16 waves")),
], ids=["max-vgprs", "occupancy-beyond-the-hardware"])
def test_build_limits_the_code_object_cannot_meet(limits, words):
    refused(lambda: copy.build(target="gfx1100", limits=limits), *words)


@needs_clang
@pytest.mark.parametrize("mcpu,words", [
    ("nope", ("'nope' is not an AMDGPU arch name",)),
    ("gfx803", ("gfx803", "gfx9 to gfx12 only")),
], ids=["not-an-arch", "arch-too-old"])
def test_cocheck_refuses_an_arch_it_cannot_check_a_real_code_object_for(mcpu, words):
    code = copy.build(target="gfx942").code_path
    cli_refused(run_cli("ktile", "cocheck", "--mcpu", mcpu, str(code)), *words, codes=(2,))


@needs_clang
def test_wave_emulation_of_cpp_that_does_not_compile_points_at_the_python_line():
    import torch
    from ktile.emulate import emulate
    source, _ = planted("gfx1100", "kt::store(v1, ", "kt::store(v1, undeclared_tile, ")
    a, o = (torch.zeros(1, 1, 16, 64, dtype=torch.bfloat16) for _ in range(2))
    err = refused(lambda: emulate(copy, a, o, target="gfx1100", source=source),
                  "undeclared_tile")
    assert err.loc is not None and err.loc.line == marked_line(copy), str(err)

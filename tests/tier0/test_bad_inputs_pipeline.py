"""The bad-input corpus (issue #9), the pipeline's and the runtime's part: what the passes,
the translation, the targets, the build, the toolchain drivers, the loaders, torch ops,
`ktile cocheck`, the interpreter and wave emulation refuse.

Each case asserts its error kind (`KernelError`, `InputError`, or a command line's exit 1/2
with one line) and the words naming the problem and the fix; a kernel case also asserts that
the message points at the kernel's own line, marked `# <- here`. Nothing here needs a
compiler: the build cases point the toolchain knobs at files that are not compilers, or fake
the compiler's answer; the cases that need clang-22 or nvcc are in
tests/tier1/test_bad_inputs_build.py.
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from ktile.errors import InputError, KernelError, KernelWarning

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bad_inputs import cli_refused, points_at, refused, run_cli  # noqa: E402

GRID = (1, 1, 1)


@hk.kernel(grid=GRID)
def copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))


def trace_refused(kernel, target: str, *words: str) -> KernelError:
    """`kernel` traced for `target` is refused with these words, at its marked line."""
    err = refused(lambda: kernel.trace(target=target), *words)
    points_at(err, kernel)
    return err


def source_refused(kernel, target: str, *words: str) -> KernelError:
    """`kernel` traces for `target` but its translation is refused, at its marked line."""
    kernel.trace(target=target)
    err = refused(lambda: kernel.source(target=target), *words)
    points_at(err, kernel)
    return err


# ---- targets: naming one ---------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    pytest.param(lambda: copy.source(target="gfx9999"), id="source-unknown-arch"),
    pytest.param(lambda: copy.trace(target="gfx90a"), id="trace-arch-ktile-lacks"),
    pytest.param(lambda: copy.build(target="gfx9999"), id="build-unknown-arch"),
    pytest.param(lambda: hk.kernel(grid=GRID, arch="nope")(copy.fn).trace(), id="kernel-arch"),
])
def test_an_unknown_target_names_the_known_ones(call):
    refused(call, "unknown target", "gfx1100", "gfx942", "sm_90a")


@pytest.mark.parametrize("given,means", [("GFX942", "gfx942"), ("sm90a", "sm_90a"),
                                         ("sm_90", "sm_90a"), ("gfx-950", "gfx950")],
                         ids=["upper-case", "no-underscore", "no-a-suffix", "dash"])
def test_a_misspelt_target_suggests_the_one_meant(given, means):
    refused(lambda: copy.trace(target=given), "unknown target", f"did you mean '{means}'")


@pytest.mark.parametrize("given", [90, ["gfx942"], hk.bf16], ids=["int", "list", "dtype"])
def test_a_target_that_is_no_string_says_so(given):
    refused(lambda: copy.trace(target=given), "target", "string", type(given).__name__,
            "'gfx942'")

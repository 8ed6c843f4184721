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


# ---- verify: the block, the element types, mma from shared ----------------------------------

@hk.kernel(grid=GRID, warps=17)  # <- here
def seventeen_warps(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))


@hk.kernel(grid=GRID, warps=9)  # <- here
def nine_warps_of_128_threads(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))


@pytest.mark.parametrize("kernel,target,words", [
    (seventeen_warps, "gfx942", ("1088 threads", "1024", "warps=16")),
    (seventeen_warps, "gfx950", ("1088 threads", "warps=16")),
], ids=["gfx942", "gfx950"])
def test_a_block_over_the_targets_thread_limit(kernel, target, words):
    trace_refused(kernel, target, *words)


@hk.kernel(grid=GRID)  # <- here
def fp8_on_rdna3(a: hk.Tensor[hk.fp8], o: hk.Tensor[hk.fp8]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.fp8, 16, 64))


def test_fp8_where_the_target_lacks_it_names_the_targets_that_have_it():
    trace_refused(fp8_on_rdna3, "gfx1100", "fp8 is not supported on gfx1100", "gfx950",
                  "sm_90a")


@hk.kernel(grid=GRID)
def fp8_mma_on_rdna3(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))
    f = x.to(hk.fp8)  # <- here
    o[0, 0, 0, 0] = hk.mma_ABt(f, f, hk.zeros(hk.RT(hk.fp32, 16, 16)))


def test_an_fp8_mma_on_a_target_without_one():
    trace_refused(fp8_mma_on_rdna3, "gfx1100", "fp8", "gfx1100", "gfx1201")


@hk.kernel(grid=GRID)
def fp32_mma(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 16))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 16, 16))
    o[0, 0, 0, 0] = hk.mma_ABt(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- here


@pytest.mark.parametrize("target", ["gfx1100", "gfx942", "sm_90a"])
def test_an_mma_of_a_dtype_the_target_has_no_instruction_for(target):
    trace_refused(fp32_mma, target, f"{target} has no MMA instruction for fp32", ".to(", "bf16")


@hk.kernel(grid=GRID)
def bf16_accumulator(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
    o[0, 0, 0, 0] = hk.mma_ABt(x, x, hk.zeros(hk.RT(hk.bf16, 16, 16)))  # <- here


def test_an_mma_accumulating_in_bf16():
    trace_refused(bf16_accumulator, "gfx942", "accumulat", "fp32")


@hk.kernel(grid=GRID)
def short_k_on_cdna4(a: hk.Tensor[hk.fp16], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp16, 32, 16))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp16, 32, 16))
    o[0, 0, 0, 0] = hk.mma_ABt(x, y, hk.zeros(hk.RT(hk.fp32, 32, 32)))  # <- here


def test_an_mma_whose_k_the_instruction_does_not_divide():
    trace_refused(short_k_on_cdna4, "gfx950", "K=16 is not a multiple of", "K of")


@hk.kernel(grid=GRID, warps=4)
def wide_shared_b(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.bf16, 272, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    hk.barrier()
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
    hk.wait_for(x)
    acc = hk.zeros(hk.RT(hk.fp32, 16, 272))
    acc += x @ s.T  # <- here
    o[0, 0, 0, 0] = acc


@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_an_mma_from_shared_wider_than_any_instruction(target):
    trace_refused(wide_shared_b, target, "multiple of 8 up to 256", "split B")


# ---- lds-alloc: shared memory and TMA arrivals -----------------------------------------------

@hk.kernel(grid=GRID)
def shared_over_rdna3(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 128, 128))
    t = hk.shared(hk.ST(hk.fp32, 16, 16))  # <- here


@hk.kernel(grid=GRID)
def shared_over_hopper(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 256, 128))
    t = hk.shared(hk.ST(hk.fp32, 256, 128))  # <- here


@pytest.mark.parametrize("kernel,target,limit", [
    (shared_over_rdna3, "gfx1100", "65536"), (shared_over_hopper, "sm_90a", "bytes of shared"),
], ids=["gfx1100", "sm_90a"])
def test_shared_tiles_over_the_targets_shared_memory(kernel, target, limit):
    trace_refused(kernel, target, "shared tiles need", limit, "smaller shared tiles")


@hk.kernel(grid=GRID, warps=4)
def many_tma_tiles(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    tiles = [hk.shared(hk.ST(hk.bf16, 16, 64)) for _ in range(16)]
    extra = hk.shared(hk.ST(hk.bf16, 16, 64))  # <- here
    for k, s in enumerate(tiles):
        hk.group.load(s, a[0, 0, 0, k])
    hk.group.load(extra, a[0, 0, 0, 16])
    hk.wait_for(*tiles, extra)


def test_more_tma_copied_tiles_than_mbarrier_slots():
    trace_refused(many_tma_tiles, "sm_90a", "17 shared tiles", "over the 16", "mbarrier",
                  "fewer shared tiles")


# ---- waits -----------------------------------------------------------------------------------

@hk.kernel(grid=GRID)
def store_before_wait(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    x = s.load(hk.RT(hk.bf16, 16, 64))
    o[0, 0, 0, 0] = x  # <- here


@hk.kernel(grid=GRID)
def wait_on_the_wrong_tile(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 64))
    t = hk.shared(hk.ST(hk.bf16, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.group.load(t, a[0, 0, 0, 1])
    hk.wait_for(s)  # counted waits: t, copied after s, may still be in flight
    x = t.load(hk.RT(hk.bf16, 16, 64))  # <- here
    hk.wait_for(t, x)
    o[0, 0, 0, 0] = x


@hk.kernel(grid=GRID)
def exp_before_wait(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    x = s.load(hk.RT(hk.fp32, 16, 64))
    y = hk.exp(x)  # <- here
    hk.wait_for(x)
    o[0, 0, 0, 0] = y


@hk.kernel(grid=GRID)
def shared_vector_unwaited(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])  # <- here
    t = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 16, 64))
    o[0, 0, 0, 0] = t


@pytest.mark.parametrize("kernel,target,words", [
    (store_before_wait, "gfx942", ("store uses", "before its wait")),
    (store_before_wait, "gfx1201", ("store uses", "before its wait")),
    (wait_on_the_wrong_tile, "gfx950", ("shared load reads the shared tile", "still filling")),
    (exp_before_wait, "gfx1100", ("exp uses", "before its wait")),
    (shared_vector_unwaited, "gfx942", ("still in flight when the kernel ends",)),
    (shared_vector_unwaited, "sm_90a", ("still in flight when the kernel ends",)),
], ids=["store-gfx942", "store-gfx1201", "wrong-tile-waited", "exp", "never-waited-gfx942",
        "never-waited-sm_90a"])
def test_an_async_result_used_before_its_wait(kernel, target, words):
    trace_refused(kernel, target, *words)


@hk.kernel(grid=GRID, warps=2)
def barrier_over_a_copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 32, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.barrier()
    x = s.load(hk.RT(hk.bf16, 16, 64), row=hk.arch.warp_id)  # <- here
    hk.wait_for(x)
    o[0, 0, 0, 0] = x


@pytest.mark.parametrize("target,counter", [("gfx1100", "vmcnt"), ("gfx1201", "loadcnt"),
                                            ("gfx950", "vmcnt")])
def test_a_copy_in_flight_at_a_barrier(target, counter):
    trace_refused(barrier_over_a_copy, target, "still in flight at the barrier", counter,
                  "wait_for(tile) before the barrier")


# ---- budgets: a certain spill is an error, a near one a warning ------------------------------

@hk.kernel(grid=GRID)
def spills_on_rdna3(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 128))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 64, 128))
    z = a[0, 0, 0, 2].load(hk.RT(hk.fp32, 64, 128))
    o[0, 0, 0, 0] = x + y + z  # <- here


# sm_90a's register model counts what a global load holds in flight (load_registers_per_element):
# the second load holds x, y and y's addresses (840 registers), more than `x * y` (520)
@hk.kernel(grid=GRID, warps=4)
def spills_on_hopper(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 128, 64))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 128, 64))  # <- here
    o[0, 0, 0, 0] = x * y


@pytest.mark.parametrize("kernel,target", [(spills_on_rdna3, "gfx1100"),
                                           (spills_on_hopper, "sm_90a")], ids=["gfx1100", "sm_90a"])
def test_a_certain_spill_is_refused_at_the_line_where_it_happens(kernel, target):
    trace_refused(kernel, target, "spill is certain", "smaller tiles")


@hk.kernel(grid=GRID)
def close_to_spilling(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 128))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 64, 96))
    o[0, 0, 0, 0] = x  # <- here
    o[0, 0, 0, 1] = y


def test_a_near_spill_is_a_warning_at_its_line_not_a_refusal():
    with pytest.warns(KernelWarning) as caught:
        trace = close_to_spilling.trace(target="gfx942")
    from bad_inputs import marked_line
    where = f"{__file__}:{marked_line(close_to_spilling)}: warning"
    assert any(str(w.message).startswith(where) and "close to spilling" in str(w.message)
               for w in caught), [str(w.message) for w in caught]
    assert trace.warnings


# ---- translation -----------------------------------------------------------------------------

@hk.kernel(grid=GRID)
def swapped_buffers(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s, t = hk.shared(hk.ST(hk.bf16, 16, 64)), hk.shared(hk.ST(hk.bf16, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    for k in hk.range(4):  # <- here
        hk.group.load(t, a[0, 0, 0, k + 1])
        hk.wait_for(s)
        x = s.load(hk.RT(hk.bf16, 16, 64))
        hk.wait_for(x)
        o[0, 0, 0, k] = x
        s, t = t, s
    hk.wait_for(s)


@pytest.mark.parametrize("target", ["gfx942", "sm_90a"])
def test_shared_tiles_carried_through_a_loop_do_not_translate(target):
    source_refused(swapped_buffers, target, "carries a shared tile", "interpreter can",
                   "python list")


def main(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):  # <- here
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))


def template(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):  # <- here
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))


@pytest.mark.parametrize("fn,what", [(main, "reserved"), (template, "C++ keyword")],
                         ids=["main", "template"])
def test_a_kernel_named_as_the_generated_cpp_cannot_be(fn, what):
    kernel = hk.kernel(grid=GRID)(fn)
    err = refused(lambda: kernel.source(target="gfx1100"), what, f"'{fn.__name__}_kernel'")
    assert err.loc is not None and err.loc.line == fn.__code__.co_firstlineno


# ---- build: the toolchain knobs --------------------------------------------------------------

KNOBS = [("KTILE_NVCC", "sm_90a"), ("KTILE_CLANG", "gfx942"), ("KTILE_HIPCC", "gfx950")]


@pytest.fixture
def knob(monkeypatch, tmp_path):
    """Set one toolchain knob (the others unset), with the build cache in a fresh folder."""
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path / "cache"))
    for name, _ in KNOBS:
        monkeypatch.delenv(name, raising=False)
    return lambda name, value: monkeypatch.setenv(name, str(value))


def not_a_program(folder: Path, mode: int) -> Path:
    path = folder / "cc"
    path.write_text("this is not a compiler\n")
    path.chmod(mode)
    return path


@pytest.mark.parametrize("variable,target", KNOBS, ids=[v for v, _ in KNOBS])
def test_a_toolchain_knob_naming_a_missing_file(knob, tmp_path, variable, target):
    knob(variable, tmp_path / "no" / "such" / "cc")
    refused(lambda: copy.build(target=target), f"{variable}=", "not an executable file",
            f"point {variable} at")


@pytest.mark.parametrize("variable,target", KNOBS, ids=[v for v, _ in KNOBS])
def test_a_toolchain_knob_naming_a_folder(knob, tmp_path, variable, target):
    knob(variable, tmp_path)
    refused(lambda: copy.build(target=target), f"{variable}=", "not an executable file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root may execute any file")
@pytest.mark.parametrize("variable,target", KNOBS, ids=[v for v, _ in KNOBS])
def test_a_toolchain_knob_naming_a_file_without_execute_permission(knob, tmp_path, variable,
                                                                  target):
    knob(variable, not_a_program(tmp_path, 0o644))
    refused(lambda: copy.build(target=target), "not an executable file")


@pytest.mark.parametrize("variable,target", KNOBS, ids=[v for v, _ in KNOBS])
def test_a_toolchain_knob_naming_a_text_file_marked_executable(knob, tmp_path, variable, target):
    knob(variable, not_a_program(tmp_path, 0o755))
    refused(lambda: copy.build(target=target), "cannot be run as a compiler", variable)


@pytest.mark.parametrize("variable,target", KNOBS, ids=[v for v, _ in KNOBS])
def test_a_toolchain_knob_naming_a_program_that_is_no_compiler(knob, tmp_path, variable, target):
    script = tmp_path / "fails"
    script.write_text("#!/bin/sh\necho 'usage: fails' >&2\nexit 3\n")
    script.chmod(0o755)
    knob(variable, script)
    refused(lambda: copy.build(target=target), "--version failed", "exit 3", "usage: fails",
            "not a compiler")


# ---- build: its limits -----------------------------------------------------------------------

@pytest.mark.parametrize("limits", [5, "max_vgprs=128", {"max_vgprs": 128}],
                         ids=["int", "str", "dict"])
def test_build_limits_of_the_wrong_type(limits):
    err = refused(lambda: copy.build(target="gfx942", limits=limits), "limits must be",
                  "BuildLimits(", kind=InputError)
    assert type(limits).__name__ in str(err)


@pytest.mark.parametrize("fields", [dict(max_vgprs=-3), dict(max_vgprs="128"),
                                    dict(min_occupancy=0), dict(min_occupancy=2.5)],
                         ids=["negative", "str", "zero", "float"])
def test_build_limits_that_are_no_positive_count(fields):
    from ktile.runtime.build import BuildLimits
    (name, value), = fields.items()
    refused(lambda: BuildLimits(**fields), name, "positive int", repr(value), kind=InputError)


def test_amd_only_limits_on_an_nvidia_build_are_refused_before_compiling(knob, tmp_path):
    from ktile.runtime.build import BuildLimits
    knob("KTILE_NVCC", not_a_program(tmp_path, 0o755))   # were it compiled, this would fail
    refused(lambda: copy.build(target="sm_90a", limits=BuildLimits(max_vgprs=64)),
            "nvcc driver does not check max_vgprs", "build without limits")


# ---- wave emulation --------------------------------------------------------------------------

def tensors(*shape):
    import torch
    return [torch.zeros(*shape, dtype=torch.bfloat16) for _ in range(2)]


@pytest.mark.parametrize("target", ["sm_90a"])
def test_wave_emulation_of_a_target_that_is_not_amd(target):
    from ktile.emulate import emulate
    refused(lambda: emulate(copy, *tensors(1, 1, 16, 64), target=target),
            "wave emulation runs AMD targets", target, "target='gfx1100'")


def test_wave_emulation_of_an_unknown_target():
    from ktile.emulate import emulate
    refused(lambda: emulate(copy, *tensors(1, 1, 16, 64), target="gfx9"), "unknown target",
            "gfx942")


@pytest.mark.parametrize("timeout", [-1, 0, "60", None], ids=["negative", "zero", "str", "none"])
def test_wave_emulation_with_a_timeout_that_is_no_time(timeout):
    from ktile.emulate import emulate
    refused(lambda: emulate(copy, *tensors(1, 1, 16, 64), target="gfx942", timeout=timeout),
            "timeout must be a positive number of seconds", repr(timeout), kind=InputError)


def test_wave_emulation_of_cpp_that_ktile_did_not_generate():
    from ktile.emulate import emulate
    refused(lambda: emulate(copy, *tensors(1, 1, 16, 64), target="gfx942", source="int x;"),
            "no ktile kernel entry", "C++ that ktile generated")


def test_wave_emulation_with_a_clang_knob_naming_nothing(knob, tmp_path):
    from ktile.emulate import emulate
    knob("KTILE_CLANG", tmp_path / "no-clang")
    refused(lambda: emulate(copy, *tensors(1, 1, 16, 64), target="gfx1100"),
            "KTILE_CLANG=", "not an executable file", "point KTILE_CLANG at clang++")


# ---- loaders: a GPU path where its runtime is missing ----------------------------------------

def test_the_cuda_loader_without_the_nvidia_driver(monkeypatch):
    from ktile.runtime.loaders import cuda

    def no_library(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file: No such file or directory")
    monkeypatch.setattr(cuda.ctypes, "CDLL", no_library)
    refused(cuda.Driver, "libcuda.so.1 cannot be loaded", "install the NVIDIA driver",
            "k.interpret(")


def test_the_hip_loader_without_rocm(monkeypatch):
    from ktile.runtime.loaders import hip

    def no_library(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file: No such file or directory")
    monkeypatch.setattr(hip.ctypes, "CDLL", no_library)
    monkeypatch.setattr(hip, "_torch_libraries", lambda: [])
    refused(hip.open_library, "libamdhip64 cannot be loaded", "ROCm", "k.interpret(")


# ---- torch ops -------------------------------------------------------------------------------

@hk.kernel(grid=GRID)
def scaled_copy(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *,
                SCALE: hk.Constexpr[float] = 1.0):
    idx = hk.tile_coord(0, 0, 0, 0)
    o[idx] = a[idx].load(hk.RT(hk.fp32, 16, 64)) * SCALE


@hk.kernel(grid=GRID)
def other_copy(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))


@pytest.fixture(scope="module")
def op():
    return hk.torch_op(scaled_copy, name="corpus_scaled_copy")


def fp32(*shape):
    import torch
    return torch.zeros(*shape, dtype=torch.float32)


@pytest.mark.parametrize("make,words", [
    (lambda: hk.torch_op(scaled_copy.fn), ("torch_op takes an @hk.kernel", "function",
                                           "@hk.kernel(grid=")),
    (lambda: hk.torch_op(scaled_copy, name="ktile::corpus"), ("not a Python identifier",
                                                              "namespace is always 'ktile'")),
    (lambda: hk.torch_op(scaled_copy, name=7), ("op name 7", "not a Python identifier")),
    (lambda: hk.torch_op(scaled_copy, constants=[("SCALE", 2.0)]),
     ("constants must be a dict", "list", "constants={")),
], ids=["not-a-kernel", "namespaced-name", "name-not-str", "constants-not-dict"])
def test_a_torch_op_asked_for_wrongly(make, words):
    refused(make, *words, kind=InputError)


@pytest.mark.parametrize("constants,words", [
    ({"NOPE": 1}, ("unknown constant 'NOPE'", "SCALE")),
    ({"SCALE": "x"}, ("constant 'SCALE' must be float", "'x'")),
], ids=["unknown-constant", "constant-of-the-wrong-type"])
def test_a_torch_op_with_constants_the_kernel_does_not_take(constants, words):
    refused(lambda: hk.torch_op(scaled_copy, constants=constants), *words)


def test_a_torch_op_for_a_target_that_is_no_name():
    refused(lambda: hk.torch_op(scaled_copy, target=942), "target is named by a string")


def test_a_torch_op_name_another_kernel_holds(op):
    refused(lambda: hk.torch_op(other_copy, name="corpus_scaled_copy"), "already taken",
            "scaled_copy", "name=", kind=InputError)


@pytest.mark.parametrize("call,words", [
    (lambda op: op(fp32(1, 1, 16, 64), fp32(1, 1, 16, 64), SCALE=2.0),
     ("keyword arguments ['SCALE']", "bound when it was made")),
    (lambda op: op(fp32(1, 1, 16, 64).numpy(), fp32(1, 1, 16, 64)),
     ("parameter 'a' must be a torch.Tensor", "ndarray", "torch.from_numpy")),
    (lambda op: op(), ("takes 2 tensors (a, o), got 0",)),
    (lambda op: op(fp32(1, 1, 16, 64)), ("takes 2 tensors (a, o), got 1",)),
    (lambda op: op(fp32(1, 1, 16, 64).half(), fp32(1, 1, 16, 64)),
     ("parameter 'a'", "fp32", "float16")),
    (lambda op: op(fp32(1, 1, 1, 16, 64), fp32(1, 1, 16, 64)),
     ("parameter 'a'", "5 dimensions", "1 to 4")),
    (lambda op: op(fp32(1, 1, 16, 64), fp32(1, 1, 64, 16).transpose(2, 3)),
     ("parameter 'o'", "stride 16 in its last dimension", "freshly allocated")),
    (lambda op: op(fp32(1, 1, 16, 64), fp32(1, 1, 1, 64).expand(1, 1, 16, 64)),
     ("parameter 'o' is written", "share memory")),
    (lambda op: op(fp32(1, 1, 16, 64).to("meta"), fp32(1, 1, 16, 64)),
     ("different devices", "'a' on meta", "'o' on cpu")),
], ids=["keyword-constant", "numpy-array", "no-tensors", "too-few", "wrong-dtype", "5-d",
        "strided-output", "broadcast-output", "mixed-devices"])
def test_a_torch_op_called_with_bad_arguments(op, call, words):
    refused(lambda: call(op), *words, kind=InputError)


@pytest.mark.parametrize("shapes,words", [
    (((1, 1, 16, 64), (1, 1, 16, 64)), ()),
    (((1, 1, 16, 64), (1, 1, 1, 16, 64)), ("parameter 'o'", "5 dimensions")),
    (((1, 1, 16, 64), (1, 1, 32, 64)), ("same tile coordinates", "differ in shape")),
], ids=["accepted", "fake-rank", "fake-shapes-differ"])
def test_a_torch_op_on_fake_tensors_checks_symbolically(op, shapes, words):
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        a, o = (torch.zeros(*shape) for shape in shapes)
        if not words:
            op.overload(a, o)
            return
        refused(lambda: op.overload(a, o), *words, kind=InputError)


def test_a_torch_ops_first_call_inside_a_cuda_graph_capture(op, monkeypatch):
    import torch
    from ktile.runtime.torch_op import check_not_first_in_capture
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    refused(lambda: check_not_first_in_capture(op, torch.device("cuda", 0)),
            "inside a CUDA graph capture", "call the op once before capturing", kind=InputError)


# ---- `ktile cocheck`: inputs it cannot check -------------------------------------------------

def elf_header(machine: int) -> bytes:
    """A 64-bit little-endian ELF header for `machine` (190: an NVIDIA cubin's), nothing else."""
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    return ident + (1).to_bytes(2, "little") + machine.to_bytes(2, "little") + bytes(44)


@pytest.mark.parametrize("make,words", [
    (lambda d: d / "missing.hsaco", ("missing.hsaco: no such file",)),
    (lambda d: d, ("not a file",)),
    (lambda d: _write(d / "empty.hsaco", b""), ("empty.hsaco: an empty file",)),
    (lambda d: _write(d / "notes.txt", b"hello\n"), ("not an AMDGPU code object",
                                                     "not an ELF file")),
    (lambda d: _write(d / "short.o", b"\x7fELF\x02\x01"), ("truncated ELF header",)),
    (lambda d: _write(d / "kernel.cubin", elf_header(190)), ("an ELF file for NVIDIA CUDA",
                                                             "not an AMDGPU code object")),
    (lambda d: _write(d / "arm.o", elf_header(183)), ("an ELF file for AArch64",)),
    (lambda d: _write(d / "bundle.o", b"__CLANG_OFFLOAD_BUNDLE____" + bytes(8)),
     ("damaged clang offload bundle",)),
    (lambda d: _write(d / "ccob.o", b"CCOB\x01\x00" + bytes(32)),
     ("compressed clang offload bundle", "--unbundle")),
], ids=["missing", "directory", "empty", "text", "truncated-elf", "nvidia-cubin", "aarch64-elf",
        "damaged-bundle", "compressed-bundle"])
def test_cocheck_refuses_a_file_that_is_no_amdgpu_code_object(tmp_path, make, words):
    result = run_cli("ktile", "cocheck", str(make(tmp_path)))
    cli_refused(result, *words, codes=(2,))
    assert len(result.err.strip().splitlines()) == 1, result.err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_cocheck_refuses_a_file_it_cannot_read(tmp_path):
    path = _write(tmp_path / "secret.hsaco", elf_header(224))
    path.chmod(0)
    cli_refused(run_cli("ktile", "cocheck", str(path)), "cannot be read", codes=(2,))


def test_cocheck_reads_no_file_without_read_permission_as_an_error(tmp_path, monkeypatch):
    """The unreadable-file path, in process (a root test machine reads any file)."""
    from ktile.runtime.cocheck import inputs
    path = _write(tmp_path / "secret.hsaco", elf_header(224))

    real_open = Path.open

    def no_permission(self, *args, **kwargs):
        if self != path:
            return real_open(self, *args, **kwargs)
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "open", no_permission)
    with pytest.raises(inputs.UnusableInput, match="secret.hsaco: cannot be read "
                                                   r"\(Permission denied\)"):
        inputs.code_objects_in(path, tmp_path)


@pytest.mark.parametrize("args,words", [
    (("--max-vgprs", "abc", "k.hsaco"), ("--max-vgprs", "must be a whole number", "'abc'")),
    (("--min-occupancy", "0", "k.hsaco"), ("--min-occupancy", "at least 1")),
    ((), ("required", "FILE")),
    (("--bogus", "k.hsaco"), ("unrecognized arguments", "--bogus")),
], ids=["vgprs-not-a-number", "occupancy-zero", "no-file", "unknown-option"])
def test_cocheck_refuses_bad_options_with_its_usage(args, words):
    cli_refused(run_cli("ktile", "cocheck", *args), *words, codes=(2,))


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# ---- the interpreter: what only a run can find -----------------------------------------------

def ones(*shape):
    return np.ones(shape, np.float32)


@hk.kernel(grid=GRID)
def step_from_the_block(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    step = hk.arch.block_idx.x
    for i in range(0, 4, step):  # <- here
        o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))


@hk.kernel(grid=GRID)
def divides_by_the_block(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    n = 4 // hk.arch.block_idx.x  # <- here
    o[0, 0, 0, n] = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))


@hk.kernel(grid=GRID)
def remainder_by_the_block(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    n = 4 % hk.arch.block_idx.x  # <- here
    o[0, 0, 0, n] = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))


@hk.kernel(grid=GRID, warps=2)
def subtile_past_the_edge(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    hk.barrier()
    x = s.load(hk.RT(hk.fp32, 16, 32), col=hk.arch.warp_id + 1)  # <- here
    hk.wait_for(x)
    o[0, 0, 0, 0] = x


@hk.kernel(grid=GRID, warps=2)
def subtile_before_the_edge(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 64))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    hk.barrier()
    x = s.load(hk.RT(hk.fp32, 16, 32), col=hk.arch.warp_id - 1)  # <- here
    hk.wait_for(x)
    o[0, 0, 0, 0] = x


@pytest.mark.parametrize("kernel,words", [
    (step_from_the_block, ("runtime loop needs a positive step, got 0", "at least 1")),
    (divides_by_the_block, ("integer division by zero", "hk.cdiv")),
    (remainder_by_the_block, ("integer division by zero", "divisor")),
    (subtile_past_the_edge, ("sub-tile (row 0, col 2) is outside", "keep row in [0, 1)")),
    (subtile_before_the_edge, ("sub-tile (row 0, col -1) is outside", "col in [0, 2)")),
], ids=["zero-step", "division-by-zero", "remainder-by-zero", "subtile-past-edge",
        "subtile-negative"])
def test_the_interpreter_refuses_at_the_line_that_went_wrong(kernel, words):
    err = refused(lambda: kernel.interpret(ones(1, 1, 16, 64), ones(1, 1, 16, 64)), *words)
    points_at(err, kernel)
    assert err.hint

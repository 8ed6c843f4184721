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
    s = hk.shared(hk.ST(hk.bf16, 264, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    hk.barrier()
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
    hk.wait_for(x)
    acc = hk.zeros(hk.RT(hk.fp32, 16, 264))
    acc += x @ s.T  # <- here
    o[0, 0, 0, 0] = acc


@hk.kernel(grid=GRID, warps=4)
def ragged_k_shared_b(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.bf16, 64, 24))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    hk.barrier()
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 24))
    hk.wait_for(x)
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    acc += x @ s.T  # <- here
    o[0, 0, 0, 0] = acc


@pytest.mark.parametrize("kernel,words", [
    (wide_shared_b, ("multiple of 8 up to 256", "split B")),
    (ragged_k_shared_b, ("K (their columns) must be a multiple of 16", "pad K")),
], ids=["n-over-256", "k-not-16"])
@pytest.mark.parametrize("target", ["sm_90a", "gfx942"])
def test_an_mma_from_shared_of_a_shape_no_instruction_takes(kernel, words, target):
    trace_refused(kernel, target, *words)


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


@hk.kernel(grid=GRID, warps=4)
def spills_on_hopper(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 128, 64))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 128, 64))
    o[0, 0, 0, 0] = x * y  # <- here


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

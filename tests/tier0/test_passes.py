"""The pass pipeline on kernels written with the frontend: every refusal's text and the kernel
line it points at, the counts derived for a double-buffered GEMM, and `ktile-opt`.

A line a refusal must point at carries a `# <- name` comment; `line("name")` finds it.
"""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

import ktile as hk
from ktile import targets
from ktile.errors import KernelError, KernelWarning
from ktile.ir import ops as kt

GRID = (1, 1, 1)
SOURCE = Path(__file__).read_text().splitlines()
REPO = Path(__file__).resolve().parents[2]


def line(name: str) -> int:
    """The line of this file that ends with `# <- name`."""
    for number, text in enumerate(SOURCE, 1):
        if text.rstrip().endswith(f"# <- {name}"):
            return number
    raise AssertionError(f"no line marked {name!r}")


def refusal(kernel, target: str) -> KernelError:
    with pytest.raises(KernelError) as caught:
        kernel.trace(target=target)
    error = caught.value
    assert error.loc is not None and error.loc.file == __file__
    assert "internal" not in str(error)
    return error


# ---- verify --------------------------------------------------------------------------------

@hk.kernel(grid=GRID, warps=32)  # <- too-many-warps
def too_many_warps(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))


def test_a_block_over_the_thread_limit_is_refused_at_the_decorator():
    # tracing refuses it (lang/warps.py) before verify's own check, which hand-written IR
    # reaches (tests/filecheck/passes/verify.mlir)
    error = refusal(too_many_warps, "gfx942")
    assert error.message == ("warps=32 is over gfx942's 16 warps of 64 lanes per block (32 warps "
                             "are 2048 threads; the limit is 1024 threads)")
    assert error.hint == "give warps= a warp count from 1 to 16 on gfx942 (warps=16 at most)"
    assert error.loc.line == line("too-many-warps")
    too_many_warps.trace(target="gfx1100")  # 32 x 32 = 1024 threads fit


@hk.kernel(grid=GRID, warps=4)
def barrier_in_warp_branch(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    if hk.arch.warp_id == 0:  # <- warp-if
        hk.barrier()  # <- barrier-in-if


def test_verify_refuses_a_barrier_in_a_branch_on_the_warp_id():
    error = refusal(barrier_in_warp_branch, "gfx1100")
    assert error.message == (
        f"barrier inside a branch (the `if` at line {line('warp-if')}) whose condition depends "
        f"on the warp id: warps that do not reach it never arrive, and the block hangs")
    assert error.op == "barrier"
    assert error.loc.line == line("barrier-in-if")


@hk.kernel(grid=GRID, warps=4)
def copy_in_warp_loop(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 32, 32))
    n = hk.arch.warp_id + 1
    for i in hk.range(n):  # <- warp-for
        hk.group.load(s, a[0, 0, i, 0])  # <- copy-in-for
        hk.wait_for(s)


def test_verify_refuses_a_group_load_in_a_loop_bounded_by_the_warp_id():
    error = refusal(copy_in_warp_loop, "gfx950")
    assert error.message == (
        f"group load inside a loop (the `for` at line {line('warp-for')}) whose bounds depend "
        f"on the warp id: every warp of the block copies its part of the tile")
    assert error.loc.line == line("copy-in-for")


@hk.kernel(grid=GRID, warps=4)
def reduce_in_warp_while(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    v = hk.zeros(hk.RV(hk.fp32, 16))
    n = hk.arch.block_idx.x
    for i in hk.range(2):
        n = n + hk.arch.warp_id  # the dependence travels through a loop-carried value
    while n > 0:  # <- warp-while
        v = hk.group.sum(v)  # <- reduce-in-while
        n = n - 1
    o[0, 0, 0, 0] = v


def test_verify_follows_the_warp_id_through_loop_carried_values():
    error = refusal(reduce_in_warp_while, "gfx1100")
    assert error.message.startswith(
        f"group reduce inside a loop (the `while` at line {line('warp-while')}) whose condition "
        f"depends on the warp id")
    assert error.loc.line == line("reduce-in-while")


@hk.kernel(grid=GRID, warps=4)
def alloc_in_warp_branch(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    if hk.arch.warp_id > 1:
        s = hk.shared(hk.ST(hk.bf16, 16, 16))  # <- alloc-in-if


def test_verify_refuses_a_shared_allocation_in_a_branch_on_the_warp_id():
    error = refusal(alloc_in_warp_branch, "gfx942")
    assert "shared memory is allocated once for the whole block" in error.message
    assert error.op == "shared"
    assert error.loc.line == line("alloc-in-if")


@hk.kernel(grid=GRID, warps=4)
def branch_on_a_block_wide_value(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    total = hk.group.sum(hk.to_float(hk.arch.warp_id))
    if total > 1.0:
        hk.barrier()


def test_verify_accepts_a_branch_on_a_group_reduction():
    branch_on_a_block_wide_value.trace(target="gfx1100")


@hk.kernel(grid=GRID, warps=1)  # <- fp8-kernel
def fp8_copy(a: hk.Tensor[hk.fp8], o: hk.Tensor[hk.fp8]):
    o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.fp8, 16, 64))


def test_verify_refuses_a_dtype_the_target_lacks():
    error = refusal(fp8_copy, "gfx942")
    assert error.message == "fp8 is not supported on gfx942"
    assert error.op == "tensor parameter 1"
    assert error.hint == ("use one of bf16, fp16, fp32, i32, i8, bool on gfx942, or trace for a "
                          "target that has fp8 (gfx1201, gfx950, sm_90a)")
    assert error.loc.line == line("fp8-kernel")
    fp8_copy.trace(target="gfx950")


def test_verify_refuses_fp8_where_the_target_has_no_fp8_mma(monkeypatch):
    real_get = targets.get
    holds_fp8 = dataclasses.replace(real_get("gfx942"), name="gfx942",
                                    dtypes=real_get("gfx942").dtypes + ("fp8",))
    monkeypatch.setattr(targets, "get",
                        lambda name: holds_fp8 if name == "gfx942" else real_get(name))
    error = refusal(fp8_copy, "gfx942")
    assert error.message == "fp8 is not supported on gfx942: gfx942 has no fp8 matrix instruction"


# ---- fragments -----------------------------------------------------------------------------

@hk.kernel(grid=GRID, warps=1)
def gram(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    t = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
    o[0, 0, 0, 0] = hk.mma_ABt(t, t, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- both-fragments


def test_fragments_refuses_one_tile_as_two_fragments():
    error = refusal(gram, "gfx1100")
    assert error.message == (
        f"this 16x16 bf16 tile is operand b here but operand a of the mma at line "
        f"{line('both-fragments')}: a register tile holds one MMA fragment layout, and these "
        f"two differ")
    assert error.hint.startswith("load it twice")
    assert error.loc.line == line("both-fragments")


@hk.kernel(grid=GRID, warps=1)
def col_operand_from_shared(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16],
                            o: hk.Tensor[hk.fp32]):
    sa = hk.shared(hk.ST(hk.bf16, 16, 32))
    sb = hk.shared(hk.ST(hk.bf16, 32, 16))
    hk.group.load(sa, a[0, 0, 0, 0])
    hk.group.load(sb, b[0, 0, 0, 0])
    hk.wait_for(sa, sb)
    x = sa.load(hk.RT(hk.bf16, 16, 32))
    y = sb.load(hk.RT(hk.bf16, 32, 16, "col"))  # <- slow-load
    hk.wait_for(x, y)
    o[0, 0, 0, 0] = hk.mma_AB(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- slow-mma


@pytest.mark.parametrize("target", ["gfx942", "gfx1100", "gfx1201"])
def test_fragments_refuses_a_16_bit_operand_in_the_slow_shared_layout(target):
    error = refusal(col_operand_from_shared, target)
    assert error.message == (
        f"mma operand b (the mma at line {line('slow-mma')}) is a 16-bit tile loaded from "
        f"shared memory in col layout, which reads ~8x slower on {target} than row layout")
    assert error.hint == ("load it in row layout (hk.RT(hk.bf16, 16, 32) from a shared tile "
                          "holding its transpose) and use mma variant ABt instead of AB")
    assert error.op == "shared load"
    assert error.loc.line == line("slow-load")


@pytest.mark.parametrize("target", ["gfx950", "sm_90a"])
def test_fragments_accepts_either_layout_where_both_read_fast(target):
    col_operand_from_shared.trace(target=target)


@hk.kernel(grid=GRID, warps=1)
def short_k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
    y = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
    o[0, 0, 0, 0] = hk.mma_ABt(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- short-k


def test_fragments_refuses_dims_the_instruction_does_not_divide():
    error = refusal(short_k, "gfx950")
    assert error.message == (
        "an mma of bf16 tiles with M=16, N=16, K=16 does not divide into gfx950's instruction "
        "v_mfma_f32_16x16x32_bf16 (16x16x32): K=16 is not a multiple of 32")
    assert error.hint == "use tiles whose M is a multiple of 16, N of 16 and K of 32"
    assert error.loc.line == line("short-k")
    short_k.trace(target="gfx942")  # 16x16x16 is gfx942's bf16 instruction


# ---- lds-alloc -----------------------------------------------------------------------------

@hk.kernel(grid=GRID, warps=1)
def too_much_shared(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 64, 128))  # <- shared-1
    t = hk.shared(hk.ST(hk.fp32, 64, 128))  # <- shared-2
    v = hk.shared(hk.SV(hk.fp32, 4))  # <- shared-3


def test_lds_alloc_refuses_more_shared_memory_than_the_target_has():
    error = refusal(too_much_shared, "gfx942")
    assert error.message == (
        f"the shared tiles need 65552 bytes, over gfx942's 65536 bytes of shared memory per "
        f"block (64x128 fp32 shared tile at line {line('shared-1')}: 32768 bytes; 64x128 fp32 "
        f"shared tile at line {line('shared-2')}: 32768 bytes; 4-element fp32 shared vector at "
        f"line {line('shared-3')}: 16 bytes)")
    assert error.op == "shared"
    assert error.loc.line == line("shared-3")
    trace = too_much_shared.trace(target="gfx950")
    fn = _kernel_func(trace)
    assert fn.attributes["kt.lds_bytes"].value.data == 65552
    assert [op.prop_int("offset") for op in _ops(trace, kt.AllocOp)] == [0, 32768, 65536]


FILLING_COLS = (232448 - 1024) // 32   # a 16-row bf16 tile: sm_90a's shared memory less 1 KiB


@hk.kernel(grid=GRID, warps=4)
def mbarrier_over_shared(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    big = hk.shared(hk.ST(hk.bf16, 16, FILLING_COLS))
    big.store(hk.zeros(hk.RT(hk.bf16, 16, 64)), col=0)
    s = hk.shared(hk.ST(hk.bf16, 16, 32))  # <- tma-tile
    hk.group.load(s, x[0, 0])
    hk.wait_for(s)
    hk.barrier()
    t, u = s.load(hk.RT(hk.bf16, 16, 32)), big.load(hk.RT(hk.bf16, 16, 32))
    hk.wait_for(t, u)
    o[0, 0] = t + u


def test_lds_alloc_refuses_tiles_that_fit_when_their_mbarriers_do_not():
    """The tiles take sm_90a's shared memory exactly; the TMA copy's 8-byte mbarrier after
    them is what does not fit (once a raw StopIteration)."""
    error = refusal(mbarrier_over_shared, "sm_90a")
    assert "the 1 mbarrier (8 bytes each)" in error.message
    assert "bring the total to 232456 bytes" in error.message
    assert error.hint.startswith("free at least 8 bytes")
    assert error.loc.line == line("tma-tile")
    # without TMA copies (cp.async) there is no mbarrier, and the tiles fit exactly
    with pytest.warns(KernelWarning, match="232448 of the 232448 bytes"):
        plain = mbarrier_over_shared.trace_copies("sm_90a", False, {})
    assert _kernel_func(plain).attributes["kt.lds_bytes"].value.data == 232448


# ---- waits ---------------------------------------------------------------------------------

@hk.kernel(grid=GRID, warps=1)
def mma_before_wait(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    x = s.load(hk.RT(hk.bf16, 16, 16))  # <- trap1-load
    y = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
    acc = hk.mma_ABt(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))  # <- trap1-mma
    hk.wait_for(x)
    o[0, 0, 0, 0] = acc


def test_waits_refuses_a_use_before_the_wait_trap_1():
    error = refusal(mma_before_wait, "gfx942")
    assert error.message == (f"mma uses the 16x16 bf16 tile loaded at line {line('trap1-load')} "
                             f"before its wait")
    assert error.op == "mma"
    assert error.loc.line == line("trap1-mma")


@hk.kernel(grid=GRID, warps=1)
def older_load_unnamed(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    x = s.load(hk.RT(hk.bf16, 16, 16))  # <- unnamed-load
    y = s.load(hk.RT(hk.bf16, 16, 16))
    hk.wait_for(y)  # <- names-only-y
    o[0, 0, 0, 0] = x + y  # <- unnamed-use


def test_waits_refuses_a_use_of_registers_no_wait_names():
    error = refusal(older_load_unnamed, "gfx942")
    assert error.message == (
        f"add uses the 16x16 bf16 tile loaded at line {line('unnamed-load')}, which no wait "
        f"names: the wait at line {line('names-only-y')} completes it, but a wait keeps only "
        f"the tiles it names ahead of their uses")
    assert error.hint == "name it in that wait: hk.wait_for(..., tile)"
    assert error.loc.line == line("unnamed-use")


@hk.kernel(grid=GRID, warps=1)
def carried_unwaited(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    y = a[0, 0, 0, 1].load(hk.RT(hk.bf16, 16, 16))
    x = s.load(hk.RT(hk.bf16, 16, 16))  # <- carried-load
    acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
    for i in hk.range(4):  # <- carrying-loop
        hk.wait_for(x)
        acc = hk.mma_ABt(x, y, acc)
        x = s.load(hk.RT(hk.bf16, 16, 16))
    hk.wait_for(x)
    o[0, 0, 0, 0] = acc


def test_waits_refuses_a_loop_carrying_registers_before_their_wait():
    error = refusal(carried_unwaited, "gfx1100")
    assert error.message == (
        f"the loop at line {line('carrying-loop')} carries the 16x16 bf16 tile loaded at line "
        f"{line('carried-load')} before its wait")
    assert error.op == "loop"
    assert error.hint.startswith("carrying a tile into or out of a loop or branch copies its "
                                 "registers")
    assert error.loc.line == line("carrying-loop")


@hk.kernel(grid=GRID, warps=1)
def read_while_filling(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])  # <- filling-copy
    x = s.load(hk.RT(hk.bf16, 16, 16))  # <- filling-read
    hk.wait_for(s, x)
    o[0, 0, 0, 0] = x


def test_waits_refuses_a_shared_load_from_a_tile_still_being_filled():
    error = refusal(read_while_filling, "gfx942")
    assert error.message == (f"shared load reads the shared tile that the group load at line "
                             f"{line('filling-copy')} is still filling")
    assert error.loc.line == line("filling-read")


@hk.kernel(grid=GRID, warps=4)
def barrier_is_not_a_wait(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])  # <- trap4-copy
    hk.barrier()  # <- trap4-barrier
    x = s.load(hk.RT(hk.bf16, 16, 16))  # <- trap4-read
    hk.wait_for(x)
    o[0, 0, 0, 0] = x


@pytest.mark.parametrize("target,counter", [("gfx950", "vmcnt"), ("gfx942", "vmcnt"),
                                            ("gfx1201", "loadcnt"),
                                            ("sm_90a", "its tile's mbarrier (a TMA copy)")])
def test_waits_refuses_a_copy_in_flight_at_a_barrier_trap_4(target, counter):
    error = refusal(barrier_is_not_a_wait, target)
    assert error.message == (
        f"the copy into the shared tile at line {line('trap4-copy')} is still in flight at the "
        f"barrier at line {line('trap4-barrier')}: on {target} it completes on {counter}, which "
        f"a barrier does not wait for; wait_for(tile) before the barrier")
    assert error.loc.line == line("trap4-read")


@hk.kernel(grid=GRID, warps=1)
def copy_over_copy(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])  # <- first-copy
    hk.group.load(s, a[0, 0, 0, 1])  # <- second-copy
    hk.wait_for(s)


def test_waits_refuses_a_copy_into_a_tile_still_being_filled():
    error = refusal(copy_over_copy, "gfx942")
    assert error.message == (f"group load into the shared tile that the group load at line "
                             f"{line('first-copy')} is still filling")
    assert error.op == "group load"
    assert error.loc.line == line("second-copy")


@hk.kernel(grid=GRID, warps=1)
def copy_over_read(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    hk.wait_for(s)
    x = s.load(hk.RT(hk.bf16, 16, 16))  # <- pending-read
    hk.group.load(s, a[0, 0, 0, 1])  # <- copy-over-read
    hk.wait_for(s, x)
    o[0, 0, 0, 0] = x


def test_waits_refuses_a_copy_into_a_tile_a_shared_load_still_reads():
    error = refusal(copy_over_read, "gfx942")
    assert error.message == (f"group load into the shared tile that the shared load at line "
                             f"{line('pending-read')} is still reading")
    assert error.loc.line == line("copy-over-read")


@hk.kernel(grid=GRID, warps=1)
def copy_never_waited(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 16))
    hk.group.load(s, a[0, 0, 0, 0])
    for i in hk.range(4):
        hk.wait_for(s)
        hk.group.load(s, a[0, 0, 0, i + 1])  # <- never-waited


def test_waits_refuses_a_kernel_that_ends_with_a_copy_in_flight():
    error = refusal(copy_never_waited, "gfx942")
    assert error.message == ("this group load is still in flight when the kernel ends: nothing "
                             "waits for its data")
    assert error.loc.line == line("never-waited")


# ---- waits: the counts of a double-buffered GEMM -----------------------------------------------

@hk.kernel(grid=GRID, warps=4)
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
         K: hk.Constexpr[int] = 8):
    row, col = hk.arch.block_idx.y, hk.arch.block_idx.x
    sa, sa_next = hk.shared(hk.ST(hk.bf16, 32, 32)), hk.shared(hk.ST(hk.bf16, 32, 32))
    sb, sb_next = hk.shared(hk.ST(hk.bf16, 32, 32)), hk.shared(hk.ST(hk.bf16, 32, 32))
    acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
    hk.group.load(sa, a[0, 0, row, 0])
    hk.group.load(sb, b[0, 0, col, 0])
    for k in hk.range(K):
        hk.group.load(sa_next, a[0, 0, row, k + 1])     # prefetch step k+1 ...
        hk.group.load(sb_next, b[0, 0, col, k + 1])
        hk.wait_for(sa, sb)                             # ... while step k lands
        hk.barrier()
        ta = sa.load(hk.RT(hk.bf16, 32, 32))
        tb = sb.load(hk.RT(hk.bf16, 32, 32))
        hk.wait_for(ta, tb)
        acc = hk.mma_ABt(ta, tb, acc)
        hk.barrier()
        sa, sa_next = sa_next, sa
        sb, sb_next = sb_next, sb
    hk.wait_for(sa, sb)
    c[0, 0, row, col] = acc


def _kernel_func(trace):
    from ktile.ir.query import kernel_func
    return kernel_func(trace.module)


def _ops(trace, kind):
    return [op for op in _kernel_func(trace).walk() if isinstance(op, kind)]


def _counts(trace) -> list[dict[str, int]]:
    return [{name: op.prop_int(name) for name in ("vm", "lds") if op.prop_int(name) is not None}
            for op in _ops(trace, kt.WaitForOp)]


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "gfx1100", "gfx1201"])
def test_waits_derives_the_prefetch_counts_of_a_double_buffered_gemm(target):
    trace = gemm.trace(target=target)
    assert _counts(trace) == [{"vm": 2}, {"lds": 0}, {"vm": 0}]
    assert trace.warnings == []


def test_waits_gives_no_lds_count_where_shared_loads_are_scoreboarded():
    # the swapped buffers are carried through the loop, so their copies stay cp.async ones
    assert _counts(gemm.trace(target="sm_90a")) == [{"vm": 2}, {}, {"vm": 0}]
    assert _counts(gemm.trace_copies("sm_90a", False, {})) == [{"vm": 2}, {}, {"vm": 0}]


def test_the_pipeline_annotates_the_gemm():
    trace = gemm.trace(target="gfx1100")
    fn = _kernel_func(trace)
    assert fn.attributes["kt.lds_bytes"].value.data == 4 * 32 * 32 * 2
    assert [op.prop_int("offset") for op in _ops(trace, kt.AllocOp)] == [0, 2048, 4096, 6144]
    mma = _ops(trace, kt.MmaOp)[0]
    assert [v.type.fragment.data for v in (mma.a, mma.b, mma.acc, mma.result)] == \
        ["a", "b", "acc", "acc"]
    # RDNA3 holds WMMA operands twice: acc 32 + a 2*16 + b 2*16 registers per lane
    assert fn.attributes["kt.vgpr_estimate"].value.data == 96


# ---- budgets -------------------------------------------------------------------------------

@hk.kernel(grid=GRID, warps=1)
def spills(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 128, 128))  # <- big-1
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 128, 128))  # <- big-2
    o[0, 0, 0, 0] = x + y  # <- spill-point


def test_budgets_refuses_a_certain_spill_trap_2():
    error = refusal(spills, "gfx942")
    assert error.message == (
        f"about 512 registers per lane are live at this add, over the 256 a lane can address "
        f"on gfx942: a spill is certain, and a spill reorders memory traffic around the waits "
        f"(live here: the 128x128 fp32 tile from line {line('big-1')} (256 registers), the "
        f"128x128 fp32 tile from line {line('big-2')} (256 registers))")
    assert error.hint == "use smaller tiles, or more warps each holding a smaller share of the work"
    assert error.loc.line == line("spill-point")


@hk.kernel(grid=GRID, warps=1)
def nearly_spills(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 128))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 64, 64))
    z = a[0, 0, 0, 2].load(hk.RT(hk.fp32, 64, 32))
    o[0, 0, 0, 0] = x  # <- near-spill
    o[0, 0, 0, 1] = y
    o[0, 0, 0, 2] = z


def test_budgets_warns_above_three_quarters_of_the_registers():
    with pytest.warns(KernelWarning, match="close to spilling"):
        trace = nearly_spills.trace(target="gfx942")
    assert trace.warnings == [
        f"{__file__}:{line('near-spill')}: warning: in kernel 'nearly_spills': about 224 of the "
        f"256 registers per lane on gfx942 (88%) are live at this store: close to spilling (live "
        f"here: the 64x128 fp32 tile from line {line('near-spill') - 3} (128 registers), the "
        f"64x64 fp32 tile from line {line('near-spill') - 2} (64 registers), the 64x32 fp32 "
        f"tile from line {line('near-spill') - 1} (32 registers))"]
    assert _kernel_func(trace).attributes["kt.vgpr_estimate"].value.data == 224


@hk.kernel(grid=GRID, warps=1)  # <- big-shared
def nearly_all_shared(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 128, 128))
    t = hk.shared(hk.ST(hk.bf16, 120, 128))


def test_budgets_warns_above_nine_tenths_of_shared_memory():
    with pytest.warns(KernelWarning):
        trace = nearly_all_shared.trace(target="gfx942")
    assert trace.warnings == [
        f"{__file__}:{line('big-shared')}: warning: in kernel 'nearly_all_shared': the shared "
        f"tiles take 63488 of the 65536 bytes of shared memory per block on gfx942 (97%)"]


# ---- the pipeline and ktile-opt ------------------------------------------------------------

def test_the_pipeline_is_the_six_passes_in_order():
    from ktile.passes import PASSES, PIPELINE
    assert [p.name for p in PIPELINE] == ["verify", "fragments", "tensor-maps", "lds-alloc",
                                          "waits", "budgets"]
    assert list(PASSES) == [p.name for p in PIPELINE]


def _ktile_opt(*args: str, stdin: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ktile.tools.opt", *args], input=stdin,
                          capture_output=True, text=True, cwd=REPO)


def test_ktile_opt_runs_the_passes_by_name_and_prints_kernel_errors():
    from ktile.ir.printing import module_text
    import ktile.passes

    original = ktile.passes.run_pipeline
    ktile.passes.run_pipeline = lambda module, target: []
    try:
        text = module_text(copy_over_copy.trace(target="gfx950").module, locations=True)
    finally:
        ktile.passes.run_pipeline = original
    copy_over_copy._traces.clear()

    unchecked = _ktile_opt(stdin=text)
    assert unchecked.returncode == 0 and '"kt.copy_async"' in unchecked.stdout

    refused = _ktile_opt("-p", "verify,fragments,lds-alloc,waits,budgets", stdin=text)
    assert refused.returncode == 1
    assert "Traceback" not in refused.stderr
    assert (f"{__file__}:{line('second-copy')}: error: in kernel 'copy_over_copy', group load: "
            f"group load into the shared tile") in refused.stderr

    diagnosed = _ktile_opt("-p", "waits", "--verify-diagnostics", stdin=text)
    assert diagnosed.returncode == 0 and "is still filling" in diagnosed.stdout

"""sm_90a's mma from shared kept in flight (the waits pass's "wgmma" kind, waits_mma.py) and
`acc += sa @ sb.T` with both operands in shared memory: the counts the pass derives at the
author's waits, the wait it inserts before a read of an accumulator still in flight (at that
read's line), nothing of it on other targets, the refusals with their text and line, and the
interpreter's per-warp rows of a shared a."""
import inspect

import numpy as np
import pytest

import ktile as hk
from examples_index import load
from ktile.errors import KernelError
from ktile.ir import ops as kt
from ktile.ir.query import loc_of

torch = pytest.importorskip("torch")

GRID = dict(grid=lambda p: (1, 1, 1))


def line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def waits(fn, target="sm_90a", warps=4) -> list[tuple[int, int | None]]:
    """(line, wgmma count) of every wait of fn traced for `target`, in program order."""
    module = hk.kernel(warps=warps, **GRID)(fn).trace(target).module
    return [(loc_of(op).line, op.prop_int("wgmma")) for op in module.walk()
            if isinstance(op, kt.WaitForOp)]


def refused(fn, marker: str, *words, warps=4):
    with pytest.raises(KernelError) as info:
        hk.kernel(warps=warps, **GRID)(fn).trace("sm_90a")
    text = str(info.value)
    for word in words:
        assert word in text, f"{word!r} not in:\n{text}"
    assert info.value.loc is not None and info.value.loc.line == line_of(fn, marker), text


def three_mmas(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    sa = [hk.shared(hk.ST(hk.bf16, 64, 32)) for _ in range(3)]
    sb = [hk.shared(hk.ST(hk.bf16, 64, 32)) for _ in range(3)]
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    acc += sa[0] @ sb[0].T
    acc += sa[1] @ sb[1].T
    acc += sa[2] @ sb[2].T
    hk.wait_for(sa[0])                 # wait 0
    hk.wait_for(sb[1])                 # wait 1
    c[0, 0, 0, 0] = acc                # read
    hk.wait_for(acc)                   # wait 2


def test_counts_are_the_groups_issued_after_the_newest_named():
    found = waits(three_mmas)
    lines = [line_of(three_mmas, f"# {w}") for w in ("wait 0", "wait 1", "read", "wait 2")]
    # the store reads acc while the third group flies: the pass puts a wait on its line
    assert found == [(lines[0], 2), (lines[1], 1), (lines[2], 0), (lines[3], None)]


def test_other_targets_complete_the_mma_at_once():
    found = waits(three_mmas, target="gfx950")
    assert [count for _, count in found] == [None, None, None]   # no wait inserted either


def test_the_pipelined_k_loop_keeps_one_group_in_flight():
    """ktile.ops.matmul's wgmma_nt (checked on the H200): one wait per unrolled stage keeps
    the newest MMA in flight, then the last drains."""
    from ktile.ops.matmul import tiles
    source = tiles.wgmma_nt("bf16").trace("sm_90a").source()
    counts = [line.split("kt::wgmma_wait<")[1][0] for line in source.splitlines()
              if "kt::wgmma_wait<" in line]
    assert counts == ["1"] * 3 + ["0"], counts


def test_the_example_drains_each_mma():
    """examples/04_gemm.py's gemm_wgmma waits for each tile's MMA (its wait_group 1 form gave
    wrong rows at STAGES 2 and 4 on the H200): every wait in its loop is wait_group 0."""
    source = load("04_gemm").gemm_wgmma.trace("sm_90a", STAGES=4).source()
    counts = [line.split("kt::wgmma_wait<")[1][0] for line in source.splitlines()
              if "kt::wgmma_wait<" in line]
    assert counts and set(counts) == {"0"}, counts


def read_in_the_loop(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    sa = hk.shared(hk.ST(hk.bf16, 64, 32))
    sb = hk.shared(hk.ST(hk.bf16, 64, 32))
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for k in range(4):
        acc += sa @ sb.T
        c[0, 0, 0, k] = acc            # read
    hk.wait_for(sa)


def test_a_read_inside_the_loop_gets_a_full_wait_at_its_line():
    found = waits(read_in_the_loop)
    assert found[0] == (line_of(read_in_the_loop, "# read"), 0)


def test_carrying_and_accumulating_are_no_reads():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 64, 32))
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        for _ in range(4):
            acc += sa @ sb.T
            acc += sa @ sb.T
        hk.wait_for(acc)  # only
        c[0, 0, 0, 0] = acc
    assert waits(k) == [(line_of(k, "# only"), 0)]


def test_a_copy_into_a_tile_an_mma_reads_is_refused():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 64, 32))
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += sa @ sb.T
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, 0)])  # <- here
        hk.wait_for(sb)
        c[0, 0, 0, 0] = acc
    refused(k, "# <- here", "group load into the shared tile that the mma at line",
            "may still be reading", "hk.wait_for(tile) first")


def test_several_warpgroups_need_a_barrier_after_the_wait():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 128, 32))
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += sa @ sb.T
        hk.wait_for(sb)
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, 0)])  # <- here
        hk.wait_for(sb)
        c[0, 0, 0, 0] = acc
    refused(k, "# <- here", "other warpgroups may still be reading", "hk.barrier()", warps=8)

    def fixed(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 128, 32))
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += sa @ sb.T
        hk.wait_for(sb)  # named
        hk.barrier()
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, 0)])
        hk.wait_for(sb)
        c[0, 0, 0, 0] = acc
    assert waits(fixed, warps=8)[0] == (line_of(fixed, "# named"), 0)


def test_a_shared_a_whose_rows_do_not_split_into_the_accumulators():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 32, 32))
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += sa @ sb.T  # <- here
        c[0, 0, 0, 0] = acc
    refused(k, "# <- here", "split across the block's 4 warps", "8 rows each",
            "give the shared a 64 rows")


def test_the_interpreter_gives_each_warp_its_rows_of_a_shared_a():
    @hk.kernel(warps=4, **GRID)
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 64, 32))
        sb = hk.shared(hk.ST(hk.bf16, 48, 32))
        hk.group.load(sa, a[hk.tile_coord(0, 0, 0, 0)])
        hk.group.load(sb, b[hk.tile_coord(0, 0, 0, 0)])
        hk.wait_for(sa, sb)
        hk.barrier()
        acc = hk.zeros(hk.RT(hk.fp32, 16, 48))
        acc += sa @ sb.T
        c[hk.tile_coord(0, 0, hk.arch.warp_id, 0)] = acc
    gen = torch.Generator().manual_seed(5)
    a = torch.randn((1, 1, 50, 20), generator=gen).to(torch.bfloat16)    # ragged: zero-filled
    b = torch.randn((1, 1, 40, 20), generator=gen).to(torch.bfloat16)
    c = torch.full((1, 1, 50, 40), float("nan"))
    k.interpret(a, b, c, target="sm_90a")
    want = a.float().numpy()[0, 0] @ b.float().numpy()[0, 0].T
    np.testing.assert_allclose(c.numpy()[0, 0], want, rtol=1e-5, atol=1e-4)


def test_a_loop_of_mmas_with_no_wait_inside_keeps_a_finite_queue():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 64, 32))
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        for _ in range(hk.cdiv(a.cols, 32)):             # a loop the trace keeps
            acc += sa @ sb.T
        c[0, 0, 0, 0] = acc  # read
    assert waits(k) == [(line_of(k, "# read"), 0)]

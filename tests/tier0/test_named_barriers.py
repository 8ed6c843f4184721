"""Named barriers (`hk.bar_sync` / `hk.bar_arrive`): what they trace and translate to, their
meaning on the interpreter traced for sm_90a (a phase completes at its thread count, a sync
waits for it while the other warps run, a turn never given deadlocks at the sync), and each
misuse refused at the author's line (ids, thread counts, targets, one count per id)."""
import inspect

import numpy as np
import pytest

import ktile as hk
from ktile.errors import KernelError
from ktile.ir.ops_named_barrier import NamedBarrierOp

torch = pytest.importorskip("torch")

ROWS = 16


def handoff(src: hk.Tensor[hk.fp32], mid: hk.Tensor[hk.fp32], dst: hk.Tensor[hk.fp32], *,
            ARRIVE_ID: hk.Constexpr[int] = 1, THREADS: hk.Constexpr[int] = 256):
    """Warpgroup 1 copies src to mid, then arrives; warpgroup 0 syncs, then copies mid to dst
    (a third warpgroup, if any, does nothing). On the interpreter warp 0 runs first: without
    the sync it would read mid unwritten."""
    w = hk.arch.warp_id
    if w // 4 == 1:
        mid[hk.tile_coord(0, 0, w - 4, 0)] = \
            src[hk.tile_coord(0, 0, w - 4, 0)].load(hk.RT(hk.fp32, ROWS, ROWS))
        hk.bar_arrive(ARRIVE_ID, THREADS)
    if w // 4 == 0:
        hk.bar_sync(1, THREADS)                                  # mark sync
        dst[hk.tile_coord(0, 0, w, 0)] = \
            mid[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.fp32, ROWS, ROWS))


HANDOFF = hk.kernel(grid=lambda p: (1, 1, 1), warps=8)(handoff)
HANDOFF_12 = hk.kernel(grid=lambda p: (1, 1, 1), warps=12)(handoff)


def buffers():
    src = torch.arange(4 * ROWS * ROWS, dtype=torch.float32).reshape(4 * ROWS, ROWS) + 1
    return src, torch.zeros_like(src), torch.zeros_like(src)


def test_a_sync_waits_for_the_arrivals_of_the_other_warpgroup():
    src, mid, dst = buffers()
    HANDOFF.interpret(src, mid, dst, target="sm_90a")
    assert np.array_equal(dst.numpy(), src.numpy())


def test_sm90a_translates_to_bar_sync_and_bar_arrive():
    trace = HANDOFF.trace("sm_90a")
    ops = [(op.mode.data, op.prop_int("id"), op.prop_int("threads"))
           for op in trace.module.walk() if isinstance(op, NamedBarrierOp)]
    assert ops == [("arrive", 1, 256), ("sync", 1, 256)]
    source = trace.source()
    assert "kt::bar_arrive<1, 256>();" in source and "kt::bar_sync<1, 256>();" in source


def test_a_turn_never_given_deadlocks_at_the_sync():
    """Warpgroup 1 arrives on barrier 2: barrier 1's phase never completes."""
    src, mid, dst = buffers()
    with pytest.raises(KernelError) as info:
        HANDOFF.interpret(src, mid, dst, target="sm_90a", ARRIVE_ID=2)
    assert "never passes" in str(info.value)
    assert info.value.loc.line == line_of(handoff, "# mark sync")


def test_a_phase_completes_at_its_thread_count_only():
    """384 threads (a block of 12 warps): the 256 that sync and arrive are not enough."""
    src, mid, dst = buffers()
    HANDOFF_12.interpret(src, mid, dst, target="sm_90a")
    assert np.array_equal(dst.numpy(), src.numpy())
    with pytest.raises(KernelError, match="never passes"):
        HANDOFF_12.interpret(src, mid, dst, target="sm_90a", THREADS=384)


def line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def one_sync(barrier, threads):
    def kernel(o: hk.Tensor[hk.fp32]):
        hk.bar_sync(barrier, threads)                            # mark
    return kernel


@pytest.mark.parametrize("barrier, threads, words", [
    (0, 256, "id must be an int in 1..15"), (16, 256, "id must be an int in 1..15"),
    (True, 256, "id must be an int in 1..15"), (1, 48, "multiple of 32 in 32..256"),
    (1, 0, "multiple of 32 in 32..256"), (1, 512, "multiple of 32 in 32..256 (the block's")])
def test_bad_ids_and_thread_counts_are_refused_at_their_line(barrier, threads, words):
    fn = one_sync(barrier, threads)
    with pytest.raises(KernelError) as info:
        hk.kernel(grid=lambda p: (1, 1, 1), warps=8)(fn).trace("sm_90a")
    assert words in str(info.value) and info.value.loc.line == line_of(fn, "# mark")


def test_targets_without_warp_specialisation_are_refused():
    fn = one_sync(1, 64)
    with pytest.raises(KernelError, match="gfx950 has no warp specialisation") as info:
        hk.kernel(grid=lambda p: (1, 1, 1), warps=4)(fn).trace("gfx950")
    assert info.value.loc.line == line_of(fn, "# mark")


def test_the_verify_pass_refuses_two_counts_for_one_id():
    from ktile.passes.verify import Verify
    module = HANDOFF.trace("sm_90a").module.clone()
    sync = next(op for op in module.walk() if isinstance(op, NamedBarrierOp) and
                op.mode.data == "sync")
    sync.parent_block().insert_op_before(NamedBarrierOp("arrive", 1, 128), sync)
    with pytest.raises(KernelError, match="counts 128 threads here and 256"):
        Verify().apply(None, module)
    Verify().apply(None, HANDOFF.trace("sm_90a").module.clone())   # as traced: accepted


def test_the_ir_prints_and_parses_back():
    from ktile.ir.printing import module_text, parse_module
    trace = HANDOFF.trace("sm_90a")
    for generic in (False, True):
        text = module_text(trace.module, generic=generic, locations=False)
        assert "kt.named_barrier" in text
        assert module_text(parse_module(text), generic=generic, locations=False) == text
    parse_module(trace.dump(generic=True, locations=True), verify=True)

"""Planted bugs: a real example's generated C++ with one line changed, run under wave emulation,
is refused with the ISA precondition it breaks, at the kernel's Python line. Each test fails if
its check is taken out of the emulated instruction layer (the run would then finish, with some
result)."""
import pytest
import torch

from examples_index import load
from ktile.emulate import EmulationError, emulate

pytestmark = pytest.mark.tier2

GEMM = load("04_gemm")


def _gemm_tensors():
    g = torch.Generator().manual_seed(3)
    a = torch.randn((1, 1, 64, 128), generator=g).to(torch.bfloat16)
    b = torch.randn((1, 1, 96, 128), generator=g).to(torch.bfloat16)
    return a, b, torch.zeros((1, 1, 64, 96))


def _planted(kernel, target, old, new, occurrence=0):
    """The kernel's generated C++ for `target`, its `occurrence`-th `old` (-1: the last) replaced."""
    source = kernel.source(target=target)
    count = source.count(old)
    assert count > max(occurrence, 0), f"'{old}' is not in the generated C++ any more"
    at = source.rindex(old) if occurrence == -1 else source.index(old)
    return source[:at] + new + source[at + len(old):]


def _kernel_line(text):
    """The line of 04_gemm.py holding `text` (the example may move; its statements stay)."""
    lines = open(GEMM.__file__).read().splitlines()
    found = [n for n, line in enumerate(lines, 1) if text in line]
    assert len(found) >= 1, text
    return found


def _refusal(kernel, target, source):
    with pytest.raises(EmulationError) as info:
        emulate(kernel, *_gemm_tensors(), target=target, source=source)
    return info.value


def test_wmma_operands_not_replicated_across_half_waves_gfx1100():
    """RDNA3 WMMA reads its operands replicated: lane 16 of rb given another value is reported,
    naming both lanes, the element and the instruction."""
    planted = _planted(GEMM.gemm, "gfx1100", "kt::bind(v19);",
                       "kt::bind(v19); v19.set(3, kt::isa::lane() < 16 ? v19.get(3) : kt::bf16(7.0f));")
    error = _refusal(GEMM.gemm, "gfx1100", planted)
    assert error.check == "mma-replicas"
    assert "v_wmma_f32_16x16x16_bf16: lanes 0 and 16 hold different" in error.message
    assert "element 3" in error.message and "lane 16" in str(error)
    assert error.loc is not None and error.loc.line in _kernel_line("acc += ra @ rb.T")


def test_read_of_lds_whose_dma_copy_was_not_waited_gfx950():
    """gfx950's global->LDS DMA completes only at its wave's vmcnt wait: with the wait deleted,
    the shared-tile load reads bytes still in flight, and the error names both lines."""
    planted = _planted(GEMM.gemm, "gfx950", "kt::wait<0, -1>();", "")
    error = _refusal(GEMM.gemm, "gfx950", planted)
    assert error.check == "lds-copy-not-waited"
    assert "wave 0 lane 0" in str(error)
    assert error.loc.line in _kernel_line("ra = sa.load(hk.RT(hk.bf16, BM, BK))")
    copy_lines = _kernel_line("hk.group.load(sa, a[hk.tile_coord(z, 0, m, k)])")
    assert any(f"the copy was issued at {GEMM.__file__}:{n}]" in error.message for n in copy_lines)


def test_read_of_another_waves_unwaited_dma_copy_gfx950():
    """Four waves share the copy; a barrier with no wait before it does not make another wave's
    copy land (trap 4)."""
    planted = _planted(GEMM.gemm_warps, "gfx950", "kt::wait<0, -1>();", "")
    error = _refusal(GEMM.gemm_warps, "gfx950", planted)
    assert error.check == "lds-copy-not-waited"
    assert "issued by wave" in error.message and "barrier does not wait" in error.message
    assert error.loc.line in _kernel_line("ra = sa.load(hk.RT(hk.bf16, BM // 2, BK), row=wm)")


def test_read_of_another_waves_copy_with_no_barrier_gfx1100():
    """gfx1100 has no asynchronous copy (kt::copy_async goes through registers, and deleting its
    wait changes nothing); what publishes the copy to the other waves is the barrier. Without it
    a wave reads LDS that another wave wrote: a race."""
    planted = _planted(GEMM.gemm_warps, "gfx1100", "kt::barrier();", "")
    error = _refusal(GEMM.gemm_warps, "gfx1100", planted)
    assert error.check == "lds-race"
    assert "wave 0 reads LDS" in error.message and "with no block barrier between" in error.message
    assert error.loc.line in _kernel_line("ra = sa.load(hk.RT(hk.bf16, BM // 2, BK), row=wm)")


def test_next_copy_overwriting_tiles_other_waves_read_gfx950():
    """The loop's last barrier keeps the next iteration's copy from overwriting what other waves
    are still reading: deleted, the copy is a write-after-read race."""
    planted = _planted(GEMM.gemm_warps, "gfx950", "kt::barrier();", "", occurrence=-1)
    error = _refusal(GEMM.gemm_warps, "gfx950", planted)
    assert error.check == "lds-race"
    assert "overwrites LDS" in error.message and "read with no block barrier between" in error.message
    assert error.loc.line in _kernel_line("hk.group.load(sa, a[hk.tile_coord(z, 0, m, k)])")


def test_deleting_the_wait_is_harmless_where_the_copy_is_synchronous_gfx1100():
    """The same deletion on gfx1100 (its copy completes in registers before the LDS writes, and
    the barrier follows) still matches the reference: the emulation refuses only what is wrong."""
    planted = _planted(GEMM.gemm, "gfx1100", "kt::wait<0, -1>();", "")
    a, b, c = _gemm_tensors()
    emulate(GEMM.gemm, a, b, c, target="gfx1100", source=planted)
    want = a.float()[0, 0] @ b.float()[0, 0].T
    assert torch.allclose(c[0, 0], want, atol=1e-2, rtol=1e-3)

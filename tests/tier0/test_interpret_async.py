"""Interpreter: shared memory, group copies, shared loads, waits and their counts, barriers
and group reductions across warps. Planted bugs (a wait removed, a count too large) are
made by editing a copy of a checked module, and must fail at run time at the right line."""
import numpy as np
import pytest

import ktile as hk
from ktile.dtypes import bf16
from ktile.errors import KernelError
from ktile.interpret import run_module
from ktile.ir import ops as kt
from xdsl.dialects.builtin import IntegerAttr, i64


def _rand(shape, dtype=bf16, seed=0):
    rng = np.random.default_rng(seed)
    return dtype.round(rng.standard_normal(shape).astype(np.float32))


def _line(marker: str) -> int:
    """The line of this file that holds `marker` (a comment on a kernel line)."""
    with open(__file__) as f:
        lines = [i for i, text in enumerate(f, 1) if text.rstrip().endswith(marker)]
    assert len(lines) == 1, marker
    return lines[0]


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, 32), hk.cdiv(p.c.rows, 32), p.c.batch), warps=2)
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    z, m, n = hk.arch.block_idx.z, hk.arch.block_idx.y, hk.arch.block_idx.x
    sa = hk.shared(hk.ST(hk.bf16, 32, 32))
    sb = hk.shared(hk.ST(hk.bf16, 32, 32))
    acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
    for k in range(hk.cdiv(a.cols, 32)):
        hk.load_async(sa, a[hk.tile_coord(z, 0, m, k)])
        hk.load_async(sb, b[hk.tile_coord(z, 0, n, k)])
        hk.wait_for(sa, sb)  # @vm-wait
        hk.barrier()
        ra = sa.load(hk.RT(hk.bf16, 32, 32))  # @load-a
        rb = sb.load(hk.RT(hk.bf16, 32, 32))  # @load-b
        hk.wait_for(ra, rb)  # @lds-wait
        acc += ra @ rb.T  # @mma
        hk.barrier()
    c[hk.tile_coord(z, 0, m, n)] = acc


def _gemm_module():
    """A copy of the checked GEMM, safe to plant a bug in."""
    return gemm.trace().module.clone()


def _waits(module) -> list[kt.WaitForOp]:
    return [op for op in module.walk() if isinstance(op, kt.WaitForOp)]


def _gemm_arrays(batch=1, m=32, n=32, k=64):
    a = _rand((batch, 1, m, k), seed=1)
    b = _rand((batch, 1, n, k), seed=2)
    return a, b, np.full((batch, 1, m, n), np.nan, np.float32)


@pytest.mark.parametrize("shape", [(1, 32, 32, 32), (1, 64, 96, 128), (2, 45, 70, 50)])
def test_async_gemm_with_two_warps(shape):
    a, b, c = _gemm_arrays(*shape)
    run_module(gemm.trace().module, [a, b, c])
    want = np.einsum("bdmk,bdnk->bdmn", a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


def test_counts_the_waits_pass_derived_are_the_ones_run():
    vm_wait, lds_wait = _waits(gemm.trace().module)
    assert (vm_wait.prop_int("vm"), lds_wait.prop_int("lds")) == (0, 0)


def test_missing_shared_load_wait_fails_at_the_use():
    module = _gemm_module()
    _waits(module)[1].detach()  # drop hk.wait_for(ra, rb)
    with pytest.raises(KernelError) as err:
        run_module(module, list(_gemm_arrays()))
    assert err.value.loc.line == _line("# @mma")
    assert (f"read of the 32x32 bf16 register tile loaded at line {_line('# @load-a')} "
            "before its wait") in err.value.message


def test_lds_count_one_leaves_the_newest_load_in_flight():
    module = _gemm_module()
    _waits(module)[1].properties["lds"] = IntegerAttr(1, i64)  # too lax: rb stays in flight
    with pytest.raises(KernelError) as err:
        run_module(module, list(_gemm_arrays()))
    assert err.value.loc.line == _line("# @mma")
    assert f"loaded at line {_line('# @load-b')} before its wait" in err.value.message


def test_vm_count_one_leaves_the_newest_copy_in_flight():
    module = _gemm_module()
    _waits(module)[0].properties["vm"] = IntegerAttr(1, i64)  # sa lands, sb does not
    with pytest.raises(KernelError, match="shared tile read while a copy into it is still "
                                          "in flight") as err:
        run_module(module, list(_gemm_arrays()))
    assert err.value.loc.line == _line("# @load-b")


def test_missing_copy_wait_fails_at_the_shared_load():
    module = _gemm_module()
    _waits(module)[0].detach()
    with pytest.raises(KernelError, match="still in flight") as err:
        run_module(module, list(_gemm_arrays()))
    assert err.value.loc.line == _line("# @load-a")


@hk.kernel(grid=(1, 1, 1), warps=2)
def stage(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 32))
    spare = hk.shared(hk.ST(hk.fp32, 16, 32))
    hk.load_async(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.load_async(spare, x[hk.tile_coord(0, 0, 0, 0)])  # @spare-copy
    hk.wait_for(s, spare)
    hk.barrier()
    t = s.load(hk.RT(hk.fp32, 16, 32))
    unread = s.load(hk.RT(hk.fp32, 16, 32))  # @unread-load
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, hk.arch.warp_id, 0)] = t * 2.0


def test_group_copy_is_split_among_warps_and_lands_whole():
    x = _rand((1, 1, 16, 20), hk.fp32, seed=3)  # ragged: the copy pads with zeros
    o = np.zeros((1, 1, 32, 20), np.float32)
    module = stage.trace().module.clone()
    for wait in _waits(module):
        wait.properties["lds"] = IntegerAttr(0, i64)  # also complete the unread load
    run_module(module, [x, o])
    np.testing.assert_array_equal(o[0, 0, :16], x[0, 0] * 2)
    np.testing.assert_array_equal(o[0, 0, 16:], x[0, 0] * 2)


def test_block_ending_with_a_shared_load_in_flight_fails():
    x, o = _rand((1, 1, 16, 32), hk.fp32), np.zeros((1, 1, 32, 32), np.float32)
    with pytest.raises(KernelError, match="shared load .* still in flight when the block "
                                          "ends") as err:
        run_module(stage.trace().module, [x, o])
    assert err.value.loc.line == _line("# @unread-load")


def test_block_ending_with_a_copy_in_flight_fails():
    module = stage.trace().module.clone()
    wait = _waits(module)[0]
    wait.properties["vm"] = IntegerAttr(1, i64)  # the spare copy never lands
    wait.properties["lds"] = IntegerAttr(0, i64)
    x, o = _rand((1, 1, 16, 32), hk.fp32), np.zeros((1, 1, 32, 32), np.float32)
    with pytest.raises(KernelError, match="group load .* still in flight when the block "
                                          "ends") as err:
        run_module(module, [x, o])
    assert err.value.loc.line == _line("# @spare-copy")


@hk.kernel(grid=(1, 1, 1))
def read_unwritten(o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 16))
    t = s.load(hk.RT(hk.fp32, 16, 16))
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, 0, 0)] = t


def test_unwritten_shared_memory_reads_nan():
    o = np.zeros((1, 1, 16, 16), np.float32)
    run_module(read_unwritten.trace().module, [o])
    assert np.isnan(o).all()


@hk.kernel(grid=(1, 1, 1), warps=2)
def exchange(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 16))
    w = hk.arch.warp_id
    if w == 0:
        s.store(x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16)))
    hk.barrier()
    t = s.load(hk.RT(hk.fp32, 16, 16))
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, w, 0)] = t + hk.to_float(w)


def test_shared_store_is_seen_by_other_warps_after_a_barrier():
    x = _rand((1, 1, 16, 16), hk.fp32, seed=4)
    o = np.zeros((1, 1, 32, 16), np.float32)
    run_module(exchange.trace().module, [x, o])
    np.testing.assert_array_equal(o[0, 0, :16], x[0, 0])
    np.testing.assert_array_equal(o[0, 0, 16:], x[0, 0] + 1)


@hk.kernel(grid=(1, 1, 1), warps=4)
def warp_sums(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], m: hk.Tensor[hk.fp32]):
    w = hk.arch.warp_id
    v = x[hk.tile_coord(0, 0, w, 0)].load(hk.RV(hk.fp32, 64))
    o[hk.tile_coord(0, 0, w, 0)] = hk.group.sum(v)
    top = hk.group.max(v.max())
    m[hk.tile_coord(0, 0, w, 0)] = hk.zeros(hk.RV(hk.fp32, 16)) + top


def test_block_reduce_combines_warps_in_order():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 64)) * 10.0 ** rng.integers(0, 9, (4, 64))).astype(np.float32)
    o = np.zeros((1, 1, 4, 64), np.float32)
    m = np.zeros((1, 1, 4, 16), np.float32)
    run_module(warp_sums.trace().module, [x.reshape(1, 1, 4, 64), o, m])
    in_order = ((x[0] + x[1]) + x[2]) + x[3]  # float32, warp 0 first
    other_order = ((x[3] + x[2]) + x[1]) + x[0]
    assert not np.array_equal(in_order, other_order)  # the order is visible in these values
    for w in range(4):
        np.testing.assert_array_equal(o[0, 0, w], in_order)
    np.testing.assert_array_equal(m.reshape(4, 16), np.full((4, 16), x.max()))


@hk.kernel(grid=(1, 1, 1))
def overwrite(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 32))
    hk.load_async(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(s)
    s.store(hk.full(hk.RT(hk.fp32, 16, 32), 3.0))  # @overwrite
    hk.barrier()
    t = s.load(hk.RT(hk.fp32, 16, 32))
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, 0, 0)] = t


def test_shared_store_after_the_copy_landed_wins():
    x, o = _rand((1, 1, 16, 32), hk.fp32), np.zeros((1, 1, 16, 32), np.float32)
    run_module(overwrite.trace().module, [x, o])
    assert (o == 3.0).all()


def test_shared_store_while_a_copy_is_in_flight_fails():
    module = overwrite.trace().module.clone()
    _waits(module)[0].detach()
    x, o = _rand((1, 1, 16, 32), hk.fp32), np.zeros((1, 1, 16, 32), np.float32)
    with pytest.raises(KernelError, match="shared tile written while a copy into it is still "
                                          "in flight") as err:
        run_module(module, [x, o])
    assert err.value.loc.line == _line("# @overwrite")

"""`warps` chosen per call and per target (issue #10): an int (hk-dsl's spelling), the name of
an int constant each call sets, or a dict per target; the trace, `hk.arch.num_warps`, the grid,
requires= and the passes all see the resolved count, and a bad one is refused by name."""
from __future__ import annotations

import numpy as np
import pytest

import ktile as hk
from bad_inputs import refused
from ktile.errors import InputError, KernelError
from ktile.ir.query import warps as module_warps

ROWS = 16


def _double(x, o, warps):
    """Each warp doubles one 16-row tile; a block covers `warps` of them."""
    r = hk.arch.block_idx.x * hk.arch.num_warps + hk.arch.warp_id
    idx = hk.tile_coord(0, 0, r, 0)
    o[idx] = x[idx].load(hk.RT(hk.fp32, ROWS, 32)) * 2.0


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, ROWS * p.WARPS),), warps="WARPS",
           requires=[(lambda p: p.WARPS % 2 == 0, "WARPS must be even")])
def doubled(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, WARPS: hk.Constexpr[int] = 4):
    _double(x, o, WARPS)


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, ROWS * 4),),
           warps={"gfx942": 2, "gfx950": 2, "default": 4})
def per_target(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    # each block covers 4 tiles whatever its warps: a warp takes 4 / num_warps of them
    for k in range(4 // hk.arch.num_warps):
        idx = hk.tile_coord(0, 0, hk.arch.block_idx.x * 4 + hk.arch.warp_id * (4 // hk.arch.num_warps) + k, 0)
        o[idx] = x[idx].load(hk.RT(hk.fp32, ROWS, 32)) * 2.0


@hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, ROWS * p.W),), warps={"sm_90a": 4, "default": "W"})
def named_per_target(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, W: hk.Constexpr[int] = 2):
    _double(x, o, W)


def _input():
    return np.random.default_rng(0).standard_normal((1, 1, 200, 32)).astype(np.float32)


@pytest.mark.parametrize("warps", [2, 4, 8])
def test_one_kernel_run_with_each_warp_count_at_call_time_gives_the_same_answer(warps):
    x = _input()
    o = np.zeros_like(x)
    doubled.interpret(x, o, WARPS=warps)
    np.testing.assert_array_equal(o, 2 * x)


def test_each_count_is_its_own_trace_and_the_module_and_the_arch_namespace_read_it():
    four, eight = doubled.trace(WARPS=4), doubled.trace(WARPS=8)
    assert four is not eight and doubled.trace(WARPS=4) is four
    assert (four.warps, eight.warps) == (4, 8)
    assert module_warps(eight.module) == 8
    assert "__launch_bounds__(256)" in eight.source() and "__launch_bounds__(128)" in four.source()


def test_the_default_of_the_constant_is_the_count_when_the_call_gives_none():
    assert doubled.trace().warps == 4


@pytest.mark.parametrize("target, want", [("gfx1100", 4), ("gfx1201", 4), ("gfx942", 2),
                                          ("gfx950", 2), ("sm_90a", 4)])
def test_a_dict_gives_each_target_its_count(target, want):
    assert per_target.trace(target).warps == want
    x = _input()
    o = np.zeros_like(x)
    per_target.interpret(x, o, target=target)
    np.testing.assert_array_equal(o, 2 * x)


def test_a_dict_entry_may_name_the_constant():
    assert named_per_target.trace("sm_90a").warps == 4
    assert named_per_target.trace("gfx1100", W=8).warps == 8
    assert named_per_target.trace("gfx942").warps == 2


def test_requires_reads_the_named_count():
    x = _input()
    refused(lambda: doubled.interpret(x, np.zeros_like(x), WARPS=3), "WARPS must be even",
            kind=InputError)


def test_the_budgets_pass_counts_the_call_s_warps():
    """A block's shared memory and registers are checked for the warps of this trace: the
    cross-warp reduction's scratch grows with them."""
    @hk.kernel(grid=(1,), warps="W")
    def reduce_rows(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, W: hk.Constexpr[int] = 1):
        v = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32)).row_sum()
        o[hk.tile_coord(0, 0, 0, 0)] = hk.group.sum(v)
    assert reduce_rows.trace(W=2).warps == 2 and reduce_rows.trace(W=16).warps == 16
    assert "<16>" in reduce_rows.trace(W=16).source()


# ---- refusals ------------------------------------------------------------------------------

@pytest.mark.parametrize("value, words", [(0, ("WARPS", "at least 1")),
                                          (34, ("WARPS", "34", "over gfx1100's 32 warps")),
                                          (1.5, ("WARPS", "int")),
                                          (True, ("WARPS", "int"))],
                         ids=["zero", "34", "float", "bool"])
def test_a_call_s_bad_count_is_refused_naming_the_constant(value, words):
    x = _input()
    refused(lambda: doubled.interpret(x, np.zeros_like(x), WARPS=value), *words, kind=InputError)


def test_warps_passed_at_a_call_points_at_the_constant_that_sets_it():
    x = _input()
    refused(lambda: doubled.interpret(x, np.zeros_like(x), warps=8), "unknown constant 'warps'",
            "constant 'WARPS'", "pass WARPS=8", kind=InputError)
    refused(lambda: per_target.interpret(x, np.zeros_like(x), warps=8),
            "unknown constant 'warps'", "the decorator's", 'warps="WARPS"',
            "WARPS: hk.Constexpr[int]", kind=InputError)


def test_a_count_over_the_target_s_block_is_refused_for_that_target_only():
    assert doubled.trace("gfx1100", WARPS=32).warps == 32
    refused(lambda: doubled.trace("gfx942", WARPS=32), "WARPS", "over gfx942's 16 warps of 64",
            kind=InputError)


def _decorated(warps):
    def k(x: hk.Tensor[hk.fp32], *, WARPS: hk.Constexpr[int] = 4, SCALE: hk.Constexpr[float] = 1.0):
        pass
    return hk.kernel(k, grid=(1,), warps=warps)


@pytest.mark.parametrize("warps, words", [
    (0, ("warps must be a positive int", "got int 0")),
    (-2, ("positive int",)),
    (2.0, ("positive int", "float")),
    (None, ("positive int", "NoneType")),
    ("NWARPS", ("'NWARPS'", "no constant", "WARPS, SCALE")),
    ("SCALE", ("Constexpr[float]", "int")),
    ({}, ("empty dict",)),
    ({"gfx9": 4}, ("'gfx9'", "no target")),
    ({"sm_90a": 0}, ("warps['sm_90a']", "positive int")),
], ids=["zero", "negative", "float", "none", "unknown-name", "float-constant", "empty-dict",
        "unknown-target", "zero-in-dict"])
def test_a_bad_spec_is_refused_at_the_decorator(warps, words):
    err = refused(lambda: _decorated(warps), *words)
    assert err.loc is not None and err.loc.file == __file__


def test_a_decorator_count_over_the_block_is_refused_at_the_decorator():
    k = _decorated(33)
    err = refused(lambda: k.trace(), "warps=33", "over gfx1100's 32 warps")
    assert err.loc == k.def_loc and not isinstance(err, InputError)


def test_a_dict_without_the_target_nor_a_default_is_refused_naming_the_target():
    k = _decorated({"sm_90a": 4})
    refused(lambda: k.trace("gfx942"), "no count for gfx942", '"gfx942": N', kind=KernelError)

"""The per-call plan memo (`RoutingTable.plan`) and elementwise's shape memo: a repeated call
takes its remembered route, kernel and views and computes what the unmemoized call computes; a
call that differs in what decides the plan (shape, dtype, target, out=) is planned afresh; bad
input after a memoized call is refused with the same message as before; pins and overrides
are never served from the memo."""
from __future__ import annotations

import pytest
import torch

import ktile.ops as ops
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.elementwise import config as ew_config
from ktile.ops.elementwise.op import broadcast_shape
from ktile.ops.fused_add_rmsnorm import config as fused_config
from ktile.ops.rmsnorm import config as norm_config
from ktile.ops.rmsnorm.reference import rms_norm as norm_reference, tolerance


def _x(shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def _norm_error(got, x, w):
    from ktile import dtypes
    want = norm_reference(x.float().numpy(), w.float().numpy(), 1e-6,
                          getattr(dtypes, lib.kt_dtype(x)))
    return lib.max_error(got, want), tolerance(want)


def test_a_memoized_call_computes_what_the_first_call_did():
    x, w = _x((3, 64)), _x((64,), seed=1)
    norm_config.TABLE.plans.clear()
    first = ops.rms_norm(x, w)
    assert norm_config.TABLE.plans                       # the call left its plan
    again = ops.rms_norm(x, w)
    assert torch.equal(first, again)
    error, tol = _norm_error(again, x, w)
    assert error <= tol


@pytest.mark.parametrize("second", [
    lambda: (_x((5, 64)), _x((64,), seed=1)),                        # another row count
    lambda: (_x((3, 40)), _x((40,), seed=1)),                        # a width off the tiles
    lambda: (_x((3, 64), torch.bfloat16), _x((64,), torch.bfloat16, 1)),  # another dtype
    lambda: (_x((2, 3, 64)), _x((64,), seed=1)),                     # another rank
])
def test_a_call_that_differs_in_what_decides_the_plan_is_planned_afresh(second):
    x, w = _x((3, 64)), _x((64,), seed=1)
    ops.rms_norm(x, w)
    before = set(norm_config.TABLE.plans)
    x2, w2 = second()
    got = ops.rms_norm(x2, w2)
    assert set(norm_config.TABLE.plans) - before          # a plan of its own
    assert got.shape == x2.shape and got.dtype == x2.dtype
    error, tol = _norm_error(got, x2, w2)
    assert error <= tol


def test_out_and_meta_calls_after_a_memoized_one():
    x, w = _x((3, 64)), _x((64,), seed=1)
    want = ops.rms_norm(x, w)
    out = torch.empty_like(x)
    assert ops.rms_norm(x, w, out=out) is out and torch.equal(out, want)
    meta = ops.rms_norm(x.to("meta"), w.to("meta"))
    assert meta.device.type == "meta" and meta.shape == x.shape


def _refusal(fn) -> str:
    with pytest.raises(InputError) as e:
        fn()
    return str(e.value)


def test_bad_input_after_a_memoized_call_gets_the_same_refusal():
    x, w = _x((4, 64)), _x((64,), seed=1)
    bad = [lambda: ops.rms_norm(x.t(), _x((4,))),                       # strides
           lambda: ops.rms_norm(x.double(), w),                         # dtype
           lambda: ops.rms_norm(x, _x((32,))),                          # weight width
           lambda: ops.rms_norm(x, w, out=torch.empty(4, 32)),          # out's shape
           lambda: ops.add(x, _x((4, 64)).t()),                         # strides
           lambda: ops.add(x, _x((3, 64))),                             # no broadcast
           lambda: ops.add(_x((4, 1)), _x((1, 64)))]                    # both broadcast
    norm_config.TABLE.plans.clear()
    fresh = [_refusal(fn) for fn in bad]
    ops.rms_norm(x, w)
    ops.add(x, x)
    ops.add(x, _x((4, 1)))
    assert [_refusal(fn) for fn in bad] == fresh


def test_a_pinned_route_is_taken_over_a_memoized_plan():
    x, w = _x((3, 64)), _x((64,), seed=1)
    taken = []
    lib._RUNNER.append(lambda kernel, *args, **constants: taken.append(constants))
    try:
        ops.rms_norm(x, w)
        ops.rms_norm(x, w)                                 # memoized
        chosen = norm_config.TABLE.choose(3, 64, None)
        others = [r for r in norm_config.TABLE.routes if r.constants != chosen.constants]
        assert others
        with lib.pinned(norm_config.TABLE, others[0]):
            ops.rms_norm(x, w)
        ops.rms_norm(x, w)
        assert taken == [chosen.constants, chosen.constants, others[0].constants,
                         chosen.constants]
    finally:
        lib._RUNNER.pop()


def test_an_override_forgets_the_memo():
    x, r, w = _x((3, 64)), _x((3, 64), seed=2), _x((64,), seed=1)
    table = fused_config.TABLE
    ops.fused_add_rms_norm(x, r, w)
    assert table.plans
    before = dict(table.measured)
    try:
        table.override("gfx1100", list(table.measured.get("gfx1100", [])))
        assert not table.plans
    finally:
        for target, routes in before.items():
            table.measured[target] = routes


def test_the_interpreter_plans_per_ktile_target(monkeypatch):
    x, w = _x((3, 64)), _x((64,), seed=1)
    monkeypatch.setenv("KTILE_TARGET", "gfx1100")
    ops.rms_norm(x, w)
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    ops.rms_norm(x, w)
    targets = {target for target, _ in norm_config.TABLE.plans}
    assert {(None, "gfx1100"), (None, "sm_90a")} <= targets


@pytest.mark.parametrize("a,b", [((4, 64), (4, 64)), ((4, 64), (64,)), ((4, 64), (1, 64)),
                                 ((2, 4, 64), (2, 4, 1)), ((1,), (3, 5)), ((3, 1), (1, 5)),
                                 ((4, 64), (3, 64)), ((2, 3), (3, 2)), ((5,), (2, 1, 5))])
def test_broadcast_shape_is_torchs(a, b):
    try:
        want = tuple(torch.broadcast_shapes(a, b))
    except RuntimeError:
        want = None
    assert broadcast_shape(a, b) == want


@pytest.mark.parametrize("y_shape", [(4, 64), (64,), (4, 1), (1, 64)])
def test_elementwise_memo_serves_each_broadcast_its_own_plan(y_shape):
    x = _x((4, 64))
    ew_config.TABLE.plans.clear()
    for _ in range(2):                                   # planned, then memoized
        for shape in ((4, 64), y_shape):
            y = _x(shape, seed=3)
            assert torch.allclose(ops.add(x, y), x + y)
            assert torch.allclose(ops.sub(y, x), y - x)
    assert torch.allclose(ops.add(x.bfloat16(), x.bfloat16()).float(),
                          (x.bfloat16() + x.bfloat16()).float())

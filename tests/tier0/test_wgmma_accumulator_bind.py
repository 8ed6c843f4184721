"""sm_90a: an accumulator whose wgmma a wait completed through its shared operands (not named
there) is bound before it is read: the waits pass puts a wait naming it at the read's line
(passes/waits_mma.py, `unbound`), so the C++ has `kt::bind(acc)` after the drain and nvcc
cannot read the registers above it (skinny_wgmma_nt's wrong rows 16 and up on the H200;
tests/tier1/test_wgmma_accumulator_bound.py checks the PTX)."""
import inspect

import pytest

import ktile as hk
from ktile.ir import ops as kt
from ktile.ir.query import loc_of

pytest.importorskip("torch")

GRID = dict(grid=lambda p: (1, 1, 1))


def line_of(fn, marker: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def trace(fn, target="sm_90a"):
    return hk.kernel(warps=4, **GRID)(fn).trace(target)


def waits(fn, target="sm_90a") -> list[tuple[int, int | None, int]]:
    """(line, wgmma count, values named) of every wait, in program order."""
    return [(loc_of(op).line, op.prop_int("wgmma"), len(op.tiles))
            for op in trace(fn, target).module.walk() if isinstance(op, kt.WaitForOp)]


def drained_by_its_operands(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16],
                            c: hk.Tensor[hk.fp32]):
    sa = [hk.shared(hk.ST(hk.bf16, 64, 32)) for _ in range(2)]
    sb = [hk.shared(hk.ST(hk.bf16, 64, 32)) for _ in range(2)]
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for k in range(4):
        acc += sa[0] @ sb[0].T
        acc += sa[1] @ sb[1].T
        hk.wait_for(sb[0])             # in the loop
    hk.wait_for(*sa, *sb)              # drain
    c[0, 0, 0, 0] = acc                # read


def drained_by_name(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    sa = hk.shared(hk.ST(hk.bf16, 64, 32))
    sb = hk.shared(hk.ST(hk.bf16, 64, 32))
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
    for k in range(4):
        acc += sa @ sb.T
    hk.wait_for(acc, sa)               # drain
    c[0, 0, 0, 0] = acc                # read


def test_a_read_after_a_drain_through_the_operands_is_bound_at_its_line():
    fn = drained_by_its_operands
    found = waits(fn)
    lines = [line_of(fn, f"# {w}") for w in ("in the loop", "drain", "read")]
    # (the loop is unrolled) the drain completes both groups (wait_group 0); the read gets a
    # wait naming acc alone
    assert set(found[:-2]) == {(lines[0], 1, 1)}, found
    assert found[-2:] == [(lines[1], 0, 4), (lines[2], None, 1)], found
    source = trace(fn).source()
    drain = source.index("kt::wgmma_wait<0>();")
    store = source.index("kt::store(", drain)
    assert "kt::bind(" in source[drain:store], source[drain:store]


def test_a_drain_naming_the_accumulator_needs_no_other_wait():
    fn = drained_by_name
    assert waits(fn) == [(line_of(fn, "# drain"), 0, 2)]


def test_other_targets_insert_nothing():
    found = [w[1:] for w in waits(drained_by_its_operands, "gfx950")]
    assert found == [(None, 1)] * 4 + [(None, 4)], found


def test_skinny_wgmma_binds_its_accumulator_before_the_partials_store():
    from ktile.ops.matmul import config, skinny_wgmma
    source = skinny_wgmma.skinny_wgmma_nt("bf16").trace(
        "sm_90a", **config.SKINNY_WGMMA_ROUTES[0].constants).source()
    drain = source.rindex("kt::wgmma_wait<0>();")
    store = source.index("kt::store(", drain)
    stored = source[store:].split("(")[1].split(",")[1].strip()
    assert f"kt::bind({stored});" in source[drain:store], source[drain:store]

"""The verify pass's fast paths keep its meaning (issue #10): the warp dependence followed
value by value through its readers finds what a fixed point over every op finds.
"""
import pytest
from xdsl.dialects import scf

import ktile as hk
from examples_index import EXAMPLE_NAMES, load
from ktile.ir import ops as kt
from ktile.ir.query import kernel_func
from ktile.passes.verify import carried_flows, is_divergent, warp_varying_values

GRID = (1, 1, 1)


def fixed_point(fn) -> set:
    """The warp dependence by its definition: sweep every op until nothing changes."""
    ops = list(fn.walk())
    varying: set = set()
    changed = True
    while changed:
        changed = False
        for op in ops:
            for value in _varying_by_definition(op, varying):
                if value not in varying:
                    varying.add(value)
                    changed = True
    return varying


def _varying_by_definition(op, varying: set) -> list:
    if isinstance(op, kt.WarpIdOp):
        return list(op.results)
    if isinstance(op, (kt.BlockReduceOp, scf.YieldOp, scf.ConditionOp)):
        return []
    if isinstance(op, (scf.ForOp, scf.IfOp, scf.WhileOp)):
        out = [v for sources, targets in carried_flows(op)
               if any(s in varying for s in sources) for v in targets]
        return out + (list(op.results) if is_divergent(op, varying) else [])
    return list(op.results) if any(v in varying for v in op.operands) else []


@hk.kernel(grid=GRID, warps=4)
def warp_through_everything(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 16, 64))
    n = hk.arch.warp_id * 2
    m = 0
    for _ in range(3):
        m = m + n                     # carried out of the loop
    k = 0
    while k < m:                      # a condition on a carried warp value
        k = k + 1
    y = x
    if k > 2:                         # a branch on it: its results vary
        y = x * 2.0
    total = hk.group.sum(hk.to_float(hk.arch.warp_id))   # a group reduce stops it
    o[0, 0, 0, 0] = y + total


KERNELS = [(kernel, constants) for name in EXAMPLE_NAMES for kernel, constants in load(name).KERNELS]


@pytest.mark.parametrize("kernel,constants",
                         [(warp_through_everything, {})] + KERNELS,
                         ids=["warp_through_everything"] + [k.name for k, _ in KERNELS])
def test_the_warp_dependence_is_the_fixed_points(kernel, constants):
    fn = kernel_func(kernel.trace("gfx1100", **constants).module)
    assert warp_varying_values(fn) == fixed_point(fn)


def test_the_kernel_above_reaches_every_construct():
    fn = kernel_func(warp_through_everything.trace("gfx1100").module)
    varying = warp_varying_values(fn)
    divergent = {type(op) for op in fn.walk() if is_divergent(op, varying)}
    assert divergent == {scf.WhileOp, scf.IfOp}
    reduce = next(op for op in fn.walk() if isinstance(op, kt.BlockReduceOp))
    assert reduce.operands[0] in varying and reduce.results[0] not in varying

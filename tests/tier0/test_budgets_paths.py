"""The budgets pass's fast liveness walk keeps the estimate (issue #10): on every example kernel
for every target, its peak (bytes and op) is the plain walk's, which considers every op at
two points over sets of values; and a refusal's listing adds up to the count it gives.
"""
import re

import pytest
from xdsl.dialects import scf

import ktile as hk
from examples_index import EXAMPLE_NAMES, load
from ktile import targets
from ktile.errors import KernelError
from ktile.ir.query import kernel_func
from ktile.passes.budgets import REGISTER_BYTES, RegisterEstimate, free_values
from ktile.passes.budgets_compiler import CompilerView

TRACES = [(name, kernel, constants, target) for name in EXAMPLE_NAMES
          for kernel, constants in load(name).KERNELS for target in targets.NAMES]


def plain_peak(fn, target) -> tuple[int, object]:
    """(bytes, op) of the first greatest point of the backward walk, every op considered
    before and after it, live sets of values; ops seen as the compiler holds them (a pure
    op's duplicate holds nothing, a fused value stands for what it is made from:
    budgets_compiler.CompilerView)."""
    view = CompilerView(fn)
    estimate = RegisterEstimate(target, view)   # for its per-value sizes and in-flight model
    best = [0, None]

    def in_registers(values) -> set:
        return {v for v in values if type(v.type).__name__ in ("RegTileType", "RegVecType")}

    def consider(op, live) -> None:
        total = (target.register_overhead * REGISTER_BYTES + estimate.in_flight_bytes(op)
                 + sum(estimate.value_bytes(v) for v in live))
        if total > best[0]:
            best[:] = [total, op]

    def block(b, live_out: set, outer: frozenset) -> set:
        live = set(live_out)
        for op in reversed(list(b.ops)):
            results = in_registers(view.results(op))
            free = in_registers(free_values(op, view)) if op.regions else set()
            before = (live - results) | in_registers(view.operands(op)) | free
            for region in op.regions:
                for inner in region.blocks:
                    loop = isinstance(op, (scf.ForOp, scf.WhileOp))
                    block(inner, free if loop else set(), outer | frozenset(live - results))
            consider(op, outer | before)
            consider(op, outer | live | results)
            live = before
        return live

    block(fn.body.block, set(), frozenset())
    return best[0], best[1]


@pytest.mark.parametrize("name,kernel,constants,target", TRACES,
                         ids=[f"{n}:{k.name}:{t}" for n, k, _, t in TRACES])
def test_the_peak_is_the_plain_walks(name, kernel, constants, target):
    fn = kernel_func(kernel.trace(target, **constants).module)
    estimate = RegisterEstimate(targets.get(target), CompilerView(fn))
    estimate.block(fn.body.block, set(), frozenset())
    assert (estimate.peak.bytes, estimate.peak.op) == plain_peak(fn, targets.get(target))


@hk.kernel(grid=(1, 1, 1), warps=4)
def two_big_loads(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 128, 64))
    y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 128, 64))
    o[0, 0, 0, 0] = x * y


def test_a_refusals_listing_adds_up_to_its_count():
    with pytest.raises(KernelError) as caught:
        two_big_loads.trace("sm_90a")
    text = str(caught.value)
    count = int(re.search(r"about (\d+) registers per lane are live", text).group(1))
    listed = text[text.index("live here:"):]
    parts = [int(n) for n in re.findall(r"\((\d+) registers\)", listed)]
    parts += [int(n) for n in re.findall(r"(\d+) registers this load holds while in flight",
                                         listed)]
    parts += [int(n) for n in re.findall(r"about (\d+) for indices and addresses", listed)]
    assert len(parts) == 4 and sum(parts) == count, text

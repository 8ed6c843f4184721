"""The pass pipeline: one straight list, each pass one file named after it.

`ktile-opt -p verify,fragments,tensor-maps,lds-alloc,waits,budgets` runs the same passes by
name. Each pass reads its target from the module attribute `kt.target`; a user error is a
`KernelError` that points at the kernel's line; warnings come back from `run_pipeline` as
strings.
"""
from __future__ import annotations

import warnings

from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from ..errors import KernelWarning
from ..ir.query import verify_module, verify_ops
from ..ir.verification import ModuleState, changed_ops, op_states
from ..targets.base import Target
from .budgets import Budgets
from .fragments import Fragments
from .lds_alloc import LdsAlloc
from .tensor_maps import TensorMaps
from .verify import Verify
from .waits import Waits

PIPELINE: list[type[ModulePass]] = [
    Verify,      # first: verifies the whole module; the others assume verified IR, a block
                 # that fits, supported dtypes, uniform barriers
    Fragments,   # after verify: looks up the MMA instruction of each operand dtype
    TensorMaps,  # needs nothing derived: which group loads are TMA copies, their tensor maps
    LdsAlloc,    # after tensor-maps (TMA tiles get mbarriers); before budgets (kt.lds_bytes)
    Waits,       # after lds-alloc: names the mbarrier slots each wait completes
    Budgets,     # last: registers cost per fragment (fragments), shared bytes come from lds-alloc
]

PASSES: dict[str, type[ModulePass]] = {p.name: p for p in PIPELINE}


def run_pipeline(module: ModuleOp, target: Target) -> list[str]:
    """Checks and annotates a traced module in place; returns the warnings for the author.

    The module is verified completely once, by the first pass (Verify, through
    ir/verification.py); after each pass, only what the pass changed is verified again
    (`verify_pass_result`). While the passes run, the ops' properties and attributes log
    their writes (ir/verification.py, `RecordedDict`); the module leaves with plain dicts,
    refused or not."""
    from ..ir.dialect import shared_context

    if "kt.target" not in module.attributes:
        module.attributes["kt.target"] = StringAttr(target.name)
    ctx = shared_context()
    state = op_states(module)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", KernelWarning)
            for pass_class in PIPELINE:
                pass_class().apply(ctx, module)
                state = verify_pass_result(module, state)
    finally:
        state.release()
    for w in caught:
        if not issubclass(w.category, KernelWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return [str(w.message) for w in caught if issubclass(w.category, KernelWarning)]


def verify_pass_result(module: ModuleOp, before: ModuleState) -> ModuleState:
    """Verifies what a pass changed and returns the module's new state. The pass's writes to
    properties and attributes are logged as it makes them, retyped values are found in one
    column of types, and an op added, removed, moved or rewired sends the whole module back
    to verification (ir/verification.py, `changed_ops`). Ops a pass did not change were
    verified before it and still hold."""
    after = before.advanced()
    changed = changed_ops(before, after)
    if changed is None:
        verify_module(module)
    else:
        verify_ops(module, changed)
    return after


__all__ = ["PIPELINE", "PASSES", "run_pipeline", "verify_pass_result", "Budgets", "Fragments", "LdsAlloc",
           "TensorMaps", "Verify", "Waits"]

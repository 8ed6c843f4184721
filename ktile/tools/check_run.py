"""Checking one item of `ktile check`, stage by stage: trace (the passes and their checks),
build (the toolchain, then the build gate: spills, stack, shared memory; cocheck on AMD code
objects), then the reference check where an execution is given. A stage that fails ends the
item; its status names the stage, and its detail is the error's own message and fix.

Statuses: ok, trace failed, build failed, gate refused, mismatch, reference failed. Only `ok`
passes. The budgets pass's warnings (registers close to spilling, low occupancy) are shown in
the gates column as `warn` and do not fail the item.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass, field

from .. import targets
from ..errors import KernelError, KernelWarning
from .check_plan import Execution, Item

OK = "ok"


@dataclass
class Result:
    name: str
    target: str
    kernel: str
    constants: dict
    dtype: str | None
    trace: str = "-"               # ok / failed
    gates: str = "-"               # ok / warn / refused
    build: str = "-"               # ok / failed
    registers: int | None = None   # per thread (NVIDIA), VGPRs per lane (AMD)
    spill_bytes: int | None = None
    occupancy: str | None = None
    shared_bytes: int | None = None
    reference: dict | None = None  # where, what, max_error, tolerance, cases; or note
    status: str = OK
    detail: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == OK

    def fail(self, status: str, message: str) -> "Result":
        self.status = status
        self.detail.append(message)
        return self

    def to_json(self) -> dict:
        return {**asdict(self), "ok": self.ok}


def check_item(item: Item, execution: Execution | None) -> Result:
    """Trace, build and gate `item`; then its reference check on `execution` (None: none)."""
    result = Result(item.name, item.target, item.kernel.name, dict(item.constants), item.dtype)
    result.detail.extend(item.notes)
    trace = _trace(item, result)
    if trace is None:
        return result
    if not _build(trace, result):
        return result
    _reference(item, execution, result)
    return result


def _trace(item: Item, result: Result):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", KernelWarning)   # shown from trace.warnings instead
        try:
            trace = item.kernel.trace(item.target, **item.constants)
        except KernelError as error:
            result.trace = "failed"
            result.fail("trace failed", str(error))
            return None
        except Exception as error:   # tracing runs the kernel author's Python: anything may fail
            result.trace = "failed"
            result.fail("trace failed", f"{type(error).__name__}: {error}")
            return None
    result.trace = OK
    result.gates = "warn" if trace.warnings else OK
    result.detail.extend(f"warning: {w}" for w in trace.warnings)
    return trace


def _build(trace, result: Result) -> bool:
    """The build and its gate; the resources on the result. False when either refuses."""
    from ..runtime import build as builds
    try:
        built = builds.build_trace(trace)
    except KernelError as error:
        if _raised_in(error, builds._gate):
            result.build, result.gates = OK, "refused"
            result.fail("gate refused", str(error))
        else:
            result.build = "failed"
            result.fail("build failed", str(error))
        return False
    result.build = OK
    res = built.resources
    result.registers = res.registers
    result.spill_bytes = res.spill_stores + res.spill_loads
    result.shared_bytes = res.shared_bytes
    result.occupancy = _occupancy(built)
    limit = targets.get(trace.target.name).lds_bytes
    if res.shared_bytes > limit:
        result.gates = "refused"
        result.fail("gate refused", f"the kernel uses {res.shared_bytes} bytes of shared memory, "
                                    f"over the {limit} bytes a block has on {trace.target.name}")
        return False
    return True


def _raised_in(error: BaseException, function) -> bool:
    """Whether `function` is on `error`'s traceback: the build's gate refused a code object the
    compiler made, rather than the compiler failing."""
    tb = error.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is function.__code__:
            return True
        tb = tb.tb_next
    return False


def _occupancy(built) -> str | None:
    """NVIDIA: resident warps per multiprocessor; AMD: cocheck's waves per SIMD."""
    occ = built.resources.occupancy
    if occ is not None:
        return f"{occ.warps}/{occ.max_warps} warps"
    checked = getattr(built.quality, "checked", None)
    occ = getattr(checked, "occupancy", None)
    return None if occ is None else f"{occ.waves}/{occ.max_waves} waves"


def _reference(item: Item, execution: Execution | None, result: Result) -> None:
    if item.reference is None:
        result.reference = {"note": item.no_reference}
        return
    if execution is None:
        result.reference = {"note": "not run (--build-only)"}
        return
    result.reference = {"where": execution.where, "what": item.reference.what}
    try:
        pairs = item.reference.run(execution)
    except Exception as error:   # the reference runs the user's code: anything may fail
        result.fail("reference failed", f"{type(error).__name__}: {error}")
        return
    failing = [(e, t) for e, t in pairs if not e <= t]      # NaN fails
    err, tol = max(failing or pairs, key=lambda p: p[0] - p[1] if math.isfinite(p[0]) else math.inf)
    result.reference.update(max_error=_number(err), tolerance=_number(tol), cases=len(pairs),
                            failing_cases=len(failing))
    if failing:
        result.fail("mismatch", f"{len(failing)} of {len(pairs)} cases differ from the reference "
                                f"by more than the tolerance: max error {err:.3g} > {tol:.3g}")


def _number(x: float) -> float | str:
    """A JSON-safe number: non-finite values as text ('nan', 'inf')."""
    return float(x) if math.isfinite(x) else str(float(x))

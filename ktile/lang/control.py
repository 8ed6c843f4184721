"""Runtime side of the control-flow rewrite: `for`, `if` and `while` on device values.

`rewrite.py` turns each loop or branch of a kernel into a call of one of these helpers with
its body as a function of the names it assigns. Here that call either runs the body in
Python (Python values: the loop unrolls, the branch is taken at trace time) or traces it
into an `scf.for` / `scf.if` / `scf.while`, carrying the assigned names that are device values.
"""
from __future__ import annotations

from typing import Any, Callable

from xdsl.ir import Block

from ..errors import SourceLoc
from . import subscripts, tracer
from .memory import Global
from .values import Scalar, Value, as_index, describe, scalar_const


class Undefined:
    """A name assigned only inside a runtime loop or one branch: using it later is an error."""

    def __init__(self, name: str, where: str, loc: SourceLoc | None):
        self._name, self._where, self._loc = name, where, loc

    def _fail(self, *args, **kwargs):
        line = f" at line {self._loc.line}" if self._loc else ""
        raise tracer.error(f"`{self._name}` is assigned only inside the {self._where}{line}, so "
                           f"it has no value here",
                           hint=f"assign `{self._name}` before the {self._where} to carry it out")

    __getattr__ = _fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _fail
    __truediv__ = __rtruediv__ = __matmul__ = __call__ = __getitem__ = _fail
    __bool__ = __iter__ = __neg__ = __lt__ = __gt__ = __le__ = __ge__ = _fail


UNSET = object()  # a name not bound before the construct


def capture(local_vars: dict, names: tuple[str, ...]) -> tuple:
    """The current values of `names`; unbound (or only bound inside an earlier runtime
    construct) reads as UNSET, so this construct may bind it afresh."""
    values = (local_vars.get(n, UNSET) for n in names)
    return tuple(UNSET if isinstance(v, Undefined) else v for v in values)


def is_device(value: Any) -> bool:
    return isinstance(value, Value)


def _promote(value: Any) -> Any:
    """Python numbers that a runtime construct may change become device scalars."""
    if isinstance(value, (bool, int, float)):
        return scalar_const(value)
    return value


def _wrap_like(template: Value, ssa) -> Value:
    if isinstance(template, Global):
        raise tracer.error("a global parameter cannot be reassigned in a runtime loop")
    return type(template)(ssa)


def _check_same_type(name: str, before: Value, after: Any, where: str) -> None:
    if not isinstance(after, Value) or after.ty != before.ty:
        raise tracer.error(
            f"`{name}` is {describe(before)} before the {where} but {describe(after)} after "
            f"one pass through it", op=where,
            hint=f"a value carried through a {where} keeps its type: update it in place "
                 f"(`{name} += ...`, `{name} = {name} * ...`) or use a new name")


# ---- for -----------------------------------------------------------------------------------

def for_range(args: tuple, forced: bool, body: Callable, carried: tuple,
              names: tuple[str, ...]) -> tuple:
    if not forced and all(isinstance(a, int) for a in args):
        values = carried
        for i in range(*args):
            values = body(i, values)
        return values
    return _device_for(args, body, carried, names)


def _device_for(args: tuple, body: Callable, carried: tuple, names: tuple[str, ...]) -> tuple:
    trace = tracer.current()
    b = trace.builder
    loc = trace.loc()
    lo, hi, step = _range_bounds(args)
    promote: set[int] = set()
    while True:  # at most twice: a Python number the body changes is retraced as a scalar
        inits = tuple(_promote(v) if k in promote else v for k, v in enumerate(carried))
        live = [k for k, v in enumerate(inits) if is_device(v) and not isinstance(v, Global)]
        loop = b.for_loop(lo.v, hi.v, step.v, [inits[k].v for k in live])
        block: Block = loop.body.block
        with b.at_end_of(block):
            inputs = list(inits)
            for j, k in enumerate(live):
                inputs[k] = _wrap_like(inits[k], block.args[1 + j])
            outs = body(Scalar(block.args[0]), tuple(inputs))
            changed = _changed_python_numbers(inits, outs) - promote
            if changed:
                _discard(loop)
                promote |= changed
                continue
            for k in live:
                _check_same_type(names[k], inits[k], outs[k], "runtime loop")
            b.yield_([outs[k].v for k in live])
        break
    results = list(inits)
    for j, k in enumerate(live):
        results[k] = _wrap_like(inits[k], loop.results[j])
    for k, (before, after) in enumerate(zip(inputs, outs)):
        if k in live:
            continue
        if before is UNSET:
            results[k] = Undefined(names[k], "runtime loop", loc)
        elif not _same_python(before, after):
            raise tracer.error(f"`{names[k]}` ({describe(before)}) is rebound inside a runtime "
                               f"loop", hint="only device values can change across a runtime loop")
    return tuple(results)


def _changed_python_numbers(inits: tuple, outs: tuple) -> set[int]:
    return {k for k, (before, after) in enumerate(zip(inits, outs))
            if isinstance(before, (bool, int, float)) and not _same_python(before, after)}


def _same_python(before: Any, after: Any) -> bool:
    if after is before:
        return True
    if is_device(after) or is_device(before):
        return False
    try:
        return bool(after == before) and type(after) is type(before)
    except Exception:  # objects without a usable ==: only identity counts
        return False


def _discard(op) -> None:
    op.detach()
    op.erase(safe_erase=False)


def _range_bounds(args: tuple) -> tuple[Scalar, Scalar, Scalar]:
    if not 1 <= len(args) <= 3:
        raise tracer.error(f"range() takes 1 to 3 arguments, got {len(args)}")
    if len(args) == 1:
        args = (0, args[0], 1)
    elif len(args) == 2:
        args = (args[0], args[1], 1)
    if isinstance(args[2], int) and args[2] <= 0:
        raise tracer.error(f"a runtime loop needs a positive step, got {args[2]}")
    names = ("start", "stop", "step")
    return tuple(as_index(a, f"range {n}") for a, n in zip(args, names))  # type: ignore[return-value]


def static_range(*args):
    """Loops containing break/continue/return stay Python loops: their bounds must be Python."""
    if any(is_device(a) for a in args):
        raise tracer.error("a loop over device values cannot use break, continue or return",
                           hint="compute a condition and use `if`, or loop with `while`")
    return range(*args)


# ---- if ------------------------------------------------------------------------------------

def branch(cond: Any, then_fn: Callable, else_fn: Callable, carried: tuple,
           names: tuple[str, ...]) -> tuple:
    if not is_device(cond):
        return then_fn(carried) if cond else else_fn(carried)
    cond = _condition(cond, "if")
    trace = tracer.current()
    b = trace.builder
    loc = trace.loc()
    inits = tuple(carried)
    then_block, then_outs = _trace_branch(b, then_fn, inits)
    else_block, else_outs = _trace_branch(b, else_fn, inits)
    live, results = [], list(inits)
    for k, name in enumerate(names):
        t, e, before = then_outs[k], else_outs[k], inits[k]
        if t is before and e is before:
            continue
        if before is UNSET and (t is UNSET or e is UNSET):
            results[k] = Undefined(name, "branch of an `if` on a device value", loc)
            continue
        if not (is_device(t) or isinstance(t, (int, float))) or \
                not (is_device(e) or isinstance(e, (int, float))):
            raise tracer.error(f"`{name}` is rebound to {describe(t if t is not before else e)} "
                               f"in a branch on a device value",
                               hint="only device values can differ between branches")
        live.append(k)
    then_vals = _yield_values(b, then_block, then_outs, live, names, inits)
    else_vals = _yield_values(b, else_block, else_outs, live, names, inits)
    for k, tv, ev in zip(live, then_vals, else_vals):
        if tv.ty != ev.ty:
            raise tracer.error(f"`{names[k]}` is {describe(tv)} in one branch and {describe(ev)} "
                               f"in the other", hint="both branches must give it the same type")
    op = b.if_op(cond.v, [v.ty for v in then_vals])
    for region, block in ((op.true_region, then_block), (op.false_region, else_block)):
        region.erase_block(0)  # the empty placeholder block
        region.add_block(block)
    for j, k in enumerate(live):
        results[k] = type(then_vals[j])(op.results[j])
    return tuple(results)


def _trace_branch(b, fn: Callable, inits: tuple):
    block = Block()
    with b.at_end_of(block):
        outs = fn(inits)
    return block, outs


def _yield_values(b, block: Block, outs: tuple, live: list[int], names, inits) -> list[Value]:
    with b.at_end_of(block):
        vals = []
        for k in live:
            v = outs[k]
            if v is UNSET:
                v = inits[k]
            vals.append(_promote(v))
        b.yield_([v.v for v in vals])
    return vals


def _condition(cond: Any, where: str) -> Scalar:
    if not isinstance(cond, Scalar):
        raise tracer.error(f"the condition of `{where}` must be a scalar, got {describe(cond)}",
                           hint="reduce a tile to a scalar first (hk.sum, hk.row_max, ...)")
    if cond.is_bool:
        return cond
    return cond != 0


# ---- while ---------------------------------------------------------------------------------

def while_loop(cond_fn: Callable, body: Callable, carried: tuple, names: tuple[str, ...]) -> tuple:
    trace = tracer.current()
    b = trace.builder
    with b.at_end_of(Block()):  # a probe: is the condition a device value?
        first = cond_fn(carried)
    if not is_device(first):
        values = carried
        while cond_fn(values):
            values = body(values)
        return values
    loc = trace.loc()
    promote: set[int] = set()
    while True:  # at most twice, as in `_device_for`
        inits = tuple(_promote(v) if k in promote else v for k, v in enumerate(carried))
        live = [k for k, v in enumerate(inits) if is_device(v) and not isinstance(v, Global)]
        op, outs = _trace_while(b, cond_fn, body, inits, live)
        changed = _changed_python_numbers(inits, outs) - promote
        if not changed:
            break
        _discard(op)
        promote |= changed
    for k in live:
        _check_same_type(names[k], inits[k], outs[k], "while loop")
    for k, name in enumerate(names):
        if k not in live and inits[k] is not UNSET and not _same_python(inits[k], outs[k]):
            raise tracer.error(f"`{name}` ({describe(inits[k])}) is rebound inside a "
                               f"runtime while loop")
    with b.at_end_of(op.after_region.blocks[0]):
        b.yield_([outs[k].v for k in live])
    results = list(inits)
    for j, k in enumerate(live):
        results[k] = _wrap_like(inits[k], op.results[j])
    for k in range(len(names)):
        if inits[k] is UNSET:
            results[k] = Undefined(names[k], "runtime while loop", loc)
    return tuple(results)


def _trace_while(b, cond_fn: Callable, body: Callable, inits: tuple, live: list[int]):
    op = b.while_op([inits[k].v for k in live])
    before, after = op.before_region.blocks[0], op.after_region.blocks[0]

    def rebuild(block: Block) -> tuple:
        values = list(inits)
        for j, k in enumerate(live):
            values[k] = _wrap_like(inits[k], block.args[j])
        return tuple(values)

    with b.at_end_of(before):
        args = rebuild(before)
        cond = _condition(cond_fn(args), "while")
        b.condition(cond.v, [args[k].v for k in live])
    with b.at_end_of(after):
        outs = body(rebuild(after))
    return op, outs


HELPERS = {"__kt_for": for_range, "__kt_if": branch, "__kt_while": while_loop,
           "__kt_capture": capture, "__kt_static_range": static_range, **subscripts.HELPERS}

"""Questions every consumer of a kt module asks: which function is the kernel, where an op
came from, and how to report a user error at an op."""
from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from ..errors import KernelError, SourceLoc


def kernel_func(module: ModuleOp) -> FuncOp:
    for op in module.body.block.ops:
        if isinstance(op, FuncOp) and "kt.kernel" in op.attributes:
            return op
    raise KernelError("the module has no kernel function (a func.func with a kt.kernel "
                      "attribute)")


def grid_func(module: ModuleOp) -> FuncOp | None:
    for op in module.body.block.ops:
        if isinstance(op, FuncOp) and "kt.grid" in op.attributes:
            return op
    return None


def kernel_name(module: ModuleOp) -> str:
    return kernel_func(module).sym_name.data


def warps(module: ModuleOp) -> int:
    fn = kernel_func(module)
    attr = fn.attributes.get("kt.warps")
    if not isinstance(attr, IntegerAttr) or attr.value.data <= 0:
        raise KernelError(f"kernel '{fn.sym_name.data}' has no warp count: its kt.warps "
                          f"attribute is {attr or 'missing'}",
                          hint="give the func.func the attribute kt.warps = N : i64 (N > 0 "
                               "warps per block)")
    return attr.value.data


def tensor_maps(fn: FuncOp) -> list[tuple[int, ...]]:
    """The kernel's tensor maps (the tensor-maps pass): (parameter index, box cols, box rows,
    swizzle bytes, element bytes) each; none before the pass or on other targets."""
    attr = fn.attributes.get("kt.tensor_maps")
    if attr is None:
        return []
    return [tuple(v.value.data for v in entry.data) for entry in attr.data]  # type: ignore


def arrivals(fn: FuncOp) -> tuple[int, int] | None:
    """(byte offset, count) of the kernel's mbarriers (lds-alloc), None where it placed none."""
    attr = fn.attributes.get("kt.arrivals")
    if attr is None:
        return None
    offset, count = (v.value.data for v in attr.data)  # type: ignore[attr-defined]
    return offset, count


def roles(fn: FuncOp) -> list[tuple[int, int]]:
    """[(warps, registers), ...] of the kernel's warpgroup roles, consumers first (a
    warp-specialised pipeline: lang/pipeline_forms.py); 0 registers: no setmaxnreg. [] when
    the kernel has no roles."""
    attr = fn.attributes.get("kt.roles")
    if attr is None:
        return []
    return [tuple(v.value.data for v in role.data) for role in attr.data]  # type: ignore


def target_name(module: ModuleOp) -> str | None:
    attr = module.attributes.get("kt.target")
    return None if attr is None else attr.data  # type: ignore[attr-defined]


def loc_of(op: Operation) -> SourceLoc | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return SourceLoc(loc.filename.data, loc.line.data, loc.column.data)
    return None


def error_at(op: Operation, message: str, *, hint: str | None = None,
             what: str | None = None) -> KernelError:
    """A user error pointing at the kernel line that made `op`. `what` names the op in the
    author's words (e.g. "mma", "barrier"); the kernel name comes from the enclosing module."""
    return KernelError(message, loc=loc_of(op), kernel=kernel_of(op), op=what, hint=hint)


def kernel_of(op: Operation) -> str | None:
    """The name of the kernel of the module holding `op`, None outside one."""
    module = op.get_toplevel_object()
    if not isinstance(module, ModuleOp):
        return None
    try:
        return kernel_name(module)
    except KernelError:
        return None


def user_op_name(op: Operation) -> str:
    """How the kernel author calls this op."""
    return {"kt.lds_load": "shared load", "kt.copy_async": "group load", "kt.mma": "mma",
            "kt.mma_shared": "mma from shared",
            "kt.wait_for": "wait_for", "kt.barrier": "barrier", "kt.alloc": "shared",
            "kt.block_reduce": "group reduce"}.get(op.name, op.name.removeprefix("kt."))


def verify_module(module: ModuleOp) -> None:
    """Complete verification (ir/verification.py: every check of xDSL's `module.verify()`,
    and SSA dominance), each failure a KernelError at the op that fails: the kt ops'
    relations (verifiers.py) raise one already; another dialect's op (func, arith, scf) is
    found again and named. A clean module costs one walk of compiled checks; only a failing
    one runs xDSL's own verification, so the message is xDSL's."""
    from .verification import first_failure
    failure = first_failure(module)
    if failure is None:
        return
    _verify_with_xdsl(module)
    if failure.operand is not None:
        raise dominance_error(failure.op, failure.operand)


def verify_ops(module: ModuleOp, ops) -> None:
    """`verify_module` restricted to `ops` (each checked alone, not its nested ops): what a
    pass that changed only these ops (their types, properties or attributes) must re-check."""
    from .verification import failing_ops
    if failing_ops(ops) is not None:
        _verify_with_xdsl(module)


def _verify_with_xdsl(module: ModuleOp) -> None:
    """xDSL's `module.verify()`, its failure as a KernelError at the failing op."""
    from xdsl.utils.exceptions import VerifyException
    try:
        module.verify()
    except KernelError:
        raise
    except VerifyException as err:
        raise located_verify_error(module, err) from None


def dominance_error(op: Operation, operand: int) -> KernelError:
    """Operand `operand` of `op` is used where its definition does not reach."""
    return error_at(op, f"operand {operand + 1} of {op.name} is used where its value is not "
                        f"defined: a value must be defined before its use, in the same block "
                        f"or one enclosing it (not inside another op's region, nor outside "
                        f"the function)",
                    hint="define the value before the op that uses it", what=op.name)


def located_verify_error(module: ModuleOp, err: Exception) -> KernelError:
    """`err`, raised by `module.verify()`, as a KernelError at the first op that fails
    verification on its own (found only on this error path)."""
    from xdsl.utils.exceptions import VerifyException
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as found:
            return error_at(op, str(found).strip(), what=op.name)
    return KernelError(f"the module does not verify: {str(err).strip()}")


"""Questions every consumer of a kt module asks: which function is the kernel, where an op
came from, and how to report a user error at an op."""
from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
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
    return kernel_func(module).attributes["kt.warps"].value.data  # type: ignore[attr-defined]


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
    kernel = None
    module = op.get_toplevel_object()
    if isinstance(module, ModuleOp):
        try:
            kernel = kernel_name(module)
        except KernelError:
            kernel = None
    return KernelError(message, loc=loc_of(op), kernel=kernel, op=what, hint=hint)


def user_op_name(op: Operation) -> str:
    """How the kernel author calls this op."""
    return {"kt.lds_load": "shared load", "kt.copy_async": "group load", "kt.mma": "mma",
            "kt.mma_shared": "mma from shared",
            "kt.wait_for": "wait_for", "kt.barrier": "barrier", "kt.alloc": "shared",
            "kt.block_reduce": "group reduce"}.get(op.name, op.name.removeprefix("kt."))

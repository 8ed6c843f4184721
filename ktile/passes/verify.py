"""verify: the kernel fits its target before anything is derived from it.

Invariant established: the module verifies completely (ir/verification.py: every op's own
checks, xDSL's and the kt relations, and SSA dominance; a failure is a KernelError at the op);
the block (warps × wave size) fits the target's threads per block;
every element type of a global, tile or vector is one the target holds (fp8 only where it has
an fp8 MMA); every workgroup-wide op (barrier, group load, group reduce, shared allocation,
mma from shared) is reached by every warp, i.e. no branch or loop around it depends on the warp
id; and every mma from shared has the shape a warpgroup MMA takes (a's rows in 16-row blocks,
K a multiple of 16, N a multiple of 8 up to 256).
"""
from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from .. import targets
from ..errors import KernelError
from ..ir import ops as kt
from ..ir.ops_pipeline import RoleOp
from ..ir.query import error_at, kernel_func, loc_of, verify_module, warps
from ..ir.types import GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType
from ..targets.base import Target
from .common import STRUCTURED, OpIndex, line_of, op_words, target_of
from .named_barriers import check_named_barriers

WORKGROUP_OPS = (kt.BarrierOp, kt.CopyAsyncOp, kt.BlockReduceOp, kt.AllocOp, kt.MmaSharedOp)
WORKGROUP_CLASSES = frozenset(WORKGROUP_OPS)
DTYPED = (GlobalType, RegTileType, RegVecType, SharedTileType, SharedVecType)
DTYPED_CLASSES = frozenset(DTYPED)   # the kt types are not subclassed: told apart exactly

STRUCTURED_CLASSES = frozenset(STRUCTURED)
TERMINATORS = frozenset((scf.YieldOp, scf.ConditionOp))   # what they pass on, their owner says

# Why each workgroup-wide op must be reached by every warp, in the author's words.
WHY_EVERY_WARP = {
    "kt.barrier": "warps that do not reach it never arrive, and the block hangs",
    "kt.copy_async": "every warp of the block copies its part of the tile",
    "kt.block_reduce": "it combines a value from every warp of the block",
    "kt.alloc": "shared memory is allocated once for the whole block",
    "kt.mma_shared": "on sm_90a the four warps of a warpgroup issue it together as one wgmma, "
                     "and a warp that does not reach it leaves the others waiting",
}

# The warpgroup MMA's shape rules for an mma from shared: (what, its size, the unit, the most)
WGMMA_ROWS_PER_WARP = 16   # wgmma m64: four warps of 16 rows each
WGMMA_K = 16               # one wgmma step along K (16-bit operands)
WGMMA_K_8BIT = 32          # one wgmma step along K (8-bit operands: e4m3 k32)
WGMMA_N_UNIT, WGMMA_N_MAX = 8, 256


class Verify(ModulePass):
    name = "verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        verify_module(op)   # first: every later check reads types the op verifiers vouch for
        target = target_of(op)
        fn = kernel_func(op)
        index = OpIndex(fn)
        check_block_size(fn, warps(op), target)
        check_dtypes(fn, target, index)
        check_uniform_control(fn, index)
        check_named_barriers(fn, warps(op), target, index)
        for mma in index.of(kt.MmaSharedOp):
            check_mma_shared_shape(mma)
            check_mma_shared_kn(mma, target, warps(op))


# ---- threads per block ---------------------------------------------------------------------

def check_block_size(fn: FuncOp, n_warps: int, target: Target) -> None:
    threads = n_warps * target.wave_size
    if threads <= target.max_threads_per_block:
        return
    raise KernelError(
        f"{n_warps} warps of {target.wave_size} lanes are {threads} threads, over {target.name}'s "
        f"limit of {target.max_threads_per_block} threads per block",
        loc=loc_of(fn), kernel=fn.sym_name.data,
        hint=f"use at most {target.max_warps} warps (@hk.kernel(..., warps={target.max_warps}))")


# ---- element types -------------------------------------------------------------------------

def check_dtypes(fn: FuncOp, target: Target, index: OpIndex | None = None) -> None:
    """Every tensor parameter's and every result's element type is one `target` holds; the
    first one that is not (in walk order) is refused at its op."""
    for position, ty in enumerate(fn.function_type.inputs.data):
        _check_dtype(ty, fn, target, f"tensor parameter {position + 1}")
    held: set[Attribute] = set()   # a kernel's results share a handful of element types
    for op in (index or OpIndex(fn)).ops:
        for result in op.results:
            ty = result.type
            if type(ty) in DTYPED_CLASSES and ty.element not in held:
                _check_dtype(ty, op, target, op_words(op))
                held.add(ty.element)


def _check_dtype(ty: Attribute, op: Operation, target: Target, what: str) -> None:
    if not isinstance(ty, DTYPED):
        return
    name = ty.dtype.name
    if dtype_supported(name, target):
        return
    why = (f": {target.name} has no fp8 matrix instruction" if name == "fp8" and
           target.supports_dtype(name) else "")
    others = ", ".join(t.name for t in targets.all_targets() if dtype_supported(name, t))
    usable = ", ".join(d for d in target.dtypes if dtype_supported(d, target))
    hint = f"use one of {usable} on {target.name}"
    if others:
        hint += f", or trace for a target that has {name} ({others})"
    raise error_at(op, f"{name} is not supported on {target.name}{why}", hint=hint, what=what)


def dtype_supported(name: str, target: Target) -> bool:
    if not target.supports_dtype(name):
        return False
    return name != "fp8" or target.has_fp8_mma


# ---- the shape of an mma from shared --------------------------------------------------------

def check_mma_shared_shape(mma: kt.MmaSharedOp) -> None:
    (m, _), (n, k) = mma.acc.type.shape, mma.b_nk   # m: this warp's rows of a
    form, n_side = ("`a @ s`", "columns") if mma.b_kn else ("`a @ s.T`", "rows")
    shape = f"a is {m}x{k} and the shared tile {'x'.join(map(str, mma.b.type.shape))}"
    if mma.a_shared:
        shape = f"each warp's rows of the shared a are {m}x{k} and the shared b {n}x{k}"
    if m % WGMMA_ROWS_PER_WARP:
        raise error_at(mma, f"{form}: {shape}; a's rows must be a multiple of "
                            f"{WGMMA_ROWS_PER_WARP} (a warpgroup MMA takes 16 rows of a from "
                            f"each warp)", hint="give a a multiple of 16 rows",
                       what="mma from shared")
    k_step = WGMMA_K_8BIT if mma.b.type.dtype.bits == 8 else WGMMA_K
    if k % k_step:
        k_side = "a's columns, the shared tile's rows" if mma.b_kn else "their columns"
        raise error_at(mma, f"{form}: {shape}; K ({k_side}) must be a multiple of "
                            f"{k_step}, the warpgroup MMA's K step for "
                            f"{mma.b.type.dtype.name} operands",
                       hint=f"pad K to a multiple of {k_step} (a group load zero-fills past "
                            f"the edge)", what="mma from shared")
    if n % WGMMA_N_UNIT or n > WGMMA_N_MAX:
        raise error_at(mma, f"{form}: {shape}; N (the shared tile's {n_side}) must be a "
                            f"multiple of {WGMMA_N_UNIT} up to {WGMMA_N_MAX}, the widest "
                            f"warpgroup MMA (wgmma n{WGMMA_N_MAX})",
                       hint=f"split B into shared tiles of at most {WGMMA_N_MAX} {n_side}, "
                            f"each multiplied into its own accumulator", what="mma from shared")


# sm_90a's shared tile layouts a wgmma descriptor reads N-major (shared_tile.hpp's swizzles)
KN_ROW_BYTES = (32, 64)
KN_ROW_BYTES_UNIT = 128


def check_mma_shared_kn(mma: kt.MmaSharedOp, target: Target, n_warps: int) -> None:
    """`a @ s` (B as K×N, N contiguous) is the target's transposed-B warpgroup MMA: refused
    where the target has none for the operands' type, outside whole warpgroups, or for a
    shared tile whose rows are no swizzled layout a descriptor reads."""
    if not mma.b_kn:
        return
    dtype, (k, n) = mma.b.type.dtype.name, mma.b.type.shape
    kinds = target.mma_shared_kn_dtypes
    if dtype not in kinds:
        where = (f"{target.name} has it for {', '.join(kinds)} only" if kinds else
                 f"{target.name} has no such MMA")
        raise error_at(mma, f"`a @ s` reads B from a {k}x{n} shared tile as K×N (N "
                            f"contiguous): {where}, not {dtype}",
                       hint="keep B as N×K in the shared tile and write `a @ s.T`",
                       what="mma from shared")
    row_bytes = n * mma.b.type.dtype.bits // 8
    if n_warps % 4 or not (row_bytes in KN_ROW_BYTES or row_bytes % KN_ROW_BYTES_UNIT == 0):
        raise error_at(mma, f"`a @ s`: the {n_warps}-warp block and the {k}x{n} shared tile "
                            f"({row_bytes}-byte rows): the transposed-B warpgroup MMA needs "
                            f"whole warpgroups and rows of 32, 64 or a multiple of 128 bytes",
                       hint="use warps= a multiple of 4 and N of 16, 32 or a multiple of 64 "
                            "(16-bit), or keep B as N×K and write `a @ s.T`",
                       what="mma from shared")


# ---- workgroup-wide ops under warp-dependent control flow -----------------------------------

def check_uniform_control(fn: FuncOp, index: OpIndex | None = None) -> None:
    """Refuses the first workgroup-wide op (in walk order) inside a branch or loop whose
    control depends on the warp id, naming the outermost such branch or loop."""
    index = index or OpIndex(fn)
    varying = warp_varying_values(fn, index)
    if not varying:
        return   # no control flow can depend on the warp id
    for construct in index.of(*STRUCTURED):
        if is_divergent(construct, varying):
            _refuse_workgroup_ops(construct)


def _refuse_workgroup_ops(divergent: Operation) -> None:
    # a pipeline role's branch (kt.role) is whole warpgroups: its warpgroup MMAs are reached
    # by all four warps of each warpgroup that takes it
    warpgroups = isinstance(divergent, scf.IfOp) and isinstance(divergent.cond.owner, RoleOp)
    for op in divergent.walk():
        if type(op) in WORKGROUP_CLASSES and not (warpgroups and type(op) is kt.MmaSharedOp):
            raise _divergence_error(op, divergent)


def is_divergent(op: Operation, varying: set[SSAValue]) -> bool:
    """Whether warps may disagree on entering `op`'s regions (or on how often)."""
    if isinstance(op, scf.IfOp):
        return op.cond in varying
    if isinstance(op, scf.ForOp):
        return any(v in varying for v in (op.lb, op.ub, op.step))
    if isinstance(op, scf.WhileOp):
        return op.before_region.block.last_op.condition in varying
    return False


def _divergence_error(op: Operation, divergent: Operation) -> KernelError:
    where = line_of(divergent)
    construct = {"scf.if": f"a branch (the `if` at {where}) whose condition depends",
                 "scf.for": f"a loop (the `for` at {where}) whose bounds depend",
                 "scf.while": f"a loop (the `while` at {where}) whose condition depends"}
    return error_at(
        op, f"{op_words(op)} inside {construct[divergent.name]} on the warp id: "
            f"{WHY_EVERY_WARP[op.name]}",
        hint="move it out of the branch or loop, or make the condition the same for every "
             "warp (not computed from hk.arch.warp_id)", what=op_words(op))


def warp_varying_values(fn: FuncOp, index: OpIndex | None = None) -> set[SSAValue]:
    """Values that may differ between the warps of a block: everything computed from
    kt.warp_id, through ops, loop-carried values and the results of warp-dependent control
    flow. A group reduce gives every warp the same value, so it stops the dependence."""
    index = index or OpIndex(fn)
    varying: set[SSAValue] = set()
    pending: list[SSAValue] = []

    def add(values) -> None:
        for value in values:
            if value not in varying:
                varying.add(value)
                pending.append(value)

    for warp_id in index.of(kt.WarpIdOp):
        add(warp_id.results)
    for role in index.of(RoleOp):         # a pipeline role: some warps (whole warpgroups)
        add(role.results)
    if not pending:
        return varying   # the common kernel: nothing depends on the warp id
    in_kernel = set(index.ops)   # a use may be held by an op in a block the tracer dropped
    while pending:   # follow each newly varying value to the ops that read it
        for use in pending.pop().uses:
            if use.operation in in_kernel:
                add(_newly_varying(use.operation, varying))
    return varying


def _newly_varying(reader: Operation, varying: set[SSAValue]) -> list[SSAValue]:
    """The values that vary because `reader` reads a varying value. What a terminator reads,
    its structured op carries on."""
    cls = type(reader)
    if cls in TERMINATORS:
        owner = reader.parent_op()
        return structured_flow(owner, varying) if type(owner) in STRUCTURED_CLASSES else []
    if cls in STRUCTURED_CLASSES:
        return structured_flow(reader, varying)
    if cls is kt.BlockReduceOp:
        return []
    return list(reader.results)


def structured_flow(op: Operation, varying: set[SSAValue]) -> list[SSAValue]:
    """The values of a structured op that vary: each carried value with a varying source,
    and every result when warps may disagree on entering its regions."""
    out = [v for sources, targets in carried_flows(op) if any(s in varying for s in sources)
           for v in targets]
    if is_divergent(op, varying):
        out += op.results
    return out


def carried_flows(op: Operation):
    """(sources, targets) of each value a structured op carries: each target takes its value
    from one of the sources."""
    if isinstance(op, scf.ForOp):
        yielded = op.body.block.last_op
        for k, init in enumerate(op.iter_args):
            yield [init, yielded.operands[k]], [op.body.block.args[k + 1], op.results[k]]
    elif isinstance(op, scf.IfOp):
        yields = [r.block.last_op for r in (op.true_region, op.false_region) if r.blocks]
        for k, result in enumerate(op.results):
            yield [y.operands[k] for y in yields], [result]
    elif isinstance(op, scf.WhileOp):
        before, after = op.before_region.block, op.after_region.block
        for k, init in enumerate(op.arguments):
            yield [init, after.last_op.operands[k]], [before.args[k]]
        for k, result in enumerate(op.results):
            yield [before.last_op.args[k]], [after.args[k], result]

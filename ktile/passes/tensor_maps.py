"""tensor-maps: which group loads may be TMA copies, and the tensor maps the host encodes.

Invariant established: on a target with tensor copies (`tensor_copy_swizzles`: sm_90a), every
kt.copy_async into a shared tile whose layout is a TMA swizzle mode (`Target.tensor_box`),
named by its kt.alloc (not carried through a loop or branch), from a kernel parameter carries
`map`, an index into the kernel function's `kt.tensor_maps`: one
entry per (parameter, tile shape), [parameter index, box cols, box rows, swizzle bytes,
element bytes]. Such a copy is a TMA copy, completing on its tile's mbarrier (lds-alloc gives
the slot, waits names it); the host encodes one map per entry for every call
(`ktile/runtime/tensor_maps.py`). Copies into shared vectors, or tiles of another width,
carry no map and stay cp.async copies. A pipeline's stage copy (kt.stage_copy, into the
stage's tile picked from its list) gets a map the same way when its pipeline's copies are
TMA copies (kt.pipeline_init's `tma`: every stage tile has a swizzle mode); else none of them
does (cp.async onto the stage's barrier). Elsewhere, or where the module says
`kt.tensor_copies = false` (a GPU call whose tensors cannot have maps), it changes nothing.
"""
from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import BlockArgument
from xdsl.passes import ModulePass

from ..ir import ops as kt
from ..ir.ops_pipeline import PipelineInitOp, StageCopyOp
from ..ir.query import kernel_func
from ..ir.types import SharedTileType
from .common import element_bytes, target_of


class TensorMaps(ModulePass):
    name = "tensor-maps"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        fn = kernel_func(op)
        off = op.attributes.get("kt.tensor_copies")
        if not target.tensor_copy_swizzles or (off is not None and not off.value.data):
            return
        params = list(fn.body.block.args)
        tma_pipelines = {init.prop_int("pipeline") for init in fn.walk()
                         if isinstance(init, PipelineInitOp) and init.prop_int("tma")}
        maps: dict[tuple[int, int, int], int] = {}
        entries: list[list[int]] = []
        for copy in fn.walk():
            if not isinstance(copy, (kt.CopyAsyncOp, StageCopyOp)):
                continue
            ty, src = copy.dst.type, copy.src
            named = isinstance(copy.dst.owner, kt.AllocOp) or (
                isinstance(copy, StageCopyOp) and copy.prop_int("pipeline") in tma_pipelines)
            if not isinstance(ty, SharedTileType) or not named \
                    or not isinstance(src, BlockArgument) or src.owner is not fn.body.block:
                continue
            size = element_bytes(ty)
            box = target.tensor_box(ty.rows.data, ty.cols.data, size)
            if box is None:
                continue
            key = (params.index(src), ty.rows.data, ty.cols.data)
            if key not in maps:
                maps[key] = len(entries)
                entries.append([key[0], box.cols, box.rows, box.swizzle_bytes, size])
            copy.properties["map"] = IntegerAttr(maps[key], i64)
        if entries:
            fn.attributes["kt.tensor_maps"] = ArrayAttr(
                [ArrayAttr([IntegerAttr(v, i64) for v in entry]) for entry in entries])

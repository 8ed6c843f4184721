"""`ktile.ops.embedding(ids, weight, *, out=None)`: `torch.nn.functional.embedding`'s forward,
`torch.ops.ktile.embedding`. ids: int64 or int32 of 1 to 3 dimensions; weight `[vocabulary,
hidden]`; the result `ids.shape + (hidden,)` of weight's dtype. An id outside the table gives a
zero row (torch raises instead; a check would need the ids on the host). int64 ids are read
where they lie (indices.id_words: no conversion kernel)."""
from __future__ import annotations

import torch

from ...errors import InputError
from .. import _library as lib
from ..elementwise.launch import run_kernel
from .._library import Route, RoutingTable
from . import kernels
from .indices import check_indices, id_words

NAME = "embedding"
DTYPES = ("bf16", "fp16", "fp32")
# Flat copies where the width is a multiple of 16 rows of COLS (the widest such COLS first),
# else the gather kernel (any width).
TABLE = RoutingTable([
    *(Route("embedding_flat", {"COLS": cols, "WARPS": 4, "HELD": 1}, cols_multiple=16 * cols,
            sample=(3, 16 * cols)) for cols in (64, 32, 16)),
    Route("embedding_rows", {"COLS": 64, "WARPS": 4}),
])


def _launch(ids, weight, out) -> None:
    hidden, target = weight.shape[-1], lib.target_of(weight)
    route = TABLE.choose(ids.numel(), hidden, target)
    kernel = OP.kernel(route, lib.kt_dtype(weight))
    if route.kernel == "embedding_flat":
        cols = route.constants["COLS"]
        run_kernel(kernel, id_words(ids), weight.view(-1, cols), out.view(-1, cols),
                   hidden // cols, target=target, **route.constants)
        return
    run_kernel(kernel, id_words(ids), weight, out.view(-1, hidden), target=target,
               **route.constants)


def _embedding(ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    out = weight.new_empty((*ids.shape, weight.shape[-1]))
    _launch(ids, weight, out)
    return out


def _embedding_fake(ids, weight):
    return weight.new_empty((*ids.shape, weight.shape[-1]))


def _embedding_out(ids: torch.Tensor, weight: torch.Tensor, out: torch.Tensor) -> None:
    _launch(ids, weight, out)


def _embedding_out_fake(ids, weight, out):
    return None


_FUNCTIONAL = lib.define("ktile::embedding", _embedding, _embedding_fake)
_OUT = lib.define("ktile::embedding_out", _embedding_out, _embedding_out_fake,
                  mutates_args=("out",))


def embedding(ids: torch.Tensor, weight: torch.Tensor, *, out: torch.Tensor | None = None):
    """weight's rows at ids: `ids.shape + (hidden,)`."""
    check_indices(NAME, "ids", ids, max_rank=3)
    lib.check_tensor(NAME, "weight", weight, DTYPES, ranks=(2, 2))
    lib.check_same_device(NAME, {"ids": ids, "weight": weight})
    if out is None:
        return _FUNCTIONAL(ids, weight)
    _check_out(out, (*ids.shape, weight.shape[-1]), weight)
    _OUT(ids, weight, out)
    return out


def _check_out(out, shape, weight) -> None:
    """out is a contiguous tensor of `shape` and weight's dtype and device, apart from it."""
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != shape:
        raise InputError(f"{NAME}: 'out' must be a tensor of shape {shape} (ids.shape + "
                         f"(hidden,)), got {getattr(out, 'shape', type(out).__name__)}",
                         hint="pass out=weight.new_empty((*ids.shape, weight.shape[-1]))")
    lib.check_tensor(NAME, "out", out, DTYPES)
    lib.check_same_device(NAME, {"out": out, "weight": weight})
    if out.dtype != weight.dtype:
        raise InputError(f"{NAME}: 'out' holds {lib.dtype_name(out)}, 'weight' "
                         f"{lib.dtype_name(weight)}; they must be equal",
                         hint="pass out of weight's dtype")
    if out.device.type != "meta" and lib.shares_memory(out, weight):
        raise InputError(f"{NAME}: 'out' shares memory with 'weight'",
                         hint="pass a separate out=weight.new_empty(...)")


OP = lib.Op(NAME, {"embedding": embedding}, kernels.KERNELS, DTYPES, TABLE,
            "ktile.ops.embedding.reference")
OPS = [OP]

"""Index tensors of the ops (token ids, positions, slots): torch's int64 or int32, passed to the
kernels as int32 (ktile has no 64-bit integer element type): converted (`as_int32`), or viewed
as their 32-bit words (`id_words`) by kernels that read both words."""
from __future__ import annotations

from ...errors import InputError

INDEX_DTYPES = ("int64", "int32")


def check_indices(op: str, param: str, t, *, max_rank: int = 4) -> None:
    """`t` is a non-empty int64 or int32 torch tensor of 1 to `max_rank` dimensions."""
    import torch
    if not isinstance(t, torch.Tensor):
        raise InputError(f"{op}: '{param}' must be a torch.Tensor of integers, got "
                         f"{type(t).__name__}", hint=f"pass torch.as_tensor({param})")
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype not in INDEX_DTYPES:
        raise InputError(f"{op}: '{param}' holds {dtype} elements; indices are int64 or int32",
                         hint=f"convert it: {param}.long()")
    if not 1 <= t.dim() <= max_rank:
        raise InputError(f"{op}: '{param}' has {t.dim()} dimensions; this op takes 1 to "
                         f"{max_rank}", hint=f"pass {param}.reshape(-1)")
    if t.numel() == 0:
        raise InputError(f"{op}: '{param}' is empty; there is nothing to do",
                         hint="skip the call when there are no tokens")
    if t.device.type != "meta" and t.numel() >= 2 ** 31:
        raise InputError(f"{op}: '{param}' holds {t.numel()} indices; at most 2^31 - 1 fit "
                         f"the kernel's int32 count", hint="split the call")


def as_int32(t):
    """`t` flattened to int32 (a copy for int64; the values must fit, as every index does)."""
    import torch
    flat = t.reshape(-1)
    return flat if flat.dtype == torch.int32 else flat.to(torch.int32)


def id_words(t):
    """`t` as the `[n, W]` int32 view the gathering kernels read (rotary, embedding): W = 1 for
    int32, W = 2 for int64 (each value's low and high 32-bit words, little-endian), no copy
    where `t` is contiguous."""
    import torch
    flat = t.reshape(-1, 1)
    return flat.view(torch.int32) if flat.dtype == torch.int64 else flat

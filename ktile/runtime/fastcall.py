"""The per-call fast path of a GPU kernel call, generated once per number of tensors.

A repeated call must cost about what an eager torch op costs (a few microseconds), so its
Python is written out flat for the kernel's arity, as Triton's launcher is: no loops, no
per-tensor tuples, one comparison of a flat signature tuple, the data pointers written into
the preallocated parameter structs, one launch.

    code = fast_call(3)
    signature = code.signature_of(tensors)         # what a new signature is checked against
    fast = code.make_fast(signature, g0, g1, g2, launch, prepare, misaligned, lock)
    fast(tensors)

`fast` hands the call to `prepare(args)` when the signature differs (or the arguments are not
tensors), raises `misaligned(args)` when a data pointer is not ALIGNMENT-aligned, and holds
`lock` while it writes the pointers and launches, since the structs are shared by threads.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

ALIGNMENT = 16   # bytes; the headers' widest global access

_TEMPLATE = """
def signature_of(args):
    {names}, = args
    return ({key},)


def make_fast(signature, {structs}, launch, prepare, misaligned, lock):
    def fast(args):
        try:
            {names}, = args
            key = ({key},)
        except (ValueError, TypeError, AttributeError):
            return prepare(args)
        if key != signature:
            return prepare(args)
        {pointers}
        if ({any_pointer}) & {mask}:
            raise misaligned(args)
        with lock:
            {stores}
            launch()
    return fast
"""


@functools.lru_cache(maxsize=None)
def fast_call(count: int) -> SimpleNamespace:
    """`signature_of` and `make_fast` for kernels taking `count` tensors."""
    index = range(count)
    source = _TEMPLATE.format(
        names=", ".join(f"a{i}" for i in index),
        key=", ".join(f"a{i}.dtype, a{i}.shape, a{i}.stride(), a{i}.get_device()" for i in index),
        structs=", ".join(f"g{i}" for i in index),
        pointers="\n        ".join(f"p{i} = a{i}.data_ptr()" for i in index),
        any_pointer=" | ".join(f"p{i}" for i in index),
        mask=ALIGNMENT - 1,
        stores="\n            ".join(f"g{i}.data = p{i}" for i in index))
    namespace: dict = {}
    exec(compile(source, f"<ktile fast call, {count} tensors>", "exec"), namespace)
    return SimpleNamespace(signature_of=namespace["signature_of"],
                           make_fast=namespace["make_fast"], source=source)

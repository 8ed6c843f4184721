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
tensors), raises `misaligned(args)` when a data pointer is not ALIGNMENT-aligned, raises
`aliased(args)` when a written tensor's bytes meet another tensor's (`Overlap`: the spans are
fixed by the signature, the pointers are not, so this is the one layout check each call
repeats), and holds `lock` while it writes the pointers and launches, since the structs are
shared by threads. A written tensor's `requires_grad` is part of its signature.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import NamedTuple

ALIGNMENT = 16   # bytes; the headers' widest global access

_TEMPLATE = """
def signature_of(args):
    {names}, = args
    return ({key},)


def make_fast(signature, {structs}, {spans}launch, prepare, misaligned, aliased, lock):
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
        {overlap}with lock:
            {stores}
            launch()
    return fast
"""


class Overlap(NamedTuple):
    """A written tensor `w` and another tensor `x` whose bytes must not meet; `same_view`: the
    two have one dtype, shape and strides, and the kernel may take `x` as `w` in place, so equal
    pointers are allowed (arguments.check_aliasing's rule)."""
    w: int
    x: int
    same_view: bool


def _overlap_test(pairs: tuple[Overlap, ...]) -> str:
    """`if <any pair's spans [p, p + s) meet>: raise aliased(args)`, or nothing."""
    if not pairs:
        return ""
    tests = [f"(p{w} < p{x} + s{x} and p{x} < p{w} + s{w}" + (f" and p{x} != p{w})" if same
                                                             else ")")
             for w, x, same in pairs]
    return f"if {' or '.join(tests)}:\n            raise aliased(args)\n        "


def _spanned(pairs: tuple[Overlap, ...]) -> list[int]:
    return sorted({i for w, x, _ in pairs for i in (w, x)})


@functools.lru_cache(maxsize=None)
def fast_call(count: int, written: tuple[int, ...] = (),
              pairs: tuple[Overlap, ...] = ()) -> SimpleNamespace:
    """`signature_of` and `make_fast` for kernels taking `count` tensors, writing `written`,
    whose `pairs` must not overlap; `make_fast` takes the byte span of each tensor a pair names
    (`spanned`), in order, after the structs."""
    index = range(count)
    source = _TEMPLATE.format(
        names=", ".join(f"a{i}" for i in index),
        key=", ".join(f"a{i}.dtype, a{i}.shape, a{i}.stride(), a{i}.get_device()"
                      + (f", a{i}.requires_grad" if i in written else "") for i in index),
        structs=", ".join(f"g{i}" for i in index),
        spans="".join(f"s{i}, " for i in _spanned(pairs)),
        overlap=_overlap_test(pairs),
        pointers="\n        ".join(f"p{i} = a{i}.data_ptr()" for i in index),
        any_pointer=" | ".join(f"p{i}" for i in index),
        mask=ALIGNMENT - 1,
        stores="\n            ".join(f"g{i}.data = p{i}" for i in index))
    namespace: dict = {}
    exec(compile(source, f"<ktile fast call, {count} tensors>", "exec"), namespace)
    return SimpleNamespace(signature_of=namespace["signature_of"],
                           make_fast=namespace["make_fast"], source=source,
                           spanned=_spanned(pairs))

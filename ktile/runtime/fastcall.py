"""The per-call fast path of a GPU kernel call, generated once per number of tensors.

A repeated call must cost about what an eager torch op costs (a few microseconds), so its
Python is written out flat for the kernel's arity, as Triton's launcher is: no loops, no
per-tensor tuples, one comparison of a flat signature tuple, the data pointers written into
the preallocated parameter structs, one launch.

    code = fast_call(3)
    signature = code.signature_of(tensors)         # what a new signature is checked against
    fast, run = code.make_fast(signature, g0, g1, g2, launch, prepare, misaligned, aliased,
                               scalar, lock)
    fast(tensors)
    run(tensors)                                   # the same, the signature known to match

A kernel with runtime scalars (`fast_call(3, scalars=("float",))`) takes their values after the
tensors (`fast((x, w, o, eps))`) and `make_fast` one ctypes value per scalar after the spans.
A value is no part of the signature: each call checks it inline (a float within f32's range, an
int within i32's: one type test and one comparison) and hands anything else to `scalar(j,
value)`, which returns the value the kernel takes or raises the call's InputError; it is
written into the parameter block under the lock, with the pointers.

`run` is `fast` without the signature's comparison, for a caller that has compared it (a GPU
call's signatures kept besides the current one, `gpu.GpuCall`). `fast` hands the call to
`prepare(args, key)` when the signature differs (`key`: the call's own, computed as the
signature is, so the caller can look it up among signatures prepared before), to
`prepare(args)` when the arguments are not tensors, raises `misaligned(args)` when a data
pointer is not ALIGNMENT-aligned, raises `aliased(args)` when a written tensor's bytes meet
another tensor's (`Overlap`: the spans are fixed by the signature, the pointers are not, so
this is the one layout check each call repeats), and holds `lock` while it writes the pointers
and launches, since the structs are shared by threads. A written tensor's `requires_grad` is
part of its signature.
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


def make_fast(signature, {structs}, {spans}{values}launch, prepare, misaligned, aliased, scalar,
              lock):
    def fast(args):
        try:
            {names}, = args
            key = ({key},)
        except (ValueError, TypeError, AttributeError):
            return prepare(args)
        if key != signature:
            return prepare(args, key)
        {body}

    def run(args):
        {names}, = args
        {body}
    return fast, run
"""

# after the signature: the pointers, their checks, the scalars, the launch (`fast` and `run`)
_BODY = """{pointers}
        if ({any_pointer}) & {mask}:
            raise misaligned(args)
        {overlap}{checks}with lock:
            {stores}
            launch()"""

# the inline test of a runtime scalar's value, by kind: what passes needs no conversion
_SCALAR_TESTS = {"float": "type({b}) is float and -{F32_MAX!r} <= {b} <= {F32_MAX!r}",
                 "int": "type({b}) is int and -2147483648 <= {b} <= 2147483647"}
F32_MAX = 3.4028234663852886e38   # the largest finite f32


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


def _scalar_checks(kinds: tuple[str, ...]) -> str:
    """`c<j> = b<j>` where the value passes its kind's inline test, else `scalar(j, b<j>)`."""
    lines = [f"c{j} = b{j} if {_SCALAR_TESTS[kind].format(b=f'b{j}', F32_MAX=F32_MAX)} "
             f"else scalar({j}, b{j})" for j, kind in enumerate(kinds)]
    return "".join(f"{line}\n        " for line in lines)


@functools.lru_cache(maxsize=None)
def fast_call(count: int, written: tuple[int, ...] = (),
              pairs: tuple[Overlap, ...] = (), scalars: tuple[str, ...] = ()) -> SimpleNamespace:
    """`signature_of` and `make_fast` for kernels taking `count` tensors, writing `written`,
    whose `pairs` must not overlap, then runtime scalars of the kinds `scalars` ("float",
    "int"); `make_fast` takes the byte span of each tensor a pair names (`spanned`), in order,
    after the structs, then each scalar's ctypes value."""
    index = range(count)
    body = _BODY.format(
        overlap=_overlap_test(pairs),
        checks=_scalar_checks(scalars),
        pointers="\n        ".join(f"p{i} = a{i}.data_ptr()" for i in index),
        any_pointer=" | ".join(f"p{i}" for i in index),
        mask=ALIGNMENT - 1,
        stores="\n            ".join([*(f"g{i}.data = p{i}" for i in index),
                                      *(f"v{j}.value = c{j}" for j in range(len(scalars)))]))
    source = _TEMPLATE.format(
        names=", ".join([*(f"a{i}" for i in index), *(f"b{j}" for j in range(len(scalars)))]),
        key=", ".join(f"a{i}.dtype, a{i}.shape, a{i}.stride(), a{i}.get_device()"
                      + (f", a{i}.requires_grad" if i in written else "") for i in index),
        structs=", ".join(f"g{i}" for i in index),
        spans="".join(f"s{i}, " for i in _spanned(pairs)),
        values="".join(f"v{j}, " for j in range(len(scalars))),
        body=body)
    namespace: dict = {}
    exec(compile(source, f"<ktile fast call, {count} tensors>", "exec"), namespace)
    return SimpleNamespace(signature_of=namespace["signature_of"],
                           make_fast=namespace["make_fast"], source=source,
                           spanned=_spanned(pairs))

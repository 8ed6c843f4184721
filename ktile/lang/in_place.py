"""`@hk.kernel(in_place={"o": "x"})`: the output/input pairs a kernel declares the caller may
pass as one tensor. The decorator checks the names; the runtime checks the rest against the
traced IR before every call (ktile/runtime/aliasing.py) and accepts exactly these pairs as the
same view (docs/runtime.md, "Aliasing and in-place")."""
from __future__ import annotations

from ..errors import KernelError

_EXAMPLE = 'in_place={"o": "x"} (output o may be the very tensor x)'


def declared_pairs(kernel, spec) -> dict[int, int]:
    """`spec` ({output name: input name}, or None) as {output index: input index} over the
    kernel's tensor parameters, refused at the decorator when a name is not a tensor
    parameter, a pair names one tensor twice, or two outputs name one input."""
    if spec is None:
        return {}
    if not isinstance(spec, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in spec.items()):
        raise _error(kernel, f"in_place= is a dict of output names to input names, got {spec!r}")
    index = {p.name: i for i, p in enumerate(kernel.params)}
    pairs: dict[int, int] = {}
    for out, inp in spec.items():
        for name in (out, inp):
            if name not in index:
                raise _error(kernel, f"in_place= names '{name}', which is not a tensor "
                                     f"parameter (tensors: {', '.join(index)})")
        if out == inp:
            raise _error(kernel, f"in_place= pairs '{out}' with itself; a pair is an output and "
                                 f"the input it may be")
        if index[inp] in pairs.values():
            raise _error(kernel, f"in_place= names input '{inp}' for two outputs; two outputs "
                                 f"that are one tensor would overwrite each other")
        pairs[index[out]] = index[inp]
    if set(pairs) & set(pairs.values()):
        raise _error(kernel, "in_place= names a parameter both as an output and as an input")
    return pairs


def _error(kernel, message: str) -> KernelError:
    return KernelError(message, loc=kernel.def_loc, kernel=kernel.name, hint=_EXAMPLE)

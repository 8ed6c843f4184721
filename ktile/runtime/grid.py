"""The launch grid, computed on the host by the kernel's own grid function.

The grid function (`func.func` with `kt.grid`) is the one the interpreter runs and the C++
declares as `<kernel>__grid`: one definition, so the GPU and the interpreter launch the same
blocks. It is compiled once per trace into a Python closure.

    grid = grid_function(trace)
    grid([(1, 1, 48, 192), ...])  ->  (3, 3, 1)
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import InputError

GridFunction = Callable[[Sequence[Sequence[int]]], tuple[int, int, int]]

_COMPILED: dict[int, tuple[object, Callable]] = {}   # id(trace) → (trace, closure on arrays)


class _Extents:
    """What the grid function reads of a global: its shape."""
    __slots__ = ("shape",)

    def __init__(self, shape: Sequence[int]):
        self.shape = tuple(int(s) for s in shape)


def grid_function(trace) -> GridFunction:
    """`grid(shapes) -> (x, y, z)` block counts from the tensors' 4-D shapes."""
    found = _COMPILED.get(id(trace))
    if found is None or found[0] is not trace:
        from ..interpret.program import _compile_grid
        found = _COMPILED[id(trace)] = (trace, _compile_grid(trace.module, len(trace.params)))
    on_arrays = found[1]

    def grid(shapes: Sequence[Sequence[int]]) -> tuple[int, int, int]:
        x, y, z = on_arrays([_Extents(s) for s in shapes])
        return int(x), int(y), int(z)
    return grid


def check_grid(kernel, grid: tuple[int, int, int], shapes: Sequence[Sequence[int]]) -> None:
    """Every block count at least 1. The tensors are not empty (the call refuses that), so a
    grid function giving 0 or fewer blocks along an axis computed nothing to do for real data:
    usually a count rounded down (`n // 64` of 48 rows) where it should round up."""
    for axis, count in zip("xyz", grid):
        if count >= 1:
            continue
        shown = ", ".join(f"{p.name} {tuple(s)}" for p, s in zip(kernel.params, shapes))
        raise InputError(f"the grid function gives {count} blocks along {axis} (grid {grid}) "
                         f"for these tensors ({shown}), so the kernel would silently do nothing",
                         kernel=kernel.name, loc=kernel.def_loc,
                         hint="every count must be at least 1: round up with hk.cdiv(n, tile), "
                              "not n // tile")

"""`run_module`: a checked kt module run on numpy arrays, block by block."""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from ..errors import InputError
from .machine import run_block
from .program import Program, compile_program
from .values import np_dtype


def run_module(module: ModuleOp, arrays: list[np.ndarray], scalars: list = ()) -> None:
    """Run the kernel of `module` over its whole grid. `arrays[i]` is the i-th tensor
    parameter as a 4-D numpy carrier (float32 for float globals, int32 for i32, int8 for
    i8); stores and scatters modify it in place. `scalars[j]`: the j-th runtime scalar, a
    Python float already rounded to f32 or an int in i32's range (`runtime.arguments`)."""
    program = compile_program(module)
    arrays = list(arrays)
    _check_arrays(program, arrays)
    _check_scalars(program, list(scalars))
    arguments = arrays + list(scalars)
    with np.errstate(all="ignore"):  # inf and NaN are values here, as on the GPU
        gx, gy, gz = program.grid(arrays)
        for z in range(gz):
            for y in range(gy):
                for x in range(gx):
                    run_block(program, arguments, (x, y, z))


def _check_scalars(program: Program, scalars: list) -> None:
    if len(scalars) != len(program.scalars):
        raise InputError(f"the kernel takes {len(program.scalars)} runtime scalars, got "
                         f"{len(scalars)}", kernel=program.name)
    for j, (value, dt) in enumerate(zip(scalars, program.scalars)):
        kind = float if dt.is_float else int
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InputError(f"runtime scalar {j} ({dt.name}) must be a Python {kind.__name__}, "
                             f"got {type(value).__name__}", kernel=program.name)


def _check_arrays(program: Program, arrays: list) -> None:
    if len(arrays) != len(program.params):
        raise InputError(f"the kernel takes {len(program.params)} tensors, got {len(arrays)}",
                         kernel=program.name)
    for i, (array, dt) in enumerate(zip(arrays, program.params)):
        carrier = np.dtype(np_dtype(dt))
        if not isinstance(array, np.ndarray) or array.ndim != 4 or array.dtype != carrier:
            got = (f"{array.ndim}-D {array.dtype}" if isinstance(array, np.ndarray)
                   else type(array).__name__)
            raise InputError(f"tensor {i} ({dt.name}) must be a 4-D numpy array of {carrier} "
                             f"(batch, depth, rows, cols), got {got}", kernel=program.name)

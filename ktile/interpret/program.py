"""A checked module compiled for the interpreter: its kernel body and its grid function."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp

from ..dtypes import DType
from ..errors import InternalError
from ..ir.query import grid_func, kernel_func, kernel_name, target_name
from ..ir.types import GlobalType, element_dtype
from .compile import Body, Compiler


@dataclass(frozen=True)
class Program:
    name: str
    warps: int
    params: tuple[DType, ...]            # the dtype of each global parameter, in order
    scalars: tuple[DType, ...]           # the dtype of each runtime scalar, after the globals
    body: Body                           # the kernel body, run once per warp
    registers: list                      # initial registers; the globals go in slots 0..n-1
    grid: Callable[[list], tuple[int, int, int]]

    def new_registers(self, arguments: list) -> list:
        """Registers holding the kernel's arguments: the globals' arrays, then the scalars."""
        regs = list(self.registers)
        regs[:len(arguments)] = arguments
        return regs


def compile_program(module: ModuleOp) -> Program:
    fn = kernel_func(module)
    warps_attr = fn.attributes.get("kt.warps")
    warps = 1 if warps_attr is None else warps_attr.value.data  # type: ignore[attr-defined]
    compiler = Compiler(warps, _target(module))
    args = fn.body.block.args
    if compiler.slots_of(args) != tuple(range(len(args))):
        raise InternalError("kernel arguments must take the first register slots")
    body = compiler.block(fn.body.block)
    params = tuple(a.type.dtype for a in args if isinstance(a.type, GlobalType))
    scalars = tuple(element_dtype(a.type) for a in args[len(params):])
    return Program(kernel_name(module), warps, params, scalars, body, compiler.registers(),
                   _compile_grid(module, len(params)))


def _target(module: ModuleOp):
    """The target the module was checked for (its wait counters), None if it names none."""
    name = target_name(module)
    if name is None:
        return None
    from .. import targets
    return targets.get(name)


def _compile_grid(module: ModuleOp, n_args: int) -> Callable[[list], tuple[int, int, int]]:
    """The grid function as `grid(arrays) -> (x, y, z)` block counts."""
    fn = grid_func(module)
    if fn is None:
        raise InternalError("the module has no grid function (a func.func with kt.grid)")
    compiler = Compiler(1)
    compiler.slots_of(fn.body.block.args)
    body = compiler.block(fn.body.block)
    if body.is_gen or len(body.results) != 3:
        raise InternalError("the grid function must return 3 block counts and hold no barrier")
    initial = compiler.registers()

    def grid(arrays: list) -> tuple[int, int, int]:
        regs = list(initial)
        regs[:n_args] = arrays
        body.run(regs, None)
        x, y, z = (regs[s] for s in body.results)
        return x, y, z
    return grid

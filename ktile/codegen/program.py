"""The whole generated file: the prologue, the grid function and the kernel.

    // <what generated it>
    // target gfx1100: amd rdna3, wave 32
    #include "ktile/amd/rdna3/kernel.hpp"

    __host__ __device__ kt::dim3 add__grid(const kt::gl<kt::bf16>& v0, ...) { ... }

    extern "C" __global__ __launch_bounds__(32) void add(kt::gl<kt::bf16> v0, ...) { ... }

The include is the only target-specific text: an arch variant is a header folder chosen here,
never an `#if` in the generated code.
"""
from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp

from .. import targets
from ..errors import KernelError
from ..ir import query
from ..targets.base import Target
from .emitter import Emitter, missing_lowering
from .lowering import LOWERINGS
from .names import ARRIVALS, tensor_map_name, value_names
from .writer import CppLine

GRID_RESULTS = 3

# A kernel's name is its symbol in the code object and a C++ function at global scope, so it
# cannot be a C++ keyword, `main`, or the headers' namespace `kt`.
RESERVED_NAMES = frozenset({"main", "kt"}) | frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t
    char16_t char32_t class compl concept const consteval constexpr constinit const_cast
    continue co_await co_return co_yield decltype default delete do double dynamic_cast else
    enum explicit export extern false float for friend goto if inline int long mutable
    namespace new noexcept not not_eq nullptr operator or or_eq private protected public
    register reinterpret_cast requires return short signed sizeof static static_assert
    static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())


def header_path(target: Target) -> str:
    """The tile header of a target's family: `ktile/<vendor>/<family>/kernel.hpp`."""
    return f"ktile/{target.vendor}/{target.family}/kernel.hpp"


def resolve_target(module: ModuleOp, target: Target | str | None) -> Target:
    """`target` itself, a target named, or the module's own `kt.target`."""
    if isinstance(target, Target):
        return target
    name = target or query.target_name(module)
    if name is None:
        raise KernelError("the module names no target (no kt.target attribute)",
                          hint=f"name one: one of {', '.join(targets.NAMES)}")
    return targets.get(name)


def translate_lines(module: ModuleOp, target: Target | str | None = None) -> list[CppLine]:
    """The generated file as lines, each with the op it translates (None for the prologue and
    `#line` directives): a source map from C++ back to the IR."""
    tgt = resolve_target(module, target)
    kernel = query.kernel_func(module)
    _check_kernel_name(kernel)
    e = Emitter(tgt, value_names(module), LOWERINGS, query.warps(module))
    _prologue(e, kernel)
    for op in module.body.block.ops:
        e.out.plain()
        if isinstance(op, FuncOp) and "kt.grid" in op.attributes:
            _grid_function(e, op)
        elif op is kernel:
            _kernel_function(e, op)
        else:
            raise missing_lowering(op, tgt, "only the kernel and its grid function translate")
    return e.out.lines


def translate(module: ModuleOp, target: Target | str | None = None) -> str:
    """The C++ source of a checked kt module, for `target` (default: the module's kt.target)."""
    return "".join(line.text + "\n" for line in translate_lines(module, target))


def _prologue(e: Emitter, kernel: FuncOp) -> None:
    t = e.target
    e.out.plain(f"// kernel '{kernel.sym_name.data}', translated from the kt dialect by ktile: "
                f"edit the Python kernel, not this file.")
    e.out.plain(f"// target {t.name}: {t.vendor} {t.family}, wave {t.wave_size}")
    e.out.plain(f'#include "{header_path(t)}"')


def _check_kernel_name(kernel: FuncOp) -> None:
    name = kernel.sym_name.data
    if name in RESERVED_NAMES:
        what = "a C++ keyword" if name not in ("main", "kt") else "reserved in the generated C++"
        raise KernelError(f"the kernel's name '{name}' is {what}, so it cannot name the "
                          f"compiled kernel", loc=query.loc_of(kernel), kernel=name,
                          hint=f"rename the kernel function, e.g. '{name}_kernel'")


def _kernel_function(e: Emitter, fn: FuncOp) -> None:
    threads = e.warps * e.target.wave_size
    params = [f"{e.type_of(a)} {e.name(a)}" for a in fn.body.block.args]
    params += [f"const __grid_constant__ kt::tensor_map {tensor_map_name(i)}"
               for i in range(len(query.tensor_maps(fn)))]
    bounds = f"{threads}, 1" if query.roles(fn) else f"{threads}"   # roles: one block per SM
    e.out.open(f'extern "C" __global__ __launch_bounds__({bounds}) void '
               f"{fn.sym_name.data}({', '.join(params)}) {{", fn)
    arrivals = query.arrivals(fn)
    if arrivals is not None and arrivals[1]:
        offset, count = arrivals
        e.out.statement(f"kt::arrivals<{count}, {offset}> {ARRIVALS};", fn, locate=False)
    ret = e.emit_block(fn.body.block)
    _return(e, fn, ret, "return;", 0)
    e.out.close(fn)


def _grid_function(e: Emitter, fn: FuncOp) -> None:
    params = ", ".join(f"const {e.type_of(a)}& {e.name(a)}" for a in fn.body.block.args)
    e.out.open(f"__host__ __device__ kt::dim3 {fn.sym_name.data}({params}) {{", fn)
    ret = e.emit_block(fn.body.block)
    dims = e.names(ret.operands) if isinstance(ret, ReturnOp) else ""
    _return(e, fn, ret, f"return kt::dim3{{{dims}}};", GRID_RESULTS)
    e.out.close(fn)


def _return(e: Emitter, fn: FuncOp, ret, text: str, values: int) -> None:
    if not isinstance(ret, ReturnOp) or len(ret.operands) != values:
        raise missing_lowering(fn, e.target, f"a function ending in {ret and ret.name} with "
                               f"other than {values} values")
    e.statement(ret, text)

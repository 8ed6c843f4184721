"""ktile: tile-level GPU kernels in Python, checked, translated to C++, and runnable on the CPU.

`import ktile as hk` gives hk-dsl's kernel author API. Importing stays light: the IR library
and numpy load the first time a kernel is traced or run.
"""
from __future__ import annotations

from importlib import import_module

from .dtypes import bf16, fp8, fp16, fp32, i8, i32
from .errors import InputError, InternalError, KernelError, KernelWarning, KtileError
from .ir import elementwise as _elementwise  # the elementwise functions' table (light)
from .lang.kernel import Kernel, KernelTrace, bind_runtime, func, kernel
from .lang.types import RT, RV, ST, SV, Constexpr, Scalar, Tensor

__version__ = "0.1.0"

float32, float16, bfloat16, int32, int8 = fp32, fp16, bf16, i32, i8

def _load_runtime():
    """What a kernel is built, launched and has its scalars checked with. ktile.lang sits above
    the runtime and does not import it; the package hands it over here (loaded on first use)."""
    from types import SimpleNamespace

    from .runtime.arguments import scalar_value_refusal
    from .runtime.build import BuildLimits, build_trace
    from .runtime.launch import launch
    return SimpleNamespace(launch=launch, build_trace=build_trace, BuildLimits=BuildLimits,
                           scalar_value_refusal=scalar_value_refusal)


bind_runtime(_load_runtime)
del bind_runtime

# name -> module that defines it; loaded on first use (PEP 562)
_LAZY = {name: "ktile.lang.builtins" for name in (
    "tile_coord", "elem_coord", "cdiv", "to_float", "full", "zeros", "ones", "neg_infty", "iota",
    *_elementwise.BY_HK_NAME, "where", "cast", "row_sum", "row_max", "row_min",
    "col_sum", "col_max", "col_min", "sum", "tile_sum", "tile_max", "tile_min", "mma", "mma_AB", "mma_ABt", "mma_AtB", "mma_AtBt",
    "shared", "load_async", "wait_for", "barrier", "causal_mask", "rand", "rand4", "gather", "scatter",
    "arch", "math", "group", "lds",
    # hk-dsl's spellings (ktile/lang/hk_compat.py; docs/hk-compat.md)
    "collective", "col_vec", "row_vec", "broadcast_row", "broadcast_col", "coord", "if_",
    "scope", "uniform", "max", "min")}
_LAZY.update({name: "ktile.lang.hk_compat" for name in (
    "View", "Group", "Int", "Bool", "Tile", "Vec", "Global", "SharedTile", "SharedVec", "Coord")})
_LAZY.update({"targets": "ktile.targets", "interpret": "ktile.interpret",
              "torch_op": "ktile.runtime.torch_op"})
_LAZY["pipeline"] = "ktile.lang.pipeline"   # hk.pipeline: warpgroup roles over shared stages
_LAZY["load_scalar"] = "ktile.lang.scalar_load"   # one element of a global as a scalar
_LAZY.update({name: "ktile.lang.named_barriers" for name in (   # bar.sync / bar.arrive
    "bar_sync", "bar_arrive")})
_LAZY["ops"] = "ktile.ops"   # `import ktile; ktile.ops.rms_norm(...)`: torch loads on first use


def range(*args, unroll: int = 1):  # noqa: A001 - `hk.range` forces a runtime (scf.for) loop
    """`for i in hk.range(n)`: always a runtime loop, even over Python ints (the rewrite
    handles it; called outside a kernel it is Python's range). hk-dsl's `unroll=` is accepted
    as a hint: the C++ compiler chooses the unrolling."""
    import builtins
    return builtins.range(*args)


def range_constexpr(*args):
    """hk-dsl's loop unrolled while tracing: its bounds must be Python ints."""
    import builtins
    if not all(isinstance(a, int) for a in args):
        from .lang.tracer import error
        raise error("hk.range_constexpr bounds must be Python ints (it unrolls while tracing)",
                    hint="use range(...) or hk.range(...) for a loop over device values")
    return builtins.range(*args)


fp8e4m3 = fp8  # hk-dsl's name for OCP E4M3 (ktile's fp8); DType, the class of every dtype
TracedKernel = KernelTrace
from .dtypes import DType  # noqa: E402
DTYPES = {d.name: d for d in (bf16, fp16, fp32, i32, i8, fp8)} | {"fp8e4m3": fp8}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if name == "fp8e5m2":
        from .lang.tracer import error
        raise error("ktile has no fp8e5m2 (OCP E5M2) element type",
                    hint="use hk.fp8e4m3 (ktile's hk.fp8), or bf16")
    if module is None:
        if name.startswith("__"):  # Python's own probes (__path__, __wrapped__): a plain miss
            raise AttributeError(f"module 'ktile' has no attribute {name!r}")
        from .lang.tracer import unknown_name
        raise unknown_name("hk", name, __dir__())
    mod = import_module(module)
    value = mod if module == f"ktile.{name}" else getattr(mod, name)  # a subpackage is itself
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_LAZY])

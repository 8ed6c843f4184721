"""Checking a kernel call's tensors before anything runs, and moving them to and from the
interpreter's numpy carriers.

Every refusal names the parameter, says what is wrong and how to fix it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..dtypes import DType
from ..errors import InputError, KernelError

_NUMPY_DTYPES = {"float32": "fp32", "float16": "fp16", "int32": "i32", "int8": "i8"}


@dataclass
class Argument:
    """One tensor argument as the kernel sees it: `value` is the user's tensor viewed as 4-D
    (`padded_view`: the same memory, so writes reach the user's tensor) and `shape` its
    (batch, depth, rows, cols)."""
    name: str
    value: Any
    dtype: DType
    shape: tuple[int, int, int, int]
    is_torch: bool

    @property
    def device(self) -> str:
        return str(self.value.device) if self.is_torch else "cpu"

    @property
    def strides(self) -> tuple[int, ...]:
        """The strides in elements, as the tensor has them (numpy's bytes divided by the
        element size; `check_strides` refuses a numpy stride that is no whole element)."""
        if self.is_torch:
            return tuple(self.value.stride())
        return tuple(s // self.value.itemsize for s in self.value.strides)

    @property
    def itemsize(self) -> int:
        return self.value.element_size() if self.is_torch else self.value.itemsize

    @property
    def address(self) -> int:
        """Where its first element (index 0, 0, 0, 0) lives."""
        if self.is_torch:
            return self.value.data_ptr()
        return self.value.__array_interface__["data"][0]

    def span(self) -> tuple[int, int]:
        """The bytes [first, end) holding every element it can touch: its lowest and highest
        element's addresses (a negative stride reaches below the first element)."""
        below = sum(min(0, (e - 1) * s) for e, s in zip(self.shape, self.strides))
        above = sum(max(0, (e - 1) * s) for e, s in zip(self.shape, self.strides))
        return self.address + below * self.itemsize, self.address + (above + 1) * self.itemsize


def _is_torch(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "dtype") and \
        hasattr(value, "device")


def _is_numpy(value: Any) -> bool:
    return type(value).__module__ == "numpy" and hasattr(value, "dtype") and hasattr(value, "shape")


def check_arguments(kernel, args: tuple) -> list[Argument]:
    params = kernel.params
    if len(args) != len(params):
        names = ", ".join(p.name for p in params)
        raise InputError(f"takes {len(params)} tensors ({names}), got {len(args)}",
                         kernel=kernel.name, hint=f"call {kernel.name}({names}); constants go "
                                                  f"by keyword")
    return [_check_one(kernel, p, value) for p, value in zip(params, args)]


def _check_one(kernel, param, value) -> Argument:
    want = param.spec.dtype
    if _is_torch(value):
        _check_dense(kernel, param, value)
        got = str(value.dtype).removeprefix("torch.")
        is_torch = True
    elif _is_numpy(value):
        got = _NUMPY_DTYPES.get(str(value.dtype), str(value.dtype))
        if want.name == "bf16" and got != "bf16":
            raise InputError(f"parameter '{param.name}' is bf16, which numpy has no dtype for",
                             kernel=kernel.name, hint="pass a torch.bfloat16 tensor")
        is_torch = False
    else:
        raise InputError(f"parameter '{param.name}' must be a tensor (torch.Tensor or numpy "
                         f"array), got {type(value).__name__}", kernel=kernel.name,
                         hint=f"pass a tensor (1 to 4 dimensions) of {want!r} for "
                              f"'{param.name}'; constants go by keyword (name=value)")
    matches = got == want.torch_name if is_torch else got == want.name
    if not matches:
        raise InputError(f"parameter '{param.name}' must hold {want!r} elements, got {got}",
                         kernel=kernel.name,
                         hint=f"convert it: x.to(torch.{want.torch_name})" if is_torch else
                         f"convert it to {want.name}")
    given = tuple(int(s) for s in value.shape)
    check_rank(kernel, param.name, len(given), given)
    if any(s == 0 for s in given):
        raise InputError(f"parameter '{param.name}' is empty (shape {given})", kernel=kernel.name,
                         hint="skip the call for empty tensors")
    return Argument(param.name, padded_view(value), want, padded_shape(given),  # type: ignore
                    is_torch)


# ---- ranks -------------------------------------------------------------------------------

RANKS = range(1, 5)
_RANK_SHAPES = "(cols), (rows, cols), (depth, rows, cols) or (batch, depth, rows, cols)"


def padded_shape(shape: tuple) -> tuple:
    """A shape of 1 to 4 extents as the kernel sees it: (batch, depth, rows, cols), the missing
    leading extents 1, as hk-dsl pads. A 1-D tensor is one row; a 3-D one is one batch."""
    return (1,) * (4 - len(shape)) + tuple(shape)


def padded_view(value):
    """The tensor (torch or numpy) as a 4-D view of the same memory: new leading axes of extent
    1 (indexing with None never copies, whatever the strides)."""
    missing = 4 - len(value.shape)
    return value[(None,) * missing] if missing else value


def check_rank(kernel, name: str, rank: int, shape: tuple | None = None) -> None:
    """A tensor parameter has 1 to 4 dimensions. `shape`: shown when known (a fake tensor's
    symbolic sizes are not read)."""
    if rank in RANKS:
        return
    got = f"shape {shape}" if shape is not None else f"{rank} dimensions"
    if rank == 0:
        raise InputError(f"parameter '{name}' is a 0-D tensor ({got}); a kernel reads a tensor of "
                         f"1 to 4 dimensions, {_RANK_SHAPES}", kernel=kernel.name,
                         hint=f"pass it as a 1-element tensor ({name}.reshape(1)), or pass a "
                              f"number as a constant by keyword (NAME=value)")
    raise InputError(f"parameter '{name}' has {rank} dimensions ({got}); a kernel reads a tensor "
                     f"of 1 to 4 dimensions, {_RANK_SHAPES}", kernel=kernel.name,
                     hint=f"merge its leading dimensions into the batch: "
                          f"{name}.reshape(-1, *{name}.shape[-3:]) (a view when they are "
                          f"contiguous)")


def _check_dense(kernel, param, value) -> None:
    """A nested or sparse tensor has no single strided block of memory for the kernel to read."""
    if getattr(value, "is_nested", False):
        raise InputError(f"parameter '{param.name}' is a nested tensor; a kernel reads one dense "
                         f"tensor per parameter", kernel=kernel.name,
                         hint=f"pad it to one shape (torch.nested.to_padded_tensor({param.name}, "
                              f"0.0)) or call the kernel once per component")
    layout = getattr(value, "layout", None)
    if layout is not None and str(layout) != "torch.strided":
        raise InputError(f"parameter '{param.name}' is a {layout} tensor; a kernel reads dense "
                         f"(strided) memory", kernel=kernel.name,
                         hint=f"pass {param.name}.to_dense()")


def check_coindexed(kernel, trace, arguments: list[Argument]) -> None:
    """Tensors the kernel reads and writes at the same tile coordinates must agree in shape,
    and no written tensor has batches or depths its stores can never reach
    (`check_planes_written`)."""
    check_planes_written(kernel, trace, arguments)
    for group in trace.coindexed:
        first = arguments[group[0]]
        for k in group[1:]:
            other = arguments[k]
            if other.shape != first.shape:
                raise InputError(
                    f"parameters '{first.name}' {first.shape} and '{other.name}' {other.shape} "
                    f"are used at the same tile coordinates but differ in shape",
                    kernel=kernel.name, hint="pass tensors of the same shape")


# ---- batches and depths no store reaches ----------------------------------------------------

PLANE_DIMS = {0: "batch", 1: "depth"}
_PLANES: dict[int, tuple[object, dict]] = {}   # id(trace) → (trace, {(param, dim): indices})


def check_planes_written(kernel, trace, arguments: list[Argument]) -> None:
    """A written tensor whose every store names its batch (or depth) by a constant is written
    only at those batches (depths); a call whose tensor has another would leave it silently
    unwritten: the seed's `add`, gridded over batch at depth 0, on a 3-D `(D, R, C)` tensor
    with D > 1. A store at a computed index (a block index, a loop counter) may reach any, so
    such a tensor is not judged: the check refuses only what certainly stays unwritten."""
    for (w, dim), written in _constant_planes(trace).items():
        arg = arguments[w]
        extent = arg.shape[dim]
        missing = next((i for i in range(extent) if i not in written), None)
        if missing is not None:
            raise _unwritten_plane(kernel, arg, PLANE_DIMS[dim], extent, sorted(written), missing)


def _unwritten_plane(kernel, arg: Argument, what: str, extent: int, written: list[int],
                     missing: int) -> InputError:
    at = f"{what} {written[0]}" if len(written) == 1 else f"{what}s {written}"
    cover = ("give the grid p.{n}.depth blocks along an axis and index depth with that block "
             "index (hk.tile_coord(b, hk.arch.block_idx.z, r, c)), or pass the depths as "
             "batches ({n}.reshape(D, 1, R, C)) to a kernel that covers batch" if what == "depth"
             else "give the grid p.{n}.batch blocks along an axis and index batch with that "
                  "block index (hk.tile_coord(hk.arch.block_idx.z, d, r, c))").format(n=arg.name)
    return InputError(f"parameter '{arg.name}' has {what} {extent} (its (batch, depth, rows, "
                      f"cols) is {arg.shape}), but every store of the kernel writes it at {at}, "
                      f"so {what} {missing} would silently stay unwritten",
                      kernel=kernel.name, hint=f"{cover}; or, if one {what} is all it computes, "
                                               f"require it: requires=[(lambda p: p.{arg.name}."
                                               f"{what} == 1, ...)] and pass {what} 1")


def _constant_planes(trace) -> dict[tuple[int, int], frozenset[int]]:
    """(written parameter, dim) → the constant indices its stores name along that dim, for
    the dims (batch, depth) along which every store of the parameter names a constant."""
    found = _PLANES.get(id(trace))
    if found is None or found[0] is not trace:
        found = _PLANES[id(trace)] = (trace, _planes_of(trace))
    return found[1]


def _planes_of(trace) -> dict[tuple[int, int], frozenset[int]]:
    from ..ir.ops import ScatterOp, StoreOp, constant_int
    from ..ir.query import kernel_func
    fn = kernel_func(trace.module)
    params = list(fn.body.block.args)
    indices: dict[tuple[int, int], set[int] | None] = {}
    for op in fn.walk():
        if isinstance(op, StoreOp):
            dst, planes = op.dst, (op.coords[0], op.coords[1])
        elif isinstance(op, ScatterOp):
            dst, planes = op.dst, (op.batch, op.depth)
        else:
            continue
        if dst not in params:   # a global reached otherwise: its writes are not all known
            return {}
        w = params.index(dst)
        for dim, value in zip(PLANE_DIMS, planes):
            known, index = indices.get((w, dim), set()), constant_int(value)
            indices[(w, dim)] = None if known is None or index is None else known | {index}
    return {key: frozenset(found) for key, found in indices.items() if found is not None}


class _Shape:
    """What a requirement reads of a tensor parameter: its four extents."""
    __slots__ = ("batch", "depth", "rows", "cols", "shape")

    def __init__(self, shape: tuple[int, int, int, int]):
        self.shape = shape
        self.batch, self.depth, self.rows, self.cols = shape


class _Call:
    """`p` of a requirement: each tensor parameter's extents and each constant, by name. A
    runtime scalar is not readable: a requirement holds for every value a call may pass."""

    def __init__(self, constants: dict[str, Any], arguments: list[Argument],
                 scalars: frozenset[str] = frozenset()):
        self.__dict__.update(constants)
        self.__dict__.update({a.name: _Shape(a.shape) for a in arguments})
        self._scalars = scalars

    def __getattr__(self, name: str):
        if name in self.__dict__.get("_scalars", ()):
            raise _ReadsScalar(name)
        raise AttributeError(name)


class _ReadsScalar(Exception):
    """A requirement read a runtime scalar."""


def check_requirements(kernel, constants: dict[str, Any], arguments: list[Argument]) -> None:
    """The kernel's own preconditions (`@hk.kernel(requires=[(predicate, message)])`), each
    a function of the call's shapes and constants, as the grid function is; a call that does
    not meet one is refused, with the author's message and the values it read. `constants`:
    all of the kernel's, defaults included (`trace.constants`)."""
    if not kernel.requires:
        return
    p = _Call(constants, arguments, frozenset(s.name for s in getattr(kernel, "scalars", ())))
    for predicate, message in kernel.requires:
        if not _holds(kernel, predicate, message, p):
            shapes = ", ".join(f"{a.name} {a.shape}" for a in arguments)
            values = ", ".join(f"{k}={v!r}" for k, v in constants.items())
            raise InputError(f"this call does not meet the kernel's requirement: {message} "
                             f"(shapes: {shapes}; constants: {values or 'none'})",
                             kernel=kernel.name, loc=kernel.def_loc,
                             hint="change the call (or its constants) to meet it")


def _holds(kernel, predicate, message: str, p: _Call) -> bool:
    """The predicate's verdict on this call; a predicate that fails to give one is the
    author's mistake, shown with what it could read."""
    try:
        return bool(predicate(p))
    except _ReadsScalar as err:
        raise KernelError(f"the requirement {message!r} reads runtime scalar '{err}': a "
                          f"requirement is checked once per tensor signature, not at every "
                          f"call, so it reads only shapes and constants",
                          kernel=kernel.name, loc=kernel.def_loc,
                          hint=f"make '{err}' a keyword-only constant (*, {err}: "
                               f"hk.Constexpr[...]) to check it, or check the value before the "
                               f"call") from None
    except Exception as err:  # noqa: BLE001 - any error of the author's predicate is theirs
        readable = ", ".join(sorted(k for k in vars(p) if not k.startswith("_")))
        raise KernelError(f"the requirement {message!r} raised {type(err).__name__}: {err}",
                          kernel=kernel.name, loc=kernel.def_loc,
                          hint=f"a requirement reads a tensor's extents as p.<tensor>.rows (also "
                               f".batch, .depth, .cols, .shape) and a constant as p.<NAME>; "
                               f"this call has: {readable}") from None


# ---- runtime scalars ---------------------------------------------------------------------

I32_MIN, I32_MAX = -2**31, 2**31 - 1
_KIND_WORDS = {"float": "a float (f32)", "int": "an int (i32)"}
_EXAMPLES = {"float": "1e-6", "int": "1234"}


def scalar_value_refusal(dtype: DType, value: Any) -> str | None:
    """Why `value` cannot be a runtime scalar of `dtype` (fp32 or i32); None when it can. A
    float scalar takes an int or a float (rounded to f32; inf and nan pass, a finite value
    beyond f32's range does not); an int scalar takes an int in i32's range. A bool is
    neither, and a tensor is not a number (reading one would synchronise with its device)."""
    if _is_numpy_scalar(value):
        value = value.item()
    if isinstance(value, bool):
        return f"is a bool ({value}), not {'an int' if dtype.kind == 'int' else 'a number'}"
    if not isinstance(value, (int, float)):
        return f"is {_spelled(value)}, not a number"
    if dtype.kind == "int":
        if isinstance(value, float):
            return "is a float, not an int"
        if not I32_MIN <= value <= I32_MAX:
            return f"is outside i32's range [{I32_MIN}, {I32_MAX}]"
        return None
    try:
        _F32.pack(value)
    except OverflowError:
        return "is beyond f32's range (about 3.4e38): it would become inf"
    return None


def _is_numpy_scalar(value: Any) -> bool:
    """A numpy number (np.float32(1.5), np.int64(3)): taken as the Python number it holds."""
    return type(value).__module__ == "numpy" and type(value).__name__ != "ndarray" \
        and hasattr(value, "item")


def _spelled(value: Any) -> str:
    if _is_torch(value) or _is_numpy(value):
        return f"a {type(value).__module__.split('.')[0]} {type(value).__name__}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


_F32 = __import__("struct").Struct("<f")   # standard size: packing a finite float beyond f32 raises


def scalar_value(kernel, param, value: Any) -> int | float:
    """The value runtime scalar `param` takes for this call: an int in i32's range, or a float
    rounded to f32. A value it cannot take is refused, naming the parameter and the fix."""
    if type(value) is float and param.dtype.kind == "float":
        try:
            return _F32.unpack(_F32.pack(value))[0]
        except OverflowError:
            pass
    elif type(value) is int and param.dtype.kind == "int" and I32_MIN <= value <= I32_MAX:
        return value
    why = scalar_value_refusal(param.dtype, value)
    if why is not None:
        kind = param.dtype.kind
        fix = f"pass {_KIND_WORDS[kind]} for '{param.name}', e.g. {param.name}={_EXAMPLES[kind]}"
        if _is_torch(value) or _is_numpy(value):
            fix += (f" (a one-element tensor's number is {param.name}.item(), which waits for "
                    f"its device; a value computed on the GPU belongs in a tensor parameter)")
        elif kind == "int" and isinstance(value, int) and not isinstance(value, bool):
            fix = (f"pass an int in [{I32_MIN}, {I32_MAX}] for '{param.name}' (reduce a seed "
                   f"modulo 2**31), or make '{param.name}' a hk.Constexpr[int]")
        elif kind == "float" and isinstance(value, (int, float)):
            fix = f"pass a value within f32's range for '{param.name}'"
        raise InputError(f"runtime scalar '{param.name}' is {param.dtype!r} ({_KIND_WORDS[kind]})"
                         f", but the value passed {why}", kernel=kernel.name, hint=fix)
    number = value.item() if hasattr(value, "item") else value
    return _F32.unpack(_F32.pack(float(number)))[0] if param.dtype.kind == "float" else int(number)


def split_scalars(kernel, args: tuple) -> tuple[tuple, tuple]:
    """(the tensors, the runtime scalars' values) of a bound call's arguments (`launch`'s)."""
    if not kernel.scalars:
        return args, ()
    n = len(kernel.params)
    return args[:n], args[n:]


def check_scalars(kernel, values: tuple) -> list[int | float]:
    """Each runtime scalar's value for this call (`scalar_value`), in declaration order."""
    return [scalar_value(kernel, p, v) for p, v in zip(kernel.scalars, values)]


def check_same_device(kernel, arguments: list[Argument]) -> str:
    devices = {a.device for a in arguments}
    if len(devices) > 1:
        listed = ", ".join(f"'{a.name}' on {a.device}" for a in arguments)
        raise InputError(f"tensors are on different devices: {listed}", kernel=kernel.name,
                         hint="move them to one device first")
    return devices.pop()


def check_holds_data(kernel, device: str) -> None:
    """A kernel runs on data; meta tensors have shapes only (they trace through a torch op's
    fake implementation, never through a call)."""
    if device == "meta":
        raise InputError("the tensors are on the meta device, which holds shapes but no data, "
                         "so there is nothing for the kernel to read or write",
                         kernel=kernel.name,
                         hint="create them on the CPU or a GPU; to trace shapes without data, "
                              "wrap the kernel with hk.torch_op and call that on meta tensors")


DIMENSIONS = ("batch", "depth", "row", "column")


def check_index_limit(kernel, target, arguments: list[Argument],
                      strides: list[tuple[int, ...]]) -> None:
    """Every extent, and the row and column strides in elements and in bytes, below the
    target's `global_index_limit` (AMD: 32-bit buffer offsets). Batch and depth strides are
    not limited: the kernel adds them to the 64-bit base address."""
    limit = target.global_index_limit
    if not limit:
        return
    for arg, stride in zip(arguments, strides):
        for dim, extent in enumerate(arg.shape):
            if extent >= limit:
                raise InputError(
                    f"parameter '{arg.name}' has {extent} entries along its {DIMENSIONS[dim]} "
                    f"dimension (shape {arg.shape}); {target.name} kernels index a global with "
                    f"32-bit offsets, so each extent must be below {limit}", kernel=kernel.name,
                    hint=f"split the call: views of fewer than {limit} entries along that "
                         f"dimension ({arg.name}.narrow({dim}, start, length)), one call each")
        for dim in (2, 3):
            _check_stride(kernel, target, arg, dim, stride[dim], limit)


def _check_stride(kernel, target, arg: Argument, dim: int, stride: int, limit: int) -> None:
    size = max(arg.dtype.bits // 8, 1)
    if abs(stride) * size < limit:
        return
    raise InputError(
        f"parameter '{arg.name}' has a {DIMENSIONS[dim]} stride of {stride} elements "
        f"({stride * size} bytes); {target.name} kernels reach a tile's elements through "
        f"32-bit byte offsets from its first one, so row and column strides must be below "
        f"{limit} bytes", kernel=kernel.name,
        hint=f"pass a copy whose rows are closer: narrow {arg.name} to the part the kernel "
             f"needs and make it contiguous (.contiguous()); for a tensor the kernel writes, "
             f"compute into such a copy and copy it back")


def kernel_strides(argument) -> tuple[int, ...]:
    """The tensor's strides in elements; a dimension of extent 1 is never stepped along, so
    its stride is given as 1 whatever torch says."""
    return tuple(1 if extent == 1 else s for extent, s in zip(argument.shape, argument.strides))


def check_strides(kernel, trace, arguments) -> None:
    """What the tile headers' loads and stores assume of memory, for every backend (the
    interpreter, a GPU call, its emulation): each tensor's strides whole, non-negative elements
    and each row one contiguous run (last stride 1); each written tensor writable, its elements
    at distinct addresses, and sharing no memory with another argument (`check_aliasing`)."""
    written = set(trace.written_params)
    for index, arg in enumerate(arguments):
        _check_layout(kernel, arg, index in written)
    for index in trace.written_params:
        _check_writable(kernel, arguments[index])
    check_aliasing(kernel, trace, arguments)


def _check_layout(kernel, arg: Argument, written: bool) -> None:
    if not arg.is_torch and any(s % arg.itemsize for s in arg.value.strides):
        raise InputError(f"parameter '{arg.name}' has strides {arg.value.strides} bytes, not "
                         f"whole {arg.itemsize}-byte elements", kernel=kernel.name,
                         hint=_layout_fix(arg, written))
    stride = kernel_strides(arg)
    if min(stride) < 0:
        raise InputError(f"parameter '{arg.name}' has a negative stride (strides {stride} "
                         f"elements: a reversed view); the kernel steps forward through memory",
                         kernel=kernel.name,
                         hint=_layout_fix(arg, written))
    if stride[-1] != 1:
        raise InputError(f"parameter '{arg.name}' has stride {stride[-1]} in its last "
                         f"dimension (strides {arg.strides}); the kernel reads "
                         f"each row as one contiguous run", kernel=kernel.name,
                         hint=_layout_fix(arg, written))
    if written and _elements_share_memory(arg.shape, stride):
        raise InputError(f"parameter '{arg.name}' is written but several of its elements share "
                         f"memory (strides {arg.strides}: expanded, broadcast or overlapping), "
                         f"so their results would overwrite each other", kernel=kernel.name,
                         hint=_layout_fix(arg, True))


def _elements_share_memory(shape, strides) -> bool:
    """Whether two elements may have one address: taking the dimensions by increasing stride,
    each must step past everything the smaller ones reach (a stride 0 never does). Exact for
    every layout torch's views make; a layout this cannot separate counts as shared."""
    reach = 0
    for stride, extent in sorted((s, e) for e, s in zip(shape, strides) if e > 1):
        if stride <= reach:
            return True
        reach += (extent - 1) * stride
    return False


def _check_writable(kernel, arg: Argument) -> None:
    """The interpreter writes results back with numpy or torch, which refuse a read-only array
    or a leaf that requires grad after the kernel ran; a GPU would write either silently."""
    if not arg.is_torch and not arg.value.flags.writeable:
        raise InputError(f"parameter '{arg.name}' is written but its numpy array is read-only "
                         f"(a broadcast_to view, a view of bytes, or writeable=False)",
                         kernel=kernel.name,
                         hint=f"pass a writeable array ({arg.name} = np.empty_like(...)) and copy "
                              f"it where it belongs afterwards")
    if arg.is_torch and arg.value.requires_grad:
        raise InputError(f"parameter '{arg.name}' is written in place but requires grad; "
                         f"autograd cannot record a kernel's write, so gradients through it "
                         f"would be wrong", kernel=kernel.name,
                         hint=f"write into {arg.name}.detach() (the same memory, outside "
                              f"autograd), or pass an output that does not require grad")


def copy_fix(name: str, written: bool, copy: str, module: str = "torch") -> str:
    """A copy of an input fixes its layout; a copy of an output would get the result instead.
    `module`: what the user's arrays come from ("torch" or "np")."""
    if written:
        return (f"'{name}' is written: pass a freshly allocated output ({module}.empty(...)) and "
                f"copy it into the view afterwards")
    return f"pass {name}{copy}"


def _layout_fix(arg: Argument, written: bool) -> str:
    if arg.is_torch:
        return copy_fix(arg.name, written, ".contiguous()")
    return copy_fix(arg.name, written, ".copy()", "np")


def to_carrier(arg: Argument, written: bool):
    """The value as the interpreter holds it: float32 for float types, int32/int8 for ints.
    A written tensor gets a fresh, writable copy (`from_carrier` writes it back after the run,
    so a refused or failed run leaves the user's tensor untouched). An input is read where it
    lies when it already has the carrier's type, else converted once per distinct element: a
    stride-0 (expanded) dimension is converted at extent 1 and broadcast back, so a
    2^31-element expanded view costs what its one row costs."""
    import numpy as np
    compact = arg.value[tuple(slice(0, 1) if s == 0 and e > 1 else slice(None)
                              for e, s in zip(arg.shape, arg.strides))]
    if arg.is_torch:
        import torch
        t = compact.detach().to("cpu")
        array = (t.to(torch.float32) if arg.dtype.is_float else t).numpy()
    else:
        array = compact.astype(np.float32, copy=False) if arg.dtype.is_float else compact
    if written:
        return np.array(array, order="C", copy=True)
    return np.broadcast_to(array, arg.shape)


def from_carrier(arg: Argument, carrier) -> None:
    """Write the interpreter's result back into the user's tensor, in place."""
    if arg.is_torch:
        import torch
        arg.value.copy_(torch.from_numpy(carrier).to(arg.value.dtype))
        return
    arg.value[...] = carrier.astype(arg.value.dtype)


# the aliasing rule lives in aliasing.py; its names are re-exported for the callers that import
# them from here (gpu.py, the call-check tests). At the end: aliasing.py imports this module.
from .aliasing import check_aliasing, in_place_refusal, same_view  # noqa: E402,F401

"""A kernel call on the GPU its torch tensors live on, with a small host overhead.

    call = GpuCall(kernel, target, constants)
    call.fast(tensors)

The first call with a new signature (dtype, shape, stride and device of every tensor) does
all the work and all the checks: the device's target, the trace, the build (cached in memory
per trace and device, on disk by content), the load, the grid (the kernel's grid function on
the shapes), the kernel's own requirements, the stride and alignment checks, the target's
index limit (AMD: extents and row strides below 2^31), the extents and strides in the
parameter block, and on sm_90a the tensor maps of the kernel's TMA copies (`tensor_maps.py`;
a signature no map can describe runs the kernel traced without TMA copies). It then generates
`call.fast` for that signature (`fastcall.py`): a call whose signature matches compares one
tuple, writes the data pointers into the parameter block (checking their alignment) and
launches once on torch's current stream.

A call keeps the last `SIGNATURES` signatures it prepared (`Prepared`: the parameter block,
the launch and the fast path of each), so calls whose token count changes from call to call
(an engine's decode and prefill steps) take a prepared fast path again after one dictionary
lookup, instead of preparing again. Everything a signature's first call checks is a function
of the signature, the target and the constants, all fixed per entry; what depends on the
pointers (alignment, aliasing, the tensor maps) is checked or made by the fast path at every
call, as before.

A tensor of 1 to 3 dimensions is checked, gridded and packed as its padded 4-D shape
(`arguments.padded_shape`, a view); the signature holds the tensor's own shape and strides,
which determine the padded ones, so the fast path does no padding.

The loader is chosen by `target.vendor` from `LOADERS`; nothing here names a backend.
"""
from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass
from importlib import import_module

from ..errors import InputError, InternalError, KernelError, KtileError
from .arguments import (check_aliasing, check_arguments, check_coindexed, check_index_limit,
                        check_requirements, check_same_device, check_scalars, check_strides,
                        copy_fix, in_place_refusal, kernel_strides, scalar_value,
                        split_scalars)
from .devices import device, target_of
from .fastcall import ALIGNMENT, Overlap, fast_call
from .grid import check_grid, grid_function
from .loaders.packing import KernelParams
from .tensor_maps import CallMaps

# target.vendor → the loader module of its code objects
LOADERS = {
    "amd": "ktile.runtime.loaders.hip",        # never run on an AMD GPU (docs/runtime.md)
    "nvidia": "ktile.runtime.loaders.cuda",
}

_LOADED: dict[tuple[int, int], tuple[object, object, object]] = {}  # (id(trace), device) → ...


@dataclass(frozen=True)
class Prepared:
    """One signature's preparation: its parameter block, its launch, its generated fast path
    (`run`: the same without the signature's comparison), and whether its build has TMA
    copies (and why not)."""
    params: KernelParams
    launch: object
    fast: object
    run: object
    tensor_copies: bool
    no_tensor_copies_because: str | None


class GpuCall:
    """One kernel with one target argument and one set of constants, called on the GPU."""

    SIGNATURES = 16   # prepared signatures kept per call, the least recently used dropped first

    def __init__(self, kernel, target: str | None, constants: dict):
        self.kernel = kernel
        self.target = target
        self.constants = dict(constants)
        self._lock = threading.Lock()             # held while a parameter block is written
        # (written parameters, signature) → its preparation, the least recently used first; the
        # written parameters say which tensors' requires_grad the signature holds
        self._prepared: OrderedDict[tuple, Prepared] = OrderedDict()
        self.fast = self._prepare_and_run         # the first call prepares
        self.params: KernelParams | None = None   # the last signature's (globals, then maps)
        self.tensor_copies = False                # whether the last signature's build has TMA
        self.no_tensor_copies_because: str | None = None   # why a signature could not

    # ---- the slow path: a signature other than the fast path's ---------------------------

    def _prepare_and_run(self, args: tuple, key: tuple | None = None,
                         written: tuple[int, ...] | None = None) -> None:
        """A call the fast path did not take: one whose signature was prepared before (one of
        the last SIGNATURES) takes that signature's fast path; a new one is prepared. `key`:
        the call's signature as a fast path writing `written` computes it (None: the first
        call, or arguments that are not tensors)."""
        found = self._recall((written, key)) if key is not None else None
        if found is not None:
            self._use(found)
            return found.run(args)             # `key` is found's signature
        prepared, written, key, values = self._prepare(args)
        self._remember((written, key), prepared)
        self._use(prepared)
        with self._lock:
            prepared.params.set_data([t.data_ptr() for t in args[:len(self.kernel.params)]])
            prepared.params.set_scalars(values)
            prepared.launch()

    def _recall(self, key: tuple) -> Prepared | None:
        with self._lock:
            found = self._prepared.get(key)
            if found is not None:
                self._prepared.move_to_end(key)
            return found

    def _remember(self, key: tuple, prepared: Prepared) -> None:
        with self._lock:
            self._prepared[key] = prepared
            self._prepared.move_to_end(key)
            while len(self._prepared) > self.SIGNATURES:
                self._prepared.popitem(last=False)

    def _use(self, prepared: Prepared) -> None:
        """Make `prepared` the fast path (and the signature the attributes describe)."""
        self.params = prepared.params
        self.tensor_copies = prepared.tensor_copies
        self.no_tensor_copies_because = prepared.no_tensor_copies_because
        self.fast = prepared.fast

    def _prepare(self, args: tuple) -> tuple[Prepared, tuple[int, ...], tuple, list]:
        """Check and prepare a new signature: its `Prepared`, the parameters its kernel writes,
        the signature, and the runtime scalars' values (`args`: the tensors, then those
        values, as `launch` takes them)."""
        kernel = self.kernel
        tensors, values = split_scalars(kernel, args)
        arguments = check_arguments(kernel, tensors)
        values = check_scalars(kernel, values)
        check_same_device(kernel, arguments)
        dev = device(args[0].get_device())
        check_requirements(kernel, kernel.resolve_constants(self.constants), arguments)
        trace, maps, copies_because = self._trace(self._target_name(dev), arguments)
        check_coindexed(kernel, trace, arguments)
        check_strides(kernel, trace, arguments)
        check_index_limit(kernel, trace.target, arguments,
                          [kernel_strides(a) for a in arguments])
        misaligned = functools.partial(_misaligned, kernel, frozenset(trace.written_params))
        refusal = misaligned(args)
        if refusal is not None:
            raise refusal
        loaded, loader = _load(trace, dev.index)
        shapes = [a.shape for a in arguments]
        grid = grid_function(trace)(shapes)
        check_grid(kernel, grid, shapes)
        _check_grid(kernel, grid, loader.MAX_GRID)
        params = KernelParams(len(kernel.params), len(maps.specs) if maps else 0,
                              [s.dtype.kind for s in kernel.scalars])
        params.set_layout(shapes, [kernel_strides(a) for a in arguments])
        launch = _bind(loaded, grid, params, maps)
        written = tuple(trace.written_params)
        code = fast_call(len(kernel.params), written, _overlaps(trace, arguments),
                         tuple(s.dtype.kind for s in kernel.scalars))
        spans = [arguments[i].span()[1] - arguments[i].address for i in code.spanned]
        signature = code.signature_of(args)
        other = functools.partial(self._prepare_and_run, written=written)
        fast, run = code.make_fast(signature, *params.globals, *spans, *params.scalars,
                                   launch, other, misaligned,
                                   functools.partial(_aliased, kernel, trace), self._scalar,
                                   self._lock)
        return (Prepared(params, launch, fast, run, maps is not None, copies_because), written,
                signature, values)

    def _trace(self, target: str, arguments) -> tuple:
        """(trace, maps, why not): the trace with TMA copies and the call's maps where every
        map can describe its tensor, else the trace without TMA copies (and no maps)."""
        trace = self.kernel.trace_copies(target, True, self.constants)
        maps = CallMaps.of(trace)
        if maps is None:
            return trace, None, None
        loader = import_module(LOADERS[trace.target.vendor])
        refusal = maps.refusal([p.name for p in self.kernel.params],
                               [a.shape for a in arguments],
                               [kernel_strides(a) for a in arguments],
                               [a.value.data_ptr() for a in arguments],
                               loader.encode_tensor_map, loader.describe_result)
        if refusal is None:
            return trace, maps, None
        return self.kernel.trace_copies(target, False, self.constants), None, refusal

    def _target_name(self, dev) -> str:
        """The call's target, the kernel's arch, else the device's; it must be the device's."""
        native = target_of(dev, self.kernel.name)
        name = self.target if self.target is not None else (self.kernel.arch or native)
        if name != native:
            raise KernelError(f"the kernel is for {name}, but its tensors are on {dev}, an "
                              f"{native} GPU", kernel=self.kernel.name,
                              hint=f"call it with target='{native}' (or none), or run "
                                   f"{name} code on the interpreter: k.interpret(...)")
        return name

    def _scalar(self, index: int, value) -> int | float:
        """Runtime scalar `index`'s value for the kernel, where the fast path's inline test
        did not pass it (an int for a float, a numpy number, a nan, or a refusal)."""
        return scalar_value(self.kernel, self.kernel.scalars[index], value)


def _bind(loaded, grid, params: KernelParams, maps):
    """The launch; with tensor maps, each call first points the block at its data's maps."""
    launch = loaded.bind(grid, params.pointers)
    if maps is None:
        return launch
    pointers, structs = params.pointers, params.globals

    def launch_with_maps() -> None:
        maps.point(pointers, [g.data for g in structs])
        launch()
    return launch_with_maps


def _aliased(kernel, trace, args: tuple) -> KtileError:
    """The error for the tensors of a call whose memory the fast path found shared (`trace`:
    the one its signature was checked for)."""
    try:
        check_aliasing(kernel, trace, check_arguments(kernel, split_scalars(kernel, args)[0]))
    except InputError as err:
        return err
    return InternalError("the fast path found a written tensor sharing memory that "
                         "check_aliasing allows")


def _misaligned(kernel, written: frozenset, args: tuple) -> InputError | None:
    """The error for the first tensor whose data is not ALIGNMENT-byte aligned."""
    for index, (param, tensor) in enumerate(zip(kernel.params, args)):
        offset = tensor.data_ptr() % ALIGNMENT
        if offset:
            return InputError(
                f"parameter '{param.name}' starts {offset} bytes past a {ALIGNMENT}-byte "
                f"boundary; the kernel's vector loads need {ALIGNMENT}-byte aligned data",
                kernel=kernel.name,
                hint=copy_fix(param.name, index in written, ".clone() (a fresh allocation)"))
    return None


def _overlaps(trace, arguments) -> tuple[Overlap, ...]:
    """The pairs of tensors whose memory each call checks: each written tensor against every
    other (each pair of written ones once); equal pointers are allowed where the two have one
    signature and the kernel may take the input in place (`check_aliasing`'s rule)."""
    written = trace.written_params
    pairs = []
    for w in written:
        for x in range(len(arguments)):
            if x == w or (x in written and x < w):
                continue
            a, b = arguments[w], arguments[x]
            same = (a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
                    and in_place_refusal(trace, x, w) is None)
            pairs.append(Overlap(w, x, same))
    return tuple(pairs)


def _load(trace, device_index: int):
    """The trace built and loaded on the device, once per (trace, device)."""
    key = (id(trace), device_index)
    found = _LOADED.get(key)
    if found is not None and found[0] is trace:
        return found[1], found[2]
    _refuse_inside_capture(trace, device_index)
    from .build import build_trace
    module = LOADERS.get(trace.target.vendor)
    if module is None:
        raise KernelError(f"the {trace.target.vendor.upper()} loader is not built into ktile yet",
                          kernel=trace.name, hint="run it on the interpreter: k.interpret(...)")
    loader = import_module(module)
    loaded = loader.load(build_trace(trace), device_index)
    _LOADED[key] = (trace, loaded, loader)
    return loaded, loader


def _refuse_inside_capture(trace, device_index: int) -> None:
    """Building and loading a kernel cannot be captured into a CUDA graph: a kernel's first
    call on a device (for a new trace: other constants, another target) must come before the
    capture. Calls after it only launch, which a graph records."""
    import torch
    if not torch.cuda.is_available() or not torch.cuda.is_current_stream_capturing():
        return
    raise InputError(f"the first call of kernel '{trace.name}' on GPU {device_index} is inside "
                     f"a CUDA graph capture; building and loading the kernel cannot be captured",
                     kernel=trace.name,
                     hint="call it once with the same constants before capturing "
                          "(torch.cuda.graphs' warm-up on a side stream does it)")


def _check_grid(kernel, grid: tuple[int, int, int], limits: tuple[int, int, int]) -> None:
    for axis, count, limit in zip("xyz", grid, limits):
        if count > limit:
            raise KernelError(f"the grid has {count} blocks along {axis}, over the GPU's "
                              f"{limit} (grid {grid})", kernel=kernel.name,
                              hint="put the largest count on x, or give each block more work")

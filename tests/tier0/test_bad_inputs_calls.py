"""The bad-input corpus (issue #9), kernel calls: each bad call is refused with an `InputError`
(or, for the kernel's own grid and requirements, a `KernelError` at its definition) that names
the parameter and the fix, before anything runs: the output keeps the sentinel it was filled
with. Runs on the CPU interpreter, which checks what a GPU call checks (docs/runtime.md)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import ktile as hk
from ktile.errors import InputError, KernelError
from tests.bad_inputs import refused

torch = pytest.importorskip("torch")

SHAPE = (1, 1, 16, 64)
SENTINEL = 7.0
BIG = 2**31


def _tile():
    return hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.fp32], b: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    t = hk.RT(hk.fp32, 16, 64)
    o[_tile()] = a[_tile()].load(t) + b[_tile()].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add_bf16(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    t = hk.RT(hk.bf16, 16, 64)
    o[_tile()] = a[_tile()].load(t) + b[_tile()].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def scale(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, K: hk.Constexpr[int] = 2,
          F: hk.Constexpr[float]):
    o[_tile()] = a[_tile()].load(hk.RT(hk.fp32, 16, 64)) * (K * F)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def flipped(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, AXIS: hk.Constexpr[str] = "row",
            NEGATE: hk.Constexpr[bool] = False):
    t = a[_tile()].load(hk.RT(hk.fp32, 16, 64))
    o[_tile()] = -t if NEGATE else t


@hk.kernel(grid=lambda p: (1, 1, 1))
def first_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """Reads one tile of `a` wherever `a` is: `a` may be far larger than `o`."""
    o[hk.tile_coord(0, 0, 0, 0)] = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.o.rows, 16), 1))
def next_row_tile(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """Reads the row tile below the one it writes: in place, a block would read what the
    block below had already written."""
    r = hk.arch.block_idx.y
    o[hk.tile_coord(0, 0, r, 0)] = a[hk.tile_coord(0, 0, r + 1, 0)].load(hk.RT(hk.fp32, 16, 64))


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.o.rows, 16), 1))
def twice(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """Adds `a` into `o` twice: in place, the second load would read the first store."""
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, 0)
    for _ in range(2):
        o[idx] = a[idx].load(hk.RT(hk.fp32, 16, 64)) + 1.0


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.o.rows, 16), 1), warps=2)
def all_warps(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    """Every warp loads and stores the same tile: in place, a warp could read another's store."""
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, 0)
    o[idx] = a[idx].load(hk.RT(hk.fp32, 16, 64)) + 1.0


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def split(x: hk.Tensor[hk.fp32], lo: hk.Tensor[hk.fp32], hi: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, 0)
    t = x[idx].load(hk.RT(hk.fp32, 16, 64))
    lo[idx] = t - 1.0
    hi[idx] = t + 1.0


def _copy_kernel(grid, requires=()):
    @hk.kernel(grid=grid, requires=requires)
    def copy(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[_tile()] = a[_tile()].load(hk.RT(hk.fp32, 16, 64))
    return copy


rows_rounded_down = _copy_kernel(lambda p: (p.o.cols // 64, p.o.rows // 64, p.o.batch))
negative_grid = _copy_kernel(lambda p: (hk.cdiv(p.o.cols, 64) - 2, 1, 1))
four_dim_grid = _copy_kernel(lambda p: (1, 1, 1, 1))
float_grid = _copy_kernel(lambda p: (1.5, 1, 1))
dict_grid = _copy_kernel(lambda p: {"x": 1})
str_grid = _copy_kernel(lambda p: (1, "1", 1))
typo_requirement = _copy_kernel(lambda p: (1, 1, 1), [(lambda p: p.a.rowz > 0, "rows")])
dividing_requirement = _copy_kernel(lambda p: (1, 1, 1),
                                    [(lambda p: p.a.cols // (p.a.rows - 16) > 0, "ratio")])
array_requirement = _copy_kernel(lambda p: (1, 1, 1),
                                 [(lambda p: np.array(p.a.shape) > 0, "positive")])


# ---- tensors ---------------------------------------------------------------------------------

def t32(shape=SHAPE, fill=0.0):
    return torch.full(shape, fill, dtype=torch.float32)


def n32(shape=SHAPE, fill=0.0):
    return np.full(shape, fill, np.float32)


def out(shape=SHAPE):
    """An output holding the sentinel: a refused call must leave it so."""
    return t32(shape, SENTINEL)


def nout(shape=SHAPE):
    return n32(shape, SENTINEL)


def untouched(value) -> bool:
    if isinstance(value, np.ndarray):
        return bool((value == SENTINEL).all())
    return bool((value.detach() == SENTINEL).all())


class Case:
    """One bad call: `kernel(*args, **constants)` refused with `kind`, its text holding
    `words`; `watched` (an output) must be left as it was."""

    def __init__(self, make, *words, kind=InputError, watched=-1, fix=True):
        self.make, self.kind, self.watched = make, kind, watched
        self.words = (*words, "fix:") if fix else words

    def check(self) -> None:
        kernel, args, constants = self.make()
        refused(lambda: kernel(*args, **constants), *self.words, kind=self.kind)
        if self.watched is not None and args:
            assert untouched(args[self.watched]), "the refused call wrote its output"


def call(kernel, *args, **constants):
    return lambda: (kernel, args, constants)


def bf(shape=SHAPE):
    return torch.zeros(shape, dtype=torch.bfloat16)


def shifted_pair(columns=1, rows=0):
    """An input and an output that are views of one buffer, the output `rows` rows and
    `columns` columns after the input."""
    base = t32((1, 1, 16 + rows, 64 + columns), SENTINEL)
    return base[..., :16, :64], base[..., rows:rows + 16, columns:columns + 64]


def _input_and_output(kernel, pair, param="a"):
    """`kernel(a, b, o)` with one of its inputs and its output sharing a buffer."""
    source, target = pair
    other = t32() if isinstance(source, torch.Tensor) else n32()
    inputs = (source, other) if param == "a" else (other, source)
    return kernel, (*inputs, target), {}


def numpy_shifted_pair():
    base = n32((1, 1, 16, 65), SENTINEL)
    return base[..., :64], base[..., 1:]


def same_tensor(kernel, *prefix):
    x = out()
    return call(kernel, *prefix, x, x)


def _reversed():
    return n32()[..., ::-1]


def _split_bytes():
    """A float32 array whose row stride (258 bytes) is no whole number of elements."""
    raw = np.full(16 * 258 + 64 * 4, SENTINEL, np.float32).view(np.uint8)
    return np.lib.stride_tricks.as_strided(raw.view(np.float32), SHAPE,
                                           (16 * 258, 16 * 258, 258, 4))


def _quantized():
    with warnings.catch_warnings():   # torch deprecates quantized tensors, users still have them
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(t32(), 0.1, 0, torch.quint8)


def _nested():
    with warnings.catch_warnings():   # torch calls the strided nested layout a prototype
        warnings.simplefilter("ignore")
        return torch.nested.nested_tensor([t32((16, 64))] * 2)


def _read_only():
    o = nout()
    o.setflags(write=False)
    return o


def _rows_overlap():
    """Rows 32 elements apart but 64 long: each row's second half is the next row's first."""
    return torch.as_strided(t32((16 * 32 + 64,), SENTINEL), SHAPE, (1024, 1024, 32, 1))


def _huge_stride_0(shape):
    return torch.zeros(1, 1, 1, 64).expand(*shape)


CASES = {
    # the number of tensors
    "too-few-tensors": Case(call(add, t32(), out()), "takes 3 tensors", "a, b, o", watched=None),
    "too-many-tensors": Case(call(add, t32(), t32(), out(), t32()),
                             "takes 3 tensors (a, b, o), got 4", watched=2),
    "no-tensors": Case(call(add), "takes 3 tensors", "got 0", watched=None),
    "constant-passed-positionally": Case(call(scale, t32(), out(), 3, F=1.0),
                                         "takes 2 tensors", "constants go by keyword",
                                         watched=1),
    # not tensors
    "list": Case(call(add, [0.0] * 64, t32(), out()), "'a'", "got list"),
    "none": Case(call(add, t32(), None, out()), "'b'", "got NoneType"),
    "int": Case(call(add, t32(), 3, out()), "'b'", "got int"),
    "float": Case(call(add, 1.5, t32(), out()), "'a'", "got float"),
    "string": Case(call(add, t32(), t32(), "o"), "'o'", "got str", watched=None),
    "scalar-tensor": Case(call(add, torch.tensor(1.0), t32(), out()), "'a'", "0-D",
                          "1 to 4 dimensions", "shape ()", "a.reshape(1)"),
    # dtypes, torch
    "torch-fp64": Case(call(add, t32().double(), t32(), out()), "'a'", "float64",
                       "torch.float32"),
    "torch-int64": Case(call(add, t32(), t32().long(), out()), "'b'", "int64", "torch.float32"),
    "torch-bool": Case(call(add, t32().bool(), t32(), out()), "'a'", "bool", "torch.float32"),
    "torch-complex": Case(call(add, t32(), t32().to(torch.complex64), out()), "'b'",
                          "complex64"),
    "torch-fp16-for-fp32": Case(call(add, t32().half(), t32(), out()), "'a'", "float16"),
    "torch-quantized": Case(lambda: (add, (_quantized(), t32(), out()), {}), "'a'", "quint8"),
    "fp32-for-bf16": Case(call(add_bf16, bf(), t32(), bf()), "'b'", "hk.bf16",
                          "torch.bfloat16", watched=None),
    # dtypes, numpy
    "numpy-fp64": Case(call(add, np.zeros(SHAPE), n32(), nout()), "'a'", "float64", "fp32"),
    "numpy-int64": Case(call(add, n32(), np.zeros(SHAPE, np.int64), nout()), "'b'", "int64"),
    "numpy-bool": Case(call(add, np.zeros(SHAPE, bool), n32(), nout()), "'a'", "bool"),
    "numpy-complex": Case(call(add, n32(), np.zeros(SHAPE, np.complex128), nout()), "'b'",
                          "complex128"),
    "numpy-object": Case(call(add, np.zeros(SHAPE, object), n32(), nout()), "'a'", "object"),
    "numpy-for-bf16": Case(call(add_bf16, n32(), n32(), nout()), "'a'", "numpy has no dtype",
                           "torch.bfloat16"),
    # ranks
    # (1 to 4 dimensions are padded on the left to (batch, depth, rows, cols); 0 and 5+ refused)
    "rank-0-numpy": Case(call(add, np.float32(1.0), n32(), nout()), "'a'", "0-D",
                         "1 to 4 dimensions"),
    "rank-0-output": Case(call(add, t32(), t32(), torch.tensor(SENTINEL)), "'o'", "0-D",
                          "o.reshape(1)"),
    "rank-5": Case(call(add, t32((1, *SHAPE)), t32(), out()), "'a'", "5 dimensions",
                   "(1, 1, 1, 16, 64)", "a.reshape(-1, *a.shape[-3:])"),
    "rank-5-numpy": Case(call(add, n32(), n32((2, *SHAPE)), nout()), "'b'", "5 dimensions",
                         "1 to 4 dimensions"),
    "rank-6-output": Case(call(add, t32(), t32(), t32((1, 1, *SHAPE), SENTINEL)), "'o'",
                          "6 dimensions"),
    "rank-1-empty": Case(call(add, t32((0,)), t32((0,)), out((0,))), "'a'", "empty",
                         "shape (0,)", watched=None),
    # empty tensors
    "zero-rows": Case(call(add, t32((1, 1, 0, 64)), t32((1, 1, 0, 64)), t32((1, 1, 0, 64))),
                      "'a'", "empty", "skip the call", watched=None),
    "zero-batch": Case(call(add, t32(), t32(), t32((0, 1, 16, 64))), "'o'", "empty",
                       watched=None),
    # devices and kinds of tensor
    "meta-device": Case(call(add, *(t32().to("meta") for _ in range(3))), "meta device",
                        "no data", "CPU or a GPU", watched=None),
    "cpu-and-meta": Case(call(add, t32(), t32().to("meta"), out()), "different devices",
                         "'b' on meta"),
    "sparse": Case(call(add, t32().to_sparse(), t32(), out()), "'a'", "sparse",
                   "a.to_dense()"),
    "nested": Case(lambda: (add, (t32(), _nested(), out()), {}), "'b'", "nested tensor"),
    # written tensors that cannot be written
    "output-requires-grad": Case(call(add, t32(), t32(), out().requires_grad_()), "'o'",
                                 "requires grad", "o.detach()"),
    "numpy-output-read-only": Case(call(add, n32(), n32(), _read_only()), "'o'", "read-only",
                                   "np.empty_like"),
    "numpy-output-broadcast": Case(call(add, n32(), n32(),
                                        np.broadcast_to(n32((1, 1, 1, 64), SENTINEL), SHAPE)),
                                   "'o'", "share memory", "np.empty"),
    # layouts
    "transposed-input": Case(call(add, t32((1, 1, 64, 16)).transpose(2, 3), t32(), out()),
                             "'a'", "last dimension", "a.contiguous()"),
    "every-other-column": Case(call(add, t32(), t32((1, 1, 16, 128))[..., ::2], out()), "'b'",
                               "stride 2 in its last dimension"),
    "numpy-reversed-input": Case(call(add, _reversed(), n32(), nout()), "'a'",
                                 "negative stride", "a.copy()"),
    "numpy-reversed-output": Case(call(add, n32(), n32(), nout()[:, :, ::-1]), "'o'",
                                  "negative stride", "freshly allocated"),
    "numpy-stride-not-whole-elements": Case(call(add, _split_bytes(), n32(), nout()), "'a'",
                                            "258", "whole"),
    "transposed-output": Case(call(add, t32(), t32(), out((1, 1, 64, 16)).transpose(2, 3)),
                              "'o'", "last dimension", "freshly allocated output"),
    "expanded-output": Case(call(add, t32(), t32(), t32((1, 1, 1, 64), SENTINEL).expand(SHAPE)),
                            "'o'", "share memory", "expanded"),
    "output-expanded-over-batch": Case(call(add, t32((4, 1, 16, 64)), t32((4, 1, 16, 64)),
                                            out().expand(4, 1, 16, 64)), "'o'",
                                       "share memory"),
    "output-rows-overlap": Case(call(add, t32(), t32(), _rows_overlap()), "'o'",
                                "share memory", "overlapping"),
    # aliasing
    "output-is-input-read-elsewhere": Case(same_tensor(next_row_tile), "'o'", "same tensor",
                                           "'a'", "other tile coordinates", "separate output"),
    "output-is-input-loaded-twice": Case(same_tensor(twice), "'o'", "same tensor",
                                         "one load", "separate output"),
    "output-is-input-of-two-warps": Case(same_tensor(all_warps), "'o'", "2 warps",
                                         "separate output"),
    "both-outputs-one-tensor": Case(same_tensor(split, t32()), "'lo'", "'hi'", "both written",
                                    "separate output"),
    "output-shifted-one-column": Case(lambda: _input_and_output(add, shifted_pair()), "'o'",
                                      "overlaps input 'a'", "+4 bytes", "separate output"),
    "output-shifted-by-rows": Case(lambda: _input_and_output(add, shifted_pair(0, 8), "b"),
                                   "'o'", "overlaps input 'b'", "torch.empty_like"),
    "output-overlaps-a-corner": Case(lambda: _input_and_output(add, shifted_pair(32, 8)),
                                     "'o'", "overlaps input 'a'"),
    "numpy-output-shifted": Case(lambda: _input_and_output(add, numpy_shifted_pair()), "'o'",
                                 "overlaps input 'a'", "np.empty_like"),
    # huge extents, as stride-0 views (no memory)
    "2^31-rows-input-on-amd": Case(call(first_tile, _huge_stride_0((1, 1, BIG, 64)), out()),
                                   "'a'", str(BIG), "split the call"),
    "2^31-row-output": Case(call(first_tile, t32(), _huge_stride_0((1, 1, BIG, 64))), "'o'",
                            "share memory", watched=None),
    # constants
    "unknown-constant": Case(call(scale, t32(), out(), F=1.0, Q=1), "'Q'", "K, F"),
    "constant-of-wrong-type": Case(call(scale, t32(), out(), K=1.5, F=1.0), "'K'",
                                   "hk.Constexpr[int]", "got float 1.5", "K=2"),
    "missing-constant": Case(call(scale, t32(), out()), "'F'", "F=..."),
    "unhashable-constant": Case(call(scale, t32(), out(), K=[2], F=1.0), "'K'", "[2]",
                                "a Python int"),
    "numpy-int-constant": Case(call(scale, t32(), out(), K=np.int64(2), F=1.0), "'K'",
                               "int64", "int(...)"),
    "bool-for-an-int-constant": Case(call(scale, t32(), out(), K=True, F=1.0), "'K'",
                                     "got bool True"),
    "int-for-a-str-constant": Case(call(flipped, t32(), out(), AXIS=0), "'AXIS'", "got int 0",
                                   "hk.Constexpr[str]", "AXIS='row'"),
    "int-for-a-bool-constant": Case(call(flipped, t32(), out(), NEGATE=1), "'NEGATE'",
                                    "hk.Constexpr[bool]", "NEGATE=False"),
    # targets
    "empty-target": Case(call(add, t32(), t32(), out(), target=""), "target=''",
                         "names no target", "sm_90a", kind=KernelError),
    "target-not-a-name": Case(call(add, t32(), t32(), out(), target=942), "string", "int 942",
                              kind=KernelError),
    # the kernel's grid and requirements, met by this call
    "grid-rounded-down-to-zero": Case(call(rows_rounded_down, t32(), out()), "0 blocks along y",
                                      "hk.cdiv", kind=KernelError),
    "grid-negative": Case(call(negative_grid, t32(), out()), "-1 blocks along x",
                          kind=KernelError),
    "grid-of-four-dimensions": Case(call(four_dim_grid, t32(), out()), "1 to 3 block counts",
                                    "got 4 counts", "fold", kind=KernelError),
    "grid-not-an-int": Case(call(float_grid, t32(), out()), "grid dimension 0", "integer",
                            "float 1.5", "hk.cdiv", kind=KernelError),
    "grid-not-a-tuple": Case(call(dict_grid, t32(), out()), "1 to 3 block counts", "dict",
                             "tuple of block counts", kind=KernelError),
    "grid-count-a-string": Case(call(str_grid, t32(), out()), "grid dimension 1", "str",
                                kind=KernelError),
    "requirement-raises-attribute-error": Case(call(typo_requirement, t32(), out()),
                                               "'rows'", "AttributeError", "p.<tensor>.rows",
                                               kind=KernelError),
    "requirement-divides-by-zero": Case(call(dividing_requirement, t32(), out()),
                                        "ZeroDivisionError", kind=KernelError),
    "requirement-gives-an-array": Case(call(array_requirement, t32(), out()), "'positive'",
                                       "ValueError", kind=KernelError),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_bad_call_is_refused_before_it_runs(case):
    case.check()


def test_the_corpus_has_its_cases():
    assert len(CASES) >= 45


def test_unknown_backend_names_the_variable_and_the_fix(monkeypatch):
    monkeypatch.setenv("KTILE_BACKEND", "cuda")
    o = out()
    refused(lambda: add(t32(), t32(), o), "unknown backend 'cuda'", "KTILE_BACKEND", "auto",
            kind=InputError)
    assert untouched(o)

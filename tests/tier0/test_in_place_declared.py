"""Declared in-place kernels (`@hk.kernel(in_place={"o": "x"})`, docs/runtime.md "Aliasing and
in-place"): a multi-warp kernel whose lanes read each element of x before they write it to o
runs with o passed as x and gives the out-of-place result; the same kernel undeclared, a
partial overlap and an undeclared pair are still refused with the rule's messages; the
decorator refuses names that are no tensor, a pair of one name, one input for two outputs; a
declaration the traced kernel contradicts (o never written, x written, a store with no load of
x at its coordinates before it) is refused at the call."""
from __future__ import annotations

import pytest

import ktile as hk
from ktile.errors import InputError, KernelError
from ktile.runtime.aliasing import in_place_refusal

torch = pytest.importorskip("torch")

TILE = hk.RT(hk.fp32, 16, 32)


def _grid(p):
    return (p.x.rows // 16,)


def _scaled_by_warp(x, o, shift: int):
    """Each warp loads its column tile of row tile r and stores its double at column tile
    warp + shift (shift 0: the same tile)."""
    r, warp = hk.arch.block_idx.x, hk.arch.warp_id
    xs = x[hk.tile_coord(0, 0, r, warp)].load(TILE)
    column = warp + shift if shift else warp     # the load's own value: the rule compares
    o[hk.tile_coord(0, 0, r, column)] = xs * 2.0    # equal expressions, not folded sums


@hk.kernel(grid=_grid, warps=4, in_place={"o": "x"})
def doubled(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    _scaled_by_warp(x, o, 0)


@hk.kernel(grid=_grid, warps=4)
def doubled_undeclared(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    _scaled_by_warp(x, o, 0)


@hk.kernel(grid=_grid, warps=4, in_place={"o": "x"})
def doubled_next(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    _scaled_by_warp(x, o, 1)


@hk.kernel(grid=_grid, warps=4, in_place={"y": "x"})
def declares_unwritten(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    _scaled_by_warp(x, o, 0)


def ramp(rows=32, cols=128):
    return torch.arange(rows * cols, dtype=torch.float32).reshape(rows, cols) / 7


def test_a_declared_pair_runs_in_place_as_out_of_place():
    x, y = ramp(), ramp()
    want = torch.empty_like(x)
    doubled(x, y, want)
    doubled(x, y, x)
    assert torch.equal(x, want) and torch.equal(want, ramp() * 2)
    assert in_place_refusal(doubled.trace(), 0, 2) is None


def test_an_undeclared_multi_warp_pair_is_refused_naming_the_declaration():
    x, y = ramp(), ramp()
    with pytest.raises(InputError, match="4 warps could read a tile of 'x'.*in_place="):
        doubled_undeclared(x, y, x)
    assert torch.equal(x, ramp())


def test_only_the_declared_pair_is_accepted():
    x, y = ramp(), ramp()
    with pytest.raises(InputError, match="'o' is the same tensor as input 'y'"):
        doubled(x, y, y)


def test_a_partial_overlap_is_refused_though_declared():
    base = ramp(48)
    with pytest.raises(InputError, match="'o' is written and overlaps input 'x' in memory "
                                         "without being the same view"):
        doubled(base[:32], ramp(), base[16:])


def test_a_store_elsewhere_contradicts_the_declaration():
    x = ramp()
    with pytest.raises(InputError, match="a store of 'o' has no load of 'x' before it"):
        doubled_next(x, ramp(), x)
    assert doubled_next(ramp(), ramp(), torch.zeros(32, 160)) is None   # out of place: fine


def test_a_declared_output_the_kernel_never_writes_is_refused():
    with pytest.raises(KernelError, match="never writes 'y'"):
        declares_unwritten(ramp(), ramp(), torch.empty(32, 128))


@pytest.mark.parametrize("spec,words", [
    ({"o": "z"}, "'z', which is not a tensor parameter"),
    ({"o": "o"}, "with itself"),
    ({"o": "x", "y": "x"}, "input 'x' for two outputs"),
    ({"o": "x", "x": "y"}, "both as an output and as an input"),
    (["o", "x"], "dict of output names"),
])
def test_the_decorator_refuses_a_bad_declaration(spec, words):
    with pytest.raises(KernelError, match=words):
        @hk.kernel(grid=_grid, in_place=spec)
        def bad(x: hk.Tensor[hk.fp32], y: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
            o[hk.tile_coord(0, 0, 0, 0)] = x[hk.tile_coord(0, 0, 0, 0)].load(TILE)

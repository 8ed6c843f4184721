"""A kernel's own preconditions (`@hk.kernel(requires=[(predicate, message)])`): read from the
call's shapes and constants as the grid function reads them, checked before anything runs on
every backend (interpreter, GPU call, wave emulation), refused with the author's message and
the values read; a malformed `requires` is refused at decoration."""
import sys
import types

import pytest

import ktile as hk
from examples_index import load
from ktile.errors import InputError, KernelError
from ktile.runtime import build as build_mod
from ktile.runtime import gpu
from ktile.runtime.devices import Device

torch = pytest.importorskip("torch")

rms = load("02_rmsnorm")
MESSAGE = "WIDTH (the columns a block holds) must be at least x.cols"


def tensors(cols: int):
    x = torch.ones((1, 1, 16, cols), dtype=torch.bfloat16)
    return x, torch.ones((1, 1, 1, cols), dtype=torch.bfloat16), torch.empty_like(x)


@pytest.mark.parametrize("kernel", [rms.rmsnorm_staged, rms.rmsnorm_persistent])
def test_the_interpreter_refuses_a_width_under_the_row(kernel):
    with pytest.raises(InputError) as caught:
        kernel.interpret(*tensors(2000), WIDTH=1024)
    text = str(caught.value)
    assert MESSAGE in text and "x (1, 1, 16, 2000)" in text and "WIDTH=1024" in text
    assert caught.value.loc.line == kernel.def_loc.line


def test_a_gpu_call_refuses_it_before_building(monkeypatch):
    built = []
    monkeypatch.setattr(build_mod, "build_trace", lambda trace: built.append(trace))
    loader = types.ModuleType("fake_loader")
    loader.MAX_GRID = (2**31 - 1, 65535, 65535)
    loader.load = lambda b, index: pytest.fail("loaded")
    monkeypatch.setitem(sys.modules, "fake_loader", loader)
    monkeypatch.setitem(gpu.LOADERS, "nvidia", "fake_loader")
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "nvidia", "9.0", "fake H200"))
    call = gpu.GpuCall(rms.rmsnorm_persistent, None, {"WIDTH": 1024})
    with pytest.raises(InputError, match="must be at least x.cols"):
        call.fast(tensors(1100))
    assert built == []


def test_wave_emulation_refuses_it():
    from ktile.emulate import emulate
    with pytest.raises(InputError, match="must be at least x.cols"):
        emulate(rms.rmsnorm_staged, *tensors(1100), target="gfx950", WIDTH=1024)


def test_a_call_that_meets_it_runs():
    @hk.kernel(grid=lambda p: (1, 1, 1), requires=[(lambda p: p.o.cols == p.N, "o has N columns")])
    def fill(o: hk.Tensor[hk.fp32], *, N: hk.Constexpr[int] = 16):
        o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 16)) + 2.0
    o = torch.zeros((1, 1, 16, 16))
    fill.interpret(o)
    assert bool((o == 2).all())
    with pytest.raises(InputError, match=r"o has N columns \(shapes: o \(1, 1, 16, 16\); "
                                         r"constants: N=32\)"):
        fill.interpret(o, N=32)


def test_the_interpreter_checks_them_before_tracing():
    @hk.kernel(grid=lambda p: (1, 1, 1), requires=[(lambda p: p.N == 16, "N is 16")])
    def fill(o: hk.Tensor[hk.fp32], *, N: hk.Constexpr[int] = 16):
        o[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 32 - N))  # N=32: no trace
    with pytest.raises(InputError, match="N is 16"):
        fill.interpret(torch.zeros((1, 1, 16, 16)), N=32)
    assert not fill._traces


def test_a_malformed_requirement_is_refused_at_decoration():
    with pytest.raises(KernelError, match="requires takes \\(predicate, message\\) pairs"):
        @hk.kernel(grid=lambda p: (1, 1, 1), requires=[lambda p: True])
        def nothing(o: hk.Tensor[hk.fp32]):
            pass

"""ROCm tensors routed to the HIP loader, with fakes: there is no ROCm and no AMD GPU here, and
none of this has run on one (docs/runtime.md). A ROCm torch reports its devices as 'cuda' with
`torch.version.hip` set; the device's gcnArchName names ktile's target; `gpu.LOADERS["amd"]`
is the HIP loader, driven here against the stand-in libamdhip64 of test_runtime_hip.py. Also the
AMD index limit: extents and row strides at 2^31 are refused before anything is built or run."""
import types

import pytest

import ktile as hk
from ktile import targets
from ktile.dtypes import bf16, fp32
from ktile.errors import InputError, KernelError
from ktile.runtime import build as build_mod
from ktile.runtime import devices, gpu
from ktile.runtime.arguments import Argument, check_index_limit
from ktile.runtime.devices import Device, target_of
from ktile.runtime.loaders import hip

from test_runtime_hip import CODE, FakeHip

torch = pytest.importorskip("torch")
LIMIT = 2**31


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


@hk.kernel(grid=lambda p: (1, 1, 1))
def first_tile(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    t = hk.RT(hk.bf16, 16, 64)
    o[hk.tile_coord(0, 0, 0, 0)] = a[hk.tile_coord(0, 0, 0, 0)].load(t)   # a: any extent


# ---- the device's arch → ktile's target ----------------------------------------------------

@pytest.fixture
def rocm_torch(monkeypatch):
    """torch as a ROCm build shows itself: torch.version.hip set, device properties with a
    gcnArchName. `set(name)` picks the arch device 0 reports."""
    seen = {"arch": "gfx942:sramecc+:xnack-"}
    monkeypatch.setattr(torch.version, "hip", "6.2.41133", raising=False)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda index: types.SimpleNamespace(
        gcnArchName=seen["arch"], name="AMD Instinct MI300X", major=9, minor=4))
    devices.device.cache_clear()
    yield lambda arch: seen.update(arch=arch) or devices.device.cache_clear()
    devices.device.cache_clear()


@pytest.mark.parametrize("reported,target", [
    ("gfx942:sramecc+:xnack-", "gfx942"), ("gfx950:sramecc+:xnack-", "gfx950"),
    ("gfx1100", "gfx1100"), ("gfx1201", "gfx1201"), ("gfx942:xnack+", "gfx942"),
])
def test_a_rocm_device_is_named_by_its_gfx_arch(rocm_torch, reported, target):
    rocm_torch(reported)
    dev = devices.device(0)
    assert (dev.vendor, dev.arch) == ("amd", target)
    assert target_of(dev) == target and targets.get(target).vendor == "amd"


def test_an_amd_arch_without_a_target_is_refused_naming_it_and_the_ones_there_are(rocm_torch):
    rocm_torch("gfx90a:sramecc+:xnack-")
    with pytest.raises(KernelError) as info:
        target_of(devices.device(0), "add")
    message = str(info.value)
    assert "(AMD Instinct MI300X, amd gfx90a), a GPU ktile has no target for" in message
    assert "amd gfx942" in message and "nvidia 9.0 (sm_90a)" in message
    assert "k.interpret(...)" in message


def test_the_amd_vendor_is_routed_to_the_hip_loader():
    assert gpu.LOADERS["amd"] == "ktile.runtime.loaders.hip"
    assert hip.MAX_GRID and callable(hip.load)


# ---- a whole first call into the HIP loader ----------------------------------------------------

@pytest.fixture
def fake_rocm(monkeypatch):
    """CPU tensors standing for ROCm ones on a gfx942 device; the stand-in libamdhip64; a
    build that is the stand-in's code object."""
    fake = FakeHip()
    builds = []
    monkeypatch.setattr(gpu, "device", lambda index: Device(index, "amd", "gfx942", "fake MI300X"))
    monkeypatch.setattr(gpu, "_LOADED", {})
    monkeypatch.setattr(build_mod, "build_trace", lambda trace: builds.append(trace) or
                        types.SimpleNamespace(code=CODE, kernel=trace.name, lds_bytes=0,
                                              threads=trace.warps * trace.target.wave_size))
    monkeypatch.setattr(hip, "runtime", lambda: hip.Runtime(fake))
    monkeypatch.setattr(hip, "stream_getter", lambda: lambda index: 0x5A00)
    monkeypatch.setattr(hip, "device_getter", lambda: lambda: 0)
    monkeypatch.setattr(hip, "device_count", lambda: 1)
    return types.SimpleNamespace(hip=fake, builds=builds)


def test_a_call_on_rocm_tensors_builds_for_the_devices_arch_and_launches_through_hip(fake_rocm):
    a, b, o = (torch.zeros((2, 1, 48, 192), dtype=torch.bfloat16) for _ in range(3))
    gpu.GpuCall(add, None, {}).fast((a, b, o))
    [trace] = fake_rocm.builds
    assert trace.target.name == "gfx942"
    [launch] = fake_rocm.hip.launches
    assert launch["grid"] == (3, 3, 2) and launch["block"] == (64, 1, 1)
    assert launch["stream"] == 0x5A00
    assert launch["args"][2] == (o.data_ptr(), (2, 1, 48, 192), (9216, 1, 192, 1))


def test_an_extent_at_the_limit_is_refused_before_anything_is_built(fake_rocm):
    huge = torch.zeros((1, 1, 1, 64), dtype=torch.bfloat16).expand(1, 1, LIMIT, 64)
    out = torch.zeros((1, 1, 16, 64), dtype=torch.bfloat16)
    with pytest.raises(InputError) as info:
        gpu.GpuCall(first_tile, None, {}).fast((huge, out))
    assert info.value.message == (
        f"parameter 'a' has {LIMIT} entries along its row dimension (shape (1, 1, {LIMIT}, 64)); "
        f"gfx942 kernels index a global with 32-bit offsets, so each extent must be below "
        f"{LIMIT}")
    assert info.value.hint == (f"split the call: views of fewer than {LIMIT} entries along that "
                               f"dimension (a.narrow(2, start, length)), one call each")
    assert fake_rocm.builds == [] and fake_rocm.hip.launches == []
    below = huge[:, :, :LIMIT - 1]
    gpu.GpuCall(first_tile, None, {}).fast((below, out))
    assert len(fake_rocm.hip.launches) == 1


# ---- the limit itself ---------------------------------------------------------------------------

def argument(shape, dtype=bf16, name="x") -> Argument:
    return Argument(name, None, dtype, shape, True)


@pytest.mark.parametrize("target", ["gfx1100", "gfx1201", "gfx942", "gfx950"])
def test_the_limit_is_each_amd_targets_and_not_hoppers(target):
    assert targets.get(target).global_index_limit == LIMIT
    assert targets.get("sm_90a").global_index_limit == 0
    check_index_limit(add, targets.get("sm_90a"), [argument((LIMIT, 1, LIMIT, 8))],
                      [(1, 1, LIMIT * 4, 1)])


@pytest.mark.parametrize("shape,strides,dimension", [
    ((LIMIT, 1, 1, 8), (8, 8, 8, 1), "batch"),
    ((1, LIMIT, 1, 8), (8, 8, 8, 1), "depth"),
    ((1, 1, 1, LIMIT), (1, 1, 1, 1), "column"),
])
def test_every_extent_is_limited(shape, strides, dimension):
    with pytest.raises(InputError, match=f"entries along its {dimension} dimension"):
        check_index_limit(add, targets.get("gfx1100"), [argument(shape)], [strides])


def test_a_row_stride_is_limited_in_bytes_and_batch_strides_are_not():
    gfx950 = targets.get("gfx950")
    check_index_limit(add, gfx950, [argument((2, 2, 4, 8), fp32)],
                      [(LIMIT * 8, LIMIT * 4, LIMIT // 4 - 1, 1)])
    with pytest.raises(InputError) as info:
        check_index_limit(add, gfx950, [argument((1, 1, 4, 8)), argument((1, 1, 4, 8), fp32, "y")],
                          [(1, 1, 8, 1), (1, 1, LIMIT // 4, 1)])
    assert info.value.message == (
        f"parameter 'y' has a row stride of {LIMIT // 4} elements ({LIMIT} bytes); gfx950 "
        f"kernels reach a tile's elements through 32-bit byte offsets from its first one, so row "
        f"and column strides must be below {LIMIT} bytes")
    assert "narrow y to the part the kernel needs and make it contiguous" in info.value.hint
    assert info.value.kernel == "add"

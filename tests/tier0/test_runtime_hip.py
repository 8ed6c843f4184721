"""The HIP loader against a stand-in libamdhip64: each HIP function is a C function pointer
around a Python body, so the loader's calls go through ctypes' marshalling as they would to the
real library. What arrives is checked: the code object, the kernel's name, the device switches,
the launch geometry, the stream, and each argument's 72 bytes through the `void**` array.

No AMD GPU has run this loader (docs/amd.md); these tests show the calls and their bytes, not
that HIP accepts them."""
import ctypes
import struct
from ctypes import CFUNCTYPE, POINTER, c_int, c_uint, c_void_p

import pytest

from ktile.errors import KernelError
from ktile.runtime.loaders import hip
from ktile.runtime.loaders.packing import GLOBAL_ARG_BYTES, GlobalArg, KernelParams

CODE = b"\x7fELF\x02\x01\x01\x40" + bytes(56) + b"rest of the code object"
HIP_ERROR_NOT_FOUND = 500
ERROR_TEXT = {0: (b"hipSuccess", b"no error"),
              HIP_ERROR_NOT_FOUND: (b"hipErrorNotFound", b"named symbol not found")}

# The stand-in's C prototypes: the loader's argument types, except that the code object comes
# in as an address (a char* would stop at its first NUL) and error strings go out as one.
PROTOTYPES = {
    "hipInit": (c_int, c_uint),
    "hipGetDevice": (c_int, POINTER(c_int)),
    "hipSetDevice": (c_int, c_int),
    "hipModuleLoadData": (c_int, POINTER(c_void_p), c_void_p),
    "hipModuleGetFunction": (c_int, POINTER(c_void_p), c_void_p, ctypes.c_char_p),
    "hipModuleLaunchKernel": (c_int, c_void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                              c_uint, c_void_p, POINTER(c_void_p), POINTER(c_void_p)),
    "hipGetErrorName": (c_void_p, c_int),
    "hipGetErrorString": (c_void_p, c_int),
}


class FakeHip:
    """libamdhip64 as the loader sees it: `lib.name` and `lib["name"]` give C functions."""

    MODULE, FUNCTION = 0x5000, 0x6000

    def __init__(self, devices: int = 1, missing_kernel: bool = False):
        self.devices = devices
        self.device = 0
        self.missing_kernel = missing_kernel
        self.calls: list[tuple] = []
        self.launches: list[dict] = []
        self._strings = {code: [ctypes.create_string_buffer(s) for s in pair]
                         for code, pair in ERROR_TEXT.items()}
        self._bodies = {name: getattr(self, f"_{name}") for name in PROTOTYPES}
        self._keep = []

    def _pointer(self, name: str):
        restype, *argtypes = PROTOTYPES[name]
        fn = CFUNCTYPE(restype, *argtypes)(self._bodies[name])
        self._keep.append(fn)
        return fn

    def __getattr__(self, name: str):
        if name.startswith("hip"):
            return self._pointer(name)
        raise AttributeError(name)

    def __getitem__(self, name: str):
        return self._pointer(name)

    # ---- the HIP functions -----------------------------------------------------------------

    def _hipInit(self, flags):
        self.calls.append(("hipInit", flags))
        return 0

    def _hipGetDevice(self, out):
        out[0] = self.device
        return 0

    def _hipSetDevice(self, index):
        self.calls.append(("hipSetDevice", index))
        self.device = index
        return 0

    def _hipModuleLoadData(self, out, image):
        self.calls.append(("hipModuleLoadData", self.device, ctypes.string_at(image, len(CODE))))
        out[0] = self.MODULE
        return 0

    def _hipModuleGetFunction(self, out, module, name):
        self.calls.append(("hipModuleGetFunction", module, name))
        if self.missing_kernel:
            return HIP_ERROR_NOT_FOUND
        out[0] = self.FUNCTION
        return 0

    def _hipModuleLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params,
                               extra):
        args = [GlobalArg.from_buffer_copy(ctypes.string_at(params[i], GLOBAL_ARG_BYTES))
                for i in range(self.arg_count)]
        self.launches.append({"function": function, "grid": (gx, gy, gz), "block": (bx, by, bz),
                              "shared": shared, "stream": stream, "extra": bool(extra),
                              "device": self.device,
                              "args": [(a.data, tuple(a.extent), tuple(a.stride)) for a in args],
                              "bytes": [ctypes.string_at(params[i], GLOBAL_ARG_BYTES)
                                        for i in range(self.arg_count)]})
        return 0

    arg_count = 3

    def _hipGetErrorName(self, code):
        return ctypes.addressof(self._strings[code][0])

    def _hipGetErrorString(self, code):
        return ctypes.addressof(self._strings[code][1])


def kernel(fake: FakeHip, device_index: int = 0, **kw) -> hip.HipKernel:
    settings = {"threads": 128, "shared_bytes": 8192, **kw}
    return hip.HipKernel(CODE, "gemm", device_index, hip=hip.Runtime(fake), **settings)


def params() -> KernelParams:
    p = KernelParams(3)
    p.set_layout([(1, 1, 64, 32), (1, 1, 32, 64), (2, 3, 64, 64)],
                 [(2048, 2048, 32, 1), (2048, 2048, 64, 1), (12288, 4096, 64, 1)])
    p.set_data([0x7F00_0000_1000, 0x7F00_0000_2000, 0x7F00_0000_3000])
    return p


# ---- loading ------------------------------------------------------------------------------

def test_the_runtime_is_initialised_once_typed():
    fake = FakeHip()
    runtime = hip.Runtime(fake)
    assert fake.calls == [("hipInit", 0)]
    assert runtime.hipModuleLaunchKernel.argtypes[-2:] == (POINTER(c_void_p), POINTER(c_void_p))


def test_the_code_object_is_loaded_whole_and_the_kernel_found_by_name():
    fake = FakeHip()
    loaded = kernel(fake)
    assert ("hipModuleLoadData", 0, CODE) in fake.calls
    assert ("hipModuleGetFunction", FakeHip.MODULE, b"gemm") in fake.calls
    assert (loaded.module, loaded.function) == (FakeHip.MODULE, FakeHip.FUNCTION)
    assert not any(call[0] == "hipSetDevice" for call in fake.calls)


def test_loading_on_another_device_switches_there_and_back():
    fake = FakeHip(devices=2)
    kernel(fake, device_index=1)
    loads = [c for c in fake.calls if c[0] in ("hipSetDevice", "hipModuleLoadData")]
    assert loads == [("hipSetDevice", 1), ("hipModuleLoadData", 1, CODE), ("hipSetDevice", 0)]
    assert fake.device == 0


def test_a_missing_kernel_names_the_call_and_hips_error():
    with pytest.raises(KernelError) as info:
        kernel(FakeHip(missing_kernel=True))
    assert info.value.message == ("hipModuleGetFunction('gemm') failed: hipErrorNotFound (500): "
                                  "named symbol not found")
    assert info.value.kernel == "gemm"


# ---- launching: geometry, stream and the argument bytes --------------------------------------

def test_a_launch_passes_geometry_stream_and_each_arguments_72_bytes():
    fake, p = FakeHip(), params()
    kernel(fake).launch((4, 2, 1), 0xABC0, p.pointers)
    [launch] = fake.launches
    assert launch["function"] == FakeHip.FUNCTION
    assert launch["grid"] == (4, 2, 1) and launch["block"] == (128, 1, 1)
    assert launch["shared"] == 8192 and launch["stream"] == 0xABC0 and not launch["extra"]
    assert launch["args"][2] == (0x7F00_0000_3000, (2, 3, 64, 64), (12288, 4096, 64, 1))
    for index, seen in enumerate(launch["bytes"]):
        assert seen == p.as_bytes(index)
    assert launch["bytes"][0] == struct.pack("<Q4q4q", 0x7F00_0000_1000, 1, 1, 64, 32,
                                             2048, 2048, 32, 1)


def test_a_bound_launch_reads_the_current_stream_and_new_data_pointers(monkeypatch):
    fake, p = FakeHip(), params()
    streams = iter([0x100, 0x200])
    monkeypatch.setattr(hip, "stream_getter", lambda: lambda index: next(streams))
    monkeypatch.setattr(hip, "device_getter", lambda: lambda: 0)
    monkeypatch.setattr(hip, "device_count", lambda: 1)
    launch = kernel(fake).bind((8, 1, 1), p.pointers)
    launch()
    p.set_data([0x10, 0x20, 0x30])
    launch()
    assert [x["stream"] for x in fake.launches] == [0x100, 0x200]
    assert [x["args"][1][0] for x in fake.launches] == [0x7F00_0000_2000, 0x20]


def test_a_bound_launch_from_another_current_device_switches_for_the_call(monkeypatch):
    fake, p = FakeHip(devices=2), params()
    monkeypatch.setattr(hip, "stream_getter", lambda: lambda index: 0x300 + index)
    monkeypatch.setattr(hip, "device_getter", lambda: lambda: fake.device)
    monkeypatch.setattr(hip, "device_count", lambda: 2)
    launch = kernel(fake, device_index=1).bind((1, 1, 1), p.pointers)
    launch()
    [launched] = fake.launches
    assert launched["device"] == 1 and launched["stream"] == 0x301
    assert fake.device == 0


def test_more_work_items_than_a_dispatch_counts_is_refused():
    with pytest.raises(KernelError, match=r"along x: 4294967552 work-items, over the 4294967295"):
        kernel(FakeHip(), threads=256).launch((2**24 + 1, 1, 1), 0, params().pointers)


# ---- finding the library --------------------------------------------------------------------

def test_torchs_own_libamdhip64_is_tried_first(monkeypatch):
    tried = []

    def refuse(name):
        tried.append(name)
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(hip, "_torch_libraries", lambda: ["/torch/lib/libamdhip64.so"])
    monkeypatch.setattr(hip.ctypes, "CDLL", refuse)
    with pytest.raises(KernelError) as info:
        hip.open_library()
    assert tried == ["/torch/lib/libamdhip64.so", *hip.LIBRARY_NAMES]
    assert "libamdhip64 cannot be loaded" in info.value.message
    assert "k.interpret" in info.value.hint

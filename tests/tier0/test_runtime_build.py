"""Kernel.build and what it stands on, without a compiler: the toolchain table, nvcc's errors
turned into kernel errors (recorded logs), the gate on builds and cache hits (a fake toolchain),
the host-side grid, the device table and the launch's stride checks."""
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

import ktile as hk
from ktile import targets
from ktile.errors import InputError, KernelError
from ktile.runtime import build as build_mod
from ktile.runtime.build import build_source, build_trace
from ktile.runtime.cache import BuildCache, BuildFailed, CompileResult
from ktile.runtime.devices import Device, target_of
from ktile.runtime.grid import grid_function
from ktile.runtime.toolchains.nvcc import Nvcc

SM90A = targets.get("sm_90a")


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)



# ---- the toolchain table -----------------------------------------------------------------

def test_a_vendor_without_a_driver_says_what_to_do(monkeypatch):
    monkeypatch.delitem(build_mod.TOOLCHAINS, "amd")
    with pytest.raises(KernelError) as info:
        add.build(target="gfx950")
    assert "the AMD toolchain driver is not built into ktile yet" in str(info.value)
    assert "fix: build for a target of a vendor that has one (nvidia)" in str(info.value)


# ---- nvcc's errors, from recorded logs ---------------------------------------------------

def failure(tmp_path: Path, log: str) -> BuildFailed:
    source = tmp_path / "kernel.cu"
    source.write_text("// generated\n")
    return BuildFailed(tmp_path, source, CompileResult(["nvcc"], 1, log))


def test_error_at_a_kernel_line(tmp_path):
    log = (f'/home/me/kernels.py(25): error: namespace "kt" has no member "add"\n'
           f'    kt::rt<kt::bf16, 16, 64, kt::row, kt::frag_none> v9; kt::add(v9, v7, v8);\n'
           f'                                                                ^\n\n'
           f'1 error detected in the compilation of "{tmp_path}/kernel.cu".\n')
    error = Nvcc("nvcc").error(failure(tmp_path, log), "add", SM90A, [tmp_path / "include"])
    assert str(error.loc) == "/home/me/kernels.py:25" and error.kernel == "add"
    assert 'namespace "kt" has no member "add"' in error.message
    assert str(tmp_path) in str(error)


def test_header_error_instantiated_from_a_kernel_line(tmp_path):
    include = tmp_path / "include"
    log = (f'{include}/ktile/nvidia/hopper/mma.hpp(40): error: static assertion failed with '
           f'"mma: operand a must carry frag_a"\n'
           f'    static_assert(...);\n'
           f'          detected during:\n'
           f'            instantiation of "void kt::mma_AB(...)" at line 12 of '
           f'{include}/ktile/nvidia/hopper/ops.hpp\n'
           f'            instantiation of "void kt::ops(...)" at line 31 of /home/me/gemm.py\n\n'
           f'1 error detected in the compilation of "{tmp_path}/kernel.cu".\n')
    error = Nvcc("nvcc").error(failure(tmp_path, log), "gemm", SM90A, [include])
    assert str(error.loc) == "/home/me/gemm.py:31"
    assert "operand a must carry frag_a" in error.message


def test_header_error_without_a_kernel_line_names_kernel_and_log(tmp_path):
    include = tmp_path / "include"
    log = f'{include}/ktile/nvidia/hopper/tile.hpp(7): error: expected a ";"\n'
    error = Nvcc("nvcc").error(failure(tmp_path, log), "gemm", SM90A, [include])
    assert error.loc is None and error.kernel == "gemm"
    assert "ktile's sm_90a tile headers do not compile" in str(error)
    assert str(tmp_path) in str(error) and "expected a \";\"" in str(error)


def test_missing_header_from_the_preprocessor(tmp_path):
    log = (f'{tmp_path}/kernel.cu:3:10: fatal error: ktile/nvidia/hopper/kernel.hpp: No such file '
           f'or directory\ncompilation terminated.\n')
    error = Nvcc("nvcc").error(failure(tmp_path, log), "add", SM90A, [tmp_path / "include"])
    assert error.loc is None and "kernel.hpp: No such file" in str(error)
    assert "headers are installed" in str(error)


def test_failure_without_diagnostics_shows_the_log(tmp_path):
    log = "ptxas error   : Entry function 'k' uses too much shared data (0x40000 bytes)\n"
    error = Nvcc("nvcc").error(failure(tmp_path, log), "k", SM90A, [])
    assert "uses too much shared data" in str(error) and str(tmp_path) in str(error)


# ---- the gate on builds and on cache hits (a fake toolchain) -----------------------------

FRAME = "    {0} bytes stack frame, {0} bytes spill stores, {0} bytes spill loads\n"


@dataclass(frozen=True)
class FakeToolchain:
    builds: list
    name: str = "fake"
    source_name: str = "kernel.cu"
    code_name: str = "kernel.bin"
    identity: str = "fake 1.0"

    def flags(self, target):
        return ["-O3"]

    def compiler(self, target, include_dirs):
        def compile_source(source: Path, code: Path):
            self.builds.append(source)
            text = source.read_text()
            spill = 96 if "SPILL" in text else 0
            name = m.group(1) if (m := re.search(r"void (\w+)\(kt::gl", text)) else "k"
            code.write_bytes(b"code")
            log = (f"ptxas info    : Compiling entry function '{name}' for 'sm_90a'\n"
                   f"ptxas info    : Function properties for {name}\n" + FRAME.format(spill) +
                   "ptxas info    : Used 20 registers, used 0 barriers\n")
            return CompileResult(["fake"], 0, log)
        return compile_source

    resources = Nvcc.resources
    error = Nvcc.error


@pytest.fixture
def fake_toolchain(monkeypatch):
    builds: list = []
    module = types.ModuleType("fake_toolchain")
    module.toolchain = lambda: FakeToolchain(builds)
    monkeypatch.setitem(sys.modules, "fake_toolchain", module)
    monkeypatch.setitem(build_mod.TOOLCHAINS, "nvidia", "fake_toolchain")
    return builds


def test_build_then_cache_hit(tmp_path, fake_toolchain):
    cache = BuildCache(tmp_path)
    first = build_source("k", SM90A, "k", warps=4, lds_bytes=1024, cache=cache)
    second = build_source("k", SM90A, "k", warps=4, lds_bytes=1024, cache=cache)
    assert (first.cache_hit, second.cache_hit) == (False, True) and len(fake_toolchain) == 1
    assert first.key == second.key and second.code == b"code"
    assert (second.threads, second.lds_bytes, second.resources.registers) == (128, 1024, 20)
    text = second.report()
    assert "kernel 'k' for sm_90a" in text and "cache hit" in text and str(second.code_path) in text


def test_gate_runs_on_the_build_and_on_every_hit(tmp_path, fake_toolchain):
    cache = BuildCache(tmp_path)
    for _ in range(2):
        with pytest.raises(KernelError, match="spills registers: 96 bytes spill stores"):
            build_source("k SPILL", SM90A, "k", cache=cache)
    assert len(fake_toolchain) == 1      # built once; the hit was refused all the same


def test_kernel_build_reads_warps_and_lds_bytes_from_the_trace(tmp_path, fake_toolchain,
                                                                 monkeypatch):
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path))
    built = add.build(target="sm_90a")
    assert built.kernel == "add" and built.target == "sm_90a"
    assert (built.warps, built.lds_bytes, built.threads) == (1, 0, 32)
    assert built.source_path.read_text() == add.source(target="sm_90a")
    assert built.key == build_trace(add.trace("sm_90a"), BuildCache(tmp_path)).key


# ---- the grid, the device table, the stride checks ---------------------------------------

def test_grid_from_shapes():
    grid = grid_function(add.trace("sm_90a"))
    assert grid([(2, 1, 48, 192)] * 3) == (3, 3, 2)
    assert grid([(1, 1, 37, 100)] * 3) == (2, 3, 1)


def test_device_table():
    assert target_of(Device(0, "nvidia", "9.0", "NVIDIA H200")) == "sm_90a"
    with pytest.raises(KernelError) as info:
        target_of(Device(0, "nvidia", "8.0", "NVIDIA A100"), "add")
    message = str(info.value)
    assert "NVIDIA A100, nvidia 8.0" in message and "a GPU ktile has no target for" in message
    assert "k.interpret(...)" in message


def test_stride_checks():
    torch = pytest.importorskip("torch")
    from ktile.runtime.arguments import check_arguments
    from ktile.runtime.arguments import check_strides, kernel_strides
    trace = add.trace("sm_90a")
    base = torch.zeros(1, 1, 16, 128, dtype=torch.bfloat16)
    good = check_arguments(add, (base, base, base))
    check_strides(add, trace, good)
    column_view = base[..., ::2]
    bad = check_arguments(add, (column_view, base[..., :64], base[..., :64]))
    with pytest.raises(InputError, match="stride 2 in its last dimension") as info:
        check_strides(add, trace, bad)
    assert "fix: pass a.contiguous()" in str(info.value)
    out_view = check_arguments(add, (base[..., :64], base[..., :64], column_view))
    with pytest.raises(InputError, match="'o' is written: pass a freshly allocated output"):
        check_strides(add, trace, out_view)
    expanded = torch.zeros(1, 1, 1, 64, dtype=torch.bfloat16).expand(1, 1, 16, 64)
    args = check_arguments(add, (expanded, expanded, expanded))
    with pytest.raises(InputError, match="parameter 'o' is written but several of its elements"):
        check_strides(add, trace, args)
    single = torch.zeros(1, 1, 4, 1, dtype=torch.bfloat16)[:, :, :, :1]
    assert kernel_strides(check_arguments(add, (single,) * 3)[0])[-1] == 1

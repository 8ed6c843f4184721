"""The emulation harness: arguments cross with the extents and strides a GPU launch gives them,
results come back into the caller's tensors (views included, their gaps untouched), the build is
cached, and what the emulated layer refuses — LDS out of range, global accesses outside the
tensors, a wave instruction half the wave skips — is an EmulationError with the kernel, the
target, the wave, the lane and the kernel's line."""
import re

import pytest
import torch

from examples_index import load
from ktile.emulate import EmulationError, build_emulator, emulate
from ktile.errors import KernelError

pytestmark = pytest.mark.tier2

ADD = load("01_vector_add").add
GEMM = load("04_gemm")
ADD_LINE = "o[idx] = a[idx].load(t) + b[idx].load(t)"


def _line_of(module, text):
    lines = open(module.__file__).read().splitlines()
    return [n for n, line in enumerate(lines, 1) if text in line]


def _rand(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


def _add_tensors(rows=16, cols=64):
    return _rand((1, 1, rows, cols), 1), _rand((1, 1, rows, cols), 2), \
        torch.zeros((1, 1, rows, cols), dtype=torch.bfloat16)


def _store_of(source):
    """The generated `kt::store(o, tile, coord);` statement and its global's name."""
    found = re.search(r"kt::store\((\w+), [^;]*;", source)
    return found.group(0), found.group(1)


@pytest.mark.parametrize("target", ["gfx1100", "gfx950"])
def test_strided_views_cross_with_their_strides_and_gaps_stay_untouched(target):
    """a broadcast along batch (stride 0), b a column window of a wider tensor, o a window of a
    NaN-filled tensor: o gets a + b, and nothing of the wider tensor outside the window moves."""
    rows, cols = 37, 100
    a = _rand((1, 1, rows, cols), 1).expand(3, 1, rows, cols)
    b = _rand((3, 1, rows, cols + 24), 2)[..., 8:8 + cols]
    whole = torch.full((3, 1, rows + 5, cols + 40), float("nan"), dtype=torch.bfloat16)
    o = whole[:, :, 2:2 + rows, 16:16 + cols]
    emulate(ADD, a, b, o, target=target)
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))
    outside = torch.ones_like(whole, dtype=torch.bool)
    outside[:, :, 2:2 + rows, 16:16 + cols] = False
    assert torch.isnan(whole[outside].float()).all()


def test_the_build_is_cached_by_content():
    source = ADD.source(target="gfx950")
    target = ADD.trace("gfx950").target
    first, again = build_emulator(source, target), build_emulator(source, target)
    assert first.program == again.program and first.program.is_file()
    assert (first.kernel, first.threads) == ("add", 64)
    edited = build_emulator(source + "\n// another program\n", target)
    assert edited.program != first.program


def test_lds_access_outside_the_blocks_shared_memory_is_reported():
    """rb's load at sub-tile row 1 of a 32-row shared tile reads past the block's 4 KiB of LDS."""
    source = GEMM.gemm.source(target="gfx1100")
    loads = re.findall(r"kt::lds_load\((\w+), (\w+), (\w+), (\w+)\);", source)
    dst, src, row, col = loads[1]
    planted = source.replace(f"kt::lds_load({dst}, {src}, {row}, {col});",
                             f"kt::lds_load({dst}, {src}, 1, {col});")
    a, b, c = _rand((1, 1, 32, 32), 1), _rand((1, 1, 32, 32), 2), torch.zeros((1, 1, 32, 32))
    with pytest.raises(EmulationError) as info:
        emulate(GEMM.gemm, a, b, c, target="gfx1100", source=planted)
    error = info.value
    assert error.check == "lds-bounds"
    assert "is outside the block's LDS (dynamic 0x0..0x1000" in error.message
    assert error.loc.line in _line_of(GEMM, "rb = sb.load(hk.RT(hk.bf16, BN, BK))")
    text = str(error)
    assert "in kernel 'gemm', gfx1100 wave emulation, block (0, 0, 0) wave 0 lane 0: lds-bounds" in text
    assert "fix:" in text


def test_store_past_the_last_row_is_reported():
    """o's data pointer moved 32 columns on: the last row's store runs past the tensor's memory."""
    source = ADD.source(target="gfx950")
    store, out = _store_of(source)
    planted = source.replace(store, f"{out}.data += 32; {store}")
    a, b, o = _add_tensors()
    with pytest.raises(EmulationError) as info:
        emulate(ADD, a, b, o, target="gfx950", source=planted)
    assert info.value.check == "global-bounds"
    assert "is outside every tensor argument ('a'" in info.value.message
    assert info.value.loc.line in _line_of(load("01_vector_add"), ADD_LINE)


def test_store_into_the_gap_between_a_views_rows_is_reported():
    source = ADD.source(target="gfx1100")
    store, out = _store_of(source)
    planted = source.replace(store, f"{out}.data += 32; {store}")
    whole = torch.zeros((1, 1, 16, 128), dtype=torch.bfloat16)
    a, b = _rand((1, 1, 16, 64), 1), _rand((1, 1, 16, 64), 2)
    with pytest.raises(EmulationError) as info:
        emulate(ADD, a, b, whole[..., :64], target="gfx1100", source=planted)
    assert info.value.check == "global-bounds"
    assert "writes between its elements" in info.value.message and "'o'" in info.value.message


def test_a_wave_instruction_part_of_the_wave_skips_is_reported():
    """ds_bpermute issued by lanes 0-7 only: the other lanes end, the wave never completes it."""
    source = ADD.source(target="gfx1100")
    store, _ = _store_of(source)
    skipped = "if (kt::isa::lane() < 8) (void)kt::isa::lane_read(0u, 0);"
    planted = source.replace(store, f"{store} {skipped}")
    a, b, o = _add_tensors()
    with pytest.raises(EmulationError) as info:
        emulate(ADD, a, b, o, target="gfx1100", source=planted)
    assert info.value.check == "wave-divergence"
    assert "8 lanes of wave 0 wait at ds_bpermute_b32, but lane 8 has left the kernel" \
        in info.value.message


def test_a_crash_is_an_emulation_error_naming_the_program():
    source = ADD.source(target="gfx1100")
    store, _ = _store_of(source)
    planted = source.replace(store, f"{store} __builtin_trap();")
    a, b, o = _add_tensors()
    with pytest.raises(EmulationError) as info:
        emulate(ADD, a, b, o, target="gfx1100", source=planted)
    assert "the emulated kernel failed (killed by signal" in str(info.value)
    assert info.value.check is None


def test_only_amd_targets_and_host_tensors_are_emulated():
    a, b, o = _add_tensors()
    with pytest.raises(KernelError, match="wave emulation runs AMD targets; sm_90a is not one"):
        emulate(ADD, a, b, o, target="sm_90a")

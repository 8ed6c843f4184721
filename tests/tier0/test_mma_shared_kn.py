"""`acc += a @ s`: the MMA whose shared B is held K×N (N contiguous; sm_90a's transposed-B
wgmma). What it traces to, what the interpreter computes at sm_90a (each warp its rows times
the block's B, at K×N shapes of every swizzle width), its translation, every refusal (other
targets and types, a shared a, layouts no N-major descriptor reads) at the author's line, and
the generated header against its generator.
"""
import importlib.util
import inspect
import sys
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from ktile.errors import KernelError

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from kn_kernels import SHAPES, rows_times_kn  # noqa: E402
GRID = dict(grid=lambda p: (1, 1, 1))


def marked_line(fn, marker="# <- here") -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def refused(fn, *words, warps=4, target="sm_90a"):
    with pytest.raises(KernelError) as info:
        hk.kernel(warps=warps, **GRID)(fn).trace(target)
    text = str(info.value)
    for word in words:
        assert word in text, f"{word!r} not in:\n{text}"
    assert info.value.loc is not None and info.value.loc.line == marked_line(fn), text
    return text


def rand(shape, seed, dtype=torch.bfloat16):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def test_it_traces_to_one_mma_shared_of_variant_ab():
    ir = rows_times_kn("bf16", 32, 64).trace("sm_90a").dump()
    line = next(l for l in ir.splitlines() if '"kt.mma_shared"' in l)
    assert 'variant = "AB"' in line, line
    assert "!kt.rt<16x32xbf16, row, a>, !kt.st<32x64xbf16>, !kt.rt<16x64xf32, row, acc>" in line


@pytest.mark.parametrize("dtype,k,n", SHAPES)
def test_each_warp_gets_its_rows_times_b(dtype, k, n):
    tdt = getattr(torch, {"bf16": "bfloat16", "fp16": "float16"}[dtype])
    a, b = rand((1, 1, 64, k), 1, tdt), rand((1, 1, k, n), 2, tdt)
    c = torch.full((1, 1, 64, n), float("nan"))
    rows_times_kn(dtype, k, n).interpret(a, b, c, target="sm_90a")
    want = 1.0 + a.double().numpy()[0, 0] @ b.double().numpy()[0, 0]
    np.testing.assert_allclose(c.numpy()[0, 0], want, atol=1e-3, rtol=1e-3)


def test_the_translation_is_the_transposed_b_form():
    source = rows_times_kn("bf16", 32, 128).source(target="sm_90a")
    assert "kt::mma_AB_shared<4>(" in source and "mma_ABt_shared" not in source


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "gfx1100"])
def test_other_targets_are_refused(target):
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 64))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += ra @ sb  # <- here
    refused(k, "`a @ s` reads B from a 16x64 shared tile as K×N", f"{target} has no such MMA",
            "write `a @ s.T`", target=target)


def test_8_bit_operands_are_refused():
    def k(a: hk.Tensor[hk.i8], b: hk.Tensor[hk.i8], c: hk.Tensor[hk.i32]):
        sb = hk.shared(hk.ST(hk.i8, 32, 64))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.i8, 16, 32))
        acc = hk.zeros(hk.RT(hk.i32, 16, 64))
        acc += ra @ sb  # <- here
    refused(k, "sm_90a has it for bf16, fp16 only, not i8")


def test_rows_no_n_major_descriptor_reads():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 48))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 48))
        acc += ra @ sb  # <- here
    refused(k, "16x48 shared tile (96-byte rows)", "rows of 32, 64 or a multiple of 128 bytes")


def test_blocks_of_no_whole_warpgroups():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 64))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += ra @ sb  # <- here
    refused(k, "the 2-warp block", "whole warpgroups", warps=2)


def test_a_shared_a_is_refused():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sa = hk.shared(hk.ST(hk.bf16, 64, 16))
        sb = hk.shared(hk.ST(hk.bf16, 16, 64))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += sa @ sb  # <- here
    refused(k, "`sa @ sb` (B as K×N) takes a from registers only", "sa.load(")


def test_k_that_differs():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 32, 64))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += ra @ sb  # <- here
    refused(k, "`a @ s`: a is 16x16 but the shared tile is 32x64", "as many rows as a has columns")


def test_the_kn_wgmma_header_is_its_generators_output():
    script = ROOT / "scripts" / "generate_wgmma_kn_header.py"
    spec = importlib.util.spec_from_file_location("generate_wgmma_kn_header", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = gen.HEADER.read_text()
    assert text == gen.render(), "run python scripts/generate_wgmma_kn_header.py after editing it"
    assert text.count("p, 1, 1, 1;") == len(gen.WIDTHS)   # imm-trans-b 1 in every form


@hk.kernel(warps=4, grid=lambda p: (1, 1, 1))
def two_in_flight(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    """S = a·b₀ᵀ issued first, O += a·b₁ (K×N) second: reading S waits for it alone."""
    sk = hk.shared(hk.ST(hk.bf16, 64, 64))
    sv = hk.shared(hk.ST(hk.bf16, 64, 64))
    hk.group.load(sk, b[hk.tile_coord(0, 0, 0, 0)])
    hk.group.load(sv, b[hk.tile_coord(0, 0, 1, 0)])
    hk.wait_for(sk, sv)
    hk.barrier()
    w = hk.arch.warp_id
    ra = a[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.bf16, 16, 64))
    s = hk.zeros(hk.RT(hk.fp32, 16, 64))
    s += ra @ sk.T
    o = hk.zeros(hk.RT(hk.fp32, 16, 64))
    o += ra @ sv
    s = s * 2.0                                    # reads S: wgmma.wait_group 1
    o = o + s                                      # reads O: wgmma.wait_group 0
    c[hk.tile_coord(0, 0, w, 0)] = o


def test_reading_the_older_of_two_mmas_leaves_the_newer_in_flight():
    """The waits pass counts MMAs issued after the one read (wgmma groups complete oldest
    first): 1 before S's read, 0 before O's; the interpreter computes 2·a·b₀ᵀ + a·b₁."""
    source = two_in_flight.source(target="sm_90a")
    waits = [source.index(w) for w in ("kt::mma_ABt_shared<4>(", "kt::mma_AB_shared<4>(",
                                       "kt::wgmma_wait<1>()", "kt::wgmma_wait<0>()")]
    assert waits == sorted(waits), waits
    a, b = rand((1, 1, 64, 64), 3), rand((1, 1, 128, 64), 4)
    c = torch.full((1, 1, 64, 64), float("nan"))
    two_in_flight.interpret(a, b, c, target="sm_90a")
    a64, b64 = a.double().numpy()[0, 0], b.double().numpy()[0, 0]
    want = 2 * a64 @ b64[:64].T + a64 @ b64[64:]
    np.testing.assert_allclose(c.numpy()[0, 0], want, atol=1e-2, rtol=1e-3)

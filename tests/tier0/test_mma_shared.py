"""The MMA that reads B from a shared tile (`acc += ra @ sb.T`, kt.mma_shared): what it traces
to, what the interpreter computes (each warp its own rows), the translation, the per-target
shared alignment, the wgmma GEMM example on the interpreter at sm_90a's constants, every
refusal with its text and line, and the generated wgmma header against its generator.
"""
import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from examples_index import load
from ktile.errors import KernelError
from ktile.ops.gemm.reference import gemm_abt, tolerance

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
GRID = dict(grid=lambda p: (1, 1, 1))


def marked_line(fn, marker="# <- here") -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def refused(fn, *words, warps=4, target="sm_90a"):
    """Trace fn as a kernel; expect a KernelError holding every word, at the marked line."""
    with pytest.raises(KernelError) as info:
        hk.kernel(warps=warps, **GRID)(fn).trace(target)
    text = str(info.value)
    for word in words:
        assert word in text, f"{word!r} not in:\n{text}"
    assert info.value.loc is not None and info.value.loc.line == marked_line(fn), text
    return text


def rand(shape, seed):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(torch.bfloat16)


# ---- a small kernel: each warp multiplies its 16 rows of A by the shared B --------------------

@hk.kernel(warps=4, **GRID)
def rows_times_shared(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    sb = hk.shared(hk.ST(hk.bf16, 48, 32))
    hk.group.load(sb, b[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(sb)
    hk.barrier()
    w = hk.arch.warp_id
    ra = a[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.bf16, 16, 32))
    acc = hk.full(hk.RT(hk.fp32, 16, 48), 1.0)
    acc += ra @ sb.T
    c[hk.tile_coord(0, 0, w, 0)] = acc


def test_it_traces_to_one_mma_shared_with_its_fragments():
    ir = rows_times_shared.trace("sm_90a").dump()
    line = next(l for l in ir.splitlines() if '"kt.mma_shared"' in l)
    assert "!kt.rt<16x32xbf16, row, a>, !kt.st<48x32xbf16>, !kt.rt<16x48xf32, row, acc>" in line


@pytest.mark.parametrize("target", ["sm_90a", "gfx1100", "gfx950"])
def test_each_warp_gets_its_rows_times_b(target):
    a, b = rand((1, 1, 64, 32), 1), rand((1, 1, 48, 32), 2)
    c = torch.full((1, 1, 64, 48), float("nan"))
    rows_times_shared.interpret(a, b, c, target=target)
    want = 1.0 + gemm_abt(a.float().numpy(), b.float().numpy())
    np.testing.assert_allclose(c.numpy(), want, atol=1e-4)


def test_the_translation_names_the_warp_count():
    assert "kt::mma_ABt_shared<4>(" in rows_times_shared.source(target="sm_90a")
    assert "kt::mma_ABt_shared<4>(" in rows_times_shared.source(target="gfx942")


def test_hk_mma_with_a_shared_b_is_the_same_op():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 16))
        acc = hk.mma_ABt(a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16)), sb,
                         hk.zeros(hk.RT(hk.fp32, 16, 16)))
        c[0, 0, 0, 0] = acc
    assert '"kt.mma_shared"' in hk.kernel(**GRID)(k).trace("sm_90a").dump()


@pytest.mark.parametrize("target,offset", [("sm_90a", 1024), ("gfx1100", 64)])
def test_a_tile_an_mma_reads_is_aligned_for_its_target(target, offset):
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        v = hk.shared(hk.SV(hk.fp32, 16))
        sb = hk.shared(hk.ST(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16)) @ sb.T
        c[0, 0, 0, 0] = acc
    ir = hk.kernel(**GRID)(k).trace(target).dump()
    allocs = [l for l in ir.splitlines() if '"kt.alloc"' in l]
    assert f"offset = {offset} : i64" in allocs[1]


# ---- the example at sm_90a's constants (BK 64) and odd tile counts ----------------------------

@pytest.mark.parametrize("shape", [(1, 128, 128, 64), (1, 40, 136, 200), (2, 130, 20, 330)])
@pytest.mark.parametrize("constants", [{}, {"STAGES": 4}, {"BN": 64, "BK": 32, "STAGES": 4}])
def test_the_wgmma_gemm_example_on_the_interpreter(shape, constants):
    batch, m, n, k = shape
    a, b = rand((batch, 1, m, k), 3), rand((batch, 1, n, k), 4)
    c = torch.full((batch, 1, m, n), float("nan"))
    load("04_gemm").gemm_wgmma.interpret(a, b, c, target="sm_90a", **constants)
    an, bn = a.float().numpy(), b.float().numpy()
    assert float(np.abs(c.numpy() - gemm_abt(an, bn)).max()) <= tolerance(an, bn)


# ---- refusals -------------------------------------------------------------------------------

def test_under_a_warp_dependent_branch():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 64, 32))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        if hk.arch.warp_id == 0:
            acc += ra @ sb.T  # <- here
        c[0, 0, 0, 0] = acc
    refused(k, "mma from shared inside a branch", "depends on the warp id", "wgmma",
            "move it out of the branch")


def test_a_b_wider_than_256_rows():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 320, 32))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 320))
        acc += a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 32)) @ sb.T  # <- here
        c[0, 0, 0, 0] = acc
    refused(k, "320x32", "multiple of 8 up to 256", "split B into shared tiles", target="gfx1100")


MMA_SHARED_SHAPES = [(8, 32, ("multiple of 16", "16 rows of a")),
                     (16, 40, ("K (their columns) must be a multiple",))]


@pytest.mark.parametrize("rows,cols,words", MMA_SHARED_SHAPES, ids=["rows-8", "K-40"])
def test_shapes_a_warpgroup_mma_cannot_take_are_no_register_tiles(rows, cols, words):
    """The front end cannot make them: a register tile is whole 16x16 blocks."""
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 64, cols))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
        acc += a[0, 0, 0, 0].load(hk.RT(hk.bf16, rows, cols)) @ sb.T  # <- here
        c[0, 0, 0, 0] = acc
    refused(k, "register tile", "multiple of 16")


def _mma_shared_module(m: int, k: int) -> str:
    a, s, acc = f"!kt.rt<{m}x{k}xbf16, row>", f"!kt.st<64x{k}xbf16>", f"!kt.rt<{m}x64xf32, row>"
    return f"""builtin.module attributes {{kt.target = "sm_90a"}} {{
  func.func @k(%g: !kt.global<bf16>) attributes {{kt.kernel = "k", kt.warps = 4 : i64}} {{
    %a = "kt.fill"() <{{value = 0.0 : f64}}> : () -> {a}
    %s = "kt.alloc"() : () -> {s}
    %acc = "kt.fill"() <{{value = 0.0 : f64}}> : () -> {acc}
    %r = "kt.mma_shared"(%a, %s, %acc) : ({a}, {s}, {acc}) -> {acc}
    func.return
  }}
}}
"""


@pytest.mark.parametrize("rows,cols,words", MMA_SHARED_SHAPES, ids=["rows-8", "K-40"])
def test_shapes_a_warpgroup_mma_cannot_take_in_ir(rows, cols, words):
    """IR written by hand can hold them: the verify pass refuses the MMA."""
    from ktile import targets
    from ktile.ir.printing import parse_module
    from ktile.passes import run_pipeline
    module = parse_module(_mma_shared_module(rows, cols), verify=True)
    with pytest.raises(KernelError) as info:
        run_pipeline(module, targets.get("sm_90a"))
    for word in ("mma from shared", f"a is {rows}x{cols}", *words):
        assert word in str(info.value), str(info.value)


def test_other_variants_than_a_times_s_transposed():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 16))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += ra.T @ sb  # <- here
    refused(k, "as `a @ s.T`", "not as variant AtB", "N×K")   # `a @ s`: test_mma_shared_kn.py


def test_k_that_differs():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 32))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += ra @ sb.T  # <- here
    refused(k, "a is 16x16 but the shared tile is 16x32", "columns (K) differ")


def test_a_in_the_col_layout():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 16))
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16, layout="col"))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += ra @ sb.T  # <- here
    refused(k, "reads a in row layout", 'layout="row"')


def test_reading_b_while_its_group_load_is_in_flight():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 16))
        hk.group.load(sb, b[0, 0, 0, 0])
        ra = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
        acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
        acc += ra @ sb.T  # <- here
        hk.wait_for(sb)
    refused(k, "mma from shared reads the shared tile", "still filling", "hk.wait_for(tile)")


def test_shared_transpose_used_for_something_else():
    def k(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
        sb = hk.shared(hk.ST(hk.bf16, 16, 16))
        sb.T.load(hk.RT(hk.bf16, 16, 16))  # <- here
    refused(k, "can only be used as an operand of `@`")


# ---- the generated wgmma header --------------------------------------------------------------

def test_the_wgmma_header_is_its_generators_output():
    script = ROOT / "scripts" / "generate_wgmma_header.py"
    spec = importlib.util.spec_from_file_location("generate_wgmma_header", script)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.HEADER.read_text() == gen.render(), \
        "run python scripts/generate_wgmma_header.py after editing it"

"""docs/patterns.md and its kernels (examples/patterns/, issue #10): each kernel matches its
reference on the interpreter at every case (one row and ragged shapes among them) and traces
for every target without a warning; the runtime eps is one trace for two values; the int8
rounding is half to even; the aliasing rule refuses the in-place calls the page says it refuses
and accepts the one it shows; the page's code blocks are the files' own lines."""
import functools
import importlib.util
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ktile as hk
from ktile import InputError, targets

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "examples" / "patterns"
NAMES = sorted(p.stem for p in FOLDER.glob("*.py"))
PAGE = (ROOT / "docs" / "patterns.md").read_text()


@functools.lru_cache(maxsize=None)
def load(name: str):
    spec = importlib.util.spec_from_file_location(f"pattern_{name}", FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_five_patterns_are_there():
    assert NAMES == ["fused_add_rmsnorm", "gemv", "quant_int8", "rope", "silu_mul"]


@pytest.mark.parametrize("name", NAMES)
def test_matches_the_reference_at_every_case(name):
    module = load(name)
    for case in module.CASES:
        err, tol = module.run_case(case, backend="interpret")
        assert err <= tol, f"{name} {case}: max error {err} > tolerance {tol}"


@pytest.mark.parametrize("name", NAMES)
def test_cases_hold_one_row_and_a_ragged_shape(name):
    cases = load(name).CASES
    assert any(case[0] == 1 for case in cases), f"{name}: no one-row case"
    assert any(n % 16 for case in cases for n in case if isinstance(n, int) and n > 1), \
        f"{name}: no shape off the 16-element tiles"


@pytest.mark.parametrize("target", targets.NAMES)
@pytest.mark.parametrize("name", NAMES)
def test_traces_and_translates_without_a_warning(name, target):
    """A warning (registers close to spilling) would reach every user of the page."""
    for kernel, constants in load(name).KERNELS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cpp = kernel.trace(target, **constants).source()
        assert f"void {kernel.name}(" in cpp


# ---- what the page says of each kernel -------------------------------------------------------

def _rmsnorm_inputs(tokens=21, hidden=300):
    module = load("fused_add_rmsnorm")
    x = module.torch_rand((tokens, hidden), torch.bfloat16, 1)
    residual = module.torch_rand((tokens, hidden), torch.bfloat16, 2)
    w = module.torch_rand((hidden,), torch.bfloat16, 3)
    return module, x, residual, w


def test_eps_is_a_runtime_scalar_two_values_one_trace():
    module, x, residual, w = _rmsnorm_inputs()
    kernel = module.fused_add_rmsnorm
    kernel._traces.clear()
    outs = []
    for eps in (1e-6, 0.5):
        o, residual_out = torch.empty_like(x), torch.empty_like(x)
        kernel(x, residual, w, o, residual_out, eps)
        want, _ = module.reference(x.float().numpy(), residual.float().numpy(),
                                   w.float().numpy(), eps)
        assert module.max_abs_error(o.float().numpy(), want) <= module.tolerance(want)
        outs.append(o)
    assert not torch.equal(*outs)
    assert len(kernel._traces) == 1


def test_residual_in_place_is_refused_naming_both_and_the_fix():
    module, x, residual, w = _rmsnorm_inputs()
    before = residual.clone()
    with pytest.raises(InputError) as refused:
        module.fused_add_rmsnorm(x, residual, w, torch.empty_like(x), residual, 1e-6)
    text = str(refused.value)
    assert "'residual_out'" in text and "'residual'" in text and "4 warps" in text
    assert "separate output" in text
    assert torch.equal(residual, before)


def test_rope_in_place_is_refused_and_out_of_place_is_what_in_place_would_give():
    module = load("rope")
    tokens, head_dim = 21, 64
    cache = torch.from_numpy(module.cos_sin_cache(64, head_dim))
    positions = torch.arange(tokens, dtype=torch.int32) * 3 % 64
    q = module.torch_rand((tokens, 2 * head_dim), torch.bfloat16, 4)
    k = module.torch_rand((tokens, head_dim), torch.bfloat16, 5)
    with pytest.raises(InputError, match="'q_out' is the same tensor as input 'q'"):
        module.rope_neox(positions, q, k, cache, q, torch.empty_like(k), HEAD_DIM=head_dim)
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    module.rope_neox(positions, q, k, cache, q_out, k_out, HEAD_DIM=head_dim)
    for x, out in ((q, q_out), (k, k_out)):
        want = module.reference(positions.numpy(), x.float().numpy(), cache.numpy(), head_dim)
        assert module.max_abs_error(out.float().numpy(), want) == 0.0


def test_position_zero_leaves_a_head_unrotated():
    module = load("rope")
    head_dim = 64
    cache = torch.from_numpy(module.cos_sin_cache(8, head_dim))
    q = module.torch_rand((3, 2 * head_dim), torch.bfloat16, 6)
    k = module.torch_rand((3, head_dim), torch.bfloat16, 7)
    q_out, k_out = torch.empty_like(q), torch.empty_like(k)
    module.rope_neox(torch.zeros(3, dtype=torch.int32), q, k, cache, q_out, k_out,
                     HEAD_DIM=head_dim)
    assert torch.equal(q_out, q) and torch.equal(k_out, k)


def test_the_add_the_page_shows_in_place_runs_in_place():
    g = torch.Generator().manual_seed(8)
    a, b = (torch.randn(20, 70, generator=g).bfloat16() for _ in range(2))
    want = (a.float() + b.float()).bfloat16()
    add(a, b, a)
    assert torch.equal(a, want)


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    """The README's first kernel: one warp, one load of a, one store of o at one coordinate."""
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


def test_silu_mul_offset_and_views_give_the_same_bits():
    module = load("silu_mul")
    rows, d = 21, 200
    x = module.torch_rand((rows, 2 * d), torch.bfloat16, 10)
    by_offset, by_views = torch.empty(rows, d, dtype=torch.bfloat16), torch.empty(
        rows, d, dtype=torch.bfloat16)
    module.silu_mul(x, by_offset)
    module.silu_mul_views(x[..., :d], x[..., d:], by_views)
    assert torch.equal(by_offset, by_views)


def test_int8_rounds_half_to_even_and_saturates_nothing_it_should_not():
    """With max|x| = 127 the scale is 1, so x / scale is x: the halves show the rounding
    (truncation gives 0 1 2 -2, half away from zero 1 2 3 -3)."""
    module = load("quant_int8")
    x = torch.zeros(2, 64, dtype=torch.bfloat16)
    x[1, :6] = torch.tensor([0.5, 1.5, 2.5, -2.5, 127.0, -127.0])
    q = torch.full((2, 64), 99, dtype=torch.int8)
    scales = torch.full((2,), float("nan"))
    module.quant_int8(x, q, scales)
    assert q[1, :6].tolist() == [0, 2, 2, -2, 127, -127]
    assert scales.tolist() == [0.0, 1.0] and not q[0].any()


def test_gemv_splits_k_with_a_tile_reduction_and_no_atomics():
    module = load("gemv")
    ir = module.gemv_split_k.trace("gfx1100").dump()
    assert "kt.block_reduce" in ir and "atomic" not in ir


def test_gemv_is_the_same_bits_every_run_and_near_at_every_split():
    module = load("gemv")
    x = module.torch_rand((3, 1000), torch.bfloat16, 11)
    w = module.torch_rand((70, 1000), torch.bfloat16, 12)
    runs = []
    for warps in (4, 4, 8):
        out = torch.empty(3, 70, dtype=torch.bfloat16)
        module.gemv_split_k(x, w, out, WARPS=warps)
        runs.append(out)
    assert torch.equal(runs[0], runs[1])
    want = module.reference(x.float().numpy(), w.float().numpy())
    assert module.max_abs_error(runs[2].float().numpy(), want) <= module.tolerance(want, 1000)


# ---- the page ---------------------------------------------------------------------------------

def _page_blocks() -> list[tuple[str, str]]:
    """(file name, code) of every python block of the page that names its file first."""
    blocks = re.findall(r"```python\n# examples/patterns/(\w+\.py)\n(.*?)\n```", PAGE, re.S)
    assert blocks, "docs/patterns.md has no labelled code block"
    return blocks


@pytest.mark.parametrize("name,code", _page_blocks(),
                         ids=[f"block{k}-{name}" for k, (name, _) in enumerate(_page_blocks())])
def test_each_code_block_is_the_files_own_lines(name, code):
    lines = (FOLDER / name).read_text().splitlines()
    block = code.splitlines()
    starts = [i for i, line in enumerate(lines) if line == block[0]]
    assert any(lines[i:i + len(block)] == block for i in starts), \
        f"docs/patterns.md's block of {name} differs from the file: copy the file's lines"


@pytest.mark.parametrize("name", NAMES)
def test_the_page_shows_every_kernel_whole(name):
    shown = "\n".join(code for file, code in _page_blocks() if file == f"{name}.py")
    for kernel, _ in load(name).KERNELS:
        assert f"def {kernel.name}(" in shown, f"{kernel.name} is not on docs/patterns.md"
        last = _last_line_of(FOLDER / f"{name}.py", kernel.name)
        assert last in shown.splitlines(), f"{kernel.name} is cut short on the page"


def _last_line_of(path: Path, function: str) -> str:
    import ast
    source = path.read_text()
    node = next(n for n in ast.parse(source).body
                if isinstance(n, ast.FunctionDef) and n.name == function)
    return source.splitlines()[node.end_lineno - 1]


def test_the_page_is_linked_from_the_readme_and_the_language_page():
    assert "(docs/patterns.md)" in (ROOT / "README.md").read_text()
    assert "(patterns.md)" in (ROOT / "docs" / "language.md").read_text()


def test_a_pattern_runs_as_a_script():
    run = subprocess.run([sys.executable, str(FOLDER / "silu_mul.py"), "--interpret"],
                         capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 of 3 cases match the reference (interpreter" in run.stdout

"""docs/patterns.md's kernels (examples/patterns/) under wave emulation of gfx1100 (RDNA3,
wave32) and gfx950 (CDNA4, wave64): the generated AMD C++ and the tile headers, run on the host
with the ISA's preconditions checked, match each kernel's reference at a small ragged shape
(int8 quantisation exactly), and the runtime eps reaches the emulated kernel by value."""
import functools
import importlib.util
from pathlib import Path

import pytest

from ktile.emulate import emulate

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tier2

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "patterns"
NAMES = sorted(p.stem for p in FOLDER.glob("*.py"))
TARGETS = ("gfx1100", "gfx950")


@functools.lru_cache(maxsize=None)
def load(name: str):
    spec = importlib.util.spec_from_file_location(f"pattern_{name}", FOLDER / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_ragged_case(module):
    """The smallest case with a side off the 16-element tiles."""
    ragged = [c for c in module.CASES if any(isinstance(n, int) and n > 1 and n % 16 for n in c)]
    return min(ragged, key=lambda c: [n for n in c if isinstance(n, int)])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", NAMES)
def test_matches_the_reference_under_emulation(name, target):
    module = load(name)
    case = small_ragged_case(module)
    err, tol = module.run_case(case, backend="emulate", target=target)
    assert err <= tol, f"{name} {case} on emulated {target}: max error {err} > tolerance {tol}"


@pytest.mark.parametrize("target", TARGETS)
def test_eps_reaches_the_emulated_kernel(target):
    """eps large enough to change every output: the emulated kernel reads the call's value."""
    module = load("fused_add_rmsnorm")
    x = module.torch_rand((5, 64), torch.bfloat16, 1)
    residual = module.torch_rand((5, 64), torch.bfloat16, 2)
    w = module.torch_rand((64,), torch.bfloat16, 3)
    for eps in (1e-6, 4.0):
        o, residual_out = torch.empty_like(x), torch.empty_like(x)
        emulate(module.fused_add_rmsnorm, x, residual, w, o, residual_out, eps, target=target)
        want, _ = module.reference(x.float().numpy(), residual.float().numpy(),
                                   w.float().numpy(), eps)
        assert module.max_abs_error(o.float().numpy(), want) <= module.tolerance(want), eps

"""The example modules, loaded once per test process (tests import them by file path)."""
import functools
import glob
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE_PATHS = sorted(glob.glob(os.path.join(ROOT, "examples", "[0-9][0-9]_*.py")))
EXAMPLE_NAMES = [os.path.splitext(os.path.basename(p))[0] for p in EXAMPLE_PATHS]


@functools.lru_cache(maxsize=None)
def load(name: str):
    path = os.path.join(ROOT, "examples", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def traces(name: str, target: str | None = None):
    module = load(name)
    return [kernel.trace(target, **constants) for kernel, constants in module.KERNELS]

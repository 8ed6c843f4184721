"""Layers import downward only (DESIGN.md: data flows one way). Every import in a package's
modules, at module level or inside a function, is read from the source: no `ktile.lang`
module imports `ktile.runtime` (a kernel reaches the runtime that ktile/__init__.py binds), and
the IR, which every layer reads, imports none of the layers above it."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "ktile"

# package -> the packages its modules must not import
FORBIDDEN = {
    "lang": ("runtime",),
    "ir": ("lang", "runtime", "interpret", "codegen", "passes", "emulate"),
    "passes": ("lang", "runtime"),
    "codegen": ("lang", "runtime"),
    "interpret": ("lang", "runtime"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Absolute names of every module `path` imports, anywhere in it."""
    here = _module_name(path)
    package = here if path.name == "__init__.py" else here.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found


def _violations(package: str) -> list[str]:
    bad = []
    for path in sorted((PACKAGE / package).rglob("*.py")):
        for name in sorted(imported_modules(path)):
            for above in FORBIDDEN[package]:
                if name == f"ktile.{above}" or name.startswith(f"ktile.{above}."):
                    bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    return bad


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_layer_imports_none_above_it(package):
    assert _violations(package) == []


def test_the_reader_sees_function_level_imports(tmp_path):
    """The check itself: an import inside a function counts."""
    module = PACKAGE / "lang" / "kernel.py"
    assert "ktile.lang.trace_kernel" in imported_modules(module)   # imported inside trace_copies


def test_a_kernel_runs_through_the_bound_runtime():
    import ktile  # noqa: F401 - binds the runtime
    from ktile.lang import kernel
    assert callable(kernel.runtime().launch) and callable(kernel.runtime().build_trace)

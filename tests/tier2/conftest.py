"""Tier 2 — wave emulation: every test here needs a host clang++ that knows __bf16 (LLVM 22's,
as `ktile.emulate` finds it), llvm-symbolizer (the kernel lines of reports) and torch; each skips,
saying what is missing, without them."""
import pytest


def _missing() -> list[str]:
    missing = []
    try:
        from ktile.emulate import find_host_compiler
        find_host_compiler()
    except Exception:   # a KernelError saying which compilers it looked for
        missing.append("clang++-22")
    from ktile.runtime.cocheck.llvm import find_tool
    if find_tool("llvm-symbolizer") is None:
        missing.append("llvm-symbolizer")
    try:
        import torch  # noqa: F401
    except ImportError:
        missing.append("torch")
    return missing


def pytest_collection_modifyitems(config, items):
    missing = _missing()
    if not missing:
        return
    skip = pytest.mark.skip(reason=f"tier 2: wave emulation needs {', '.join(missing)} "
                                   f"(apt-get install -y clang-22 llvm-22, or scripts/setup.sh)")
    for item in items:
        if "tier2" in item.keywords:
            item.add_marker(skip)

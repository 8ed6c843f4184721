"""Shared test setup: the repo root on sys.path, and the tier markers' skips."""
import os
import runpy
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))


def has_cuda_gpu() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


def pytest_collection_modifyitems(config, items):
    skip_gpu = pytest.mark.skip(reason="tier 3: needs an NVIDIA GPU (runs on the H200 through "
                                       "scripts/gpu_suite.py)")
    for item in items:
        if "tier3" in item.keywords and not has_cuda_gpu():
            item.add_marker(skip_gpu)


# Under CI every tool of scripts/check-tools must be here: a test skipped for want of one
# fails instead, so a missing install step cannot pass as a green run with fewer tests.
CHECK_TOOLS = runpy.run_path(os.path.join(ROOT, "scripts", "check-tools"))
TOOL_WORDS = sorted({word for tool, source, _ in CHECK_TOOLS["TOOLS"]
                     for word in (tool, source) if " " not in word} | {"LLVM 22"})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and CHECK_TOOLS["in_ci"]()) or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    reason = reason.removeprefix("Skipped: ")
    named = [word for word in TOOL_WORDS if word in reason]
    if named:
        report.outcome = "failed"
        report.longrepr = (f"skipped under CI for want of {', '.join(named)} ({reason}): CI must "
                           f"have every tool (scripts/setup.sh installs them; "
                           f"scripts/check-tools says which are missing)")


def find_tool(name: str) -> str | None:
    for path in (shutil.which(name), f"/usr/lib/llvm-22/bin/{name}"):
        if path and os.path.exists(path):
            return path
    return None

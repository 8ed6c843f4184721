"""Shared test setup: the repo root on sys.path, and the tier markers' skips."""
import os
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


def find_tool(name: str) -> str | None:
    for path in (shutil.which(name), f"/usr/lib/llvm-22/bin/{name}"):
        if path and os.path.exists(path):
            return path
    return None

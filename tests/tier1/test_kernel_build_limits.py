"""`Kernel.build(limits=...)`: the optional VGPR and occupancy limits of an AMD build."""
import os
import sys

import pytest

from ktile.errors import KernelError
from ktile.runtime.build import BuildLimits

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
pytestmark = [pytest.mark.tier1,
              pytest.mark.skipif(not os.path.exists("/usr/lib/llvm-22/bin/clang++"),
                                 reason="tier 1: needs Debian's clang-22")]


def test_limits_refuse_and_pass(tmp_path, monkeypatch):
    from examples_index import load
    monkeypatch.setenv("KTILE_CACHE_DIR", str(tmp_path))
    add = load("01_vector_add").add
    build = add.build("gfx1100")
    used = build.resources.registers
    assert add.build("gfx1100", limits=BuildLimits(max_vgprs=used)).resources.registers == used
    with pytest.raises(KernelError, match="max-vgprs"):
        add.build("gfx1100", limits=BuildLimits(max_vgprs=used - 1))

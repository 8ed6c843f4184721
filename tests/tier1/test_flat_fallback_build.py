"""sm_90a flat tiles keep their element-by-element path out of line (flat_tile.hpp,
`read_piece_checked` / `write_piece_checked`): the kernel's own code holds only the full-tile
unit path and calls, so a full tile's warp does not jump over the guarded accesses (issue #13,
one launch's latency), and the calls pass registers only (no stack frame, no spill)."""
import re
import subprocess

import pytest

import build_gates
from flat_kernels import flat_rms

pytestmark = pytest.mark.tier1

CONSTANTS = {"C": 64, "HELD": 2, "WARPS": 4}


def functions(ptx: str) -> dict[str, str]:
    """PTX function name -> its text (entries and .func bodies; a declaration is replaced by
    its definition, which comes later)."""
    heads = list(re.finditer(r"^\.(?:(?:visible|weak)\s+\.)?(?:entry|func)\s.*?([A-Za-z_$][\w$]*)\s*\(",
                             ptx, re.M))
    out = {}
    for head, after in zip(heads, heads[1:] + [None]):
        out[head.group(1)] = ptx[head.start():after.start() if after else len(ptx)]
    return out


def test_the_element_path_is_called_not_inlined(tmp_path):
    source = flat_rms.trace("sm_90a", **CONSTANTS).source()
    hopper = build_gates.hopper()
    build = hopper.nvcc_build(source, tmp_path, "flat_rms")
    build_gates.assert_sm90a_clean(build, "flat_rms")
    cu = tmp_path / "flat_rms_ptx.cu"
    cu.write_text(source)
    flags = [f for f in hopper.FLAGS if f not in ("-cubin",)]
    subprocess.run([hopper.NVCC, *flags, "-ptx", str(cu), "-o", str(tmp_path / "k.ptx")],
                   check=True, capture_output=True, timeout=300)
    found = functions((tmp_path / "k.ptx").read_text())
    entry = found["flat_rms"]
    pieces = [name for name in found if "piece_checked" in name]
    assert any("read_piece_checked" in n for n in pieces), list(found)
    assert any("write_piece_checked" in n for n in pieces), list(found)
    # the kernel's own loads and stores are the 16-byte units; element accesses live in the calls
    assert re.search(r"ld\.global\.ca\.v4", entry) and re.search(r"st\.global\.wb\.v4", entry)
    assert not re.search(r"ld\.global\.ca\.(?:u16|b16)\b", entry), "element loads inlined"
    assert not re.search(r"st\.global\.wb\.(?:u16|b16)\b", entry), "element stores inlined"
    assert "call" in entry

"""Golden C++: the seed's `add` and an LDS GEMM, regenerated and diffed against tests/golden/.

A change to the translation, the passes or a kernel below shows up here as a diff to review.
KTILE_UPDATE_GOLDEN=1 rewrites the files instead of comparing (then read the diff in git).
The kernels' file path in the `#line` directives is written relative to the repository, so the
files do not depend on where the repository is checked out; the kernels' line numbers are
part of the golden text, so they stay at the top of this file.
"""
import difflib
import os
from pathlib import Path

import pytest

from ktile import config

import ktile as hk


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, 32), hk.cdiv(p.c.rows, 32)))
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    row, col = hk.arch.block_idx.y, hk.arch.block_idx.x
    sa = hk.shared(hk.ST(hk.bf16, 32, 64))
    sb = hk.shared(hk.ST(hk.bf16, 32, 64))
    acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
    for k in range(a.cols // 64):
        hk.load_async(sa, a[hk.tile_coord(0, 0, row, k)])
        hk.load_async(sb, b[hk.tile_coord(0, 0, col, k)])
        hk.wait_for(sa, sb)
        hk.barrier()
        ta = sa.load(hk.RT(hk.bf16, 32, 64))
        tb = sb.load(hk.RT(hk.bf16, 32, 64))
        hk.wait_for(ta, tb)
        acc += ta @ tb.T
        hk.barrier()
    c[hk.tile_coord(0, 0, row, col)] = acc


ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
# declared here until ktile/config.py takes it over
UPDATE_GOLDEN = config.UPDATE_GOLDEN.get() == "1"
CASES = [(kernel, target) for kernel in (add, gemm) for target in ("gfx1100", "sm_90a")]


def _portable(source: str) -> str:
    """The kernels' absolute path in `#line`, made relative to the repository root."""
    here = str(Path(__file__).resolve())
    return source.replace(f'"{here}"', f'"{Path(here).relative_to(ROOT).as_posix()}"')


@pytest.mark.parametrize("kernel, target", CASES, ids=lambda v: getattr(v, "name", v))
def test_translation_matches_the_golden_file(kernel, target):
    path = GOLDEN / f"{kernel.name}.{target}.cpp"
    source = _portable(kernel.source(target=target))
    if UPDATE_GOLDEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        return
    assert path.exists(), f"{path} is missing: run with KTILE_UPDATE_GOLDEN=1 to write it"
    expected = path.read_text()
    diff = "".join(difflib.unified_diff(expected.splitlines(True), source.splitlines(True),
                                        str(path), "regenerated"))
    assert source == expected, f"the C++ changed (KTILE_UPDATE_GOLDEN=1 accepts it):\n{diff}"


def test_golden_files_name_the_kernels_by_repository_path():
    for kernel, target in CASES:
        text = (GOLDEN / f"{kernel.name}.{target}.cpp").read_text()
        assert '"tests/tier0/test_codegen_golden.py"' in text
        assert str(ROOT) not in text

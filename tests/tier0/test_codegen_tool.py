"""ktile-translate: MLIR text in (a file or stdin), C++ out; --target overrides kt.target."""
import os
import subprocess
import sys
from pathlib import Path

import ktile as hk
from ktile.tools.translate import main

ROOT = Path(__file__).resolve().parents[2]


@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64),))
def scale(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    idx = hk.tile_coord(0, 0, 0, hk.arch.block_idx.x)
    o[idx] = x[idx].load(hk.RT(hk.fp32, 16, 64)) * 3.0


def _mlir(tmp_path, target="gfx942", locations=False):
    path = tmp_path / "scale.mlir"
    path.write_text(scale.trace(target).dump(locations=locations))
    return path


def test_a_file_translates_for_its_own_target(tmp_path, capsys):
    assert main([str(_mlir(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert '#include "ktile/amd/cdna3/kernel.hpp"' in out
    assert "kt::mul(v" in out
    assert "#line" not in out   # the file carries no locations


def test_the_printed_module_translates_as_the_traced_one(tmp_path, capsys):
    """Names come from printing, so a module read back gives the same C++ (with locations)."""
    assert main([str(_mlir(tmp_path, locations=True))]) == 0
    assert capsys.readouterr().out == scale.source(target="gfx942")


def test_target_overrides_the_module_attribute(tmp_path, capsys):
    out_file = tmp_path / "scale.cpp"
    assert main([str(_mlir(tmp_path)), "--target", "sm_90a", "-o", str(out_file)]) == 0
    assert capsys.readouterr().out == ""
    assert '#include "ktile/nvidia/hopper/kernel.hpp"' in out_file.read_text()


def test_stdin_and_python_dash_m(tmp_path):
    result = subprocess.run([sys.executable, "-m", "ktile.tools.translate", "--target", "gfx1201"],
                            input=_mlir(tmp_path).read_text(), capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert '#include "ktile/amd/rdna4/kernel.hpp"' in result.stdout


def test_bad_input_is_a_message_and_exit_status_1(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text('"not.an_op"() : () -> ()\n')
    assert main([str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ktile-translate: ") and "not.an_op" in err
    assert main([str(tmp_path / "missing.mlir")]) == 1
    assert "missing.mlir" in capsys.readouterr().err

"""`import ktile` stays light: no IR library, no numpy (its time is a figure of
benchmarks/trace_times.py, not a test)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = "import sys; import ktile; print('xdsl' in sys.modules, 'numpy' in sys.modules)"


def test_import_loads_neither_xdsl_nor_numpy():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": ROOT}).stdout.split()
    assert out == ["False", "False"]


def test_lazy_names_resolve():
    import ktile as hk
    assert callable(hk.tile_coord) and callable(hk.mma) and hk.arch is not None
    assert "tile_coord" in dir(hk)

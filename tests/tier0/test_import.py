"""`import ktile` stays light: no IR library, no numpy, under the 150 ms goal."""
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = ("import sys, time; t = time.perf_counter(); import ktile; "
         "print(time.perf_counter() - t, 'xdsl' in sys.modules, 'numpy' in sys.modules)")


def _probe():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": ROOT}).stdout.split()
    return float(out[0]), out[1] == "True", out[2] == "True"


def test_import_loads_neither_xdsl_nor_numpy():
    _, has_xdsl, has_numpy = _probe()
    assert not has_xdsl and not has_numpy


def test_import_time_under_goal():
    seconds = statistics.median(_probe()[0] for _ in range(5))
    assert seconds < 0.150, f"import ktile took {seconds * 1e3:.0f} ms (goal 150 ms)"


def test_lazy_names_resolve():
    import ktile as hk
    assert callable(hk.tile_coord) and callable(hk.mma) and hk.arch is not None
    assert "tile_coord" in dir(hk)

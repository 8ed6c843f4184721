"""hk.rand4's C++ (tier 1): ktile/common/philox.hpp's rand4_quad, compiled for the host with
g++, against ktile/ops/rand/reference.py's rand4 for runs of four offsets (one Philox call) and
for every other arrangement (the rolled fallback) - the code sm_90a's flat tiles run; and the
rand4 kernels of tests/rand4_kernels.py build for sm_90a with no spill."""
import shutil
import subprocess

import numpy as np
import pytest

import build_gates
from ktile.ops.rand.reference import rand4
from rand4_kernels import draw4_flat, draw4_row
from toolchain_checks import has_nvcc

pytestmark = pytest.mark.tier1

INCLUDE = __import__("pathlib").Path(__file__).resolve().parents[2] / "ktile" / "include"
PROGRAM = r"""
#include <cstdint>
#include <cstdio>
#define __host__
#define __device__
#define __forceinline__ inline
namespace kt::detail {
inline uint32_t mul_hi(uint32_t a, uint32_t b) { return static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32); }
}
#include "ktile/common/philox.hpp"
int main() {
  const int64_t seeds[] = {SEEDS};
  const int32_t quads[][4] = {QUADS};
  for (int64_t seed : seeds) {
    const uint64_t key = static_cast<uint64_t>(seed);
    for (const auto& q : quads) {
      float r[4];
      kt::detail::rand4_quad(r, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), q);
      for (float v : r) std::printf("%a\n", static_cast<double>(v));
    }
  }
}
"""


def quads() -> np.ndarray:
    """Runs 4g.. (one call), runs off by one, repeated, reversed and random offsets, the int32
    extremes: each row is one rand4_quad call."""
    rng = np.random.default_rng(5)
    rows = [[0, 1, 2, 3], [4, 5, 6, 7], [-8, -7, -6, -5], [2 ** 31 - 4, 2 ** 31 - 3, 2 ** 31 - 2,
                                                            2 ** 31 - 1],
            [-2 ** 31, -2 ** 31 + 1, -2 ** 31 + 2, -2 ** 31 + 3], [1, 2, 3, 4], [3, 2, 1, 0],
            [8, 8, 8, 8], [0, 1, 2, 7], [-1, 0, 1, 2], [2 ** 31 - 1, -2 ** 31, -1, 0]]
    rows += rng.integers(-2 ** 31, 2 ** 31, size=(6, 4)).tolist()
    return np.array(rows, dtype=np.int64)


@pytest.mark.skipif(shutil.which("g++") is None, reason="tier 1: needs g++")
def test_rand4_quad_matches_the_reference_on_the_host(tmp_path):
    seeds, qs = (0, 1234, -7, 2 ** 40 + 3), quads()
    source = (PROGRAM.replace("SEEDS", ", ".join(f"INT64_C({s})" for s in seeds))
              .replace("QUADS", ", ".join("{" + ", ".join(f"INT32_C({v})" if v > -2 ** 31
                                                          else "INT32_MIN" for v in q) + "}"
                                          for q in qs)))
    (tmp_path / "rand4.cpp").write_text(source)
    subprocess.run(["g++", "-std=c++17", "-O2", "-I", str(INCLUDE), "rand4.cpp", "-o", "rand4"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=120)
    out = subprocess.run([str(tmp_path / "rand4")], check=True, capture_output=True, text=True,
                         timeout=60).stdout.split()
    got = np.array([float.fromhex(v) for v in out], dtype=np.float32).reshape(len(seeds), -1)
    for s, row in zip(seeds, got):
        np.testing.assert_array_equal(row, rand4(s, qs.reshape(-1)), err_msg=f"seed {s}")


@pytest.mark.skipif(not has_nvcc(), reason="tier 1: nvcc not found")
@pytest.mark.parametrize("kernel", [draw4_flat, draw4_row], ids=["flat", "row"])
def test_rand4_kernels_build_for_sm90a_with_no_spill(tmp_path, kernel):
    build = build_gates.hopper().nvcc_build(kernel.trace("sm_90a").source(), tmp_path,
                                            kernel.name)
    build_gates.assert_sm90a_clean(build, kernel.name)

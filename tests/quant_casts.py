"""A float32 -> int8 conversion kernel on special values (truncation, saturation, NaN -> 0,
infinities, ties after hk.round), in the flat layout the quantisation kernels convert in and in
the row layout: run by tests/tier2 (wave emulation: the headers' host path) and tests/tier3 (the
GPU: sm_90a's path of ktile/include/ktile/common/conversions.hpp float_to_int<int8_t>)."""
import numpy as np

import ktile as hk

SPECIAL = [2.7, -2.7, 0.5, -0.5, 1.5, 2.5, -2.5, 126.99, 127.0, 127.9, 128.0, -128.0, -128.5,
           -129.0, 3e9, -3e9, 1e30, -1e30, float("nan"), float("inf"), float("-inf"), 0.0, -0.0,
           1e-40, -1e-40, 63.5, -63.5, 100.49, -100.51]


@hk.kernel(grid=lambda p: (1, 1, 1))
def to_int8(x: hk.Tensor[hk.fp32], q: hk.Tensor[hk.i8]):
    """q rows 0-15: trunc-saturate of the flat tile; 16-31: of its round; 32-47: of the row-
    layout tile."""
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64, "flat"))
    q[hk.tile_coord(0, 0, 0, 0)] = a.to(hk.i8)
    q[hk.tile_coord(0, 0, 1, 0)] = hk.round(a).to(hk.i8)
    r = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))
    q[hk.tile_coord(0, 0, 2, 0)] = r.to(hk.i8)


def inputs():
    """(x [16, 64] float32 with SPECIAL first, then a ramp over ±200; q [48, 64] int8)."""
    x = np.linspace(-200.0, 200.0, 16 * 64, dtype=np.float32)
    x[:len(SPECIAL)] = SPECIAL
    return x.reshape(16, 64), np.full((48, 64), 55, np.int8)


def expected(x: np.ndarray) -> np.ndarray:
    """kt.cast's float -> int8: truncate, saturate to [-128, 127], NaN -> 0 (reference.py's
    _saturated_int8 after rint, for the rounded rows)."""
    def sat(v):
        with np.errstate(invalid="ignore"):
            return np.clip(np.nan_to_num(v, nan=0.0, posinf=127, neginf=-128),
                           -128, 127).astype(np.int8)
    return np.concatenate([sat(np.trunc(x)), sat(np.rint(x)), sat(np.trunc(x))])

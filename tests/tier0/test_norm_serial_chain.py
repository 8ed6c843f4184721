"""The norms' and softmax's few-row kernels keep IEEE division and sqrt off the serial chain
after the block's combine (issue #13): 1 / cols is the kernels' `inv_cols` parameter, computed
on the host, and the factor is `hk.rsqrt_fast` (one MUFU.RSQ on sm_90a, no slow-path branch).
Checked on the generated sm_90a source (no compiler needed); the results against the
references are the ops' own tests (tier 0 on the interpreter, tier 3 on the GPU)."""
import re

import numpy as np
import pytest

from ktile.ops.layernorm.row_tiles import layer_norm_rows
from ktile.ops.rmsnorm.tiles import inv_cols, rms_norm_tiles
from ktile.ops.softmax.row_tile import softmax_held_kernel

FLOAT_DIVISION = re.compile(r"float v\d+ = v\d+ / v\d+;")

KERNELS = [("rms_norm_tiles", lambda: rms_norm_tiles("bf16"), {"C": 16, "HELD": 1, "WARPS": 16}),
           ("layer_norm_rows", lambda: layer_norm_rows("bf16"), {"C": 32, "HELD": 1, "WARPS": 8}),
           ("softmax_held", lambda: softmax_held_kernel("fp32"), {"C": 64, "HELD": 1, "WARPS": 4})]


@pytest.mark.parametrize("name,kernel,constants", KERNELS, ids=[k[0] for k in KERNELS])
def test_no_ieee_division_or_sqrt_after_the_combine(name, kernel, constants):
    source = kernel().source(target="sm_90a", **constants)
    assert "kt::rsqrt_fast(" in source, name
    assert "kt::rsqrt(" not in source and "kt::sqrt(" not in source, name
    assert not FLOAT_DIVISION.search(source), (name, FLOAT_DIVISION.search(source))


def test_inv_cols_is_the_kernels_own_fp32_division():
    for cols in (16, 48, 2000, 2048, 3000, 4096, 5120, 14336, 151936):
        want = np.float32(1.0) / np.float32(cols)
        assert np.float32(inv_cols(cols)) == want and inv_cols(cols) == float(want), cols

"""float32 -> int8 conversions (the quantisation kernels' cast) under wave emulation of an AMD
target: the host path of conversions.hpp's float_to_int<int8_t> (clamp, 32-bit conversion, NaN
-> 0) agrees with kt.cast's meaning on special values, as the interpreter does."""
import numpy as np
import pytest
import torch

import quant_casts
from ktile.emulate import emulate

pytestmark = pytest.mark.tier2


@pytest.mark.parametrize("target", ["gfx1100"])
def test_float_to_int8_truncates_saturates_and_sends_nan_to_zero(target):
    x, q = quant_casts.inputs()
    want = quant_casts.expected(x)
    interpreted = torch.from_numpy(q.copy())
    quant_casts.to_int8.interpret(torch.from_numpy(x), interpreted, target=target)
    np.testing.assert_array_equal(interpreted.numpy(), want)
    got = torch.from_numpy(q.copy())
    emulate(quant_casts.to_int8, torch.from_numpy(x), got, target=target)
    np.testing.assert_array_equal(got.numpy(), want)

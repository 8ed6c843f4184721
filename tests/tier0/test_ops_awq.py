"""ktile.ops.awq_gemm / awq_dequantize on CPU tensors (the interpreter) against
ktile/ops/awq/reference.py: the packing against a packer written here from the public format
(AutoAWQ's GEMM layout), every route pinned at ragged M with N a multiple of 8 but not of the
kernels' 128-column warp tiles, both dtypes, out=, the split-K partials' fixed order, and the
refusals naming the parameter."""
import numpy as np
import pytest
import torch

import ktile
from ktile.errors import InputError
from ktile.ops import _library as lib
from ktile.ops.awq import config, reference as R
from ktile.ops.awq.op import inputs
from bad_inputs import refused

AWQ_ORDER = [0, 2, 4, 6, 1, 3, 5, 7]    # the public format's pack order, as AutoAWQ states it


def public_pack(codes: np.ndarray) -> np.ndarray:
    """AutoAWQ's packing, word by word: nibble i of word p holds column 8p + AWQ_ORDER[i]."""
    rows, cols = codes.shape
    words = np.zeros((rows, cols // 8), np.uint32)
    for r in range(rows):
        for p in range(cols // 8):
            word = 0
            for i in range(8):
                word |= int(codes[r, 8 * p + AWQ_ORDER[i]]) << (4 * i)
            words[r, p] = word
    return words.view(np.int32)


def test_packing_follows_the_public_format():
    codes = np.random.default_rng(3).integers(0, 16, (5, 24))
    np.testing.assert_array_equal(R.pack(codes), public_pack(codes))
    np.testing.assert_array_equal(R.unpack(public_pack(codes)), codes)
    # columns 0..7 = 1..8: nibbles (low first) 1 3 5 7 2 4 6 8
    assert R.pack(np.arange(1, 9)[None]).view(np.uint32)[0, 0] == 0x86427531


def reference_of(x, qweight, scales, qzeros):
    w = R.dequantize(qweight.numpy(), scales.float().numpy(), qzeros.numpy())
    return np.asarray(x.float().numpy(), np.float64) @ w, w


ROUTED = [(1, "awq_gemv"), (2, "awq_gemv"), (5, "awq_gemv"), (33, "awq_dequant")]


@pytest.mark.parametrize("m,kernel", ROUTED, ids=lambda v: str(v))
@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_each_route_matches_the_reference(m, kernel, dtype):
    n = 136                                     # 17 words: a warp's 16 and one ragged
    x, qweight, scales, qzeros = inputs(m, n, 256, dtype)
    assert config.TABLE.choose(m, n, None).kernel == kernel
    got = ktile.ops.awq_gemm(x, qweight, scales, qzeros)
    exact, w = reference_of(x, qweight, scales, qzeros)
    want = getattr(ktile.dtypes, dtype).round(exact.astype(np.float32))
    tol = R.tolerance(x.float().numpy(), w, want, dtype,
                      rounded_weights=kernel == "awq_dequant")
    assert got.shape == (m, n) and got.dtype == x.dtype
    assert lib.max_error(got, want) <= tol


def test_dequantize_rounds_each_weight_once():
    _, qweight, scales, qzeros = inputs(1, 72, 256, "bf16")
    got = ktile.ops.awq_dequantize(qweight, scales, qzeros)
    want = R.dequantize(qweight.numpy(), scales.float().numpy(), qzeros.numpy())
    np.testing.assert_array_equal(got.float().numpy(),
                                  ktile.dtypes.bf16.round(want.astype(np.float32)))


def test_out_is_written_and_splits_add_in_a_fixed_order():
    x, qweight, scales, qzeros = inputs(3, 72, 512, "bf16")
    out = torch.empty(3, 72, dtype=torch.bfloat16)
    assert ktile.ops.awq_gemm(x, qweight, scales, qzeros, out=out) is out
    again = ktile.ops.awq_gemm(x, qweight, scales, qzeros)
    assert config.split_count(3, 72, 512, config.TABLE.choose(3, 72, None),
                              config.CPU_MULTIPROCESSORS) == 4
    assert torch.equal(out, again)


def test_refusals_name_the_parameter():
    x, qweight, scales, qzeros = inputs(2, 64, 256, "bf16")
    gemm = ktile.ops.awq_gemm
    refused(lambda: gemm(x, qweight, scales, qzeros, group_size=64), "group_size", "128",
            kind=InputError)
    refused(lambda: gemm(x, qweight.float(), scales, qzeros), "qweight", "int32",
            kind=InputError)
    refused(lambda: gemm(x, qweight, scales[:, :32].contiguous(), qzeros), "scales", "(2, 64)",
            kind=InputError)
    refused(lambda: gemm(x, qweight, scales, qzeros[:1]), "qzeros", "(2, 8)",
            kind=InputError)
    refused(lambda: gemm(x[:, :128].contiguous(), qweight, scales, qzeros), "'x'", "K = 256",
            kind=InputError)
    refused(lambda: gemm(x, qweight, scales.half(), qzeros), "scales", "x.dtype",
            kind=InputError)
    refused(lambda: gemm(x, qweight[:200], scales, qzeros), "qweight", "multiple of",
            kind=InputError)
    refused(lambda: gemm(x, qweight, scales, qzeros, out=torch.empty(2, 63)), "out",
            kind=InputError)


def test_registered_ops_pass_opcheck():
    x, qweight, scales, qzeros = inputs(2, 64, 256, "bf16")
    torch.library.opcheck(torch.ops.ktile.awq_gemm.default, (x, qweight, scales, qzeros),
                          test_utils=("test_schema", "test_faketensor"))
    torch.library.opcheck(torch.ops.ktile.awq_dequantize.default, (qweight, scales, qzeros),
                          test_utils=("test_schema", "test_faketensor"))


@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
def test_prefill_route_on_the_interpreter_at_sm90a(monkeypatch, dtype):
    """The sm_90a prefill route (dequantise, then ktile.ops.matmul; wgmma_ws_nn is not shipped
    while it is wrong on the H200) traced for sm_90a and run by the interpreter: M 70, N 136."""
    monkeypatch.setenv("KTILE_TARGET", "sm_90a")
    m, n = 70, 136
    route = config.TABLE.choose(m, n, None)
    assert route.kernel == "awq_dequant"
    x, qweight, scales, qzeros = inputs(m, n, 256, dtype)
    got = ktile.ops.awq_gemm(x, qweight, scales, qzeros)
    exact, w = reference_of(x, qweight, scales, qzeros)
    want = getattr(ktile.dtypes, dtype).round(exact.astype(np.float32))
    tol = R.tolerance(x.float().numpy(), w, want, dtype, rounded_weights=True)
    assert lib.max_error(got, want) <= tol

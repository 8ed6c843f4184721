"""Reference semantics of `dropout`, in numpy: `ktile.ops.dropout` (`dropout4`) and Triton's
"Low-Memory Dropout" tutorial (`dropout`, what kernels calling `hk.rand` are checked against).

`dropout4` is what `ktile.ops.dropout` computes: element i (its index in the flattened tensor)
is kept when `rand4(seed, i) > p` (ktile/ops/rand/reference.py: word i % 4 of the Philox call
at counter i // 4, so one Philox call serves four consecutive elements, as torch's CUDA dropout
uses all four words of each call; the words are not torch's, whose generator and offsets
differ). A kept element becomes `x · scale`, scale = 1 / (1 − p) rounded to float32 (as torch's
CUDA dropout multiplies by its scale): one float32 product per element, where `dropout` below
divides. Otherwise it is `dropout`: the same strict test, the same float32 arithmetic. The Triton alternative
(ktile/ops/alternatives_triton_pointwise.py) draws the same words with `tl.rand4x`.

`dropout`:

Facts (triton-lang/triton `python/tutorials/04-low-memory-dropout.py`, `_seeded_dropout`;
our own code, nothing copied): element i is kept when `tl.rand(seed, offsets[i]) > p`,
offsets being each element's index in the flattened tensor; a kept element becomes
`x / (1 - p)` and a dropped one 0. A Python float `p` reaches a Triton kernel as float32,
so the comparison and `1 - p` are float32 too.

What "correct" means here: `keep_mask` is bit-exact with the tutorial's kernel (it is
`ktile.ops.rand.reference.rand(seed, offsets) > float32(p)`), and each kept output is
`x / (1 - p)` correctly rounded in float32; dropped outputs are +0.0. One caveat when
comparing against Triton itself: Triton lowers float32 `/` on NVIDIA to the approximate
`div.full.f32` (triton-lang/triton
`third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/ElementwiseOpToLLVM.cpp`, `FDivOpConversion`;
at most 2 ulp off by PTX's specification), so compare Triton's kept values to these within
2 ulp and its mask exactly. Checked against the tutorial kernel under Triton 3.6.0 on an
NVIDIA H200, 2**20 elements at seed 123: masks identical for p = 0.5, 0.3, 0.1; kept values
identical at p = 0.5 and at most 1 ulp apart at p = 0.3 and 0.1.

As in Triton, an element whose draw is exactly 0.0 (2 words in 2**32) is dropped even at
p = 0, since the test is strict.
"""
from __future__ import annotations

import numpy as np

from ktile.ops.rand.reference import rand, rand4


def dropout(x, p, seed, offsets=None):
    """Drop each element of `x` with probability `p`; scale the kept ones by 1 / (1 - p).

    Returns (output, keep_mask): a float32 array shaped like `x`, and the bool mask of kept
    elements. `seed` is a 64-bit integer as `rand` takes it; `offsets` (integers shaped like
    `x`, their dtype standing for the kernel's offset type as in `rand`) default to each
    element's index in row-major flattened order.
    """
    return _dropout(x, p, seed, offsets, rand)


def dropout4(x, p, seed):
    """`ktile.ops.dropout(x, p, seed)`: each element drawing `rand4(seed, its flattened
    index)`, a kept one times `scale(p)`. Returns (output, keep_mask)."""
    x32 = np.asarray(x, dtype=np.float32)
    p32 = _drop_probability(p)
    keep = rand4(seed, _element_offsets(x32, None)) > p32
    output = np.zeros_like(x32)
    output[keep] = x32[keep] * scale(p32)
    return output, keep


def scale(p):
    """1 / (1 - p) in float32, each step rounded once (inf at p = 1, when nothing is kept)."""
    one, p32 = np.float32(1), np.float32(p)
    with np.errstate(divide="ignore"):
        return one / (one - p32)


def _dropout(x, p, seed, offsets, draw):
    x32 = np.asarray(x, dtype=np.float32)
    p32 = _drop_probability(p)
    keep = draw(seed, _element_offsets(x32, offsets)) > p32
    output = np.zeros_like(x32)
    # Divide only the kept elements: at p == 1 none is kept and 1 - p is zero.
    output[keep] = x32[keep] / (np.float32(1) - p32)
    return output, keep


def _drop_probability(p):
    p32 = np.float32(p)
    if not 0 <= p32 <= 1:
        raise ValueError(f"dropout probability p must be in [0, 1], got {p!r}")
    return p32


def _element_offsets(x32, offsets):
    if offsets is None:
        return np.arange(x32.size, dtype=np.int64).reshape(x32.shape)
    offsets = np.asarray(offsets)
    if offsets.shape != x32.shape:
        raise ValueError(
            f"offsets must have x's shape {x32.shape}, got shape {offsets.shape}; "
            f"leave offsets out to use each element's flattened index"
        )
    return offsets

"""The W4A16 kernels (AWQ layout, reference.py): the decode GEMV's partials and the
dequantiser the prefill route runs before ktile.ops.matmul.

One tile form serves both. A warp holds R packed words of one row of qweight (columns
8p..8p+7 for p in [p0, p0 + R)) as an R × 16 register tile: tile row p − p0 is word p, its
columns 0..7 the word of row k and 8..15 the word of row k + 1 (two rows a step, because a
register tile is 16 columns wide). Column c's code is the nibble at REVERSE[c % 8]: the two
row vectors are ANDed with per-column masks that are 0 outside their half (`masks_lo`,
`masks_hi`) and ORed, so each element keeps its own nibble in place, then converted to fp32
(exact: the code times a power of two). The language has no shifts of tiles and needs none
here: the scale absorbs the power of two.

Scales are viewed as [G, N/8, 8] (group g, word p, column c): an R × 16 tile at element
column 0 reads columns 0..7 (8..15 past the edge read 0), one at column −8 the same values
into tile columns 8..15; their sum is the scale of every tile element. The zero codes come
as a vector of the group's R words, broadcast over the tile. Per group (or chunk) the kernels
form su = s · 2^−4·nibble, zs = z · s and 16 · s once; each weight is then masked · su − zs
in fp32: both products are exact (a 4-bit code times a 16-bit scale), so the difference is
(q − z) · s exactly. The top nibble's mask leaves a negative int32 for codes 8..15, which
gives (code − 16) · s − zs: 16 · s is added back there (exact too).

Outputs with 8 columns per word are written twice per tile: columns 0..7 at element column 0
of row k (tile columns 8..15 fall past the 8-column edge and are not written), columns 8..15
at element column −8 of row k + 1 (tile columns 0..7 fall before it).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtypes

import functools

import ktile as hk

from .reference import REVERSE

GROUP = 128               # rows of K per scale / zero group (the op checks group_size)
MAX_MB = 8                # rows of x a GEMV block holds (its accumulators are named)


def _signed(word: int) -> int:
    return word - (1 << 32) if word >= 1 << 31 else word


NIBBLE_MASKS = tuple(_signed(0xF << (4 * nibble)) for nibble in REVERSE)   # by column
NIBBLE_UNITS = tuple(2.0 ** (-4 * nibble) for nibble in REVERSE)


def column_constants(rows: int):
    """(low-half masks, high-half masks, fp32 scalings, columns < 8 mask) of a rows × 16 word
    tile: column c's nibble mask where c's half is the mask's, else 0 (above)."""
    column = hk.iota(hk.RT(hk.i32, rows, 16), "col")
    within, lo = column & 7, column < 8
    masks = hk.zeros(hk.RT(hk.i32, rows, 16))
    units = hk.zeros(hk.RT(hk.fp32, rows, 16))
    for c in range(8):
        at = within == c
        masks = hk.where(at, NIBBLE_MASKS[c], masks)
        units = hk.where(at, NIBBLE_UNITS[c], units)
    return hk.where(lo, masks, 0), hk.where(lo, 0, masks), units, lo


def zero_codes(z, masks_lo, masks_hi, units):
    """The fp32 zero codes of a group's R-word vector z, in every column."""
    scaled = ((masks_lo | masks_hi) & z).to(hk.fp32) * units
    return hk.where(scaled < 0.0, scaled + 16.0, scaled)


def weights(low, high, masks_lo, masks_hi, su, zs, s16):
    """(q − z) · s of a step's two R-word vectors (`low`: row k in columns 0..7, `high`: row
    k + 1 in 8..15): the masked word times s · 2^−4·nibble, minus z · s, both exact; a
    top-nibble code of 8..15 masks to a negative int32, (code − 16) · s: 16 · s added back."""
    masked = (masks_lo & low) | (masks_hi & high)
    w = masked.to(hk.fp32) * su - zs
    return hk.where(masked < 0, w + s16, w)


def group_constants(scales, qzeros, g, p0, tile, vec, masks_lo, masks_hi, units):
    """(s · units, z · s, 16 · s) of group g's words [p0, p0 + R) (scales as [G, N/8, 8])."""
    s = (scales[hk.elem_coord(0, g, p0, 0)].load(tile).to(hk.fp32)
         + scales[hk.elem_coord(0, g, p0, -8)].load(tile).to(hk.fp32))
    z = qzeros[hk.elem_coord(0, 0, g, p0)].load(vec)
    return s * units, zero_codes(z, masks_lo, masks_hi, units) * s, s * 16.0


GEMV_SHAPES = [
    (lambda p: 1 <= p.MB <= MAX_MB, f"MB (rows of x per block) must be 1 to {MAX_MB}"),
    (lambda p: GROUP % p.CHUNK == 0 and p.CHUNK % (2 * p.UNROLL) == 0,
     f"CHUNK (rows of K a warp takes at a time) must divide {GROUP} and be a multiple of "
     f"2 x UNROLL"),
    (lambda p: p.x.batch * p.x.depth == 1, "x must be 2-D [M, K] (fp32)"),
    (lambda p: p.qweight.batch * p.qweight.depth == 1 and p.qweight.rows == p.x.cols,
     "qweight must be [K, N/8] with x's K rows"),
    (lambda p: p.qzeros.batch * p.qzeros.depth == 1 and p.qzeros.cols == p.qweight.cols
     and p.qzeros.rows * GROUP == p.x.cols, "qzeros must be [K/128, N/8]"),
    (lambda p: p.scales.batch == 1 and p.scales.depth == p.qzeros.rows
     and p.scales.rows == p.qweight.cols and p.scales.cols == 8,
     "scales must be passed as [K/128, N/8, 8]"),
    (lambda p: p.part.batch == 1 and p.part.depth % (2 * p.x.rows) == 0
     and p.part.rows == p.qweight.cols and p.part.cols == 8,
     "part must be the [2 * splits, M, N] partials passed as [2 * splits * M, N/8, 8]"),
]


@functools.lru_cache(maxsize=None)
def awq_gemv(dtype: str):
    """Phase 1 of the decode GEMV: fp32 partials of x · w for the scales' dtype.

    Block (x, y, s) holds x's rows [x · MB, x · MB + MB) and words [y · R, y · R + R); K is
    cut into chunks of CHUNK rows (inside one group), and warp w of split s takes chunks
    s · WARPS + w, then every S · WARPS-th (S = part.depth / (2 M)). A step reads two rows of
    qweight (an R-word vector each) UNROLL times, the loads written before the math so they
    are in flight together, forms the 16 weight columns of each (docstring above) and adds
    x[m, k] (columns 0..7) or x[m, k + 1] (8..15) times them into MB fp32 accumulators. The
    warps' accumulators are added by `hk.group.sum` (a fixed tree) and warp 0 writes them:
    tile columns 0..7 and 8..15 (sums over even and odd rows of K) to partial planes 2s and
    2s + 1 (`[2S · M, N/8, 8]`), which the split-K reduction (ktile.ops.matmul's
    `splitk_reduce`) adds in a fixed order: no atomics. x comes as fp32 (the op converts it,
    M × K values) so each x[m, k] is a scalar load (an L1 hit after the first warp)."""
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, p.MB), hk.cdiv(p.qweight.cols, p.R),
                               p.part.depth // (2 * p.x.rows)),
               warps="WARPS", requires=GEMV_SHAPES)
    def awq_gemv_partials(x: hk.Tensor[hk.fp32], qweight: hk.Tensor[hk.i32],
                          scales: hk.Tensor[DT], qzeros: hk.Tensor[hk.i32],
                          part: hk.Tensor[hk.fp32], *, MB: hk.Constexpr[int] = 1,
                          R: hk.Constexpr[int] = 16, CHUNK: hk.Constexpr[int] = 32,
                          UNROLL: hk.Constexpr[int] = 4, WARPS: hk.Constexpr[int] = 4):
        m0, p0 = hk.arch.block_idx.x * MB, hk.arch.block_idx.y * R
        split, warp, rows = hk.arch.block_idx.z, hk.arch.warp_id, x.rows
        splits = part.depth // (2 * rows)
        tile, vec = hk.RT(DT, R, 16), hk.RV(hk.i32, R)
        masks_lo, masks_hi, units, lo = column_constants(R)
        zero = hk.zeros(hk.RT(hk.fp32, R, 16))
        # MAX_MB named accumulators (a runtime loop carries names); past MB a scalar 0
        a0, a1, a2, a3, a4, a5, a6, a7 = [hk.zeros(hk.RT(hk.fp32, R, 16)) if m < MB else 0.0
                                          for m in range(MAX_MB)]
        for chunk in range(split * WARPS + warp, x.cols // CHUNK, splits * WARPS):
            k0 = chunk * CHUNK
            su, zs, s16 = group_constants(scales, qzeros, k0 // GROUP, p0, tile, vec,
                                          masks_lo, masks_hi, units)
            for k in range(k0, k0 + CHUNK, 2 * UNROLL):
                lows = [qweight[hk.elem_coord(0, 0, k + 2 * u, p0)].load(vec)
                        for u in range(UNROLL)]
                highs = [qweight[hk.elem_coord(0, 0, k + 2 * u + 1, p0)].load(vec)
                         for u in range(UNROLL)]
                accs = [a0, a1, a2, a3, a4, a5, a6, a7]
                for u in range(UNROLL):
                    w = weights(lows[u], highs[u], masks_lo, masks_hi, su, zs, s16)
                    for m in range(MB):
                        xk = hk.load_scalar(x, m0 + m, k + 2 * u)
                        xk1 = hk.load_scalar(x, m0 + m, k + 2 * u + 1)
                        accs[m] = accs[m] + hk.where(lo, zero + xk, xk1) * w
                a0, a1, a2, a3, a4, a5, a6, a7 = accs
        accs = [a0, a1, a2, a3, a4, a5, a6, a7]
        for m in range(MB):
            total = hk.group.sum(accs[m])
            if (warp == 0) & (m0 + m < rows):
                part[hk.elem_coord(0, 2 * split * rows + m0 + m, p0, 0)] = total
                part[hk.elem_coord(0, (2 * split + 1) * rows + m0 + m, p0, -8)] = total
    return awq_gemv_partials


DEQUANT_SHAPES = [
    (lambda p: p.qweight.batch * p.qweight.depth == 1, "qweight must be 2-D [K, N/8]"),
    (lambda p: GROUP % p.KB == 0 and p.KB % 2 == 0,
     f"KB (rows of K per block) must be even and divide {GROUP}"),
    (lambda p: p.qzeros.batch * p.qzeros.depth == 1 and p.qzeros.cols == p.qweight.cols
     and p.qzeros.rows * GROUP == p.qweight.rows, "qzeros must be [K/128, N/8]"),
    (lambda p: p.scales.batch == 1 and p.scales.depth == p.qzeros.rows
     and p.scales.rows == p.qweight.cols and p.scales.cols == 8,
     "scales must be passed as [K/128, N/8, 8]"),
    (lambda p: p.out.batch == 1 and p.out.depth == p.qweight.rows
     and p.out.rows == p.qweight.cols and p.out.cols == 8,
     "out must be the [K, N] weights passed as [K, N/8, 8]"),
]


@functools.lru_cache(maxsize=None)
def awq_dequant(dtype: str):
    """w [K, N] = (q − z) · s in the scales' dtype (rounded once from the exact fp32 value):
    block (x, y) writes words [x · WARPS · R, ...) (R a warp) of rows [y · KB, y · KB + KB),
    two rows a step (docstring above). Memory-bound: 4 bits read, 16 written a weight."""
    DT = getattr(hk, dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.qweight.cols, p.R * p.WARPS),
                               hk.cdiv(p.qweight.rows, p.KB)),
               warps="WARPS", requires=DEQUANT_SHAPES)
    def awq_dequant_rows(qweight: hk.Tensor[hk.i32], scales: hk.Tensor[DT],
                         qzeros: hk.Tensor[hk.i32], out: hk.Tensor[DT], *,
                         R: hk.Constexpr[int] = 16, KB: hk.Constexpr[int] = 32,
                         WARPS: hk.Constexpr[int] = 4):
        p0 = (hk.arch.block_idx.x * WARPS + hk.arch.warp_id) * R
        k0 = hk.arch.block_idx.y * KB
        g = k0 // GROUP
        tile, vec = hk.RT(DT, R, 16), hk.RV(hk.i32, R)
        masks_lo, masks_hi, units, _ = column_constants(R)
        su, zs, s16 = group_constants(scales, qzeros, g, p0, tile, vec, masks_lo, masks_hi,
                                      units)
        for k in range(k0, k0 + KB, 2):
            low = qweight[hk.elem_coord(0, 0, k, p0)].load(vec)
            high = qweight[hk.elem_coord(0, 0, k + 1, p0)].load(vec)
            w = weights(low, high, masks_lo, masks_hi, su, zs, s16).to(DT)
            out[hk.elem_coord(0, k, p0, 0)] = w
            out[hk.elem_coord(0, k + 1, p0, -8)] = w
    return awq_dequant_rows

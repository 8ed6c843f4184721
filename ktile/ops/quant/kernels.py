"""Quantisation kernels: int8 and fp8 e4m3, per token (dynamic) and per tensor (static or
dynamic), and the matching dequantisation. Each factory takes the ktile dtype name of the
floating-point side ('bf16', 'fp16', 'fp32') and returns one `@hk.kernel` per dtype.

The per-token kernels here (the op's fallback where hidden is not a multiple of 16; token_block.py
and token_rows.py have the usual ones) read `[tokens, hidden]` rows (the op function folds leading dimensions into
tokens) in row-layout blocks of 16 rows; the per-tensor ones are elementwise on flat tiles. The semantics are reference.py's, bit for bit:
a scale is a float32 per token or per tensor, read from a tensor (never `.item()`: a CUDA graph
replays a new scale), and a per-tensor dynamic scale is two phases, never atomics: per-token
maxima, then one block folds them.
"""
import functools

import ktile as hk

from ..elementwise.kernels import flat, flat_grid, tiles_held, warp_tiles

INT8_MAX = 127.0
FP8_MAX = 448.0
MIN_FP8_SCALE = 1.0 / (FP8_MAX * 512.0)   # vLLM's floor: a row of zeros quantises to zeros

ROWS = [
    (lambda p: p.x.batch * p.x.depth == 1,
     "x must be 2-D [tokens, hidden]: fold leading dimensions into tokens"),
    (lambda p: p.q.shape == p.x.shape, "q must have x's shape"),
]
PER_TOKEN = ROWS + [
    (lambda p: p.scales.cols == p.x.rows and p.scales.rows * p.scales.depth * p.scales.batch == 1,
     "scales must hold one float32 per row of x: torch.empty(x.shape[0], dtype=torch.float32)"),
]
PER_TENSOR = ROWS + [
    (lambda p: p.scale.cols * p.scale.rows * p.scale.depth * p.scale.batch == 1,
     "scale must be one float32: torch.tensor([s], dtype=torch.float32)"),
]


def _dt(name):
    return getattr(hk, name)


@hk.func
def scalar_at_origin(g):
    """The one float32 of a one-element tensor, as a scalar: a 16-long vector read at its first
    element pads the rest with 0, so its sum is that element exactly."""
    return hk.sum(g[hk.tile_coord(0, 0, 0, 0)].load(hk.RV(hk.fp32, 16), pad=0.0))


@hk.func
def row_absmax(x, r, t, COLS):
    """Every warp gets max|x| of the block's 16 rows; warp w folds column tiles w, w + warps, ...
    Columns past the edge load 0, which no max exceeds."""
    warp, warps = hk.arch.warp_id, hk.arch.num_warps
    amax = hk.zeros(hk.RV(hk.fp32, 16))
    for c in range(warp, hk.cdiv(x.cols, COLS), warps):
        xs = x[hk.tile_coord(0, 0, r, c)].load(t).to(hk.fp32)
        amax = hk.maximum(amax, hk.row_max(hk.abs(xs)))
    return hk.group.max(amax)


@functools.cache
def int8_per_token(dtype: str):
    """q = round-half-even(x · (127 / max|x|)) saturated to int8 and scales = max|x| / 127 per
    row (vLLM's dynamic_scaled_int8_quant). A row of zeros: 127 / 0 = inf, 0 · inf = NaN, and
    the conversion sends NaN to 0, so q = 0 and the scale 0, without a branch."""
    dt = _dt(dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=4, requires=PER_TOKEN)
    def quant_int8_per_token(x: hk.Tensor[dt], q: hk.Tensor[hk.i8],
                             scales: hk.Tensor[hk.fp32], *, COLS: hk.Constexpr[int] = 64):
        r, warp, warps = hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
        t = hk.RT(dt, 16, COLS)
        amax = row_absmax(x, r, t, COLS)
        inverse = INT8_MAX / amax
        for c in range(warp, hk.cdiv(x.cols, COLS), warps):
            idx = hk.tile_coord(0, 0, r, c)
            q[idx] = hk.round(x[idx].load(t).to(hk.fp32) * inverse).to(hk.i8)
        if warp == 0:
            scales[hk.tile_coord(0, 0, 0, r)] = amax / INT8_MAX
    return quant_int8_per_token


@functools.cache
def int8_per_tensor(dtype: str):
    """q = round-half-even(x / scale) saturated to [-128, 127], scale given (vLLM's
    static_scaled_int8_quant). Elementwise, on flat tiles (`elementwise.kernels.warp_tiles`;
    the op reflows a contiguous x as rows of 64): each lane moves 16-byte units of x and
    8-byte units of q."""
    dt = _dt(dtype)

    @hk.kernel(grid=flat_grid(dt, "q"), warps="WARPS", requires=PER_TENSOR)
    def quant_int8_per_tensor(x: hk.Tensor[dt], scale: hk.Tensor[hk.fp32],
                              q: hk.Tensor[hk.i8], *, COLS: hk.Constexpr[int] = 64,
                              WARPS: hk.Constexpr[int] = 4, HELD: hk.Constexpr[int] = 1):
        t, tiles = flat(dt, COLS), warp_tiles(q, COLS, tiles_held(dt, HELD))
        xs = [x[idx].load(t) for idx in tiles]
        s = scalar_at_origin(scale)
        for idx, xt in zip(tiles, xs):
            q[idx] = hk.round(xt.to(hk.fp32) / s).to(hk.i8)
    return quant_int8_per_tensor


@functools.cache
def fp8_per_token(dtype: str):
    """scales = max(max|x| / 448, 1 / (448 · 512)) per row; q = fp8(clamp(x · (1 / scale),
    ±448)), rounded to nearest even (vLLM's dynamic_per_token_scaled_fp8_quant)."""
    dt = _dt(dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=4, requires=PER_TOKEN)
    def quant_fp8_per_token(x: hk.Tensor[dt], q: hk.Tensor[hk.fp8],
                            scales: hk.Tensor[hk.fp32], *, COLS: hk.Constexpr[int] = 64):
        r, warp, warps = hk.arch.block_idx.x, hk.arch.warp_id, hk.arch.num_warps
        t = hk.RT(dt, 16, COLS)
        scale = hk.maximum(row_absmax(x, r, t, COLS) / FP8_MAX, MIN_FP8_SCALE)
        inverse = 1.0 / scale
        for c in range(warp, hk.cdiv(x.cols, COLS), warps):
            idx = hk.tile_coord(0, 0, r, c)
            xs = x[idx].load(t).to(hk.fp32) * inverse
            q[idx] = hk.minimum(hk.maximum(xs, -FP8_MAX), FP8_MAX).to(hk.fp8)
        if warp == 0:
            scales[hk.tile_coord(0, 0, 0, r)] = scale
    return quant_fp8_per_token


@functools.cache
def fp8_per_tensor(dtype: str):
    """q = fp8(clamp(x · (1 / scale), ±448)) for one float32 scale (vLLM's
    static_scaled_fp8_quant; the dynamic form computes the scale first, `tensor_scale`).
    Elementwise on flat tiles, as int8_per_tensor."""
    dt = _dt(dtype)

    @hk.kernel(grid=flat_grid(dt, "q"), warps="WARPS", requires=PER_TENSOR)
    def quant_fp8_per_tensor(x: hk.Tensor[dt], scale: hk.Tensor[hk.fp32],
                             q: hk.Tensor[hk.fp8], *, COLS: hk.Constexpr[int] = 64,
                             WARPS: hk.Constexpr[int] = 4, HELD: hk.Constexpr[int] = 1):
        t, tiles = flat(dt, COLS), warp_tiles(q, COLS, tiles_held(dt, HELD))
        xs = [x[idx].load(t) for idx in tiles]
        inverse = 1.0 / scalar_at_origin(scale)
        for idx, xt in zip(tiles, xs):
            scaled = xt.to(hk.fp32) * inverse
            q[idx] = hk.minimum(hk.maximum(scaled, -FP8_MAX), FP8_MAX).to(hk.fp8)
    return quant_fp8_per_tensor


@functools.cache
def row_absmax_kernel(dtype: str):
    """Phase 1 of a dynamic per-tensor scale: max|x| of every row into `amax` ([tokens])."""
    dt = _dt(dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.x.rows, 16),), warps=4,
               requires=[ROWS[0], (lambda p: p.amax.cols == p.x.rows,
                                   "amax must hold one float32 per row of x")])
    def row_absmax_of(x: hk.Tensor[dt], amax: hk.Tensor[hk.fp32], *,
                      COLS: hk.Constexpr[int] = 64):
        r = hk.arch.block_idx.x
        m = row_absmax(x, r, hk.RT(dt, 16, COLS), COLS)
        if hk.arch.warp_id == 0:
            amax[hk.tile_coord(0, 0, 0, r)] = m
    return row_absmax_of


@hk.kernel(grid=lambda p: (1,),
           requires=[(lambda p: p.scale.cols * p.scale.rows == 1, "scale must be one float32"),
                     (lambda p: p.amax.rows * p.amax.depth * p.amax.batch == 1,
                      "amax must be one row of per-token maxima")])
def tensor_scale(amax: hk.Tensor[hk.fp32], scale: hk.Tensor[hk.fp32]):
    """Phase 2: scale = max(max(amax) / 448, 1 / (448 · 512)), one block folding the per-token
    maxima 64 at a time (max is exact, so the order changes no bit)."""
    m = hk.zeros(hk.RV(hk.fp32, 16))
    for c in range(hk.cdiv(amax.cols, 64)):
        part = amax[hk.tile_coord(0, 0, 0, c)].load(hk.RT(hk.fp32, 16, 64), pad=0.0)
        m = hk.maximum(m, hk.row_max(part))
    # rows 1..15 of the tile lie past the one row (zeros): the max is element 0, and a vector
    # stored to the one-element `scale` keeps element 0 only
    scale[hk.tile_coord(0, 0, 0, 0)] = hk.maximum(m / FP8_MAX, MIN_FP8_SCALE)


@functools.cache
def dequant_per_token(q_dtype: str, dtype: str):
    """out = q · scale[row], rounded once to `dtype` (q int8 or fp8)."""
    qt, dt = _dt(q_dtype), _dt(dtype)

    @hk.kernel(grid=lambda p: (hk.cdiv(p.q.cols, p.COLS), hk.cdiv(p.q.rows, 16)),
               requires=[(lambda p: p.q.batch * p.q.depth == 1, "q must be 2-D [tokens, hidden]"),
                         (lambda p: p.out.shape == p.q.shape, "out must have q's shape"),
                         (lambda p: p.scales.cols == p.q.rows,
                          "scales must hold one float32 per row of q")])
    def dequant_per_token_of(q: hk.Tensor[qt], scales: hk.Tensor[hk.fp32],
                             out: hk.Tensor[dt], *, COLS: hk.Constexpr[int] = 64):
        r = hk.arch.block_idx.y
        idx = hk.tile_coord(0, 0, r, hk.arch.block_idx.x)
        s = scales[hk.tile_coord(0, 0, 0, r)].load(hk.RV(hk.fp32, 16))
        out[idx] = (q[idx].load(hk.RT(qt, 16, COLS)).to(hk.fp32) * s).to(dt)
    return dequant_per_token_of


@functools.cache
def dequant_per_tensor(q_dtype: str, dtype: str):
    """out = q · scale, one float32 scale, rounded once to `dtype`. Elementwise on flat tiles
    (the op reflows contiguous tensors as rows of 64): 8-byte units of q, 16-byte ones of out."""
    qt, dt = _dt(q_dtype), _dt(dtype)

    @hk.kernel(grid=flat_grid(dt, "out"), warps="WARPS",
               requires=[(lambda p: p.q.batch * p.q.depth == 1, "q must be 2-D [tokens, hidden]"),
                         (lambda p: p.out.shape == p.q.shape, "out must have q's shape"),
                         (lambda p: p.scale.cols * p.scale.rows == 1, "scale must be one float32")])
    def dequant_per_tensor_of(q: hk.Tensor[qt], scale: hk.Tensor[hk.fp32],
                              out: hk.Tensor[dt], *, COLS: hk.Constexpr[int] = 64,
                              WARPS: hk.Constexpr[int] = 4, HELD: hk.Constexpr[int] = 1):
        t, tiles = flat(qt, COLS), warp_tiles(out, COLS, tiles_held(dt, HELD))
        qs = [q[idx].load(t) for idx in tiles]
        s = scalar_at_origin(scale)
        for idx, qtile in zip(tiles, qs):
            out[idx] = (qtile.to(hk.fp32) * s).to(dt)
    return dequant_per_tensor_of

"""Gated activation kernels: o[r, j] = act(x[r, j]) · x[r, d + j] for x of [rows, 2d] and o
of [rows, d], any d. Math is float32, rounded once to o's dtype (silu of a 16-bit type:
hk.silu_fast, `activation`). `ACT`: "silu", "gelu" (erf)
or "gelu_tanh", a compile-time constant.

Each warp holds flat-layout 16 x COLS tiles (memory order, 16-byte accesses with no shuffles:
docs/language.md), HELD of them (elementwise.kernels.tiles_held: one for fp32), loading the
gate and up tiles of all before computing any; a block's warps take adjacent column tiles of one
band of 16 rows. Two views of the same rows:

- `act_and_mul_tokens` (d a multiple of 16 whose d / 16 elements fill whole 16-byte units: the
  op's usual case): every token is one band, x viewed `[tokens · 32, d / 16]` (band 2t the gate
  half of token t, band 2t + 1 its up half) and o `[tokens · 16, d / 16]`, so all 16 rows of
  every tile are used at any token count (one token at decode fills a tile).
- `act_and_mul` (any d): bands of 16 rows of `[rows, 2d]`; the up half is read at an element
  offset of d columns (`hk.elem_coord`), so x stays one tensor and its edge bounds both halves'
  loads (a gate tile past column d reads up values whose results the store drops).
"""
# no `from __future__ import annotations`: the kernels annotate with the closure's dtype

import functools

import ktile as hk

from ..elementwise.kernels import APPLY, ROW_TILE, flat, tiles_held

HALVES = [
    (lambda p: p.x.batch * p.x.depth * p.o.batch * p.o.depth == 1,
     "x and o must be 2-D [rows, cols]: fold batch and depth into rows"),
    (lambda p: p.x.cols == 2 * p.o.cols,
     "x must hold gate and up side by side: x.cols == 2 * o.cols"),
    (lambda p: p.x.rows == p.o.rows, "x and o must have the same rows"),
]
TOKEN_BANDS = [
    (lambda p: p.x.batch * p.x.depth * p.o.batch * p.o.depth == 1,
     "x and o must be 2-D [rows, cols]: fold batch and depth into rows"),
    (lambda p: p.x.cols == p.o.cols and p.x.rows == 2 * p.o.rows and p.o.rows % ROW_TILE == 0,
     "x must be [tokens * 32, d / 16] and o [tokens * 16, d / 16] (token_bands)"),
]

FLAT_TOKENS = [
    (lambda p: p.x.batch * p.o.batch == 1 and p.x.depth == p.o.depth,
     "x and o must be 3-D [tokens, rows, COLS] views of as many tokens (flat_tokens)"),
    (lambda p: p.x.cols == p.o.cols == p.COLS and p.x.rows == 2 * p.o.rows
     and p.o.rows % ROW_TILE == 0,
     "x must be [tokens, 2d / COLS, COLS] and o [tokens, d / COLS, COLS], d a multiple of "
     "16 * COLS (flat_tokens)"),
]


def token_bands(x, out):
    """x [..., 2d] and out [..., d] (contiguous, d % 16 == 0) as act_and_mul_tokens' views."""
    d = out.shape[-1]
    return x.view(-1, d // ROW_TILE), out.view(-1, d // ROW_TILE)


def flat_tokens(x, out, cols: int):
    """x [..., 2d] and out [..., d] (contiguous, d % (16 · cols) == 0) as act_and_mul_flat's
    views: one plane per token, its gate half the first d / cols rows of cols."""
    return x.view(-1, x.shape[-1] // cols, cols), out.view(-1, out.shape[-1] // cols, cols)


def _grid(dt):
    def grid(p):
        per_block = p.COLS * p.WARPS * tiles_held(dt, p.HELD)
        return hk.cdiv(p.o.rows, ROW_TILE), hk.cdiv(p.o.cols, per_block)
    return grid


def _column_tiles(held: int) -> list:
    """This warp's column tiles of its block's band: warp w takes w, w + WARPS, ..."""
    warps = hk.arch.num_warps
    first = hk.arch.block_idx.y * warps * held + hk.arch.warp_id
    return [first + i * warps for i in range(held)]


def activation(act: str, dt):
    """ACT as a function of a float32 tile: for 16-bit results silu is hk.silu_fast (exp2 and
    the hardware's reciprocal: within 2^-20 + |x|·2^-23 relative of silu, far below one
    rounding of the result, and 8 instructions a value on sm_90a where silu takes 13); float32
    results take hk.silu."""
    if act == "silu" and dt.bits == 16:
        return hk.silu_fast
    return APPLY[act]


def _gated(o, gates, ups, band, columns, ACT, dt):
    """o's tiles at (band, columns) = ACT(gate) · up, float32 rounded once to dt."""
    for c, gate, up in zip(columns, gates, ups):
        o[hk.tile_coord(0, 0, band, c)] = (
            activation(ACT, dt)(gate.to(hk.fp32)) * up.to(hk.fp32)).to(dt)


@functools.lru_cache(maxsize=None)
def act_and_mul_kernel(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid(dt), warps="WARPS", name=f"act_and_mul_{dtype}", requires=HALVES)
    def act_and_mul(x: hk.Tensor[dt], o: hk.Tensor[dt], *, ACT: hk.Constexpr[str] = "silu",
                    COLS: hk.Constexpr[int] = 64, WARPS: hk.Constexpr[int] = 4,
                    HELD: hk.Constexpr[int] = 1):
        band, t = hk.arch.block_idx.x, flat(dt, COLS)
        columns = _column_tiles(tiles_held(dt, HELD))
        d = o.cols                                   # where the up half starts, in elements
        gates = [x[hk.elem_coord(0, 0, band * ROW_TILE, c * COLS)].load(t) for c in columns]
        ups = [x[hk.elem_coord(0, 0, band * ROW_TILE, c * COLS + d)].load(t) for c in columns]
        _gated(o, gates, ups, band, columns, ACT, dt)

    return act_and_mul


@functools.lru_cache(maxsize=None)
def act_and_mul_tokens_kernel(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_grid(dt), warps="WARPS", name=f"act_and_mul_tokens_{dtype}",
               requires=TOKEN_BANDS)
    def act_and_mul_tokens(x: hk.Tensor[dt], o: hk.Tensor[dt], *,
                           ACT: hk.Constexpr[str] = "silu", COLS: hk.Constexpr[int] = 64,
                           WARPS: hk.Constexpr[int] = 4, HELD: hk.Constexpr[int] = 1):
        token, t = hk.arch.block_idx.x, flat(dt, COLS)
        columns = _column_tiles(tiles_held(dt, HELD))
        gates = [x[hk.tile_coord(0, 0, 2 * token, c)].load(t) for c in columns]
        ups = [x[hk.tile_coord(0, 0, 2 * token + 1, c)].load(t) for c in columns]
        _gated(o, gates, ups, token, columns, ACT, dt)

    return act_and_mul_tokens


def _flat_grid(p):
    return p.o.depth, hk.cdiv(p.o.rows // ROW_TILE, p.WARPS)


@functools.lru_cache(maxsize=None)
def act_and_mul_flat_kernel(dtype: str):
    dt = getattr(hk, dtype)

    @hk.kernel(grid=_flat_grid, warps="WARPS", name=f"act_and_mul_flat_{dtype}",
               requires=FLAT_TOKENS)
    def act_and_mul_flat(x: hk.Tensor[dt], o: hk.Tensor[dt], *,
                         ACT: hk.Constexpr[str] = "silu", COLS: hk.Constexpr[int] = 16,
                         WARPS: hk.Constexpr[int] = 4):
        token, t = hk.arch.block_idx.x, flat(dt, COLS)
        band = hk.arch.block_idx.y * WARPS + hk.arch.warp_id
        row = band * ROW_TILE
        if row < o.rows:                             # the last block's spare warps do nothing
            gate = x[hk.elem_coord(0, token, row, 0)].load(t)
            up = x[hk.elem_coord(0, token, row + o.rows, 0)].load(t)   # o.rows: d / COLS
            o[hk.tile_coord(0, token, band, 0)] = (
                activation(ACT, dt)(gate.to(hk.fp32)) * up.to(hk.fp32)).to(dt)

    return act_and_mul_flat


KERNELS = {"act_and_mul": act_and_mul_kernel, "act_and_mul_tokens": act_and_mul_tokens_kernel,
           "act_and_mul_flat": act_and_mul_flat_kernel}

"""Ten hk-dsl idioms for a ktile compatibility test (issue #10).

Written for this survey (not copied from hk-dsl): each kernel is spelled the way hk-dsl 0.8.0's
public API spells it, and together they cover the spellings issue #10 lists -- `hk.arch.warp_id()`
called, `hk.lds.alloc(tile, name=...)`, `hk.group(N).load(...)`, `tile.sum(axis=1)` and the other
Tile methods, `hk.mma("mma_ABt", a, b, acc)` variant first, `hk.rand(tile_type, seed, offset,
stride)`, and tensors of 1 to 4 dimensions (hk left-pads to (batch, depth, rows, cols)).

    HK_IMPL=hk    PYTHONPATH=<hk-dsl unpacked> <python3.12 with numpy> benchmarks/hk_idioms.py   # hk-dsl 0.8.0 (trace only)
    HK_IMPL=ktile .venv/bin/python benchmarks/hk_idioms.py [--run]

Trace mode traces every idiom for its target(s) and prints one line each. `--run` (ktile only:
hk needs an AMD GPU to launch) also calls the idioms that have a torch reference, on CPU tensors
of the ranks listed in CALLS, and compares.

Target notes: idioms 1-9 are target-neutral (hk traces them for gfx1100 and gfx950; ktile should
trace them for every target it has). Idiom 10 is AMD-CDNA4 scheduling (`g.load(wait=False)`,
`pingpong`, `sched_group_barrier`, `setprio`, `xcd_id`), which hk accepts only for gfx950; under
ktile it should trace everywhere and mean the nearest thing (see the survey, section 5).
"""
from __future__ import annotations

import os
import sys
import traceback

IMPL = os.environ.get("HK_IMPL", "hk")
if IMPL == "ktile":
    import ktile as hk  # noqa: F401
else:
    import hk  # noqa: F401

DECORATED = {}      # name -> the kernel, or the exception @hk.kernel raised (ktile refuses some
                    # signatures at decoration time; that is a finding, not a crash of this file)


def idiom(**kw):
    """`@hk.kernel(**kw)`, with a refusal recorded instead of raised."""
    def wrap(fn):
        try:
            DECORATED[fn.__name__] = hk.kernel(**kw)(fn)
        except Exception as e:  # noqa: BLE001
            DECORATED[fn.__name__] = e
        return fn
    return wrap


# ---- 1. the seed's `add`, as the README writes it (tile coordinates, unbounded) -------------
# Called on 2-D tensors (hk pads (R, C) to (1, 1, R, C)); shapes a whole number of 16x64 tiles,
# since hk's unbounded load/store do not mask a partial tile.

@idiom(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch))
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y,
                        hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


# ---- 2. RMSNorm: warp_id() called, .at[] element views, a load that converts bf16 -> fp32,
# col_vec / row_vec types, `v.sum(axis=1)` accumulated with +=, a runtime range starting at the
# warp, hk.collective.cross_warp, hk.math, vector broadcasts, .to(), an unannotated keyword-only
# constexpr, warps=4, a 1-D weight (padded to (1, 1, 1, H)).

@idiom(warps=4, grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *, EPS=1e-6):
    T = hk.RT(hk.fp32, 16, 64)
    row = hk.arch.block_idx.y * 16
    sq = hk.zeros(hk.col_vec(T))
    for cb in range(hk.arch.warp_id(), hk.cdiv(x.cols, 64), 4):
        v = x.at[row, cb * 64].load(T, bounded=True)
        sq += (v * v).sum(axis=1)
    tot = hk.collective.cross_warp(sq, "add", 4)
    r = hk.math.rsqrt(tot / x.cols + EPS)
    for cb in range(hk.arch.warp_id(), hk.cdiv(x.cols, 64), 4):
        v = x.at[row, cb * 64].load(T, bounded=True)
        g = w.at[0, cb * 64].load(hk.row_vec(T))
        o.at[row, cb * 64].store((v * r[:, None] * g[None, :]).to(hk.bf16), bounded=True)


# ---- 3. Row softmax and column statistics with the Tile methods: max/sum/min(axis=...),
# the online max `m.max_(t.max(axis=1))`, `.exp()`, broadcasting by a col_vec, in-place maps
# and fills, hk.max / .maximum / .minimum, hk.neg_infty / hk.full, and the shorthand `x.tile[r, c]`.

@idiom(grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def softmax(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], lo: hk.Tensor[hk.fp32]):
    T = hk.RT(hk.fp32, 16, 64)
    by = hk.arch.block_idx.y
    t = x.tile[by, 0].load(T)
    m = hk.neg_infty(hk.col_vec(T))
    m.max_(t.max(axis=1))
    e = t - m
    e.exp_()
    s = e.sum(axis=1)
    o.tile[by, 0] = e / s
    c = hk.full(T, 1.0)
    c *= hk.max(t, -1.0).minimum(1.0)
    c.maximum(t.min(axis=1)[:, None] * 0.0 + t, into=c)     # elementwise max with t itself
    lo.tile[by, 0] = c.relu().copy()


# ---- 4. GEMM through LDS: hk.lds.alloc(tile, name=...), hk.group(4).load(dst, src), a runtime
# K loop over a device extent, barrier, an LDS subtile picked by warp_id(), and the variant-first
# mma with into= (in place, as a runtime loop needs).

@idiom(warps=4, grid=lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 64), 1))
def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    w = hk.arch.warp_id()
    g = hk.group(4)
    As = hk.lds.alloc(hk.ST(hk.bf16, 64, 32), name="As")
    Bs = hk.lds.alloc(hk.ST(hk.bf16, 64, 32), name="Bs")
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64, "col"))
    for k in range(hk.cdiv(a.cols, 32)):
        g.load(As, a[hk.tile_coord(0, 0, hk.arch.block_idx.y, k)])
        g.load(Bs, b[hk.tile_coord(0, 0, hk.arch.block_idx.x, k)])
        hk.arch.barrier()
        at = As.subtile(16, 32, w, 0).load(hk.RT(hk.bf16, 16, 32))
        bt = Bs.load(hk.RT(hk.bf16, 64, 32))
        hk.mma("mma_ABt", at, bt, acc, into=acc)
        hk.arch.barrier()
    c[hk.tile_coord(0, 0, hk.arch.block_idx.y * 4 + w, hk.arch.block_idx.x)] = acc


# ---- 5. The mma spellings on register tiles: `acc += a @ b` (mma_AB: a row, b col),
# `hk.mma("mma_ABt", ...)` into=, `hk.mma("mma_AB", ...)` returning a new tile, `a.T`, hk.transpose.

@idiom(grid=lambda p: (hk.cdiv(p.c.cols, 16), hk.cdiv(p.c.rows, 16), 1))
def mma_forms(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], bt: hk.Tensor[hk.bf16],
              c: hk.Tensor[hk.fp32]):
    bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
    A = a[hk.tile_coord(0, 0, by, 0)].load(hk.RT(hk.bf16, 16, 32))
    B = b[hk.tile_coord(0, 0, 0, bx)].load(hk.RT(hk.bf16, 32, 16, "col"))
    Bt = bt[hk.tile_coord(0, 0, bx, 0)].load(hk.RT(hk.bf16, 16, 32))
    C = hk.RT(hk.fp32, 16, 16, "col")
    acc1 = hk.zeros(C)
    acc1 += A @ B                                   # mma_AB
    acc2 = hk.zeros(C)
    hk.mma("mma_ABt", A, Bt, acc2, into=acc2)       # variant first, in place
    acc3 = hk.mma("mma_AB", A, B, hk.zeros(C))      # variant first, a new tile
    acc4 = hk.zeros(C)
    acc4 += A @ Bt.T                                # mma_ABt by operator
    c[hk.tile_coord(0, 0, by, bx)] = (acc1 + acc2 + acc3 + acc4) * 0.25


# ---- 6. Dropout, Triton's tutorial: hk.rand(tile_type, seed, offset, row_stride) draws
# tl.rand(seed, offset + r*row_stride + c); a positional Constexpr parameter with a default;
# `.step()` as a keep mask; a Python-number reciprocal folded at trace time.

@idiom(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16), 1))
def dropout(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], SEED: hk.Constexpr[int] = 1234, *,
            P: hk.Constexpr[float] = 0.25):
    T = hk.RT(hk.fp32, 16, 64)
    bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
    r = hk.rand(T, SEED, by * 16 * x.cols + bx * 64, x.cols)
    t = x.tile[by, bx].load(T, bounded=True)
    o.tile[by, bx].store(t * (r - P).step() * (1.0 / (1.0 - P)), bounded=True)


# ---- 7. Control flow and ragged edges: @hk.func, hk.range(n, unroll=), hk.range_constexpr,
# `for ... in range(device)`, a runtime `if` and `while` carrying an index, hk.if_ / hk.scope,
# bounded=n row limits, right_fill_ with a device Int for a ragged last column block.

@hk.func
def block(x, r, c, nrows):
    return x.at[r, c].load(hk.RT(hk.fp32, 16, 64), bounded=nrows)


@idiom(grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def ragged_rowsum(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    T = hk.RT(hk.fp32, 16, 64)
    row = hk.arch.block_idx.y * 16
    left = hk.min(x.rows - row, 16)
    acc = hk.zeros(T)
    for cb in hk.range(hk.cdiv(x.cols, 64), unroll=2):
        t = block(x, row, cb * 64, left)
        t.right_fill_(x.cols - cb * 64)            # columns past the tensor's last -> 0
        acc += t
    for _ in hk.range_constexpr(2):
        acc *= 1.0
    n = 0
    k = hk.arch.block_idx.y
    while k < 2:                                    # a runtime while carrying k and n
        k = k + 1
        n = n + 1
    if n > 5:                                       # never true: a runtime if
        acc.zero_()
    s = hk.zeros(hk.col_vec(T))
    s += acc.sum(axis=1)                            # a Reduction lands in a Vec
    with hk.if_(row < x.rows):
        with hk.scope():
            o.at[row, 0].store(hk.broadcast_row(T, s), bounded=left)


# ---- 8. Rows by index and scalar loads: a 1-D int32 id tensor (padded to (1, 1, 1, N)),
# Global.gather / Global.scatter, View.load_scalar, element and tile views.

@idiom(grid=lambda p: (hk.cdiv(p.out.cols, 64), hk.cdiv(p.ids.cols, 16), 1))
def embedding(table: hk.Tensor[hk.bf16], ids: hk.Tensor[hk.i32], out: hk.Tensor[hk.bf16],
              first: hk.Tensor[hk.i32]):
    bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
    T = hk.RT(hk.bf16, 16, 64)
    t = table.gather(T, ids, by * 16, col=bx * 64)
    out.scatter(t, ids, by * 16, col=bx * 64)       # row r -> row ids[at + r] (a permutation)
    i0 = ids.at[0, 0].load_scalar()
    with hk.if_((bx == 0) & (by == 0)):
        first.at[0, 0].atomic_add_scalar(i0)


# ---- 9. 1-D to 4-D tensors in one kernel: block z walks batch x depth, using the device
# extents x.batch / x.depth and Int // %, bounded loads and stores; called with (N,), (R, C),
# (D, R, C) and (B, D, R, C).

@idiom(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16), p.x.batch * p.x.depth))
def scale(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, ALPHA=2.0):
    bz = hk.arch.block_idx.z
    idx = hk.tile_coord(bz // x.depth, bz % x.depth, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = x[idx].load(hk.RT(hk.fp32, 16, 64), bounded=True)
    o[idx].store(t * ALPHA, bounded=True)


# ---- 10. CDNA4 schedule (hk: gfx950 only): a double-buffered LDS stack from
# hk.lds.alloc(..., count=2, name=...), the asynchronous group load g.load(wait=False) with
# g.wait_for, LDS reads left in flight (load(wait=False) + hk.lds.wait_for), hk.arch.pingpong,
# sched_group_barrier, setprio, vm_wait, xcd_id / xcd_count.

@idiom(warps=8, grid=lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 128), 1))
def pingpong_gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
    w = hk.arch.warp_id()
    g = hk.group(8)
    As = hk.lds.alloc(hk.ST(hk.bf16, 128, 64), count=2, name="As")
    Bs = hk.lds.alloc(hk.ST(hk.bf16, 64, 64), count=2, name="Bs")
    acc = hk.zeros(hk.RT(hk.fp32, 16, 64, "col"))
    xcd = hk.arch.xcd_id()
    g.load(As[0], a[hk.tile_coord(0, 0, hk.arch.block_idx.y, 0)], wait=False)
    g.load(Bs[0], b[hk.tile_coord(0, 0, hk.arch.block_idx.x, 0)], wait=False)
    g.wait_for(As[0], Bs[0])
    hk.arch.barrier()
    with hk.arch.pingpong(w // 4 == 1):
        g.load(As[1], a[hk.tile_coord(0, 0, hk.arch.block_idx.y, 1)], wait=False)
        g.load(Bs[1], b[hk.tile_coord(0, 0, hk.arch.block_idx.x, 1)], wait=False)
        at = As[0].subtile(16, 64, w, 0).load(hk.RT(hk.bf16, 16, 64), wait=False)
        bt = Bs[0].load(hk.RT(hk.bf16, 64, 64), wait=False)
        hk.lds.wait_for(at, bt)
        hk.arch.setprio(1)
        for _ in range(2):
            hk.arch.sched_group_barrier("ds_read", 1)
            hk.arch.sched_group_barrier("mma", 2)
        acc += at @ bt.T
        hk.arch.setprio(0)
        hk.arch.barrier()
        g.wait_for(As[1], Bs[1])
        hk.arch.barrier()                           # inside pingpong: two barriers, not one
        hk.arch.barrier()
        at2 = As[1].subtile(16, 64, w, 0).load(hk.RT(hk.bf16, 16, 64))
        bt2 = Bs[1].load(hk.RT(hk.bf16, 64, 64))
        hk.mma("mma_ABt", at2, bt2, acc, into=acc)
        hk.arch.barrier()
    hk.arch.vm_wait(0)
    if xcd < hk.arch.xcd_count():                   # always: a runtime if on the XCD id
        c[hk.tile_coord(0, 0, hk.arch.block_idx.y * 8 + w, hk.arch.block_idx.x)] = acc


# ---- the table -------------------------------------------------------------------------------

IDIOMS = [
    (add, ("gfx1100", "gfx950"), "seed add, tile_coord, 2-D call"),
    (rmsnorm, ("gfx1100", "gfx950"), "warp_id(), .at, load converts, col_vec, sum(axis=1), cross_warp"),
    (softmax, ("gfx1100", "gfx950"), "Tile methods: max/sum/min(axis), max_, exp_, maximum, x.tile[]"),
    (gemm, ("gfx1100", "gfx950"), "lds.alloc(name=), group(4).load, subtile, mma('mma_ABt', ...)"),
    (mma_forms, ("gfx1100", "gfx950"), "acc += a @ b, hk.mma variant-first, .T"),
    (dropout, ("gfx1100", "gfx950"), "hk.rand(T, seed, offset, stride), positional Constexpr, .step()"),
    (ragged_rowsum, ("gfx1100", "gfx950"), "hk.func, hk.range(unroll=), range_constexpr, if_/scope, bounded=n, right_fill_"),
    (embedding, ("gfx1100", "gfx950"), "gather/scatter methods, load_scalar, atomic_add_scalar, 1-D ids"),
    (scale, ("gfx1100", "gfx950"), "1-4-D tensors, x.depth, Int // %, bounded"),
    (pingpong_gemm, ("gfx950",), "CDNA4: count=2, g.load(wait=False), pingpong, sched_group_barrier, setprio, xcd_id"),
]

# For `--run` (ktile): the calls, each (kernel, input shapes by parameter, constants, reference).
# Ranks 1-4 throughout; the reference is torch on the same (unpadded) tensors.


def _refs():
    import torch
    bf, f32 = torch.bfloat16, torch.float32

    def rms_ref(x, w, o):
        xf = x.float()
        return ((xf * torch.rsqrt((xf * xf).mean(-1, keepdim=True) + 1e-6)) * w.float()).to(bf)

    calls = [
        (add, [((32, 128), bf), ((32, 128), bf), ((32, 128), bf)], {}, lambda a, b, o: a + b),
        (add, [((2, 1, 16, 64), bf)] * 3, {}, lambda a, b, o: a + b),   # depth 1: add covers d=0 only
        (rmsnorm, [((40, 256), bf), ((256,), bf), ((40, 256), bf)], {}, rms_ref),
        (rmsnorm, [((3, 40, 256), bf), ((256,), bf), ((3, 40, 256), bf)], {}, None),  # rows of depth 0 only
        (scale, [((100,), f32), ((100,), f32)], {}, lambda x, o: x * 2.0),
        (scale, [((33, 70), f32), ((33, 70), f32)], {}, lambda x, o: x * 2.0),
        (scale, [((3, 33, 70), f32), ((3, 33, 70), f32)], {}, lambda x, o: x * 2.0),
        (scale, [((2, 3, 33, 70), f32), ((2, 3, 33, 70), f32)], {"ALPHA": 0.5}, lambda x, o: x * 0.5),
        (softmax, [((32, 64), f32)] * 3, {}, lambda x, o, lo: torch.softmax(x, -1)),
        (ragged_rowsum, [((37, 150), f32), ((37, 64), f32)], {},
         lambda x, o: x.sum(-1, keepdim=True).expand(37, 64)),
    ]
    return calls


def trace_all(impl: str) -> int:
    ok = 0
    for fn, archs, what in IDIOMS:
        k = DECORATED[fn.__name__]
        for arch in archs:
            try:
                if isinstance(k, Exception):
                    raise k
                if impl == "hk":
                    k._arch = arch          # hk fixes $HK_ARCH once a process; arch= per kernel
                    k._ir_cache.clear()
                    k.trace()
                else:
                    k.trace(target=arch)
                status = "traces"
                ok += 1
            except Exception as e:  # noqa: BLE001 -- a survey: record and go on
                first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                status = f"FAILS {type(e).__name__}: {first[:150]}"
            name = fn.__name__
            print(f"{name:14s} {arch:8s} {status}   [{what}]")
    return ok


def run_all() -> None:
    import torch
    for fn, shapes, consts, ref in _refs():
        k = DECORATED[fn.__name__]
        torch.manual_seed(0)
        args = []
        for shape, dt in shapes:
            args.append((torch.randn(shape) * 0.5).to(dt))
        try:
            if isinstance(k, Exception):
                raise k
            k(*args, **consts)
            if ref is None:
                print(f"{fn.__name__:14s} {[s for s, _ in shapes]} ran (no reference)")
                continue
            want = ref(*args)
            got = args[-1] if fn.__name__ != "softmax" else args[1]
            err = (got.float() - want.float()).abs().max().item()
            print(f"{fn.__name__:14s} {[s for s, _ in shapes]} max|err| {err:.3g}")
        except Exception as e:  # noqa: BLE001
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(f"{fn.__name__:14s} {[s for s, _ in shapes]} FAILS {type(e).__name__}: {first[:150]}")


if __name__ == "__main__":
    n = trace_all(IMPL)
    total = sum(len(a) for _, a, _ in IDIOMS)
    print(f"{IMPL}: {n}/{total} idiom traces pass")
    if "--run" in sys.argv:
        if IMPL != "ktile":
            sys.exit("--run: hk launches need an AMD GPU; run it under HK_IMPL=ktile")
        run_all()

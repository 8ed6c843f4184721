"""hk-dsl's kernel API under `import ktile as hk` (issue #10): ten kernels written in hk-dsl's
spelling trace and translate for every target, and those that compute run on the interpreter
against a torch reference. Then the hk spellings ktile refuses, each at the author's line.

The idioms cover: `hk.arch.warp_id()` called, `hk.lds.alloc(T, name=, count=)`,
`hk.group(W).load` (waits by default, or wait=False + g.wait_for), Tile/Vec methods
(`sum/max/min(axis=)`, `exp_`, `max_`, `maximum(into=)`, fills, `step`), `hk.mma("mma_ABt", ...,
into=)`, `hk.rand(T, seed, offset, stride)`, col_vec/row_vec, converting `.at[]`/`.tile[]` loads,
looser constants, decorator options and AMD schedule hints (docs/hk-compat.md).
"""
import pytest

import ktile as hk
from bad_inputs import points_at, refused

torch = pytest.importorskip("torch")

TARGETS = ("gfx1100", "gfx1201", "gfx942", "gfx950", "sm_90a")
MARK = "# <- here"


# ---- 1. the seed's add, with hk's decorator options -------------------------------------------

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), p.o.batch),
           name="hk_add", noalias=True, preload=True)
def add(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    idx = hk.tile_coord(hk.arch.block_idx.z, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = hk.RT(hk.bf16, 16, 64)
    o[idx] = a[idx].load(t) + b[idx].load(t)


# ---- 2. RMSNorm: warp_id(), converting .at[] loads, col_vec, sum(axis=1), cross_warp -------

@hk.kernel(warps=4, grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def rmsnorm(x: hk.Tensor[hk.bf16], w: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16], *, EPS=1e-6):
    T = hk.RT(hk.fp32, 16, 64)
    row = hk.arch.block_idx.y * 16
    sq = hk.zeros(hk.col_vec(T))
    for cb in range(hk.arch.warp_id(), hk.cdiv(x.cols, 64), 4):
        v = x.at[row, cb * 64].load(T, bounded=True)        # bf16 -> fp32 on the way in
        sq += (v * v).sum(axis=1)
    r = hk.math.rsqrt(hk.collective.cross_warp(sq, "add", 4) / x.cols + EPS)
    for cb in range(hk.arch.warp_id(), hk.cdiv(x.cols, 64), 4):
        v = x.at[row, cb * 64].load(T, bounded=True)
        g = w.at[0, cb * 64].load(hk.row_vec(T))
        o.at[row, cb * 64].store(v * r[:, None] * g[None, :], bounded=True)   # fp32 -> bf16


# ---- 3. row softmax with the Tile methods -------------------------------------------------

@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
def softmax(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], lo: hk.Tensor[hk.fp32]):
    T = hk.RT(hk.fp32, 16, 64)
    by = hk.arch.block_idx.y
    t = x.tile[by, 0].load(T)
    m = hk.neg_infty(hk.col_vec(T))
    m.max_(t.max(axis=1))
    e = t - m
    e.exp_()
    o.tile[by, 0] = e / e.sum(axis=1)
    c = hk.full(T, 1.0)
    c *= hk.max(t, -1.0).minimum(1.0)
    c.maximum(t.min(axis=1)[:, None] * 0.0 + t, into=c)
    lo.tile[by, 0] = c.relu().copy()


# ---- 4. GEMM through LDS: lds.alloc(name=), hk.group(4).load, subtile, variant-first mma ----

@hk.kernel(warps=4, grid=lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 64), 1))
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


# ---- 5. the mma spellings on register tiles ------------------------------------------------

@hk.kernel(grid=lambda p: (hk.cdiv(p.c.cols, 16), hk.cdiv(p.c.rows, 16), 1))
def mma_forms(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], bt: hk.Tensor[hk.bf16],
              c: hk.Tensor[hk.fp32]):
    bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
    A = a[hk.tile_coord(0, 0, by, 0)].load(hk.RT(hk.bf16, 16, 32))
    B = b[hk.tile_coord(0, 0, 0, bx)].load(hk.RT(hk.bf16, 32, 16, "col"))
    Bt = bt[hk.tile_coord(0, 0, bx, 0)].load(hk.RT(hk.bf16, 16, 32))
    C = hk.RT(hk.fp32, 16, 16, "col")
    acc1 = hk.zeros(C)
    acc1 += A @ B
    acc2 = hk.zeros(C)
    hk.mma("mma_ABt", A, Bt, acc2, into=acc2)
    acc3 = hk.mma("mma_AB", A, B, hk.zeros(C))
    acc4 = hk.zeros(C)
    acc4 += A @ Bt.T
    c[hk.tile_coord(0, 0, by, bx)] = (acc1 + acc2 + acc3 + acc4) * 0.25


# ---- 6. dropout: hk.rand(T, seed, offset, stride), a positional Constexpr, .step() ---------

@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16), 1))
def dropout(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], SEED: hk.Constexpr[int] = 1234, *,
            P: hk.Constexpr[float] = 0.25):
    T = hk.RT(hk.fp32, 16, 64)
    bx, by = hk.arch.block_idx.x, hk.arch.block_idx.y
    r = hk.rand(T, SEED, by * 16 * x.cols + bx * 64, x.cols)
    t = x.tile[by, bx].load(T, bounded=True)
    o.tile[by, bx].store(t * (r - P).step() * (1.0 / (1.0 - P)), bounded=True)


# ---- 7. control flow and ragged edges ------------------------------------------------------

@hk.func
def block(x, r, c, nrows):
    return x.at[r, c].load(hk.RT(hk.fp32, 16, 64), bounded=nrows)


@hk.kernel(grid=lambda p: (1, hk.cdiv(p.x.rows, 16), 1))
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
    while k < 2:
        k = k + 1
        n = n + 1
    if n > 5:                                       # never true: a runtime if
        acc.zero_()
    s = hk.zeros(hk.col_vec(T))
    s += acc.sum(axis=1)
    with hk.if_(row < x.rows):
        with hk.scope():
            o.at[row, 0].store(hk.broadcast_row(T, s), bounded=True)


# ---- 8. every decorator option, bare and unannotated constants, hk.math into=, hints -------

@hk.kernel(grid=lambda p: (hk.cdiv(p.o.cols, 64), hk.cdiv(p.o.rows, 16), 1), name="bias_relu",
           defines={"HK_FAST": 1}, max_vgprs=256, min_occupancy=1, noalias=True, preload=True,
           resident=True, placement="auto")
def bias_relu(x: hk.Tensor[hk.fp32], bias: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *,
              SCALE: hk.Constexpr = 0.5, COLS=64):
    T = hk.RT(hk.fp32, 16, COLS)
    bi = hk.arch.block_idx()
    bv = bias.at[0, bi.x * COLS].load(hk.row_vec(T))
    y = hk.zeros(T)
    hk.math.add(x.tile[bi.y, bi.x].load(T), hk.broadcast_col(T, bv), into=y)
    hk.arch.sched_barrier(("valu",))
    hk.math.mul(y.relu(), SCALE, into=y)
    hk.arch.pin(y)
    assert hk.arch.target().wave in (32, 64)
    o.tile[bi.y, bi.x] = y


# ---- 9. batch x depth walked by block z: x.depth, Int // and %, bounded ---------------------

@hk.kernel(grid=lambda p: (hk.cdiv(p.x.cols, 64), hk.cdiv(p.x.rows, 16), p.x.batch * p.x.depth))
def scale(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, ALPHA=2.0):
    bz = hk.arch.block_idx.z
    idx = hk.tile_coord(bz // x.depth, bz % x.depth, hk.arch.block_idx.y, hk.arch.block_idx.x)
    t = x[idx].load(hk.RT(hk.fp32, 16, 64), bounded=True)
    o[idx].store(t * ALPHA, bounded=True)


# ---- 10. a CDNA4 schedule: LDS stacks, async group loads, pingpong, priorities, XCDs -------

@hk.kernel(warps=8, grid=lambda p: (hk.cdiv(p.c.cols, 64), hk.cdiv(p.c.rows, 128), 1))
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
        hk.arch.barrier()
        hk.arch.barrier()
        at2 = As[1].subtile(16, 64, w, 0).load(hk.RT(hk.bf16, 16, 64))
        bt2 = Bs[1].load(hk.RT(hk.bf16, 64, 64))
        hk.mma("mma_ABt", at2, bt2, acc, into=acc)
        hk.arch.barrier()
    hk.arch.vm_wait(0)
    if xcd < hk.arch.xcd_count():                   # always: ktile's GPU is one XCD
        c[hk.tile_coord(0, 0, hk.arch.block_idx.y * 8 + w, hk.arch.block_idx.x)] = acc


IDIOMS = [add, rmsnorm, softmax, gemm, mma_forms, dropout, ragged_rowsum, bias_relu, scale,
          pingpong_gemm]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kernel", IDIOMS, ids=lambda k: k.fn.__name__)
def test_idiom_traces_and_translates(kernel, target):
    source = kernel.source(target=target)
    assert f"{kernel.name}" in source


def _randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 0.5).to(dtype)


def test_add_runs_and_is_renamed():
    a, b = _randn(1, 1, 32, 128, dtype=torch.bfloat16), _randn(1, 1, 32, 128, dtype=torch.bfloat16, seed=1)
    o = torch.zeros_like(a)
    add(a, b, o)
    assert add.name == "hk_add"
    assert torch.equal(o, (a.float() + b.float()).to(torch.bfloat16))


def test_rmsnorm_matches():
    x, w = _randn(1, 1, 40, 256, dtype=torch.bfloat16), _randn(1, 1, 1, 256, dtype=torch.bfloat16, seed=1)
    o = torch.zeros_like(x)
    rmsnorm(x, w, o)
    xf = x.float()
    want = xf * torch.rsqrt((xf * xf).mean(-1, keepdim=True) + 1e-6) * w.float()
    torch.testing.assert_close(o.float(), want, atol=2e-2, rtol=2e-2)


def test_softmax_and_tile_methods_match():
    x = _randn(1, 1, 32, 64) * 4
    o, lo = torch.zeros_like(x), torch.zeros_like(x)
    softmax(x, o, lo)
    torch.testing.assert_close(o, torch.softmax(x, -1), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(lo, torch.relu(torch.maximum(x.clamp(-1, 1), x)))


@pytest.mark.parametrize("kernel,m,n,k", [(gemm, 64, 64, 64), (pingpong_gemm, 128, 64, 128)],
                         ids=["gemm", "pingpong_gemm"])
def test_gemms_match(kernel, m, n, k):
    a, b = _randn(1, 1, m, k, dtype=torch.bfloat16), _randn(1, 1, n, k, dtype=torch.bfloat16, seed=1)
    c = torch.zeros(1, 1, m, n)
    kernel(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float().transpose(-1, -2), atol=1e-3, rtol=1e-3)


def test_mma_forms_agree():
    a, b = _randn(1, 1, 32, 32, dtype=torch.bfloat16), _randn(1, 1, 32, 32, dtype=torch.bfloat16, seed=1)
    c = torch.zeros(1, 1, 32, 32)
    mma_forms(a, b, b.transpose(-1, -2).contiguous(), c)
    torch.testing.assert_close(c, a.float() @ b.float(), atol=1e-3, rtol=1e-3)


def test_dropout_keeps_or_zeroes_each_element():
    x = _randn(1, 1, 32, 128) + 3.0                 # no element is 0
    o = torch.zeros_like(x)
    dropout(x, o)
    kept = o != 0
    torch.testing.assert_close(o[kept], x[kept] / 0.75)
    assert 0.65 < kept.float().mean().item() < 0.85
    o2 = torch.zeros_like(x)
    dropout(x, o2, SEED=7)
    assert not torch.equal(o, o2)


def test_ragged_rowsum_matches():
    x = _randn(1, 1, 37, 150)
    o = torch.zeros(1, 1, 37, 64)
    ragged_rowsum(x, o)
    torch.testing.assert_close(o, x.sum(-1, keepdim=True).expand(1, 1, 37, 64), atol=1e-4,
                               rtol=1e-4)


def test_bias_relu_options_and_constants():
    x, bias = _randn(1, 1, 32, 128), _randn(1, 1, 1, 128, seed=1)
    o = torch.zeros_like(x)
    bias_relu(x, bias, o)
    torch.testing.assert_close(o, torch.relu(x + bias) * 0.5)
    assert bias_relu.name == "bias_relu" and set(bias_relu.constexprs) == {"SCALE", "COLS"}
    assert bias_relu.hk_options["placement"] == "auto"


@pytest.mark.parametrize("alpha", [2.0, 0.5])
def test_scale_walks_batch_and_depth(alpha):
    x = _randn(2, 3, 33, 70)
    o = torch.zeros_like(x)
    scale(x, o, ALPHA=alpha)
    torch.testing.assert_close(o, x * alpha)


# ---- refusals: hk spellings ktile cannot honour, each at the author's line -------------------

def _traced(body):
    """A one-tensor kernel around `body` (a function of the global), traced for gfx1100."""
    return lambda: body.trace(target="gfx1100")


@hk.kernel(grid=(1, 1, 1))
def _bounded_store(x: hk.Tensor[hk.fp32]):
    t = x.tile[0, 0].load(hk.RT(hk.fp32, 16, 64))
    x.tile[0, 0].store(t, bounded=hk.arch.block_idx.x + 3)  # <- here


@hk.kernel(grid=(1, 1, 1))
def _wrong_broadcast(x: hk.Tensor[hk.fp32]):
    t = x.tile[0, 0].load(hk.RT(hk.fp32, 16, 64))
    x.tile[0, 0] = t * t.sum(axis=1)[None, :]  # <- here


@hk.kernel(warps=2, grid=(1, 1, 1))
def _cross_warp_count(x: hk.Tensor[hk.fp32]):
    v = x.tile[0, 0].load(hk.RT(hk.fp32, 16, 64)).sum(axis=1)
    hk.collective.cross_warp(v, "add", 4)  # <- here


@hk.kernel(grid=(1, 1, 1))
def _into_wrong_type(x: hk.Tensor[hk.fp32]):
    t = x.tile[0, 0].load(hk.RT(hk.fp32, 16, 64))
    v = hk.zeros(hk.col_vec(hk.RT(hk.fp32, 16, 64)))
    t.exp(into=v)  # <- here


@hk.kernel(grid=(1, 1, 1))
def _e5m2(x: hk.Tensor[hk.fp32]):
    t = x.tile[0, 0].load(hk.RT(hk.fp32, 16, 64))
    x.tile[0, 0] = t.to(hk.fp8e5m2)  # <- here


@hk.kernel(grid=(1, 1, 1))
def _stack_index_outside(x: hk.Tensor[hk.fp32]):
    s = hk.lds.alloc(hk.ST(hk.fp32, 16, 64), count=2)   # a device index picks on the device
    x.tile[0, 0] = s[2].load(hk.RT(hk.fp32, 16, 64))  # <- here


@pytest.mark.parametrize("kernel,words", [
    (_bounded_store, ("bounded=n", "bounded=True")),
    (_wrong_broadcast, ("v[None, :]", "one value per row")),
    (_cross_warp_count, ("cross_warp over 4 warps", "warps=2")),
    (_into_wrong_type, ("into=", "result")),
    (_e5m2, ("fp8e5m2", "fp8e4m3")),
    (_stack_index_outside, ("stack index 2", "outside its 2 buffers")),
], ids=lambda v: getattr(getattr(v, "fn", None), "__name__", None))
def test_hk_spelling_refused_at_its_line(kernel, words):
    points_at(refused(_traced(kernel), *words), kernel)


def test_unknown_kernel_option_refused():
    def make():
        @hk.kernel(grid=(1, 1, 1), schedule="pingpong")
        def k(x: hk.Tensor[hk.fp32]):
            pass
    refused(make, "no option 'schedule'", "max_vgprs")


def test_group_wider_than_kernel_refused():
    @hk.kernel(warps=2, grid=(1, 1, 1))
    def k(x: hk.Tensor[hk.fp32]):
        hk.group(4)
    refused(lambda: k.trace(target="gfx1100"), "hk.group(4)", "warps=")


def test_into_of_an_expression_refused():
    @hk.kernel(grid=(1, 1, 1))
    def k(x: hk.Tensor[hk.fp32]):
        t = x.tile[0, 0].load(hk.RT(hk.fp32, 16, 64))
        t.exp(into=t[0])
    refused(lambda: k.trace(target="gfx1100"), "into=", "variable")


def test_ktile_spellings_keep_their_meaning():
    """ktile's own g[...] still refuses a load of another dtype; hk.group.load stays the
    asynchronous copy (a kernel that never waits is refused); warp_id reads as a value."""
    @hk.kernel(grid=(1, 1, 1))
    def strict(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
        o[0, 0] = x[0, 0].load(hk.RT(hk.fp32, 16, 64))
    refused(lambda: strict.trace(target="gfx1100"), "load as hk.bf16")

    @hk.kernel(warps=2, grid=(1, 1, 1))
    def unwaited(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 16, 64))
        hk.group.load(s, x[0, 0])
        o[0, hk.arch.warp_id] = s.load(hk.RT(hk.fp32, 16, 32), 0, hk.arch.warp_id)
    refused(lambda: unwaited.trace(target="gfx1100"), "wait")

"""Kernels for what the examples do not reach, run under wave emulation and compared with the
interpreter (test_emulated_coverage.py): row <-> col layout changes and col tiles through global
and shared memory, every elementwise function and conversion, row / col / block reductions, all
four MMA variants in bf16, fp16, int8 and fp8, an accumulator cast to an operand, shared vectors,
and gather / scatter of col tiles; and a kernel generated from the elementwise functions' table
that applies every unary function a kernel names to special values (every_function)."""
import ktile as hk


@hk.kernel(grid=lambda p: (1, 1, 1))
def elementwise(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], ob: hk.Tensor[hk.bf16],
                oi: hk.Tensor[hk.i32]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 32, 32))
    t = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 32, 32, "col"))
    s = a + t                                            # row + col: a layout change
    s = s * hk.sigmoid(a) - hk.tanh(t) + hk.sin(a) * hk.cos(t)
    s = s + hk.gelu(a) + hk.silu(t) + hk.rsqrt(hk.abs(a) + 1.0) + hk.exp2(a) + hk.log(hk.abs(t) + 2.0)
    s = hk.maximum(s, t) + hk.minimum(a, 0.5)
    s = s + (a ** 2.0)
    m = (a > t) & (t < 1.0)
    s = hk.where(m, s, a * 3.0)
    o[hk.tile_coord(0, 0, 0, 0)] = s
    o[hk.tile_coord(0, 0, 1, 0)] = t * 2.0               # a col tile stored
    ob[hk.tile_coord(0, 0, 0, 0)] = (s * 10.0).to(hk.bf16)
    ob[hk.tile_coord(0, 0, 1, 0)] = (t * 7.0).to(hk.fp16).to(hk.bf16)
    i = (s * 100.0).to(hk.i32) + hk.iota(hk.RT(hk.i32, 32, 32), "row") * 1000 + \
        hk.iota(hk.RT(hk.i32, 32, 32), "col")
    oi[hk.tile_coord(0, 0, 0, 0)] = i
    oi[hk.tile_coord(0, 0, 1, 0)] = (s * 50.0).to(hk.i8).to(hk.i32) + m.to(hk.i32) * 7


@hk.kernel(grid=lambda p: (1, 1, 1), warps=2)
def reductions(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    w = hk.arch.warp_id
    a = x[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.fp32, 16, 32))
    t = x[hk.tile_coord(0, 0, w, 0)].load(hk.RT(hk.fp32, 16, 32, "col"))
    r1, r2, r3 = hk.row_sum(a), hk.row_max(t), hk.row_min(a)
    c1, c2, c3 = hk.col_sum(t), hk.col_max(a), hk.col_min(t)
    o[hk.tile_coord(0, 0, w, 0)] = (a - r2 + c1 * 0.5) + (t * r1 - c2)
    rows, cols, scalar = hk.group.sum(r1), hk.group.max(c3), hk.group.min(hk.sum(r3))
    o[hk.tile_coord(0, 0, 2, 0)] = hk.zeros(hk.RT(hk.fp32, 16, 32)) + rows + cols + scalar + w * 0.0


@hk.kernel(grid=lambda p: (1, 1, 1))
def matrix_products(a: hk.Tensor[hk.bf16], h: hk.Tensor[hk.fp16], q: hk.Tensor[hk.i8],
                    o: hk.Tensor[hk.fp32], oi: hk.Tensor[hk.i32], *,
                    K: hk.Constexpr[int] = 32, KI: hk.Constexpr[int] = 64):
    acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
    ar = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.bf16, 32, K))
    ac = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.bf16, K, 32, "col"))
    br = a[hk.tile_coord(0, 0, 1, 0)].load(hk.RT(hk.bf16, 32, K))
    bc = a[hk.tile_coord(0, 0, 0, 1)].load(hk.RT(hk.bf16, K, 32, "col"))
    acc = hk.mma(ar, bc, acc, "AB")
    acc = hk.mma(ar, br, acc, "ABt")
    acc = hk.mma(ac, bc, acc, "AtB")
    acc = hk.mma(ac, br, acc, "AtBt")
    p = (acc * 0.01).to(hk.bf16)                         # an accumulator as an operand
    b32 = a[hk.tile_coord(0, 0, 1, 0)].load(hk.RT(hk.bf16, 32, 32))
    from_acc = hk.mma(p, b32, hk.zeros(hk.RT(hk.fp32, 32, 32)), "ABt")
    hr = h[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp16, 32, K))
    hc = h[hk.tile_coord(0, 0, 0, 1)].load(hk.RT(hk.fp16, K, 32, "col"))
    acc = hk.mma(hr, hc, acc, "AB")
    o[hk.tile_coord(0, 0, 0, 0)] = acc
    o[hk.tile_coord(0, 0, 1, 0)] = from_acc
    qr = q[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.i8, 32, KI))
    qb = q[hk.tile_coord(0, 0, 1, 0)].load(hk.RT(hk.i8, 32, KI))
    oi[hk.tile_coord(0, 0, 0, 0)] = hk.mma(qr, qb, hk.zeros(hk.RT(hk.i32, 32, 32)), "ABt")


@hk.kernel(grid=lambda p: (1, 1, 1))
def fp8_product(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], *, K: hk.Constexpr[int] = 32):
    x = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 32, K)).to(hk.fp8)
    y = a[hk.tile_coord(0, 0, 1, 0)].load(hk.RT(hk.fp32, 32, K)).to(hk.fp8)
    o[hk.tile_coord(0, 0, 0, 0)] = hk.mma(x, y, hk.zeros(hk.RT(hk.fp32, 32, 32)), "ABt")
    o[hk.tile_coord(0, 0, 1, 0)] = x.to(hk.fp32)


@hk.kernel(grid=lambda p: (1, 1, 1), warps=2)
def shared_tiles(x: hk.Tensor[hk.bf16], v: hk.Tensor[hk.fp32], o: hk.Tensor[hk.bf16],
                 ov: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.bf16, 32, 64))
    sv = hk.shared(hk.SV(hk.fp32, 64))
    hk.group.load(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.group.load(sv, v[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(s, sv)
    hk.barrier()
    w = hk.arch.warp_id
    a = s.load(hk.RT(hk.bf16, 16, 32), row=w, col=1)
    b = s.load(hk.RT(hk.bf16, 32, 16, "col"), row=0, col=w)
    c = sv.load(hk.RV(hk.fp32, 32, "col"), col=1)
    d = sv.load(hk.RV(hk.fp32, 16, "row"), col=w)
    hk.wait_for(a, b, c, d)
    o[hk.tile_coord(0, 0, w, 0)] = (a.to(hk.fp32) * c + d).to(hk.bf16)
    o[hk.tile_coord(0, 0, 1, w + 2)] = b
    hk.barrier()
    full = s.load(hk.RT(hk.bf16, 32, 64, "col"))
    hk.wait_for(full)
    hk.barrier()
    s.store((full.to(hk.fp32) * 2.0).to(hk.bf16))
    vv = sv.load(hk.RV(hk.fp32, 64, "col"))
    hk.wait_for(vv)
    hk.barrier()
    sv.store(vv + 1.0)
    hk.barrier()
    e = s.load(hk.RT(hk.bf16, 32, 64))
    f = sv.load(hk.RV(hk.fp32, 64, "col"))
    hk.wait_for(e, f)
    o[hk.tile_coord(0, 0, 2 + w, 0)] = e
    ov[hk.tile_coord(0, 0, w, 0)] = f


@hk.kernel(grid=lambda p: (1, 1, 1))
def gathered_rows(x: hk.Tensor[hk.bf16], idx: hk.Tensor[hk.i32], o: hk.Tensor[hk.bf16]):
    rows = idx[hk.tile_coord(0, 0, 0, 0)].load(hk.RV(hk.i32, 32))
    t = hk.gather(x, rows, hk.RT(hk.bf16, 32, 32, "col"), col=1)
    u = hk.gather(x, rows, hk.RT(hk.bf16, 32, 32), col=0)
    hk.scatter(o, rows, t, col=0)
    hk.scatter(o, rows, (u.to(hk.fp32) + 1.0).to(hk.bf16), col=1)


# ---- every unary function of the table, generated from it -----------------------------------
# A new row of ktile/ir/elementwise.py is emulated here with no edit: the kernel is written from
# the table (ktile reads a kernel's source, so it is written to a file and imported).

def every_function_source(rows) -> str:
    """A kernel storing f(a) at row tile k of `o` (fp32) and `ob` (bf16) for the k-th row."""
    lines = ["import ktile as hk", "", "",
             "@hk.kernel(grid=lambda p: (1, 1, 1))",
             "def every_function(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32],",
             "                   ob: hk.Tensor[hk.bf16]):",
             "    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32))",
             "    b = a.to(hk.bf16)"]
    for k, row in enumerate(rows):
        lines.append(f"    o[hk.tile_coord(0, 0, {k}, 0)] = hk.{row.hk}(a)")
        lines.append(f"    ob[hk.tile_coord(0, 0, {k}, 0)] = b.{row.hk}()")
    return "\n".join(lines) + "\n"


def every_function(folder, rows):
    """The generated kernel, written to `folder` and imported."""
    import importlib.util
    path = folder / "every_function.py"
    path.write_text(every_function_source(rows))
    spec = importlib.util.spec_from_file_location("every_function", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.every_function

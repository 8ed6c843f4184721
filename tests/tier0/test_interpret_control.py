"""Interpreter: control flow (scf.for with carried tiles, scf.while, scf.if with results),
arith as MLIR defines it, warps that miss a meeting, and ops it does not know."""
import numpy as np
import pytest

import ktile as hk
import ktile.passes
from ktile.errors import InternalError, KernelError
from ktile.interpret import run_module
from ktile.ir import ops as kt
from ktile.ir.printing import parse_module
from xdsl.dialects.builtin import IntegerAttr, i64


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@hk.kernel(grid=lambda p: (1, p.x.batch, 1))
def strip_sums(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    z = hk.arch.block_idx.y
    acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
    top = hk.neg_infty(hk.RV(hk.fp32, 16))
    for k in range(x.cols // 16):
        t = x[hk.tile_coord(z, 0, 0, k)].load(hk.RT(hk.fp32, 16, 16))
        for j in range(k):  # inner trip count 0, 1, 2, ...
            t = t * 0.5
        acc = acc + t
        top = hk.maximum(top, hk.row_max(t))
    o[hk.tile_coord(z, 0, 0, 0)] = acc + top


@pytest.mark.parametrize("strips", [0, 1, 3])
def test_for_loops_carry_tiles_and_vectors(strips):
    x = _rand((2, 1, 16, 16 * strips + 5), seed=strips)  # 5 extra columns are never read
    o = np.full((2, 1, 16, 16), 9.0, np.float32)
    run_module(strip_sums.trace().module, [x, o])
    for z in range(2):
        parts = [x[z, 0, :, 16 * k:16 * k + 16] * np.float32(0.5) ** k for k in range(strips)]
        acc = np.zeros((16, 16), np.float32)
        for p in parts:
            acc = acc + p
        top = np.max(parts, axis=(0, 2)) if parts else np.full(16, -np.inf, np.float32)
        np.testing.assert_array_equal(o[z, 0], acc + top[:, None])


@hk.kernel(grid=(1, 1, 1))
def halve_until_small(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32], n: hk.Tensor[hk.i32]):
    v = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RV(hk.fp32, 16))
    steps = x.rows * 0
    while v.max() > 1.0:
        v = v * 0.5
        steps = steps + 1
    if steps > 2:
        v = v + 100.0
    else:
        v = v - 100.0
    o[hk.tile_coord(0, 0, 0, 0)] = v
    n[hk.tile_coord(0, 0, 0, 0)] = hk.zeros(hk.RV(hk.i32, 16)) + steps


@pytest.mark.parametrize("scale, steps", [(0.5, 0), (3.0, 2), (20.0, 5)])
def test_while_and_if_with_results(scale, steps):
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 1, 1, 16) * np.float32(scale)
    o = np.zeros((1, 1, 1, 16), np.float32)
    n = np.zeros((1, 1, 1, 16), np.int32)
    run_module(halve_until_small.trace().module, [x, o, n])
    assert (n == steps).all()
    want = x * np.float32(0.5) ** steps + (100.0 if steps > 2 else -100.0)
    np.testing.assert_array_equal(o, want.astype(np.float32))


# ---- arith, straight from IR text ----------------------------------------------------------

MODULE = """builtin.module attributes {{kt.target = "gfx1100"}} {{
  func.func @k__grid(%gi: !kt.global<i32>, %gf: !kt.global<f32>) -> (index, index, index) \
attributes {{kt.grid = "k"}} {{
    %one = arith.constant 1 : index
    func.return %one, %one, %one : index, index, index
  }}
  func.func @k(%gi: !kt.global<i32>, %gf: !kt.global<f32>) attributes {{kt.kernel = "k", \
kt.warps = {warps} : i64}} {{
    %z = arith.constant 0 : index
    %vi = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<1xi32, row>
    %vf = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<1xf32, row>
{body}
    func.return
  }}
}}"""


def _store(value: str, column: int, kind: str) -> str:
    """Lines storing a scalar at column `column` of gi (integers, bools) or gf (f32)."""
    v, g, vec, ty = ("vf", "gf", "!kt.rv<1xf32, row>", "f32") if kind == "f32" else \
        ("vi", "gi", "!kt.rv<1xi32, row>", "i32")
    convert = {"index": f"%s{column} = arith.index_cast {value} : index to i32",
               "i32": f"%s{column} = arith.addi {value}, %c0_i32 : i32",
               "i1": f"%s{column} = arith.select {value}, %c1_i32, %c0_i32 : i32",
               "f32": f"%s{column} = arith.addf {value}, %c0_f32 : f32"}[kind]
    return f"""    {convert}
    %col{column} = arith.constant {column} : index
    %r{column} = "kt.binary"(%{v}, %s{column}) <{{fn = "add"}}> : ({vec}, {ty}) -> {vec}
    "kt.store"(%{g}, %z, %z, %z, %col{column}, %r{column}) : (!kt.global<{ty}>, index, \
index, index, index, {vec}) -> ()"""


ARITH = [  # (expression lines defining %x, its kind, expected value)
    ("%x = arith.divsi %m7, %c2 : index", "index", -3),
    ("%x = arith.remsi %m7, %c2 : index", "index", -1),
    ("%x = arith.floordivsi %m7, %c2 : index", "index", -4),
    ("%x = arith.ceildivsi %m7, %c2 : index", "index", -3),
    ("%x = arith.ceildivsi %c7, %c2 : index", "index", 4),
    ("%x = arith.maxsi %m7, %c2 : index", "index", 2),
    ("%x = arith.addi %imax, %c1_i32 : i32", "i32", -2 ** 31),
    ("%x = arith.shli %c1_i32, %c31_i32 : i32", "i32", -2 ** 31),
    ("%x = arith.shrui %m8_i32, %c1_i32 : i32", "i32", 2 ** 31 - 4),
    ("%x = arith.trunci %big : i64 to i32", "i32", 1),
    ("%x = arith.cmpi ult, %m1_i32, %c1_i32 : i32", "i1", 0),
    ("%x = arith.cmpi slt, %m1_i32, %c1_i32 : i32", "i1", 1),
    ("%x = arith.cmpf olt, %nan, %c1_f32 : f32", "i1", 0),
    ("%x = arith.cmpf une, %nan, %c1_f32 : f32", "i1", 1),
    ("%x = arith.addf %f2_24, %c1_f32 : f32", "f32", 2.0 ** 24),  # float32, not double
    ("%x = arith.divf %c1_f32, %c3_f32 : f32", "f32", np.float32(1) / np.float32(3)),
    ("%t = arith.index_cast %c7 : index to i64\n    %x = arith.sitofp %t : i64 to f32", "f32",
     7.0),
    ("%x = arith.maximumf %nan, %c1_f32 : f32", "f32", np.nan),
    ("%t = arith.cmpi sgt, %c7, %c2 : index\n    %x = arith.select %t, %m7, %c2 : index",
     "index", -7),
]

CONSTANTS = """    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c7 = arith.constant 7 : index
    %m7 = arith.constant -7 : index
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c31_i32 = arith.constant 31 : i32
    %m1_i32 = arith.constant -1 : i32
    %m8_i32 = arith.constant -8 : i32
    %imax = arith.constant 2147483647 : i32
    %big = arith.constant 4294967297 : i64
    %c0_f32 = arith.constant 0.0 : f32
    %c1_f32 = arith.constant 1.0 : f32
    %c3_f32 = arith.constant 3.0 : f32
    %f2_24 = arith.constant 16777216.0 : f32
    %nan = arith.constant 0x7FC00000 : f32"""


def _module(body: str, warps: int = 1):
    return parse_module(MODULE.format(body=body, warps=warps))


@pytest.mark.parametrize("expr, kind, want", ARITH, ids=[a[0].split("=")[-1][:28] for a in ARITH])
def test_arith_follows_mlir(expr, kind, want):
    body = "\n".join([CONSTANTS, "    " + expr, _store("%x", 0, kind)])
    gi, gf = np.zeros((1, 1, 1, 1), np.int32), np.zeros((1, 1, 1, 1), np.float32)
    run_module(_module(body), [gi, gf])
    got = gf.item() if kind == "f32" else gi.item()
    if isinstance(want, float) and np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want


# ---- warps that miss a meeting -------------------------------------------------------------

def test_a_warp_that_skips_a_barrier_is_an_error():
    body = """    %w = "kt.warp_id"() : () -> index
    %one = arith.constant 1 : index
    scf.for %i = %z to %w step %one {
      "kt.barrier"() : () -> () loc("kern.py":12:0)
    }"""
    with pytest.raises(KernelError, match="barrier not reached by all warps: warp 0 ended") \
            as err:
        run_module(_module(body, warps=2), [np.zeros((1, 1, 1, 1), np.int32),
                                            np.zeros((1, 1, 1, 1), np.float32)])
    assert (err.value.loc.file, err.value.loc.line) == ("kern.py", 12)


def test_warps_at_different_barriers_is_an_error():
    body = """    %w = "kt.warp_id"() : () -> index
    %first = arith.cmpi eq, %w, %z : index
    scf.if %first {
      "kt.barrier"() : () -> () loc("kern.py":20:0)
    } else {
      "kt.barrier"() : () -> () loc("kern.py":22:0)
    }"""
    with pytest.raises(KernelError, match=r"warp 1 waits at line 22 \(barrier\)") as err:
        run_module(_module(body, warps=2), [np.zeros((1, 1, 1, 1), np.int32),
                                            np.zeros((1, 1, 1, 1), np.float32)])
    assert err.value.loc.line == 20


def test_an_op_without_a_handler_is_an_internal_error():
    body = CONSTANTS + "\n    %x = math.absf %c1_f32 : f32"
    with pytest.raises(InternalError, match="no handler for op 'math.absf'"):
        run_module(_module(body), [np.zeros((1, 1, 1, 1), np.int32),
                                   np.zeros((1, 1, 1, 1), np.float32)])


# ---- a shared load carried into a loop before its wait -------------------------------------

@hk.kernel(grid=(1, 1, 1))
def prefetch(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 16, 16))
    s.store(x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16)))
    hk.barrier()
    t = s.load(hk.RT(hk.fp32, 16, 16))
    acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
    for k in range(x.rows // 16):  # @carried
        hk.wait_for(t)
        acc = acc + t
        t = s.load(hk.RT(hk.fp32, 16, 16))
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, 0, 0)] = acc


def test_carrying_an_unwaited_shared_load_is_a_read(monkeypatch):
    """Carrying a value copies its registers (the C++ declares `T v = init;`), so a load
    still in flight must not be carried; this holds whatever the passes accept."""
    monkeypatch.setattr(ktile.passes, "run_pipeline", lambda module, target: [])
    module = prefetch.trace("gfx950").module
    for op in module.walk():
        if isinstance(op, kt.WaitForOp):
            op.properties["lds"] = IntegerAttr(0, i64)
    x, o = _rand((1, 1, 32, 16)), np.zeros((1, 1, 16, 16), np.float32)
    with pytest.raises(KernelError, match="read of the 16x16 fp32 register tile loaded at line "
                                          r"\d+ before its wait") as err:
        run_module(module, [x, o])
    line = next(i for i, text in enumerate(open(__file__), 1) if text.rstrip().endswith("@carried"))
    assert err.value.loc.line == line
    assert "carrying it into a loop" in err.value.hint

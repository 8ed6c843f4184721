"""The elementwise functions' table (ktile/ir/elementwise.py) is the one definition: every row
is reachable from hk.<name> and hk.math.<name>, the dialect's verifier, the interpreter and the
C++ headers; the rounding functions and float -> int conversion compute what the docs say."""
import re
from pathlib import Path

import numpy as np
import pytest

import ktile as hk
from bad_inputs import points_at, refused
from ktile.codegen.lower_compute import BINARY_FUNCTIONS, UNARY_FUNCTIONS
from ktile.interpret import ops_elementwise as interp
from ktile.ir import elementwise
from ktile.ir import ops as kt

INCLUDE = Path(__file__).resolve().parents[2] / "ktile" / "include" / "ktile"
COMMON_OPS = (INCLUDE / "common" / "elementwise_ops.hpp").read_text()
COMMON_MAPS = (INCLUDE / "common" / "elementwise_maps.hpp").read_text()
ROWS = elementwise.FUNCTIONS
NAMED = [f for f in ROWS if f.hk is not None]


def _ids(rows):
    return [f.name for f in rows]


# ---- derivation: each row reaches every consumer --------------------------------------------

@pytest.mark.parametrize("row", NAMED, ids=_ids(NAMED))
def test_a_named_row_is_hk_and_hk_math(row):
    assert callable(getattr(hk, row.hk)) and callable(getattr(hk.math, row.hk))
    assert row.hk in dir(hk) and row.hk in dir(hk.math)


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_a_row_is_a_function_of_its_op(row):
    names = kt.UNARY_FNS if row.arity == 1 else kt.BINARY_FNS
    assert row.name in names
    assert (kt.UNARY_OPERANDS[row.name] if row.arity == 1 else row.rule) == row.rule


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_a_row_has_an_interpretation_in_each_of_its_domains(row):
    if row.arity == 1:
        tables = {"floating": interp.FLOAT_UNARY, "integer": interp.INT_UNARY,
                  "logical": interp.LOGICAL_UNARY}
    elif row.rule == "compare":
        tables = {"floating": interp.COMPARE, "integer": interp.COMPARE}
    else:
        tables = {"floating": interp.FLOAT_BINARY, "integer": interp.INT_BINARY,
                  "logical": interp.LOGICAL}
    for domain, table in tables.items():
        assert (row.name in table) == (getattr(row, domain) is not None), domain


UNARY_NAMED = [f for f in elementwise.UNARY if f.hk is not None]


@pytest.mark.parametrize("row", UNARY_NAMED, ids=_ids(UNARY_NAMED))
def test_a_named_unary_row_is_a_tile_and_vector_method(row):
    from ktile.lang.tiles import Tile, Vec
    assert callable(getattr(Tile, row.hk)) and callable(getattr(Vec, row.hk))


@pytest.mark.parametrize("row", UNARY_NAMED, ids=_ids(UNARY_NAMED))
def test_a_method_traces_to_its_rows_function(row):
    @hk.kernel(grid=(1, 1, 1))
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        o[hk.tile_coord(0, 0, 0, 0)] = getattr(x[hk.tile_coord(0, 0, 0, 0)].load(
            hk.RT(hk.fp32, 16, 16)), row.hk)()
    assert f'<{{fn = "{row.name}"}}>' in k.trace().dump()


def _float_unary_list() -> list[str]:
    """The names in the common header's KT_FLOAT_UNARY_FUNCTIONS X-macro list."""
    body = COMMON_OPS.split("#define KT_FLOAT_UNARY_FUNCTIONS(X)", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"X\((\w+),", body)


def _maps_defined() -> set[str]:
    """kt:: functions the common maps header defines: the X list's, and KT_UNARY / KT_BINARY's."""
    uses = "\n".join(line for line in COMMON_MAPS.splitlines() if not line.startswith("#define"))
    return set(_float_unary_list()) | set(re.findall(r"KT_(?:UNARY|BINARY)\((\w+),", uses))


def test_the_headers_float_functions_are_the_tables():
    assert sorted(_float_unary_list()) == sorted(f.name for f in elementwise.UNARY
                                                 if f.rule == "float")


@pytest.mark.parametrize("row", ROWS, ids=_ids(ROWS))
def test_a_row_lowers_to_a_header_function(row):
    lowered = (UNARY_FUNCTIONS if row.arity == 1 else BINARY_FUNCTIONS)[row.name]
    assert lowered == row.cpp
    assert row.cpp.removeprefix("kt::") in _maps_defined()


def test_every_header_function_is_a_row():
    assert _maps_defined() == {f.cpp.removeprefix("kt::") for f in ROWS}


# ---- round, floor, ceil, trunc ---------------------------------------------------------------

SPECIAL = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 3.7, -3.7,
                    8388607.5, 8388609.0, 1e30, -1e30, np.nan, np.inf, -np.inf, -0.0, 0.0,
                    1e-40, -1e-40, 2.0 ** 23 + 1, -(2.0 ** 24), 123456.5, -123457.5],
                   np.float32)
ROUNDINGS = {"round": np.rint, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}


@hk.kernel(grid=lambda p: (1, 1, 1))
def roundings(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 32))
    o[hk.tile_coord(0, 0, 0, 0)] = hk.round(a)
    o[hk.tile_coord(0, 0, 1, 0)] = hk.floor(a)
    o[hk.tile_coord(0, 0, 2, 0)] = hk.ceil(a)
    o[hk.tile_coord(0, 0, 3, 0)] = hk.trunc(a)


@hk.kernel(grid=lambda p: (1, 1, 1))
def roundings_bf16(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.bf16, 16, 32))
    o[hk.tile_coord(0, 0, 0, 0)] = hk.round(a)
    o[hk.tile_coord(0, 0, 1, 0)] = hk.math.floor(a)
    o[hk.tile_coord(0, 0, 2, 0)] = hk.math.ceil(a)
    o[hk.tile_coord(0, 0, 3, 0)] = hk.math.trunc(a)


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    x = np.concatenate([SPECIAL, np.round(rng.standard_normal(16 * 32) * 8, 1).astype(np.float32),
                        (rng.standard_normal(16 * 32) * 1e6).astype(np.float32)])
    return x[:16 * 32].reshape(1, 1, 16, 32)


def _bitwise_equal(got, want):
    assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))   # -0.0 stays


def test_roundings_of_fp32_match_numpy():
    x = _inputs()
    o = np.zeros((1, 1, 64, 32), np.float32)
    roundings(x, o)
    for k, (name, reference) in enumerate(ROUNDINGS.items()):
        _bitwise_equal(o[0, 0, 16 * k:16 * k + 16], reference(x[0, 0]))


def test_round_is_half_to_even():
    x = np.zeros((1, 1, 16, 32), np.float32)
    x.flat[:8] = [0.5, 1.5, 2.5, 3.5, -0.5, -1.5, -2.5, -3.5]
    o = np.zeros((1, 1, 64, 32), np.float32)
    roundings(x, o)
    assert list(o[0, 0, 0, :8]) == [0.0, 2.0, 2.0, 4.0, -0.0, -2.0, -2.0, -4.0]


def test_roundings_of_bf16_match_numpy():
    from ktile import dtypes
    x = dtypes.bf16.round(_inputs())
    o = np.zeros((1, 1, 64, 32), np.float32)
    import torch
    xt = torch.from_numpy(x).to(torch.bfloat16)
    ot = torch.from_numpy(o).to(torch.bfloat16)
    roundings_bf16(xt, ot)
    got = ot.float().numpy()
    for k, reference in enumerate(ROUNDINGS.values()):
        _bitwise_equal(got[0, 0, 16 * k:16 * k + 16], reference(x[0, 0]))


@pytest.mark.parametrize("name, value, want", [
    ("round", 2.5, 2.0), ("round", -3.5, -4.0), ("floor", -0.5, -1.0), ("ceil", -0.5, -0.0),
    ("trunc", -1.7, -1.0), ("round", 1e300, 1e300)])
def test_roundings_fold_python_numbers(name, value, want):
    assert getattr(hk, name)(value) == want


def test_a_rounding_of_an_integer_tile_is_refused_at_its_line():
    def k(x: hk.Tensor[hk.i32], o: hk.Tensor[hk.i32]):
        a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.i32, 16, 16))
        o[hk.tile_coord(0, 0, 0, 0)] = hk.round(a)  # <- here
    err = refused(lambda: hk.kernel(grid=(1, 1, 1))(k).trace(), "round needs a float tile",
                  ".to(hk.fp32)")
    points_at(err, k)


# ---- float -> int conversion: truncate, saturate, NaN -> 0 -------------------------------------

@hk.kernel(grid=lambda p: (1, 1, 1))
def to_ints(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.i32], q: hk.Tensor[hk.i8]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16))
    o[hk.tile_coord(0, 0, 0, 0)] = a.to(hk.i32)
    q[hk.tile_coord(0, 0, 0, 0)] = a.to(hk.i8)
    o[hk.tile_coord(0, 0, 1, 0)] = hk.round(a).to(hk.i32)


def test_float_to_int_truncates_saturates_and_sends_nan_to_zero():
    values = [2.7, -2.7, 0.5, -0.5, 127.9, 128.0, -129.0, 3e9, -3e9, np.nan, np.inf, -np.inf, 2.5]
    x = np.zeros((1, 1, 16, 16), np.float32)
    x.flat[:len(values)] = values
    o = np.zeros((1, 1, 32, 16), np.int32)
    q = np.zeros((1, 1, 16, 16), np.int8)
    to_ints(x, o, q)
    i32_max, i32_min = 2 ** 31 - 1, -2 ** 31
    n = len(values)
    assert list(o[0, 0, 0].flat[:n]) == [2, -2, 0, 0, 127, 128, -129, i32_max, i32_min, 0,
                                         i32_max, i32_min, 2]
    assert list(q[0, 0, 0].flat[:n]) == [2, -2, 0, 0, 127, 127, -128, 127, -128, 0, 127, -128, 2]
    assert list(o[0, 0, 16].flat[:n]) == [3, -3, 0, 0, 128, 128, -129, i32_max, i32_min, 0,
                                          i32_max, i32_min, 2]


# ---- sin, cos: correctly rounded within |x| < 7e15, NaN beyond (the headers' range) ---------

@hk.kernel(grid=lambda p: (1, 1, 1))
def sines(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    a = x[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 16))
    o[hk.tile_coord(0, 0, 0, 0)] = hk.sin(a)
    o[hk.tile_coord(0, 0, 1, 0)] = a.cos()


def test_sin_and_cos_are_nan_from_7e15_on_and_rounded_once_below():
    below = np.nextafter(np.float32(7e15), np.float32(0))
    values = np.array([0.0, -0.0, 1.0, 1e15, below, -below, 7e15, -7e15, 1e30, np.inf, np.nan],
                      np.float32)
    x = np.zeros((1, 1, 16, 16), np.float32)
    x.flat[:len(values)] = values
    o = np.zeros((1, 1, 32, 16), np.float32)
    sines(x, o)
    n = len(values)
    for k, reference in enumerate((np.sin, np.cos)):
        got = o[0, 0, 16 * k].flat[:n]
        want = reference(values[:5].astype(np.float64)).astype(np.float32)
        assert np.array_equal(got[:5], want)
        assert np.signbit(got[1]) == (k == 0)   # sin(-0) is -0, cos(-0) is 1
        assert not np.isnan(got[5]) and np.isnan(got[6:]).all()


# ---- a scalar float -> int (arith.fptosi) converts as tiles do -------------------------------

FPTOSI_IR = """builtin.module attributes {kt.target = "TARGET"} {
  func.func @k__grid(%0: !kt.global<i32>) -> (index, index, index) attributes {kt.grid = "k"} {
    %1 = arith.constant 1 : index
    func.return %1, %1, %1 : index, index, index
  }
  func.func @k(%0: !kt.global<i32>, %1: SOURCE) attributes {kt.kernel = "k", kt.warps = 1 : i64} {
    %2 = arith.fptosi %1 : SOURCE to RESULT
    %3 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xRESULT, row>
    %4 = "kt.binary"(%3, %2) <{fn = "add"}> : (!kt.rt<16x16xRESULT, row>, RESULT) -> !kt.rt<16x16xRESULT, row>
    %5 = arith.constant 0 : index
    %6 = "kt.cast"(%4) : (!kt.rt<16x16xRESULT, row>) -> !kt.rt<16x16xi32, row>
    "kt.store"(%0, %5, %5, %5, %5, %6) : (!kt.global<i32>, index, index, index, index, !kt.rt<16x16xi32, row>) -> ()
    func.return
  }
}
"""


@pytest.mark.parametrize("target", ["gfx1100", "sm_90a"])
@pytest.mark.parametrize("source, result, cpp", [
    ("f32", "i32", "kt::detail::float_to_int<int32_t>(v1)"),
    ("f32", "i8", "kt::detail::float_to_int<int8_t>(v1)"),
    ("f64", "i32", "kt::detail::float_to_int<int32_t>(v1)"),
    ("bf16", "i32", "kt::detail::float_to_int<int32_t>(kt::detail::as_float(v1))")])
def test_a_scalar_fptosi_saturates_through_the_tiles_conversion(tmp_path, capsys, target, source,
                                                                result, cpp):
    """Hand-written IR: a bare static_cast would be undefined for NaN and out-of-range values;
    the scalar takes conversions.hpp's float_to_int, the one definition tiles convert with."""
    from ktile.tools.translate import main
    path = tmp_path / "fptosi.mlir"
    path.write_text(FPTOSI_IR.replace("TARGET", target).replace("SOURCE", source)
                    .replace("RESULT", result))
    assert main([str(path)]) == 0
    text = capsys.readouterr().out
    assert f" v2 = {cpp};" in text
    assert "static_cast" not in text.split(" v2 = ", 1)[1].split("\n", 1)[0]

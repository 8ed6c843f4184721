"""The kt ops' verifiers (ktile/ir/verifiers.py): what they accept, what a refusal is, and where
it points. The refusals, one per relation, are the corpus in test_bad_inputs_ir.py."""
import pytest
from xdsl.utils.exceptions import VerifyException

import ktile as hk
from bad_inputs import points_at, refused
from ktile.errors import KernelError
from ktile.ir.printing import module_text, parse_module
from ktile.ir.verifiers import IRError
from test_bad_inputs_ir import bad_module

RT = "!kt.rt<{}, row>".format
FILL = '{} = "kt.fill"() <{{value = 0.0 : f64}}> : () -> {}'.format

# IR the tracer gives or could give: each must verify.
ACCEPTED = [
    ("row vector over a tile", '%r = "kt.binary"(%tf, %v) <{fn = "sub"}> : '
     f"({RT('16x64xf32')}, !kt.rv<16xf32, row>) -> {RT('16x64xf32')}"),
    ("col vector over a tile, vector first", '%r = "kt.binary"(%vc, %tf) <{fn = "mul"}> : '
     f"(!kt.rv<64xf32, col>, {RT('16x64xf32')}) -> {RT('16x64xf32')}"),
    ("python number: the tile keeps bf16", '%r = "kt.binary"(%t, %x) <{fn = "mul"}> : '
     f"({RT('16x64xbf16')}, f32) -> {RT('16x64xbf16')}"),
    ("f32 scalar promotes bf16 to f32", '%r = "kt.binary"(%t, %x) <{fn = "mul"}> : '
     f"({RT('16x64xbf16')}, f32) -> {RT('16x64xf32')}"),
    ("bf16 and f32 tiles give f32", '%r = "kt.binary"(%t, %tf) <{fn = "add"}> : '
     f"({RT('16x64xbf16')}, {RT('16x64xf32')}) -> {RT('16x64xf32')}"),
    ("tiles of two layouts", '%r = "kt.binary"(%t, %acol) <{fn = "add"}> : '
     f"({RT('16x64xbf16')}, !kt.rt<16x64xbf16, col>) -> {RT('16x64xbf16')}"),
    ("index scalar", '%r = "kt.binary"(%ti, %c4) <{fn = "add"}> : '
     f"({RT('16x64xi32')}, index) -> {RT('16x64xi32')}"),
    ("masks combined", '%r = "kt.binary"(%m, %m) <{fn = "and"}> : '
     f"({RT('16x64xi1')}, {RT('16x64xi1')}) -> {RT('16x64xi1')}"),
    ("vectors compared", '%r = "kt.binary"(%v, %v) <{fn = "ge"}> : '
     "(!kt.rv<16xf32, row>, !kt.rv<16xf32, row>) -> !kt.rv<16xi1, row>"),
    ("relu of integers", f'%r = "kt.unary"(%ti) <{{fn = "relu"}}> : ({RT("16x64xi32")}) -> '
     f"{RT('16x64xi32')}"),
    ("exp of an f32 scalar", '%r = "kt.unary"(%x) <{fn = "exp"}> : (f32) -> f32'),
    ("not of a mask", f'%r = "kt.unary"(%m) <{{fn = "not"}}> : ({RT("16x64xi1")}) -> '
     f"{RT('16x64xi1')}"),
    ("select", f'%r = "kt.select"(%m, %tf, %tf) : ({RT("16x64xi1")}, {RT("16x64xf32")}, '
     f"{RT('16x64xf32')}) -> {RT('16x64xf32')}"),
    ("cast to the A fragment", f'%r = "kt.cast"(%tf) : ({RT("16x64xf32")}) -> '
     "!kt.rt<16x64xbf16, row, a>"),
    ("column reduction of integers", f'%r = "kt.reduce"(%ti) <{{kind = "min", axis = "col"}}> '
     f": ({RT('16x64xi32')}) -> !kt.rv<64xi32, col>"),
    ("vector to a scalar", '%r = "kt.reduce"(%v) <{kind = "sum", axis = "all"}> : '
     "(!kt.rv<16xf32, row>) -> f32"),
    ("group reduce of a scalar", '%r = "kt.block_reduce"(%x) <{kind = "sum"}> : (f32) -> f32'),
    ("mma AB, tagged", "\n    ".join([
        FILL("%fa", "!kt.rt<16x32xbf16, row, a>"), FILL("%fb", "!kt.rt<32x32xbf16, col, b>"),
        FILL("%fc", "!kt.rt<16x32xf32, row, acc>"),
        '%r = "kt.mma"(%fa, %fb, %fc) <{variant = "AB"}> : (!kt.rt<16x32xbf16, row, a>, '
        "!kt.rt<32x32xbf16, col, b>, !kt.rt<16x32xf32, row, acc>) -> "
        "!kt.rt<16x32xf32, row, acc>"])),
    ("mma AtBt", "\n    ".join([
        FILL("%fc", RT("32x16xf32")),
        '%r = "kt.mma"(%bk64, %t, %fc) <{variant = "AtBt"}> : (!kt.rt<64x32xbf16, col>, '
        f"{RT('16x64xbf16')}, {RT('32x16xf32')}) -> {RT('32x16xf32')}"])),
    ("shared load of a quarter", '%r = "kt.lds_load"(%s, %c0, %c0) : (!kt.st<64x64xbf16>, '
     f"index, index) -> {RT('32x32xbf16')}"),
    ("shared vector store", '"kt.lds_store"(%sv, %vc) : (!kt.sv<64xf32>, !kt.rv<64xf32, col>) '
     "-> ()"),
    ("wait for shared and register values", '"kt.wait_for"(%s, %t) : (!kt.st<64x64xbf16>, '
     f"{RT('16x64xbf16')}) -> ()"),
    ("rand on a vector", '%r = "kt.rand"(%seed, %vi) : (i64, !kt.rv<16xi32, row>) -> '
     "!kt.rv<16xf32, row>"),
]


@pytest.mark.parametrize("body", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_what_the_tracer_gives_verifies(body):
    module = parse_module(bad_module(body), verify=True)
    assert module_text(parse_module(module_text(module), verify=True)) == module_text(module)


def test_a_refusal_is_both_an_xdsl_verify_error_and_a_kernel_error():
    bad = ('%r = "kt.binary"(%tf, %tf) <{fn = "add"}> : (!kt.rt<16x64xf32, row>, '
           "!kt.rt<16x64xf32, row>) -> !kt.rt<32x64xf32, row>")
    module = parse_module(bad_module(bad))
    with pytest.raises(VerifyException) as info:
        module.verify()
    err = info.value
    assert isinstance(err, IRError) and isinstance(err, KernelError)
    assert err.op == "kt.binary" and err.kernel == "k"
    assert err.operation.name == "kt.binary"
    assert "traceback" not in str(err).lower()


def test_a_refusal_points_at_the_op_location_the_ir_carries():
    # the generic form with locations, as the tracer writes it: the error names the op's line
    bad = ('%r = "kt.cast"(%tf) : (!kt.rt<16x64xf32, row>) -> !kt.rt<16x32xbf16, row> '
           'loc("kernel.py":42:0)')
    err = refused(lambda: parse_module(bad_module(bad), verify=True), "kt.cast", "16x32")
    assert (err.loc.file, err.loc.line) == ("kernel.py", 42)
    assert str(err).startswith("kernel.py:42: error:")


def test_another_dialects_op_is_named_too():
    bad = "%r = arith.constant 1 : index\n    func.return %r : index"
    refused(lambda: parse_module(bad_module(bad), verify=True), "func.return")


def test_a_traced_kernel_the_tracer_lets_through_is_refused_at_its_line():
    """IR from any source is checked: a shared store the front end does not look at (a 16x64
    tile into a 64x64 shared tile) is refused at the kernel's line, before anything runs."""
    @hk.kernel(grid=lambda p: (1, 1, 1), warps=1)
    def k(a: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.ST(hk.fp32, 64, 64))
        t = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))
        s.store(t)  # <- here
        hk.barrier()

    err = refused(lambda: k.trace("gfx942"), "16x64", "64x64")
    points_at(err, k)


def test_a_where_whose_mask_has_another_shape_is_refused_at_its_line():
    @hk.kernel(grid=lambda p: (1, 1, 1), warps=1)
    def k(a: hk.Tensor[hk.fp32]):
        t = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 16, 64))
        u = a[hk.tile_coord(0, 0, 0, 0)].load(hk.RT(hk.fp32, 32, 64))
        a[hk.tile_coord(0, 0, 0, 0)] = hk.where(t > 0, u, 0.0)  # <- here

    err = refused(lambda: k.trace("gfx942"), "16x64", "32x64")
    points_at(err, k)


def test_types_are_checked_when_built_too():
    from ktile.ir.types import RegTileType, RegVecType
    from xdsl.dialects.builtin import Float64Type, StringAttr, f32
    with pytest.raises(VerifyException, match="rows 0 must be positive"):
        RegTileType(0, 16, f32, StringAttr("row"), StringAttr("none"))
    with pytest.raises(VerifyException, match="f64 is not a ktile dtype"):
        RegVecType(16, Float64Type(), StringAttr("row"))

"""Sub-tile reads from shared memory: `s.load(hk.RT(...), row=r, col=c)` reads sub-tile (r, c)
of a larger shared tile, in units of the register tile's shape. The frontend refuses shapes
that do not divide and coordinates known to be outside; the interpreter reads the sub-tile and
refuses one outside at run time; the waits pass sees a read of the whole shared tile; the IR
round-trips and the C++ passes the coordinates."""
import inspect
import re

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import ktile as hk
from ktile.dtypes import bf16
from ktile.errors import KernelError
from ktile.interpret import run_module
from ktile.ir.printing import module_text, parse_module


def _rand(shape, dtype=bf16, seed=0):
    rng = np.random.default_rng(seed)
    return dtype.round(rng.standard_normal(shape).astype(np.float32))


def marked_line(fn, marker="# <- here") -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if marker in line)


def refused_at(fn, *words, warps=1):
    """Tracing `fn` raises a KernelError holding every word, at its line marked `# <- here`."""
    with pytest.raises(KernelError) as info:
        hk.kernel(grid=(1, 1, 1), warps=warps)(fn).trace()
    err = info.value
    for word in words:
        assert word in str(err), f"{word!r} not in:\n{err}"
    assert err.loc is not None and err.loc.line == marked_line(fn), str(err)
    assert err.loc.source_line().strip() in str(err)
    return err


# ---- the frontend refuses what cannot be read ------------------------------------------------

def test_register_tile_that_does_not_divide_the_shared_tile():
    def k(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        s = hk.shared(hk.ST(hk.bf16, 32, 128))
        t = s.load(hk.RT(hk.bf16, 16, 48))  # <- here
        o[0, 0, 0, 0] = t
    refused_at(k, "16x48", "32x128", "must divide", "(48 columns do not divide 128)",
               "rows that divide 32 and columns that divide 128")


def test_register_vector_that_does_not_divide_the_shared_vector():
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.SV(hk.fp32, 64))
        v = s.load(hk.RV(hk.fp32, 48))  # <- here
        o[0, 0, 0, 0] = v
    refused_at(k, "48-element vector", "64-element shared vector", "must divide")


@pytest.mark.parametrize("coords,words", [
    (dict(col=2), ("col 2 is outside the 16x128 shared tile", "in 16x64 sub-tiles",
                   "row is in [0, 1) and col in [0, 2)")),
    (dict(row=1), ("row 1 is outside",)),
    (dict(row=0, col=-1), ("col -1 is outside",)),
])
def test_coordinate_known_while_tracing_must_be_inside(coords, words):
    def k(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        s = hk.shared(hk.ST(hk.bf16, 16, 128))
        t = s.load(hk.RT(hk.bf16, 16, 64), **coords)  # <- here
        o[0, 0, 0, 0] = t
    err = refused_at(k, *words)
    assert "not elements" in err.hint


def test_shared_vector_takes_no_row():
    def k(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
        s = hk.shared(hk.SV(hk.fp32, 64))
        v = s.load(hk.RV(hk.fp32, 32), row=hk.arch.warp_id)  # <- here
        o[0, 0, 0, 0] = v
    refused_at(k, "a shared vector has one row", "col=c")


# ---- the interpreter reads the sub-tile -------------------------------------------------------

@hk.kernel(grid=(1, 1, 1), warps=2)
def column_halves(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 128))
    hk.group.load(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(s)
    hk.barrier()
    w = hk.arch.warp_id
    t = s.load(hk.RT(hk.bf16, 16, 64), col=w)      # warp w: columns [64w, 64w + 64)
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, w, 0)] = t                # stacked: warp w's tile at rows [16w, ..)


def test_each_warp_reads_its_column_tile_of_a_group_load():
    x = _rand((1, 1, 16, 128), seed=1)
    o = np.full((1, 1, 32, 64), np.nan, np.float32)
    run_module(column_halves.trace("sm_90a").module, [x, o])
    np.testing.assert_array_equal(o[0, 0], np.concatenate([x[0, 0, :, :64], x[0, 0, :, 64:]]))


@hk.kernel(grid=(1, 1, 1), warps=4)
def quadrants(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.ST(hk.fp32, 32, 64))
    hk.group.load(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(s)
    hk.barrier()
    w = hk.arch.warp_id
    t = s.load(hk.RT(hk.fp32, 16, 32, "col"), row=w // 2, col=w % 2)
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, w, 0)] = t


def test_four_warps_read_the_four_quadrants():
    x = _rand((1, 1, 32, 64), hk.fp32, seed=2)
    o = np.full((1, 1, 64, 32), np.nan, np.float32)
    run_module(quadrants.trace("sm_90a").module, [x, o])
    want = [x[0, 0, 16 * (w // 2):16 * (w // 2) + 16, 32 * (w % 2):32 * (w % 2) + 32]
            for w in range(4)]
    np.testing.assert_array_equal(o[0, 0], np.concatenate(want))


@hk.kernel(grid=(1, 1, 1), warps=2)
def vector_pieces(x: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
    s = hk.shared(hk.SV(hk.fp32, 64))
    hk.group.load(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(s)
    hk.barrier()
    w = hk.arch.warp_id
    v = s.load(hk.RV(hk.fp32, 32, "col"), col=1 - w)   # warp w: elements [32(1-w), ..)
    hk.wait_for(v)
    o[hk.tile_coord(0, 0, w, 0)] = v


def test_vector_reads_its_piece():
    x = _rand((1, 1, 1, 64), hk.fp32, seed=3)
    o = np.full((1, 1, 2, 32), np.nan, np.float32)
    run_module(vector_pieces.trace("sm_90a").module, [x, o])
    np.testing.assert_array_equal(o[0, 0], [x[0, 0, 0, 32:], x[0, 0, 0, :32]])


@hk.kernel(grid=(1, 1, 1), warps=2)
def one_past(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
    s = hk.shared(hk.ST(hk.bf16, 16, 128))
    hk.group.load(s, x[hk.tile_coord(0, 0, 0, 0)])
    hk.wait_for(s)
    hk.barrier()
    t = s.load(hk.RT(hk.bf16, 16, 64), col=hk.arch.warp_id + 1)  # @one-past
    hk.wait_for(t)
    o[hk.tile_coord(0, 0, hk.arch.warp_id, 0)] = t


def test_coordinate_computed_on_the_device_outside_fails_at_the_load():
    x, o = _rand((1, 1, 16, 128)), np.zeros((1, 1, 32, 64), np.float32)
    with pytest.raises(KernelError) as info:
        run_module(one_past.trace("sm_90a").module, [x, o])
    err = info.value
    assert err.loc.line == marked_line(one_past.fn, "# @one-past")
    assert err.op == "shared load"
    assert ("sub-tile (row 0, col 2) is outside the 16x128 shared tile, which holds 1x2 "
            "sub-tiles of 16x64") in err.message
    assert "keep row in [0, 1) and col in [0, 2)" in err.hint


# ---- the waits pass sees a read of the whole shared tile ----------------------------------------

def test_sub_tile_read_of_a_tile_still_filling_is_refused():
    def k(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        s = hk.shared(hk.ST(hk.bf16, 16, 128))
        hk.group.load(s, x[0, 0, 0, 0])
        t = s.load(hk.RT(hk.bf16, 16, 64), col=1)  # <- here
        hk.wait_for(t, s)
        o[0, 0, 0, 0] = t
    refused_at(k, "reads the shared tile that the group load at", "is still filling")


def test_copy_into_a_tile_a_sub_tile_read_still_reads_is_refused():
    def k(x: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
        s = hk.shared(hk.ST(hk.bf16, 16, 128))
        hk.group.load(s, x[0, 0, 0, 0])
        hk.wait_for(s)
        t = s.load(hk.RT(hk.bf16, 16, 64), col=1)
        hk.group.load(s, x[0, 0, 0, 1])  # <- here
        hk.wait_for(t, s)
        o[0, 0, 0, 0] = t
    refused_at(k, "group load into the shared tile that the shared load at", "still reading")


# ---- IR and C++ -------------------------------------------------------------------------------

def test_ir_round_trips_with_the_coordinates():
    trace = quadrants.trace("sm_90a")
    loads = [line for line in trace.dump().splitlines() if '"kt.lds_load"' in line]
    assert len(loads) == 1
    assert re.search(r'"kt.lds_load"\(%\d+, %\d+, %\d+\) : \(!kt.st<32x64xf32>, index, index\) '
                     r'-> !kt.rt<16x32xf32, col>', loads[0])
    for generic, locations in ((False, False), (True, True)):
        text = trace.dump(generic=generic, locations=locations)
        assert module_text(parse_module(text), generic=generic, locations=locations) == text


IR = """builtin.module {{
  func.func @k(%0: !kt.global<bf16>) attributes {{kt.kernel = "k", kt.warps = 1 : i64}} {{
    %1 = "kt.alloc"() : () -> !kt.st<16x128xbf16>
    %2 = arith.constant {index} : index
    %3 = {load} : {types} -> !kt.rt<{shape}xbf16, row>
    func.return
  }}
}}
"""


@pytest.mark.parametrize("index,load,types,shape,words", [
    (0, '"kt.lds_load"(%1)', "(!kt.st<16x128xbf16>)", "16x64", "Expected 3 operands"),
    (0, '"kt.lds_load"(%1, %2, %2)', "(!kt.st<16x128xbf16>, index, index)", "16x48",
     "does not divide"),
    (2, '"kt.lds_load"(%1, %2, %2)', "(!kt.st<16x128xbf16>, index, index)", "16x64",
     "row 2 is outside"),
], ids=["no coordinates", "shape does not divide", "constant outside"])
def test_invalid_ir_is_refused(index, load, types, shape, words):
    module = parse_module(IR.format(index=index, load=load, types=types, shape=shape))
    with pytest.raises(VerifyException, match=words):
        module.verify()


def test_cpp_passes_the_coordinates():
    source = quadrants.trace("sm_90a").source()
    call = re.search(r"kt::lds_load\((v\d+), (v\d+), (v\d+), (v\d+)\);", source)
    assert call is not None, source
    dst, src, row, col = call.groups()
    assert f"kt::rt<float, 16, 32, kt::col, kt::frag_none> {dst};" in source
    assert f"kt::st<float, 32, 64>& {src} = " in source
    assert re.search(rf"kt::index_t {row} = kt::floordiv\(", source)
    assert re.search(rf"kt::index_t {col} = ", source)

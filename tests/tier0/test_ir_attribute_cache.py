"""Types and property attributes are made once per process per arguments (issue #10): the same
arguments give the same object, equal to what the class's constructor gives, and arguments
that compare equal but print differently (-0.0 and 0.0, True and 1, a numpy integer) are
kept apart.
"""
import math
import struct

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr

from ktile import dtypes
from ktile.ir import ops
from ktile.ir import types as irt


@pytest.mark.parametrize("make,construct", [
    (lambda: irt.rt(dtypes.bf16, 16, 64), lambda: irt.RegTileType(
        16, 64, irt.element_attr(dtypes.bf16), StringAttr("row"), StringAttr("none"))),
    (lambda: irt.rt(dtypes.fp32, 16, 16, "col", "acc"), lambda: irt.RegTileType(
        16, 16, irt.element_attr(dtypes.fp32), StringAttr("col"), StringAttr("acc"))),
    (lambda: irt.st(dtypes.bf16, 64, 64), lambda: irt.SharedTileType(
        64, 64, irt.element_attr(dtypes.bf16))),
    (lambda: irt.rv(dtypes.fp32, 16, "col"), lambda: irt.RegVecType(
        16, irt.element_attr(dtypes.fp32), StringAttr("col"))),
    (lambda: irt.sv(dtypes.i32, 64), lambda: irt.SharedVecType(64, irt.element_attr(dtypes.i32))),
    (lambda: irt.global_(dtypes.fp8), lambda: irt.GlobalType(irt.element_attr(dtypes.fp8))),
], ids=["rt", "rt col acc", "st", "rv", "sv", "global"])
def test_a_type_is_made_once_and_is_the_classes(make, construct):
    assert make() is make()
    assert make() == construct()


def test_a_fragment_retype_is_made_once_and_keeps_the_rest():
    tile = irt.rt(dtypes.bf16, 16, 64)
    tagged = tile.with_fragment("a")
    assert tagged is tile.with_fragment("a")
    assert tagged == irt.rt(dtypes.bf16, 16, 64, "row", "a")
    assert tagged.fragment.data == "a" and tagged.shape == tile.shape


def test_a_numpy_integer_is_not_taken_for_an_int():
    assert irt.rt(dtypes.bf16, np.int64(16), 64) is not irt.rt(dtypes.bf16, 16, 64)


def test_the_dtype_of_every_element_type():
    for dt in (dtypes.bf16, dtypes.fp16, dtypes.fp32, dtypes.fp8, dtypes.i32, dtypes.i8,
               dtypes.i1):
        assert irt.rt(dt, 16, 16).dtype is dt


def test_property_attributes_are_made_once():
    assert ops._str("row") is ops._str("row")
    assert ops._int(3) is ops._int(3)
    assert ops._float(1.5) is ops._float(1.5)


def test_values_equal_but_not_the_same_are_kept_apart():
    assert ops._float(-0.0) is not ops._float(0.0)
    assert math.copysign(1.0, ops._float(-0.0).value.data) == -1.0
    assert ops._int(True) is not ops._int(1)


def test_each_nan_keeps_its_bits():
    quiet = float("nan")
    other = struct.unpack("<d", struct.pack("<Q", 0x7FF0000000000001))[0]
    assert ops._float(quiet) is ops._float(float("nan"))
    bits = [struct.pack("<d", ops._float(v).value.data) for v in (quiet, other)]
    assert bits == [struct.pack("<d", quiet), struct.pack("<d", other)]

"""Bad-input corpus, IR part (issue #9): hand-written kt IR that breaks one op's type relation,
IR that does not parse, and the IR tools' command-line misuse.

Each IR case is refused three ways: by the Python API (`parse_module(..., verify=True)`, and
`parse_module` then the pass pipeline) with a KernelError naming the op and the types that
disagree, and by one of `ktile-opt -p verify`, `ktile-opt` with later passes and
`ktile-translate` (the cases take turns), which exit 1 with that message and no traceback.
"""
import os

import pytest

from bad_inputs import cli_refused, refused, run_cli
from ktile import targets
from ktile.ir.printing import parse_module
from ktile.passes import run_pipeline

# A kernel whose values have every kind the cases need; each case appends one bad op.
MODULE = """builtin.module attributes {{kt.target = "gfx942"}} {{
  func.func @k(%g: !kt.global<bf16>, %gf: !kt.global<f32>, %gi: !kt.global<i32>) attributes {{kt.kernel = "k", kt.warps = 1 : i64}} {{
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %x = arith.constant 2.0 : f32
    %seed = arith.constant 7 : i64
    %seed32 = arith.constant 7 : i32
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{{pad = 0.0 : f64}}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x64xbf16, row>
    %tf = "kt.load"(%gf, %c0, %c0, %c0, %c0) <{{pad = 0.0 : f64}}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %ti = "kt.iota"() <{{axis = "col"}}> : () -> !kt.rt<16x64xi32, row>
    %m = "kt.binary"(%tf, %tf) <{{fn = "lt"}}> : (!kt.rt<16x64xf32, row>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xi1, row>
    %v = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<16xf32, row>
    %vc = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<64xf32, col>
    %vr64 = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<64xf32, row>
    %vc16 = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<16xf32, col>
    %vb = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rv<64xbf16, col>
    %vi = "kt.iota"() <{{axis = "col"}}> : () -> !kt.rv<16xi32, row>
    %s = "kt.alloc"() : () -> !kt.st<64x64xbf16>
    %sv = "kt.alloc"() : () -> !kt.sv<64xf32>
    %a = "kt.load"(%g, %c0, %c0, %c0, %c0) <{{pad = 0.0 : f64}}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x32xbf16, row>
    %acol = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<16x64xbf16, col>
    %atag = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<16x32xbf16, row, b>
    %b = "kt.load"(%g, %c0, %c0, %c0, %c0) <{{pad = 0.0 : f64}}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<32x32xbf16, col>
    %brow = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<32x32xbf16, row>
    %bk64 = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<64x32xbf16, col>
    %bf32 = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<32x32xf32, col>
    %acc = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<16x32xf32, row>
    %acc64 = "kt.fill"() <{{value = 0.0 : f64}}> : () -> !kt.rt<16x64xf32, row>
    {body}
    func.return
  }}
}}
"""

BODY_LINE = MODULE.splitlines().index("    {body}") + 1  # the line a case's op is on
RT = "!kt.rt<{}, row>".format
LOAD = '"kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<bf16>, index, index, index, index)'
TF2 = f"({RT('16x64xf32')}, {RT('16x64xf32')})"

# (id, the bad op, words its message holds: the op and the types or numbers that disagree)
OP_CASES = [
    # hardware scalars
    ("block_idx dim 3", '%r = "kt.block_idx"() <{dim = 3 : i64}> : () -> index',
     ["kt.block_idx", "dim 3", "0 x"]),
    ("block_idx without dim", '%r = "kt.block_idx"() : () -> index', ["kt.block_idx", "dim"]),
    ("extent dim 4", '%r = "kt.extent"(%g) <{dim = 4 : i64}> : (!kt.global<bf16>) -> index',
     ["kt.extent", "dim 4", "3 cols"]),
    # global memory
    ("load with 3 coordinates", '%r = "kt.load"(%g, %c0, %c0, %c0) <{pad = 0.0 : f64}> : '
     '(!kt.global<bf16>, index, index, index) -> !kt.rt<16x64xbf16, row>',
     ["kt.load", "4 tile coordinates", "got 3"]),
    ("load into a shared tile", f"%r = {LOAD} -> !kt.st<16x64xbf16>",
     ["kt.load", "!kt.st<16x64xbf16>", "register tile or vector"]),
    ("load converts", f"%r = {LOAD} -> {RT('16x64xf32')}",
     ["kt.load", "!kt.global<bf16>", RT("16x64xf32"), "element type"]),
    ("store converts", '"kt.store"(%g, %c0, %c0, %c0, %c0, %tf) : (!kt.global<bf16>, index, '
     f"index, index, index, {RT('16x64xf32')}) -> ()",
     ["kt.store", RT("16x64xf32"), "!kt.global<bf16>", "element type"]),
    ("store of a shared tile", '"kt.store"(%g, %c0, %c0, %c0, %c0, %s) : (!kt.global<bf16>, '
     "index, index, index, index, !kt.st<64x64xbf16>) -> ()",
     ["kt.store", "!kt.st<64x64xbf16>", "register tile or vector"]),
    ("gather rows disagree", '%r = "kt.gather"(%g, %c0, %c0, %vi, %c0) : (!kt.global<bf16>, '
     f"index, index, !kt.rv<16xi32, row>, index) -> {RT('32x64xbf16')}",
     ["kt.gather", "!kt.rv<16xi32, row>", RT("32x64xbf16"), "one index per"]),
    ("gather float indices", '%r = "kt.gather"(%g, %c0, %c0, %v, %c0) : (!kt.global<bf16>, '
     f"index, index, !kt.rv<16xf32, row>, index) -> {RT('16x64xbf16')}",
     ["kt.gather", "!kt.rv<16xf32, row>", "i32"]),
    ("scatter converts", '"kt.scatter"(%gf, %c0, %c0, %vi, %c0, %t) : (!kt.global<f32>, index, '
     f"index, !kt.rv<16xi32, row>, index, {RT('16x64xbf16')}) -> ()",
     ["kt.scatter", RT("16x64xbf16"), "!kt.global<f32>", "element type"]),
    ("scatter rows disagree", '"kt.scatter"(%g, %c0, %c0, %vi, %c0, %b) : (!kt.global<bf16>, '
     "index, index, !kt.rv<16xi32, row>, index, !kt.rt<32x32xbf16, col>) -> ()",
     ["kt.scatter", "!kt.rv<16xi32, row>", "!kt.rt<32x32xbf16, col>"]),
    # shared memory, copies, waits
    ("alloc of a register tile", f'%r = "kt.alloc"() : () -> {RT("16x64xbf16")}',
     ["kt.alloc", RT("16x64xbf16"), "shared tile or vector"]),
    ("copy converts", '"kt.copy_async"(%gf, %c0, %c0, %c0, %c0, %s) : (!kt.global<f32>, index, '
     "index, index, index, !kt.st<64x64xbf16>) -> ()",
     ["kt.copy_async", "!kt.global<f32>", "!kt.st<64x64xbf16>", "element type"]),
    ("copy into registers", '"kt.copy_async"(%g, %c0, %c0, %c0, %c0, %t) : (!kt.global<bf16>, '
     f"index, index, index, index, {RT('16x64xbf16')}) -> ()",
     ["kt.copy_async", RT("16x64xbf16"), "shared tile or vector"]),
    ("device pick among mixed tiles", '%r = "kt.lds_select"(%c0, %s, %sv) : (index, '
     "!kt.st<64x64xbf16>, !kt.sv<64xf32>) -> !kt.st<64x64xbf16>",
     ["kt.lds_select", "tile 1 is !kt.sv<64xf32>", "!kt.st<64x64xbf16>", "one type"]),
    ("device pick outside its list", '%r = "kt.lds_select"(%c4, %s) : (index, '
     "!kt.st<64x64xbf16>) -> !kt.st<64x64xbf16>",
     ["kt.lds_select", "index 4 is outside the list of 1 tiles"]),
    ("shared load does not divide", '%r = "kt.lds_load"(%s, %c0, %c0) : (!kt.st<64x64xbf16>, '
     f"index, index) -> {RT('16x48xbf16')}", ["kt.lds_load", "16x48", "64x64", "divide"]),
    ("shared load converts", '%r = "kt.lds_load"(%s, %c0, %c0) : (!kt.st<64x64xbf16>, index, '
     f"index) -> {RT('16x64xf32')}", ["kt.lds_load", "!kt.st<64x64xbf16>", "element type"]),
    ("shared load of a vector into a tile", '%r = "kt.lds_load"(%sv, %c0, %c0) : '
     f"(!kt.sv<64xf32>, index, index) -> {RT('16x64xf32')}",
     ["kt.lds_load", "!kt.sv<64xf32>", "shared vector into a register vector"]),
    ("shared load row outside", '%r = "kt.lds_load"(%s, %c4, %c0) : (!kt.st<64x64xbf16>, '
     f"index, index) -> {RT('16x64xbf16')}", ["kt.lds_load", "row 4", "[0, 4)"]),
    ("shared load without coordinates", '%r = "kt.lds_load"(%s) : (!kt.st<64x64xbf16>) -> '
     f"{RT('16x64xbf16')}", ["kt.lds_load", "3 operands"]),
    ("shared store of another shape", '"kt.lds_store"(%s, %t) : (!kt.st<64x64xbf16>, '
     f"{RT('16x64xbf16')}) -> ()", ["kt.lds_store", RT("16x64xbf16"), "!kt.st<64x64xbf16>",
                                     "shape"]),
    ("shared store of a tile into a vector", '"kt.lds_store"(%sv, %tf) : (!kt.sv<64xf32>, '
     f"{RT('16x64xf32')}) -> ()", ["kt.lds_store", "!kt.sv<64xf32>", "shared vector"]),
    ("shared store converts", '"kt.lds_store"(%sv, %vb) : (!kt.sv<64xf32>, !kt.rv<64xbf16, '
     "col>) -> ()", ["kt.lds_store", "!kt.rv<64xbf16, col>", "!kt.sv<64xf32>", "element type"]),
    ("wait for nothing", '"kt.wait_for"() : () -> ()', ["kt.wait_for", "waits for nothing"]),
    ("wait for a scalar", '"kt.wait_for"(%x) : (f32) -> ()', ["kt.wait_for", "f32"]),
    # MMA
    ("mma inner dimensions", '%r = "kt.mma"(%a, %bk64, %acc) <{variant = "AB"}> : '
     f"({RT('16x32xbf16')}, !kt.rt<64x32xbf16, col>, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.mma", RT("16x32xbf16"), "!kt.rt<64x32xbf16, col>", "inner dimensions"]),
    ("mma accumulator shape", '%r = "kt.mma"(%a, %b, %acc64) <{variant = "AB"}> : '
     f"({RT('16x32xbf16')}, !kt.rt<32x32xbf16, col>, {RT('16x64xf32')}) -> {RT('16x64xf32')}",
     ["kt.mma", RT("16x64xf32"), "16x32"]),
    ("mma bf16 accumulator", '%r = "kt.mma"(%a, %b, %a) <{variant = "AB"}> : '
     f"({RT('16x32xbf16')}, !kt.rt<32x32xbf16, col>, {RT('16x32xbf16')}) -> {RT('16x32xbf16')}",
     ["kt.mma", "accumulator", RT("16x32xbf16"), "f32"]),
    ("mma operand dtypes", '%r = "kt.mma"(%a, %bf32, %acc) <{variant = "AB"}> : '
     f"({RT('16x32xbf16')}, !kt.rt<32x32xf32, col>, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.mma", RT("16x32xbf16"), "!kt.rt<32x32xf32, col>", "element type"]),
    ("mma layout of b", '%r = "kt.mma"(%a, %brow, %acc) <{variant = "AB"}> : '
     f"({RT('16x32xbf16')}, {RT('32x32xbf16')}, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.mma", "variant AB", "b in col layout", RT("32x32xbf16")]),
    ("mma unknown variant", '%r = "kt.mma"(%a, %b, %acc) <{variant = "BA"}> : '
     f"({RT('16x32xbf16')}, !kt.rt<32x32xbf16, col>, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.mma", "variant 'BA'", "ABt"]),
    ("mma result type", '%r = "kt.mma"(%a, %b, %acc) <{variant = "AB"}> : '
     f"({RT('16x32xbf16')}, !kt.rt<32x32xbf16, col>, {RT('16x32xf32')}) -> {RT('16x32xbf16')}",
     ["kt.mma", "the result", RT("16x32xbf16"), "accumulator's type"]),
    ("mma fragment of another role", '%r = "kt.mma"(%atag, %b, %acc) <{variant = "AB"}> : '
     f"(!kt.rt<16x32xbf16, row, b>, !kt.rt<32x32xbf16, col>, {RT('16x32xf32')}) -> "
     f"{RT('16x32xf32')}", ["kt.mma", "!kt.rt<16x32xbf16, row, b>", "fragment"]),
    ("mma of a shared tile", '%r = "kt.mma"(%s, %b, %acc) <{variant = "AB"}> : '
     f"(!kt.st<64x64xbf16>, !kt.rt<32x32xbf16, col>, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.mma", "!kt.st<64x64xbf16>", "kt.rt"]),
    ("mma from shared K", '%r = "kt.mma_shared"(%a, %s, %acc) : '
     f"({RT('16x32xbf16')}, !kt.st<64x64xbf16>, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.mma_shared", RT("16x32xbf16"), "!kt.st<64x64xbf16>", "K"]),
    ("mma from shared, a in col layout", '%r = "kt.mma_shared"(%acol, %s, %acc64) : '
     f"(!kt.rt<16x64xbf16, col>, !kt.st<64x64xbf16>, {RT('16x64xf32')}) -> {RT('16x64xf32')}",
     ["kt.mma_shared", "!kt.rt<16x64xbf16, col>", "row layout"]),
    # elementwise
    ("unary changes shape", f'%r = "kt.unary"(%tf) <{{fn = "exp"}}> : ({RT("16x64xf32")}) -> '
     f"{RT('32x64xf32')}", ["kt.unary", RT("32x64xf32"), RT("16x64xf32")]),
    ("exp of integers", f'%r = "kt.unary"(%ti) <{{fn = "exp"}}> : ({RT("16x64xi32")}) -> '
     f"{RT('16x64xi32')}", ["kt.unary", "exp", RT("16x64xi32"), "float"]),
    ("not of floats", f'%r = "kt.unary"(%tf) <{{fn = "not"}}> : ({RT("16x64xf32")}) -> '
     f"{RT('16x64xf32')}", ["kt.unary", "not", RT("16x64xf32"), "i1"]),
    ("unary unknown function", f'%r = "kt.unary"(%tf) <{{fn = "cube"}}> : ({RT("16x64xf32")}) '
     f"-> {RT('16x64xf32')}", ["kt.unary", "function 'cube'", "exp"]),
    ("unary of a shared tile", '%r = "kt.unary"(%s) <{fn = "exp"}> : (!kt.st<64x64xbf16>) -> '
     "!kt.st<64x64xbf16>", ["kt.unary", "!kt.st<64x64xbf16>", "register tile"]),
    ("binary result shape (issue #9)", f'%r = "kt.binary"(%tf, %tf) <{{fn = "add"}}> : {TF2} -> '
     f"{RT('32x64xf32')}", ["kt.binary", RT("32x64xf32"), RT("16x64xf32"), "shape"]),
    ("binary of tiles of two shapes", f'%r = "kt.binary"(%tf, %acc) <{{fn = "add"}}> : '
     f"({RT('16x64xf32')}, {RT('16x32xf32')}) -> {RT('16x64xf32')}",
     ["kt.binary", RT("16x32xf32"), RT("16x64xf32"), "differ in shape"]),
    ("row vector of the wrong length", f'%r = "kt.binary"(%tf, %vr64) <{{fn = "sub"}}> : '
     f"({RT('16x64xf32')}, !kt.rv<64xf32, row>) -> {RT('16x64xf32')}",
     ["kt.binary", "!kt.rv<64xf32, row>", "16 rows"]),
    ("col vector of the wrong length", f'%r = "kt.binary"(%tf, %vc16) <{{fn = "mul"}}> : '
     f"({RT('16x64xf32')}, !kt.rv<16xf32, col>) -> {RT('16x64xf32')}",
     ["kt.binary", "!kt.rv<16xf32, col>", "64 columns"]),
    ("vectors of two lengths", '%r = "kt.binary"(%v, %vc) <{fn = "add"}> : (!kt.rv<16xf32, '
     "row>, !kt.rv<64xf32, col>) -> !kt.rv<16xf32, row>",
     ["kt.binary", "!kt.rv<64xf32, col>", "!kt.rv<16xf32, row>", "length"]),
    ("binary of two scalars", '%r = "kt.binary"(%x, %x) <{fn = "add"}> : (f32, f32) -> f32',
     ["kt.binary", "scalars", "arith"]),
    ("comparison into floats", f'%r = "kt.binary"(%tf, %tf) <{{fn = "lt"}}> : {TF2} -> '
     f"{RT('16x64xf32')}", ["kt.binary", "lt", "i1 mask"]),
    ("bitwise and of floats", f'%r = "kt.binary"(%tf, %tf) <{{fn = "and"}}> : {TF2} -> '
     f"{RT('16x64xf32')}", ["kt.binary", "and", "integers or masks"]),
    ("arithmetic into another dtype", f'%r = "kt.binary"(%t, %t) <{{fn = "add"}}> : '
     f"({RT('16x64xbf16')}, {RT('16x64xbf16')}) -> {RT('16x64xi32')}",
     ["kt.binary", RT("16x64xi32"), "element type i32", "bf16"]),
    ("binary of a global", '%r = "kt.binary"(%g, %x) <{fn = "add"}> : (!kt.global<bf16>, f32) '
     "-> !kt.global<bf16>", ["kt.binary", "!kt.global<bf16>"]),
    ("select on floats", f'%r = "kt.select"(%tf, %tf, %tf) : ({RT("16x64xf32")}, '
     f"{RT('16x64xf32')}, {RT('16x64xf32')}) -> {RT('16x64xf32')}",
     ["kt.select", RT("16x64xf32"), "i1 mask"]),
    ("select of another shape", f'%r = "kt.select"(%m, %acc, %acc) : ({RT("16x64xi1")}, '
     f"{RT('16x32xf32')}, {RT('16x32xf32')}) -> {RT('16x32xf32')}",
     ["kt.select", RT("16x32xf32"), RT("16x64xi1"), "shape"]),
    ("select result type", f'%r = "kt.select"(%m, %tf, %tf) : ({RT("16x64xi1")}, '
     f"{RT('16x64xf32')}, {RT('16x64xf32')}) -> {RT('16x64xbf16')}",
     ["kt.select", RT("16x64xbf16"), RT("16x64xf32")]),
    ("cast changes shape", f'%r = "kt.cast"(%tf) : ({RT("16x64xf32")}) -> {RT("16x32xbf16")}',
     ["kt.cast", RT("16x64xf32"), RT("16x32xbf16"), "shape"]),
    ("cast changes layout", f'%r = "kt.cast"(%tf) : ({RT("16x64xf32")}) -> '
     "!kt.rt<16x64xbf16, col>", ["kt.cast", "!kt.rt<16x64xbf16, col>", "layout"]),
    ("cast of a tile to a vector", f'%r = "kt.cast"(%tf) : ({RT("16x64xf32")}) -> '
     "!kt.rv<16xbf16, row>", ["kt.cast", "!kt.rv<16xbf16, row>", "element type only"]),
    # reductions and whole-value ops
    ("row reduction length", f'%r = "kt.reduce"(%tf) <{{kind = "sum", axis = "row"}}> : '
     f"({RT('16x64xf32')}) -> !kt.rv<64xf32, row>",
     ["kt.reduce", "!kt.rv<16xf32, row>", "!kt.rv<64xf32, row>"]),
    ("row reduction of bf16 into bf16", f'%r = "kt.reduce"(%t) <{{kind = "max", axis = "row"}}> '
     f": ({RT('16x64xbf16')}) -> !kt.rv<16xbf16, row>",
     ["kt.reduce", "!kt.rv<16xf32, row>", "!kt.rv<16xbf16, row>"]),
    ("whole tile reduced to a vector", f'%r = "kt.reduce"(%tf) <{{kind = "sum", axis = "all"}}> : '
     f"({RT('16x64xf32')}) -> !kt.rv<16xf32, row>", ["kt.reduce", "gives f32"]),
    ("tile reduced along no axis", f'%r = "kt.reduce"(%tf) <{{kind = "sum", axis = "diag"}}> : '
     f"({RT('16x64xf32')}) -> f32", ["kt.reduce", "axis 'diag'", "\"all\""]),
    ("vector reduced along rows", '%r = "kt.reduce"(%v) <{kind = "sum", axis = "row"}> : '
     "(!kt.rv<16xf32, row>) -> f32", ["kt.reduce", "axis 'row'", "\"all\""]),
    ("vector reduced to a vector", '%r = "kt.reduce"(%v) <{kind = "sum", axis = "all"}> : '
     "(!kt.rv<16xf32, row>) -> !kt.rv<16xf32, row>", ["kt.reduce", "gives f32"]),
    ("unknown reduction", f'%r = "kt.reduce"(%tf) <{{kind = "prod", axis = "row"}}> : '
     f"({RT('16x64xf32')}) -> !kt.rv<16xf32, row>", ["kt.reduce", "kind 'prod'", "sum"]),
    ("group reduce of a shared tile", '%r = "kt.block_reduce"(%s) <{kind = "sum"}> : '
     "(!kt.st<64x64xbf16>) -> !kt.st<64x64xbf16>",
     ["kt.block_reduce", "!kt.st<64x64xbf16>",
      "a register tile, a register vector or an f32 scalar"]),
    ("group reduce changes type", '%r = "kt.block_reduce"(%v) <{kind = "max"}> : '
     "(!kt.rv<16xf32, row>) -> !kt.rv<32xf32, row>",
     ["kt.block_reduce", "!kt.rv<32xf32, row>", "!kt.rv<16xf32, row>"]),
    ("fill of a shared tile", '%r = "kt.fill"() <{value = 1.0 : f64}> : () -> !kt.st<16x16xf32>',
     ["kt.fill", "!kt.st<16x16xf32>", "register tile or vector"]),
    ("iota along a diagonal", f'%r = "kt.iota"() <{{axis = "diag"}}> : () -> {RT("16x64xi32")}',
     ["kt.iota", "axis 'diag'", "row, col"]),
    ("causal mask changes shape", f'%r = "kt.causal_mask"(%tf, %c0, %c0) <{{fill = 0.0 : f64}}> '
     f": ({RT('16x64xf32')}, index, index) -> {RT('16x32xf32')}",
     ["kt.causal_mask", RT("16x32xf32"), RT("16x64xf32")]),
    ("rand of float offsets", f'%r = "kt.rand"(%seed, %tf) : (i64, {RT("16x64xf32")}) -> '
     f"{RT('16x64xf32')}", ["kt.rand", "offsets", RT("16x64xf32"), "i32"]),
    ("rand of another shape", f'%r = "kt.rand"(%seed, %ti) : (i64, {RT("16x64xi32")}) -> '
     f"{RT('16x32xf32')}", ["kt.rand", RT("16x32xf32"), "offsets' shape"]),
    ("rand with an i32 seed", f'%r = "kt.rand"(%seed32, %ti) : (i32, {RT("16x64xi32")}) -> '
     f"{RT('16x64xf32')}", ["kt.rand", "seed", "i64"]),
]

# The tool each case is also given to, in turn.
TOOLS = [
    ("ktile-opt", "-p", "verify"),
    ("ktile-opt", "-p", "fragments,lds-alloc,waits"),
    ("ktile-translate",),
]


def bad_module(body: str) -> str:
    return MODULE.format(body=body)


def test_the_kernel_the_cases_extend_is_valid():
    module = parse_module(bad_module(""), verify=True)
    assert run_pipeline(module, targets.get("gfx942")) == []


@pytest.mark.parametrize("body,words", [c[1:] for c in OP_CASES], ids=[c[0] for c in OP_CASES])
def test_parse_and_verify_refuses(body, words):
    refused(lambda: parse_module(bad_module(body), verify=True), *words)


@pytest.mark.parametrize("body,words", [c[1:] for c in OP_CASES], ids=[c[0] for c in OP_CASES])
def test_the_pass_pipeline_refuses(body, words):
    module = parse_module(bad_module(body))
    refused(lambda: run_pipeline(module, targets.get("gfx942")), *words)


@pytest.mark.parametrize("k", range(len(OP_CASES)), ids=[c[0] for c in OP_CASES])
def test_a_tool_refuses(k, tmp_path):
    _, body, words = OP_CASES[k]
    path = tmp_path / "bad.mlir"
    path.write_text(bad_module(body))
    tool = TOOLS[k % len(TOOLS)]
    result = run_cli(*tool, str(path))
    cli_refused(result, *words, codes=(1,))


# ---- types and text that do not parse ------------------------------------------------------------

SYNTAX_CASES = [
    ("tile of rank 3", '%r = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x16x2xf32, row>',
     ["register tile has 2 dimensions", "got 3"]),
    ("tile of no rows", '%r = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<0x16xf32, row>',
     ["sizes must be positive", "0x16"]),
    ("tile of f64", '%r = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x16xf64, row>',
     ["f64", "not a ktile dtype", "bf16"]),
    ("tile in a diagonal layout", '%r = "kt.fill"() <{value = 0.0 : f64}> : () -> '
     "!kt.rt<16x16xf32, diag>", ["layout 'diag'", "row, col"]),
    ("unknown fragment", '%r = "kt.fill"() <{value = 0.0 : f64}> : () -> '
     "!kt.rt<16x16xf32, row, c>", ["fragment 'c'", "acc"]),
    ("vector along a diagonal", '%r = "kt.fill"() <{value = 0.0 : f64}> : () -> '
     "!kt.rv<16xf32, diag>", ["axis 'diag'", "row, col"]),
    ("shared vector of i16", '%r = "kt.alloc"() : () -> !kt.sv<16xi16>',
     ["shared vector element type i16", "not a ktile dtype"]),
    ("unregistered op", '%r = "kt.matmul"(%a, %b) : (!kt.rt<16x32xbf16, row>, '
     "!kt.rt<32x32xbf16, col>) -> !kt.rt<16x32xf32, row>", ["kt.matmul", "not registered"]),
    ("operand of two types", "%r = arith.addf %x, %c0 : f32", ["used with type f32", "index"]),
    ("branch on a float", "scf.if %x {", ["used with type i1", "f32"]),
]


@pytest.mark.parametrize("body,words", [c[1:] for c in SYNTAX_CASES],
                         ids=[c[0] for c in SYNTAX_CASES])
def test_text_that_does_not_parse_is_refused_at_its_line(body, words):
    err = refused(lambda: parse_module(bad_module(body), name="k.mlir"), *words)
    assert err.loc is not None and err.loc.file == "k.mlir"
    assert err.loc.line == BODY_LINE, err


def test_an_undefined_value_is_named():
    # xDSL finds it when the region ends, so the error points there rather than at the use
    refused(lambda: parse_module(bad_module('%r = "kt.unary"(%nowhere) <{fn = "exp"}> : '
                                            "(f32) -> f32")), "not defined", "%nowhere")


@pytest.mark.parametrize("body,words", [c[1:] for c in SYNTAX_CASES[:8]],
                         ids=[c[0] for c in SYNTAX_CASES[:8]])
def test_ktile_opt_refuses_text_that_does_not_parse(body, words, tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text(bad_module(body))
    cli_refused(run_cli("ktile-opt", str(path)), f"{path}:{BODY_LINE}", *words, codes=(1,))


# ---- modules that are not a kernel ------------------------------------------------------------

MODULE_CASES = [
    ("no kernel function", lambda text: text.replace('kt.kernel = "k", ', ""),
     ["no kernel function", "kt.kernel"]),
    ("no warp count", lambda text: text.replace(", kt.warps = 1 : i64", ""),
     ["kernel 'k'", "kt.warps", "missing"]),
    ("no target", lambda text: text.replace(' attributes {kt.target = "gfx942"}', ""),
     ["names no target", "kt.target"]),
    ("unknown target", lambda text: text.replace("gfx942", "gfx9999"),
     ["unknown target 'gfx9999'", "gfx942"]),
]


@pytest.mark.parametrize("edit,words", [c[1:] for c in MODULE_CASES],
                         ids=[c[0] for c in MODULE_CASES])
@pytest.mark.parametrize("tool", [TOOLS[0], TOOLS[2]], ids=["ktile-opt", "ktile-translate"])
def test_a_module_that_is_not_a_kernel_is_refused(edit, words, tool, tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text(edit(bad_module("")))
    cli_refused(run_cli(*tool, str(path)), *words, codes=(1,))


# ---- command-line misuse ----------------------------------------------------------------------

def _file(tmp_path, data: bytes | None, name: str = "k.mlir") -> str:
    path = tmp_path / name
    if data is not None:
        path.write_bytes(data)
    return str(path)


INPUT_CASES = [
    ("missing file", None, ["no such file"]),
    ("empty file", b"", ["is empty", "builtin.module"]),
    ("blank file", b"\n  \n", ["is empty"]),
    ("binary file", b"\x7fELF\x02\x01\x01\x00\xff\xfe\x00\x00", ["not text", "UTF-8"]),
    ("text with NUL bytes", b"builtin.module {\x00}", ["binary file", "NUL"]),
]


@pytest.mark.parametrize("data,words", [c[1:] for c in INPUT_CASES],
                         ids=[c[0] for c in INPUT_CASES])
@pytest.mark.parametrize("tool", ["ktile-opt", "ktile-translate"])
def test_input_that_is_not_a_module_is_refused(data, words, tool, tmp_path):
    path = _file(tmp_path, data)
    cli_refused(run_cli(tool, path), tool, path, *words, codes=(1,))


@pytest.mark.parametrize("tool", ["ktile-opt", "ktile-translate"])
def test_a_directory_is_refused(tool, tmp_path):
    cli_refused(run_cli(tool, str(tmp_path)), str(tmp_path), "is a directory", codes=(1,))


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root reads a file whatever its mode")
@pytest.mark.parametrize("tool", ["ktile-opt", "ktile-translate"])
def test_an_unreadable_file_is_refused(tool, tmp_path):
    path = _file(tmp_path, bad_module("").encode())
    os.chmod(path, 0)
    cli_refused(run_cli(tool, path), path, "permission denied", codes=(1,))


def test_empty_stdin_is_refused():
    cli_refused(run_cli("ktile-opt", stdin=""), "<stdin> is empty", codes=(1,))


USAGE_CASES = [
    ("unknown pass", ("ktile-opt", "-p", "verify,nosuch"),
     ["unknown pass 'nosuch'", "verify, fragments"]),
    ("misspelt pass", ("ktile-opt", "-p", "lds_alloc"), ["unknown pass 'lds_alloc'", "lds-alloc"]),
    ("pass list that does not parse", ("ktile-opt", "-p", "verify{"), ["pass list", "verify{"]),
    ("option a pass does not take", ("ktile-opt", "-p", "verify{fast=true}"),
     ["pass list", "fast"]),
    ("unknown flag", ("ktile-opt", "--nosuch"), ["ktile-opt", "unrecognized arguments: --nosuch"]),
    ("unknown output target", ("ktile-opt", "-t", "cuda"), ["ktile-opt", "invalid choice: 'cuda'"]),
    ("translate: unknown target", ("ktile-translate", "--target", "gfx9999"),
     ["invalid choice: 'gfx9999'", "sm_90a"]),
    ("translate: unknown flag", ("ktile-translate", "--passes", "verify"),
     ["ktile-translate", "unrecognized arguments"]),
    ("ktile: unknown subcommand", ("ktile", "opt"), ["unknown subcommand 'opt'", "cocheck"]),
    ("ktile: no subcommand", ("ktile",), ["usage: ktile SUBCOMMAND"]),
]


@pytest.mark.parametrize("argv,words", [c[1:] for c in USAGE_CASES],
                         ids=[c[0] for c in USAGE_CASES])
def test_usage_mistakes_exit_2(argv, words, tmp_path):
    path = _file(tmp_path, bad_module("").encode())
    args = argv if argv[0] == "ktile" else (*argv, path)
    cli_refused(run_cli(*args), *words, codes=(2,))


@pytest.mark.parametrize("tool", ["ktile-opt", "ktile-translate"])
def test_an_output_path_that_cannot_be_written_is_refused(tool, tmp_path):
    path = _file(tmp_path, bad_module("").encode())
    out = str(tmp_path / "missing-folder" / "out.txt")
    flag = "-o"
    cli_refused(run_cli(tool, path, flag, out), "cannot write", out, codes=(1,))


def test_the_cases_cover_every_kt_op():
    """One relation case at least for each op that has operands or a result type to check."""
    from ktile.ir.ops import OPS
    named = {op.name for op in OPS}
    covered = {name for name in named if any(f'"{name}"' in c[1] for c in OP_CASES)}
    assert named - covered == {"kt.warp_id", "kt.barrier"}, named - covered

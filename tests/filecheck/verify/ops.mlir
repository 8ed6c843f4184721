// RUN: ktile-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: ktile-opt %s -p verify,fragments --split-input-file --verify-diagnostics | filecheck %s
//
// The kt ops' verifiers (ktile/ir/verifiers.py): IR from any source (here written by hand)
// keeps the shapes and element types the tracer gives, or ktile-opt names the op and the types
// that disagree, before any pass runs. The loc lines stand for the kernel lines a trace records.

// A binary whose operands and result agree passes, unchanged.
// CHECK-LABEL: func.func @ok
// CHECK:         "kt.binary"(%{{.*}}, %{{.*}}) <{fn = "add"}> : (!kt.rt<16x64xf32, row>, !kt.rv<16xf32, row>) -> !kt.rt<16x64xf32, row>

builtin.module attributes {kt.target = "gfx942"} {
  func.func @ok(%g: !kt.global<f32>) attributes {kt.kernel = "ok", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %v = "kt.reduce"(%t) <{kind = "max", axis = "row"}> : (!kt.rt<16x64xf32, row>) -> !kt.rv<16xf32, row>
    %r = "kt.binary"(%t, %v) <{fn = "add"}> : (!kt.rt<16x64xf32, row>, !kt.rv<16xf32, row>) -> !kt.rt<16x64xf32, row>
    "kt.store"(%g, %c0, %c0, %c0, %c0, %r) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x64xf32, row>) -> ()
    func.return
  }
}

// -----

// Issue #9: a binary whose result is not its operands' shape is no longer translated.
// CHECK: k.py:7: error: in kernel 'binary_shape', kt.binary: the result !kt.rt<32x64xf32, row> does not have the shape of its operands (!kt.rt<16x64xf32, row> and !kt.rt<16x64xf32, row>)

builtin.module attributes {kt.target = "gfx942"} {
  func.func @binary_shape(%g: !kt.global<f32>) attributes {kt.kernel = "binary_shape", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %r = "kt.binary"(%t, %t) <{fn = "add"}> : (!kt.rt<16x64xf32, row>, !kt.rt<16x64xf32, row>) -> !kt.rt<32x64xf32, row> loc("k.py":7:0)
    func.return
  }
}

// -----

// A row vector broadcasts over a tile's rows: one value per row.
// CHECK: error: in kernel 'row_vector', kt.binary: operand y !kt.rv<64xf32, row> is a row vector of 64, but the tile !kt.rt<16x64xf32, row> has 16 rows

builtin.module attributes {kt.target = "gfx942"} {
  func.func @row_vector(%g: !kt.global<f32>) attributes {kt.kernel = "row_vector", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %v = "kt.fill"() <{value = 1.0 : f64}> : () -> !kt.rv<64xf32, row>
    %r = "kt.binary"(%t, %v) <{fn = "mul"}> : (!kt.rt<16x64xf32, row>, !kt.rv<64xf32, row>) -> !kt.rt<16x64xf32, row>
    func.return
  }
}

// -----

// A comparison gives a mask.
// CHECK: error: in kernel 'compare', kt.binary: the result of lt is !kt.rt<16x64xf32, row>; a comparison gives an i1 mask

builtin.module attributes {kt.target = "gfx942"} {
  func.func @compare(%g: !kt.global<f32>) attributes {kt.kernel = "compare", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %r = "kt.binary"(%t, %t) <{fn = "lt"}> : (!kt.rt<16x64xf32, row>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xf32, row>
    func.return
  }
}

// -----

// An MMA's accumulator has the product's shape.
// CHECK: error: in kernel 'mma_acc', kt.mma: variant ABt: the accumulator !kt.rt<16x16xf32, row> is not the product's shape 16x32

builtin.module attributes {kt.target = "gfx942"} {
  func.func @mma_acc(%g: !kt.global<f32>) attributes {kt.kernel = "mma_acc", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %a = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x64xbf16, row>
    %b = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<32x64xbf16, row>
    %acc = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x16xf32, row>
    %r = "kt.mma"(%a, %b, %acc) <{variant = "ABt"}> : (!kt.rt<16x64xbf16, row>, !kt.rt<32x64xbf16, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row>
    func.return
  }
}

// -----

// An MMA variant reads its operands in fixed layouts.
// CHECK: error: in kernel 'mma_layout', kt.mma: variant AB reads a in row layout and b in col layout, got a !kt.rt<16x64xbf16, row> and b !kt.rt<64x32xbf16, row>

builtin.module attributes {kt.target = "gfx942"} {
  func.func @mma_layout(%g: !kt.global<f32>) attributes {kt.kernel = "mma_layout", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %a = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x64xbf16, row>
    %b = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<64x32xbf16, row>
    %acc = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x32xf32, row>
    %r = "kt.mma"(%a, %b, %acc) <{variant = "AB"}> : (!kt.rt<16x64xbf16, row>, !kt.rt<64x32xbf16, row>, !kt.rt<16x32xf32, row>) -> !kt.rt<16x32xf32, row>
    func.return
  }
}

// -----

// A row reduction gives one value per row, accumulated in f32.
// CHECK: error: in kernel 'reduce_len', kt.reduce: reducing !kt.rt<16x64xf32, row> along row gives !kt.rv<16xf32, row>, not !kt.rv<64xf32, row>

builtin.module attributes {kt.target = "gfx942"} {
  func.func @reduce_len(%g: !kt.global<f32>) attributes {kt.kernel = "reduce_len", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %r = "kt.reduce"(%t) <{kind = "sum", axis = "row"}> : (!kt.rt<16x64xf32, row>) -> !kt.rv<64xf32, row>
    func.return
  }
}

// -----

// A cast keeps the shape and layout.
// CHECK: error: in kernel 'cast_shape', kt.cast: casts !kt.rt<16x64xf32, row> to !kt.rt<64x16xbf16, row>: a cast changes the element type only

builtin.module attributes {kt.target = "gfx942"} {
  func.func @cast_shape(%g: !kt.global<f32>) attributes {kt.kernel = "cast_shape", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %r = "kt.cast"(%t) : (!kt.rt<16x64xf32, row>) -> !kt.rt<64x16xbf16, row>
    func.return
  }
}

// -----

// A load does not convert.
// CHECK: error: in kernel 'load_dtype', kt.load: the global !kt.global<f32> and the result !kt.rt<16x64xbf16, row> differ in element type

builtin.module attributes {kt.target = "gfx942"} {
  func.func @load_dtype(%g: !kt.global<f32>) attributes {kt.kernel = "load_dtype", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xbf16, row>
    func.return
  }
}

// -----

// A shared store writes the whole shared tile.
// CHECK: error: in kernel 'lds_store', kt.lds_store: the stored value !kt.rt<16x64xf32, row> and the shared destination !kt.st<64x64xf32> differ in shape

builtin.module attributes {kt.target = "gfx942"} {
  func.func @lds_store(%g: !kt.global<f32>) attributes {kt.kernel = "lds_store", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %t = "kt.load"(%g, %c0, %c0, %c0, %c0) <{pad = 0.0 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<16x64xf32, row>
    %s = "kt.alloc"() : () -> !kt.st<64x64xf32>
    "kt.lds_store"(%s, %t) : (!kt.st<64x64xf32>, !kt.rt<16x64xf32, row>) -> ()
    func.return
  }
}

// -----

// A shared load's result divides the shared tile.
// CHECK: error: in kernel 'lds_load', kt.lds_load: the result's shape 16x48 does not divide the source's 64x64

builtin.module attributes {kt.target = "gfx942"} {
  func.func @lds_load(%g: !kt.global<f32>) attributes {kt.kernel = "lds_load", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %s = "kt.alloc"() : () -> !kt.st<64x64xf32>
    %r = "kt.lds_load"(%s, %c0, %c0) : (!kt.st<64x64xf32>, index, index) -> !kt.rt<16x48xf32, row>
    func.return
  }
}

// -----

// Rows by index: one i32 index per row.
// CHECK: error: in kernel 'gather', kt.gather: the row indices !kt.rv<16xi32, row> and the result !kt.rt<32x64xf32, row> disagree: one index per row of the result

builtin.module attributes {kt.target = "gfx942"} {
  func.func @gather(%g: !kt.global<f32>) attributes {kt.kernel = "gather", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %rows = "kt.iota"() <{axis = "col"}> : () -> !kt.rv<16xi32, row>
    %r = "kt.gather"(%g, %c0, %c0, %rows, %c0) : (!kt.global<f32>, index, index, !kt.rv<16xi32, row>, index) -> !kt.rt<32x64xf32, row>
    func.return
  }
}

// -----

// Random draws: f32 of the i32 offsets' shape.
// CHECK: error: in kernel 'rand', kt.rand: the result !kt.rt<16x64xbf16, row> must be f32 of the offsets' shape (!kt.rt<16x64xi32, row>)

builtin.module attributes {kt.target = "gfx942"} {
  func.func @rand(%g: !kt.global<f32>) attributes {kt.kernel = "rand", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %seed = arith.constant 7 : i64
    %o = "kt.iota"() <{axis = "col"}> : () -> !kt.rt<16x64xi32, row>
    %r = "kt.rand"(%seed, %o) : (i64, !kt.rt<16x64xi32, row>) -> !kt.rt<16x64xbf16, row>
    func.return
  }
}

// -----

// A type outside the table: xDSL's check of an operand's kind is named at the op too.
// CHECK: error: in kernel 'kinds', kt.mma_shared: operand 'b' at position 1 does not verify:

builtin.module attributes {kt.target = "gfx942"} {
  func.func @kinds(%g: !kt.global<f32>) attributes {kt.kernel = "kinds", kt.warps = 1 : i64} {
    %c0 = arith.constant 0 : index
    %a = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x64xbf16, row>
    %b = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<32x64xbf16, row>
    %acc = "kt.fill"() <{value = 0.0 : f64}> : () -> !kt.rt<16x32xf32, row>
    %r = "kt.mma_shared"(%a, %b, %acc) : (!kt.rt<16x64xbf16, row>, !kt.rt<32x64xbf16, row>, !kt.rt<16x32xf32, row>) -> !kt.rt<16x32xf32, row>
    func.return
  }
}

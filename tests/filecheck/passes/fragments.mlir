// RUN: ktile-opt %s -p fragments --split-input-file --verify-diagnostics | filecheck %s
//
// fragments: MMA operands become fragments a and b, accumulators and results acc, and every
// value tied to them by scf.for / scf.if follows; one tile is never two fragments; MMA dims
// divide into the target's instruction; 16-bit operands are not read from shared memory in the
// slow layout (trap 3). Each case is a kernel traced with the pass pipeline bypassed; its
// source is shown above it, and the loc lines are its lines.

// The accumulator is tied through the loop: init, block argument, yield and result are acc.
// CHECK-LABEL: func.func @gemm
// CHECK:         %[[ZERO:.*]] = "kt.fill"() {{.*}} -> !kt.rt<32x32xf32, row, acc>
// CHECK:         %[[ACC:.*]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} = scf.for {{.*}} iter_args(%[[ARG:.*]] = %[[ZERO]], {{.*}} -> (!kt.rt<32x32xf32, row, acc>,
// CHECK:           %[[A:.*]] = "kt.lds_load"({{.*}} -> !kt.rt<32x32xbf16, row, a>
// CHECK-NEXT:      %[[B:.*]] = "kt.lds_load"({{.*}} -> !kt.rt<32x32xbf16, row, b>
// CHECK-NEXT:      "kt.wait_for"(%[[A]], %[[B]]) : (!kt.rt<32x32xbf16, row, a>, !kt.rt<32x32xbf16, row, b>) -> ()
// CHECK-NEXT:      %[[NEXT:.*]] = "kt.mma"(%[[A]], %[[B]], %[[ARG]]) <{variant = "ABt"}> : (!kt.rt<32x32xbf16, row, a>, !kt.rt<32x32xbf16, row, b>, !kt.rt<32x32xf32, row, acc>) -> !kt.rt<32x32xf32, row, acc>
// CHECK:           scf.yield %[[NEXT]], {{.*}} : !kt.rt<32x32xf32, row, acc>,
// CHECK:         "kt.store"({{.*}}, %[[ACC]]) {{.*}} !kt.rt<32x32xf32, row, acc>) -> ()

// 203  @hk.kernel(grid=G, warps=4)
// 204  def gemm(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32], *,
// 205           K: hk.Constexpr[int] = 4):
// 206      row = hk.arch.block_idx.y
// 207      col = hk.arch.block_idx.x
// 208      sa0 = hk.shared(hk.ST(hk.bf16, 32, 32))
// 209      sa1 = hk.shared(hk.ST(hk.bf16, 32, 32))
// 210      sb0 = hk.shared(hk.ST(hk.bf16, 32, 32))
// 211      sb1 = hk.shared(hk.ST(hk.bf16, 32, 32))
// 212      acc = hk.zeros(hk.RT(hk.fp32, 32, 32))
// 213      hk.group.load(sa0, a[0, 0, row, 0])
// 214      hk.group.load(sb0, b[0, 0, col, 0])
// 215      for k in hk.range(K):
// 216          hk.group.load(sa1, a[0, 0, row, k + 1])
// 217          hk.group.load(sb1, b[0, 0, col, k + 1])
// 218          hk.wait_for(sa0, sb0)
// 219          hk.barrier()
// 220          ta = sa0.load(hk.RT(hk.bf16, 32, 32))
// 221          tb = sb0.load(hk.RT(hk.bf16, 32, 32))
// 222          hk.wait_for(ta, tb)
// 223          acc = hk.mma_ABt(ta, tb, acc)
// 224          hk.barrier()
// 225          sa0, sa1 = sa1, sa0
// 226          sb0, sb1 = sb1, sb0
// 227      hk.wait_for(sa0, sb0)
// 228      c[0, 0, row, col] = acc
builtin.module attributes {kt.target = "gfx942"} {
  func.func @gemm(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "gemm", kt.warps = 4 : i64} {
    %3 = "kt.block_idx"() <{dim = 1 : i64}> : () -> index loc("kernels.py":206:0)
    %4 = "kt.block_idx"() <{dim = 0 : i64}> : () -> index loc("kernels.py":207:0)
    %5 = "kt.alloc"() : () -> !kt.st<32x32xbf16> loc("kernels.py":208:0)
    %6 = "kt.alloc"() : () -> !kt.st<32x32xbf16> loc("kernels.py":209:0)
    %7 = "kt.alloc"() : () -> !kt.st<32x32xbf16> loc("kernels.py":210:0)
    %8 = "kt.alloc"() : () -> !kt.st<32x32xbf16> loc("kernels.py":211:0)
    %9 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<32x32xf32, row> loc("kernels.py":212:0)
    %10 = arith.constant 0 : index loc("kernels.py":213:0)
    "kt.copy_async"(%0, %10, %10, %3, %10, %5) : (!kt.global<bf16>, index, index, index, index, !kt.st<32x32xbf16>) -> () loc("kernels.py":213:0)
    "kt.copy_async"(%1, %10, %10, %4, %10, %7) : (!kt.global<bf16>, index, index, index, index, !kt.st<32x32xbf16>) -> () loc("kernels.py":214:0)
    %11 = arith.constant 4 : index loc("kernels.py":215:0)
    %12 = arith.constant 1 : index loc("kernels.py":215:0)
    %13, %14, %15, %16, %17 = scf.for %18 = %10 to %11 step %12 iter_args(%19 = %9, %20 = %5, %21 = %6, %22 = %7, %23 = %8) -> (!kt.rt<32x32xf32, row>, !kt.st<32x32xbf16>, !kt.st<32x32xbf16>, !kt.st<32x32xbf16>, !kt.st<32x32xbf16>) {
      %24 = arith.constant 1 : index loc("kernels.py":216:0)
      %25 = arith.addi %18, %24 : index loc("kernels.py":216:0)
      %26 = arith.constant 0 : index loc("kernels.py":216:0)
      "kt.copy_async"(%0, %26, %26, %3, %25, %21) : (!kt.global<bf16>, index, index, index, index, !kt.st<32x32xbf16>) -> () loc("kernels.py":216:0)
      %27 = arith.addi %18, %24 : index loc("kernels.py":217:0)
      "kt.copy_async"(%1, %26, %26, %4, %27, %23) : (!kt.global<bf16>, index, index, index, index, !kt.st<32x32xbf16>) -> () loc("kernels.py":217:0)
      "kt.wait_for"(%20, %22) : (!kt.st<32x32xbf16>, !kt.st<32x32xbf16>) -> () loc("kernels.py":218:0)
      "kt.barrier"() : () -> () loc("kernels.py":219:0)
      %28 = "kt.lds_load"(%20, %26, %26) : (!kt.st<32x32xbf16>, index, index) -> !kt.rt<32x32xbf16, row> loc("kernels.py":220:0)
      %29 = "kt.lds_load"(%22, %26, %26) : (!kt.st<32x32xbf16>, index, index) -> !kt.rt<32x32xbf16, row> loc("kernels.py":221:0)
      "kt.wait_for"(%28, %29) : (!kt.rt<32x32xbf16, row>, !kt.rt<32x32xbf16, row>) -> () loc("kernels.py":222:0)
      %30 = "kt.mma"(%28, %29, %19) <{variant = "ABt"}> : (!kt.rt<32x32xbf16, row>, !kt.rt<32x32xbf16, row>, !kt.rt<32x32xf32, row>) -> !kt.rt<32x32xf32, row> loc("kernels.py":223:0)
      "kt.barrier"() : () -> () loc("kernels.py":224:0)
      scf.yield %30, %21, %20, %23, %22 : !kt.rt<32x32xf32, row>, !kt.st<32x32xbf16>, !kt.st<32x32xbf16>, !kt.st<32x32xbf16>, !kt.st<32x32xbf16> loc("kernels.py":215:0)
    } loc("kernels.py":215:0)
    "kt.wait_for"(%14, %16) : (!kt.st<32x32xbf16>, !kt.st<32x32xbf16>) -> () loc("kernels.py":227:0)
    "kt.store"(%2, %10, %10, %3, %4, %13) : (!kt.global<f32>, index, index, index, index, !kt.rt<32x32xf32, row>) -> () loc("kernels.py":228:0)
    func.return loc("kernels.py":203:0)
  } loc("kernels.py":203:0)
}

// -----

// Both yields of an scf.if and its result take the accumulator's fragment.
// CHECK-LABEL: func.func @f_if
// CHECK:         %[[X:.*]] = "kt.load"({{.*}} -> !kt.rt<16x16xbf16, row, a>
// CHECK:         %[[Y:.*]] = "kt.load"({{.*}} -> !kt.rt<16x16xbf16, row, b>
// CHECK:         %[[ZERO:.*]] = "kt.fill"() {{.*}} -> !kt.rt<16x16xf32, row, acc>
// CHECK:         %[[R:.*]] = scf.if %{{.*}} -> (!kt.rt<16x16xf32, row, acc>) {
// CHECK-NEXT:      %[[M:.*]] = "kt.mma"(%[[X]], %[[Y]], %[[ZERO]])
// CHECK-NEXT:      scf.yield %[[M]] : !kt.rt<16x16xf32, row, acc>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %[[ZERO]] : !kt.rt<16x16xf32, row, acc>
// CHECK:         "kt.store"({{.*}}, %[[R]]) {{.*}} !kt.rt<16x16xf32, row, acc>) -> ()

// 230  @hk.kernel(grid=G, warps=1)
// 231  def f_if(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
// 232      x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
// 233      y = a[0, 0, 0, 1].load(hk.RT(hk.bf16, 16, 16))
// 234      acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
// 235      if hk.arch.block_idx.x > 0:
// 236          acc = hk.mma_ABt(x, y, acc)
// 237      o[0, 0, 0, 0] = acc
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @f_if(%0: !kt.global<bf16>, %1: !kt.global<f32>) attributes {kt.kernel = "f_if", kt.warps = 1 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":232:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":232:0)
    %4 = arith.constant 1 : index loc("kernels.py":233:0)
    %5 = "kt.load"(%0, %2, %2, %2, %4) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":233:0)
    %6 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":234:0)
    %7 = "kt.block_idx"() <{dim = 0 : i64}> : () -> index loc("kernels.py":235:0)
    %8 = arith.cmpi sgt, %7, %2 : index loc("kernels.py":235:0)
    %9 = scf.if %8 -> (!kt.rt<16x16xf32, row>) {
      %10 = "kt.mma"(%3, %5, %6) <{variant = "ABt"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":236:0)
      scf.yield %10 : !kt.rt<16x16xf32, row> loc("kernels.py":235:0)
    } else {
      scf.yield %6 : !kt.rt<16x16xf32, row> loc("kernels.py":235:0)
    } loc("kernels.py":235:0)
    "kt.store"(%1, %2, %2, %2, %2, %9) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":237:0)
    func.return loc("kernels.py":230:0)
  } loc("kernels.py":230:0)
}

// -----

// CHECK: kernels.py:49: error: in kernel 'f_conflict', mma: this 16x16 bf16 tile is operand b here but operand a of the mma at line 49: a register tile holds one MMA fragment layout, and these two differ
// CHECK-NEXT: fix: load it twice, once for each use (both loads may read the same shared tile or global)

//  46  @hk.kernel(grid=G, warps=1)
//  47  def f_conflict(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
//  48      t = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
//  49      acc = hk.mma(t, t, hk.zeros(hk.RT(hk.fp32, 16, 16)), "ABt")
//  50      o[0, 0, 0, 0] = acc
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @f_conflict(%0: !kt.global<bf16>, %1: !kt.global<f32>) attributes {kt.kernel = "f_conflict", kt.warps = 1 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":48:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":48:0)
    %4 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":49:0)
    %5 = "kt.mma"(%3, %3, %4) <{variant = "ABt"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":49:0)
    "kt.store"(%1, %2, %2, %2, %2, %5) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":50:0)
    func.return loc("kernels.py":46:0)
  } loc("kernels.py":46:0)
}

// -----

// CHECK: kernels.py:56: error: in kernel 'f_shape', mma: an mma of bf16 tiles with M=16, N=16, K=16 does not divide into gfx950's instruction v_mfma_f32_16x16x32_bf16 (16x16x32): K=16 is not a multiple of 32
// CHECK-NEXT: fix: use tiles whose M is a multiple of 16, N of 16 and K of 32

//  52  @hk.kernel(grid=G, warps=1)
//  53  def f_shape(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
//  54      x = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
//  55      y = b[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 16))
//  56      o[0, 0, 0, 0] = hk.mma(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)), "ABt")
builtin.module attributes {kt.target = "gfx950"} {
  func.func @f_shape(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "f_shape", kt.warps = 1 : i64} {
    %3 = arith.constant 0 : index loc("kernels.py":54:0)
    %4 = "kt.load"(%0, %3, %3, %3, %3) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":54:0)
    %5 = "kt.load"(%1, %3, %3, %3, %3) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":55:0)
    %6 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":56:0)
    %7 = "kt.mma"(%4, %5, %6) <{variant = "ABt"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":56:0)
    "kt.store"(%2, %3, %3, %3, %3, %7) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":56:0)
    func.return loc("kernels.py":52:0)
  } loc("kernels.py":52:0)
}

// -----

// Trap 3: b is read from shared memory in col layout on a target whose fast layout is row.
// CHECK: kernels.py:66: error: in kernel 'f_slow', shared load: mma operand b (the mma at line 68) is a 16-bit tile loaded from shared memory in col layout, which reads ~8x slower on gfx942 than row layout
// CHECK-NEXT: fix: load it in row layout (hk.RT(hk.bf16, 16, 32) from a shared tile holding its transpose) and use mma variant ABt instead of AB

//  58  @hk.kernel(grid=G, warps=1)
//  59  def f_slow(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
//  60      sa = hk.shared(hk.ST(hk.bf16, 16, 32))
//  61      sb = hk.shared(hk.ST(hk.bf16, 32, 16))
//  62      hk.group.load(sa, a[0, 0, 0, 0])
//  63      hk.group.load(sb, b[0, 0, 0, 0])
//  64      hk.wait_for(sa, sb)
//  65      x = sa.load(hk.RT(hk.bf16, 16, 32))
//  66      y = sb.load(hk.RT(hk.bf16, 32, 16, "col"))
//  67      hk.wait_for(x, y)
//  68      o[0, 0, 0, 0] = hk.mma(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)))
builtin.module attributes {kt.target = "gfx942"} {
  func.func @f_slow(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "f_slow", kt.warps = 1 : i64} {
    %3 = "kt.alloc"() : () -> !kt.st<16x32xbf16> loc("kernels.py":60:0)
    %4 = "kt.alloc"() : () -> !kt.st<32x16xbf16> loc("kernels.py":61:0)
    %5 = arith.constant 0 : index loc("kernels.py":62:0)
    "kt.copy_async"(%0, %5, %5, %5, %5, %3) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x32xbf16>) -> () loc("kernels.py":62:0)
    "kt.copy_async"(%1, %5, %5, %5, %5, %4) : (!kt.global<bf16>, index, index, index, index, !kt.st<32x16xbf16>) -> () loc("kernels.py":63:0)
    "kt.wait_for"(%3, %4) : (!kt.st<16x32xbf16>, !kt.st<32x16xbf16>) -> () loc("kernels.py":64:0)
    %6 = "kt.lds_load"(%3, %5, %5) : (!kt.st<16x32xbf16>, index, index) -> !kt.rt<16x32xbf16, row> loc("kernels.py":65:0)
    %7 = "kt.lds_load"(%4, %5, %5) : (!kt.st<32x16xbf16>, index, index) -> !kt.rt<32x16xbf16, col> loc("kernels.py":66:0)
    "kt.wait_for"(%6, %7) : (!kt.rt<16x32xbf16, row>, !kt.rt<32x16xbf16, col>) -> () loc("kernels.py":67:0)
    %8 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":68:0)
    %9 = "kt.mma"(%6, %7, %8) <{variant = "AB"}> : (!kt.rt<16x32xbf16, row>, !kt.rt<32x16xbf16, col>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":68:0)
    "kt.store"(%2, %5, %5, %5, %5, %9) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":68:0)
    func.return loc("kernels.py":58:0)
  } loc("kernels.py":58:0)
}

// -----

// Traced for gfx950, then retargeted to gfx942, which has no fp8 MMA (verify refuses the dtype
// first in the full pipeline).
// CHECK: kernels.py:74: error: in kernel 'f_fp8', mma: gfx942 has no MMA instruction for fp8 operands
// CHECK-NEXT: fix: convert the operands to one of bf16, fp16, i8 with .to(...)

//  70  @hk.kernel(grid=G, warps=1)
//  71  def f_fp8(a: hk.Tensor[hk.fp8], o: hk.Tensor[hk.fp32]):
//  72      x = a[0, 0, 0, 0].load(hk.RT(hk.fp8, 16, 32))
//  73      y = a[0, 0, 0, 1].load(hk.RT(hk.fp8, 16, 32))
//  74      o[0, 0, 0, 0] = hk.mma(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)), "ABt")
builtin.module attributes {kt.target = "gfx942"} {
  func.func @f_fp8(%0: !kt.global<f8E4M3FN>, %1: !kt.global<f32>) attributes {kt.kernel = "f_fp8", kt.warps = 1 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":72:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<f8E4M3FN>, index, index, index, index) -> !kt.rt<16x32xf8E4M3FN, row> loc("kernels.py":72:0)
    %4 = arith.constant 1 : index loc("kernels.py":73:0)
    %5 = "kt.load"(%0, %2, %2, %2, %4) <{pad = 0.000000e+00 : f64}> : (!kt.global<f8E4M3FN>, index, index, index, index) -> !kt.rt<16x32xf8E4M3FN, row> loc("kernels.py":73:0)
    %6 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":74:0)
    %7 = "kt.mma"(%3, %5, %6) <{variant = "ABt"}> : (!kt.rt<16x32xf8E4M3FN, row>, !kt.rt<16x32xf8E4M3FN, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":74:0)
    "kt.store"(%1, %2, %2, %2, %2, %7) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":74:0)
    func.return loc("kernels.py":70:0)
  } loc("kernels.py":70:0)
}

// -----

// An mma from shared gives its a the A fragment and its accumulator (through the loop) the
// accumulator fragment; its b is a shared tile and has none.
// CHECK-LABEL: func.func @f_mma_shared
// CHECK:         %[[A:.*]] = "kt.load"({{.*}} -> !kt.rt<16x32xbf16, row, a>
// CHECK:         %[[ZERO:.*]] = "kt.fill"() {{.*}} -> !kt.rt<16x64xf32, row, acc>
// CHECK:         scf.for {{.*}} iter_args(%[[ARG:.*]] = %[[ZERO]]) -> (!kt.rt<16x64xf32, row, acc>)
// CHECK-NEXT:      "kt.mma_shared"(%[[A]], %{{.*}}, %[[ARG]]) : (!kt.rt<16x32xbf16, row, a>, !kt.st<64x32xbf16>, !kt.rt<16x64xf32, row, acc>) -> !kt.rt<16x64xf32, row, acc>

//  48  @hk.kernel(grid=G, warps=8)
//  49  def f_mma_shared(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
//  50      sb = hk.shared(hk.ST(hk.bf16, 64, 32))
//  51      ra = a[0, 0, hk.arch.warp_id, 0].load(hk.RT(hk.bf16, 16, 32))
//  52      acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
//  53      for k in hk.range(2):
//  54          acc += ra @ sb.T
//  55      c[0, 0, hk.arch.warp_id, 0] = acc
builtin.module attributes {kt.target = "sm_90a"} {
  func.func @f_mma_shared(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "f_mma_shared", kt.warps = 8 : i64} {
    %3 = "kt.alloc"() : () -> !kt.st<64x32xbf16> loc("kernels.py":50:0)
    %4 = "kt.warp_id"() : () -> index loc("kernels.py":51:0)
    %5 = arith.constant 0 : index loc("kernels.py":51:0)
    %6 = "kt.load"(%0, %5, %5, %4, %5) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x32xbf16, row> loc("kernels.py":51:0)
    %7 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x64xf32, row> loc("kernels.py":52:0)
    %8 = arith.constant 2 : index loc("kernels.py":53:0)
    %9 = arith.constant 1 : index loc("kernels.py":53:0)
    %10 = scf.for %11 = %5 to %8 step %9 iter_args(%12 = %7) -> (!kt.rt<16x64xf32, row>) {
      %13 = "kt.mma_shared"(%6, %3, %12) : (!kt.rt<16x32xbf16, row>, !kt.st<64x32xbf16>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xf32, row> loc("kernels.py":54:0)
      scf.yield %13 : !kt.rt<16x64xf32, row> loc("kernels.py":53:0)
    } loc("kernels.py":53:0)
    %14 = "kt.warp_id"() : () -> index loc("kernels.py":55:0)
    "kt.store"(%2, %5, %5, %14, %5, %10) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x64xf32, row>) -> () loc("kernels.py":55:0)
    func.return loc("kernels.py":48:0)
  } loc("kernels.py":48:0)
}

// RUN: ktile-opt %s -p waits --split-input-file --verify-diagnostics | filecheck %s
//
// waits: every kt.wait_for gets the vm (global->shared copies) and lds (shared->register
// loads) counts it drains to, derived per path in program order (loops to a fixpoint), and
// every asynchronous result is proven waited before it is used. Each case is a kernel traced
// with the pass pipeline bypassed; its source is shown above it, and the loc lines are its
// lines.

// Double-buffered (prefetch) GEMM: the copies for step k+1 are issued before the wait for step
// k, so that wait leaves 2 in flight; the shared tiles swap through the loop's block arguments.
// CHECK-LABEL: func.func @gemm
// CHECK:         scf.for
// CHECK:           "kt.copy_async"
// CHECK:           "kt.copy_async"
// CHECK:           "kt.wait_for"(%{{.*}}, %{{.*}}) <{vm = 2 : i64}> : (!kt.st<32x32xbf16>, !kt.st<32x32xbf16>) -> ()
// CHECK-NEXT:      "kt.barrier"
// CHECK-NEXT:      "kt.lds_load"
// CHECK-NEXT:      "kt.lds_load"
// CHECK-NEXT:      "kt.wait_for"(%{{.*}}, %{{.*}}) <{lds = 0 : i64}>
// CHECK:           scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    "kt.wait_for"(%{{.*}}, %{{.*}}) <{vm = 0 : i64}>

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

// NVIDIA shared loads are scoreboarded: no lds counter, so no lds count.
// CHECK-LABEL: func.func @gemm
// CHECK:         "kt.wait_for"(%{{.*}}, %{{.*}}) <{vm = 2 : i64}>
// CHECK:         "kt.wait_for"(%{{[0-9]+}}, %{{[0-9]+}}) : (!kt.rt
// CHECK:         "kt.wait_for"(%{{.*}}, %{{.*}}) <{vm = 0 : i64}>

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
builtin.module attributes {kt.target = "sm_90a"} {
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

// CHECK-LABEL: func.func @w_counts
// CHECK:         "kt.wait_for"(%{{.*}}) <{vm = 2 : i64}>
// CHECK-NEXT:    "kt.lds_load"
// CHECK-NEXT:    "kt.wait_for"(%{{.*}}) <{vm = 1 : i64}>
// CHECK-NEXT:    "kt.lds_load"
// CHECK-NEXT:    "kt.wait_for"(%{{.*}}) <{lds = 1 : i64}>
// CHECK-NEXT:    "kt.wait_for"(%{{.*}}, %{{.*}}) <{vm = 0 : i64, lds = 0 : i64}>

// 142  @hk.kernel(grid=G, warps=1)
// 143  def w_counts(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 144      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 145      t = hk.shared(hk.ST(hk.bf16, 16, 16))
// 146      u = hk.shared(hk.ST(hk.bf16, 16, 16))
// 147      hk.group.load(s, a[0, 0, 0, 0])
// 148      hk.group.load(t, a[0, 0, 0, 1])
// 149      hk.group.load(u, a[0, 0, 0, 2])
// 150      hk.wait_for(s)
// 151      x = s.load(hk.RT(hk.bf16, 16, 16))
// 152      hk.wait_for(t)
// 153      y = t.load(hk.RT(hk.bf16, 16, 16))
// 154      hk.wait_for(x)
// 155      hk.wait_for(u, y)
// 156      o[0, 0, 0, 0] = x + y
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_counts(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_counts", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":144:0)
    %3 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":145:0)
    %4 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":146:0)
    %5 = arith.constant 0 : index loc("kernels.py":147:0)
    "kt.copy_async"(%0, %5, %5, %5, %5, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":147:0)
    %6 = arith.constant 1 : index loc("kernels.py":148:0)
    "kt.copy_async"(%0, %5, %5, %5, %6, %3) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":148:0)
    %7 = arith.constant 2 : index loc("kernels.py":149:0)
    "kt.copy_async"(%0, %5, %5, %5, %7, %4) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":149:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":150:0)
    %8 = "kt.lds_load"(%2, %5, %5) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":151:0)
    "kt.wait_for"(%3) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":152:0)
    %9 = "kt.lds_load"(%3, %5, %5) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":153:0)
    "kt.wait_for"(%8) : (!kt.rt<16x16xbf16, row>) -> () loc("kernels.py":154:0)
    "kt.wait_for"(%4, %9) : (!kt.st<16x16xbf16>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":155:0)
    %10 = "kt.binary"(%8, %9) <{fn = "add"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>) -> !kt.rt<16x16xbf16, row> loc("kernels.py":156:0)
    "kt.store"(%1, %5, %5, %5, %5, %10) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":156:0)
    func.return loc("kernels.py":142:0)
  } loc("kernels.py":142:0)
}

// -----

// 16 loads after the waited one, but gfx942's lgkmcnt encodes at most 15.
// CHECK-LABEL: func.func @w_clamp
// CHECK:         "kt.wait_for"(%{{.*}}) <{lds = 15 : i64}>
// CHECK-NEXT:    "kt.wait_for"({{.*}}) <{lds = 0 : i64}>

// 239  @hk.kernel(grid=G, warps=1)
// 240  def w_clamp(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 241      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 242      hk.group.load(s, a[0, 0, 0, 0])
// 243      hk.wait_for(s)
// 244      first = s.load(hk.RT(hk.bf16, 16, 16))
// 245      rest = [s.load(hk.RT(hk.bf16, 16, 16)) for _ in range(16)]
// 246      hk.wait_for(first)
// 247      hk.wait_for(*rest)
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_clamp(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_clamp", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":241:0)
    %3 = arith.constant 0 : index loc("kernels.py":242:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":242:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":243:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":244:0)
    %5 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %6 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %7 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %8 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %9 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %10 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %11 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %12 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %13 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %14 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %15 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %16 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %17 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %18 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %19 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    %20 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":245:0)
    "kt.wait_for"(%4) : (!kt.rt<16x16xbf16, row>) -> () loc("kernels.py":246:0)
    "kt.wait_for"(%5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20) : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":247:0)
    func.return loc("kernels.py":239:0)
  } loc("kernels.py":239:0)
}

// -----

// One path leaves 0 copies after s, the other 1: the count is the smaller.
// CHECK-LABEL: func.func @w_branch
// CHECK:         scf.if
// CHECK:         "kt.wait_for"(%{{.*}}) <{vm = 0 : i64}>
// CHECK-NEXT:    "kt.wait_for"(%{{.*}}) <{vm = 0 : i64}>

// 249  @hk.kernel(grid=G, warps=1)
// 250  def w_branch(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 251      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 252      t = hk.shared(hk.ST(hk.bf16, 16, 16))
// 253      hk.group.load(s, a[0, 0, 0, 0])
// 254      if hk.arch.block_idx.x > 0:
// 255          hk.group.load(t, a[0, 0, 0, 1])
// 256      hk.wait_for(s)
// 257      hk.wait_for(t)
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_branch(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_branch", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":251:0)
    %3 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":252:0)
    %4 = arith.constant 0 : index loc("kernels.py":253:0)
    "kt.copy_async"(%0, %4, %4, %4, %4, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":253:0)
    %5 = "kt.block_idx"() <{dim = 0 : i64}> : () -> index loc("kernels.py":254:0)
    %6 = arith.cmpi sgt, %5, %4 : index loc("kernels.py":254:0)
    scf.if %6 {
      %7 = arith.constant 0 : index loc("kernels.py":255:0)
      %8 = arith.constant 1 : index loc("kernels.py":255:0)
      "kt.copy_async"(%0, %7, %7, %7, %8, %3) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":255:0)
    } else {
    } loc("kernels.py":254:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":256:0)
    "kt.wait_for"(%3) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":257:0)
    func.return loc("kernels.py":249:0)
  } loc("kernels.py":249:0)
}

// -----

// CHECK-LABEL: func.func @w_while
// CHECK:         } do {
// CHECK:           "kt.wait_for"(%{{.*}}) <{vm = 0 : i64}>
// CHECK-NEXT:      "kt.lds_load"
// CHECK-NEXT:      "kt.wait_for"(%{{.*}}) <{lds = 0 : i64}>
// CHECK:         "kt.wait_for"(%{{.*}}) <{vm = 0 : i64}>

// 259  @hk.kernel(grid=G, warps=1)
// 260  def w_while(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 261      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 262      n = hk.arch.block_idx.x
// 263      hk.group.load(s, a[0, 0, 0, 0])
// 264      while n > 0:
// 265          hk.wait_for(s)
// 266          x = s.load(hk.RT(hk.bf16, 16, 16))
// 267          hk.wait_for(x)
// 268          hk.group.load(s, a[0, 0, 0, n])
// 269          o[0, 0, 0, n] = x
// 270          n = n - 1
// 271      hk.wait_for(s)
builtin.module attributes {kt.target = "gfx950"} {
  func.func @w_while(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_while", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":261:0)
    %3 = "kt.block_idx"() <{dim = 0 : i64}> : () -> index loc("kernels.py":262:0)
    %4 = arith.constant 0 : index loc("kernels.py":263:0)
    "kt.copy_async"(%0, %4, %4, %4, %4, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":263:0)
    %5 = scf.while (%6 = %3) : (index) -> index {
      %7 = arith.constant 0 : index loc("kernels.py":264:0)
      %8 = arith.cmpi sgt, %6, %7 : index loc("kernels.py":264:0)
      scf.condition(%8) %6 : index loc("kernels.py":264:0)
    } do {
    ^bb0(%9: index):
      "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":265:0)
      %10 = "kt.lds_load"(%2, %4, %4) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":266:0)
      "kt.wait_for"(%10) : (!kt.rt<16x16xbf16, row>) -> () loc("kernels.py":267:0)
      %11 = arith.constant 0 : index loc("kernels.py":268:0)
      "kt.copy_async"(%0, %11, %11, %11, %9, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":268:0)
      "kt.store"(%1, %11, %11, %11, %9, %10) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":269:0)
      %12 = arith.constant 1 : index loc("kernels.py":270:0)
      %13 = arith.subi %9, %12 : index loc("kernels.py":270:0)
      scf.yield %13 : index loc("kernels.py":264:0)
    } loc("kernels.py":264:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":271:0)
    func.return loc("kernels.py":259:0)
  } loc("kernels.py":259:0)
}

// -----

// Carrying registers into or around a loop copies them, so it is a use: a shared load's result
// must be waited for before a loop carries it (the interpreter and the C++ agree).
// CHECK: kernels.py:166: error: in kernel 'w_regprefetch', loop: the loop at line 166 carries the 16x16 bf16 tile loaded at line 163 before its wait
// CHECK-NEXT: fix: carrying a tile into or out of a loop or branch copies its registers: call hk.wait_for(tile) before it is carried

// 158  @hk.kernel(grid=G, warps=1)
// 159  def w_regprefetch(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
// 160      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 161      hk.group.load(s, a[0, 0, 0, 0])
// 162      hk.wait_for(s)
// 163      x = s.load(hk.RT(hk.bf16, 16, 16))
// 164      y = s.load(hk.RT(hk.bf16, 16, 16))
// 165      acc = hk.zeros(hk.RT(hk.fp32, 16, 16))
// 166      for i in hk.range(4):
// 167          hk.wait_for(x, y)
// 168          acc = hk.mma(x, y, acc, "ABt")
// 169          x = s.load(hk.RT(hk.bf16, 16, 16))
// 170          y = s.load(hk.RT(hk.bf16, 16, 16))
// 171      hk.wait_for(x, y)
// 172      o[0, 0, 0, 0] = acc
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @w_regprefetch(%0: !kt.global<bf16>, %1: !kt.global<f32>) attributes {kt.kernel = "w_regprefetch", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":160:0)
    %3 = arith.constant 0 : index loc("kernels.py":161:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":161:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":162:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":163:0)
    %5 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":164:0)
    %6 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":165:0)
    %7 = arith.constant 4 : index loc("kernels.py":166:0)
    %8 = arith.constant 1 : index loc("kernels.py":166:0)
    %9, %10, %11 = scf.for %12 = %3 to %7 step %8 iter_args(%13 = %6, %14 = %4, %15 = %5) -> (!kt.rt<16x16xf32, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>) {
      "kt.wait_for"(%14, %15) : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":167:0)
      %16 = "kt.mma"(%14, %15, %13) <{variant = "ABt"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":168:0)
      %17 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":169:0)
      %18 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":170:0)
      scf.yield %16, %17, %18 : !kt.rt<16x16xf32, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row> loc("kernels.py":166:0)
    } loc("kernels.py":166:0)
    "kt.wait_for"(%10, %11) : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":171:0)
    "kt.store"(%1, %3, %3, %3, %3, %9) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":172:0)
    func.return loc("kernels.py":158:0)
  } loc("kernels.py":158:0)
}

// -----

// Trap 1: the mma reads registers whose shared load has not been waited for.
// CHECK: kernels.py:96: error: in kernel 'w_trap1', mma: mma uses the 16x16 bf16 tile loaded at line 93 before its wait
// CHECK-NEXT: fix: call hk.wait_for(tile) between the shared load and this use: a wait carries no register dependence, so nothing else orders them

//  88  @hk.kernel(grid=G, warps=1)
//  89  def w_trap1(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
//  90      s = hk.shared(hk.ST(hk.bf16, 16, 16))
//  91      hk.group.load(s, a[0, 0, 0, 0])
//  92      hk.wait_for(s)
//  93      x = s.load(hk.RT(hk.bf16, 16, 16))
//  94      y = a[0, 0, 0, 1].load(hk.RT(hk.bf16, 16, 16))
//  95      # the planted bug: no hk.wait_for(x) before the mma
//  96      acc = hk.mma(x, y, hk.zeros(hk.RT(hk.fp32, 16, 16)), "ABt")
//  97      hk.wait_for(x)
//  98      o[0, 0, 0, 0] = acc
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_trap1(%0: !kt.global<bf16>, %1: !kt.global<f32>) attributes {kt.kernel = "w_trap1", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":90:0)
    %3 = arith.constant 0 : index loc("kernels.py":91:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":91:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":92:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":93:0)
    %5 = arith.constant 1 : index loc("kernels.py":94:0)
    %6 = "kt.load"(%0, %3, %3, %3, %5) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":94:0)
    %7 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x16xf32, row> loc("kernels.py":96:0)
    %8 = "kt.mma"(%4, %6, %7) <{variant = "ABt"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>, !kt.rt<16x16xf32, row>) -> !kt.rt<16x16xf32, row> loc("kernels.py":96:0)
    "kt.wait_for"(%4) : (!kt.rt<16x16xbf16, row>) -> () loc("kernels.py":97:0)
    "kt.store"(%1, %3, %3, %3, %3, %8) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x16xf32, row>) -> () loc("kernels.py":98:0)
    func.return loc("kernels.py":88:0)
  } loc("kernels.py":88:0)
}

// -----

// The wait for y completes x too (it is older), but binds only y: x may not be used yet.
// CHECK: kernels.py:281: error: in kernel 'w_unnamed', add: add uses the 16x16 bf16 tile loaded at line 278, which no wait names: the wait at line 280 completes it, but a wait keeps only the tiles it names ahead of their uses
// CHECK-NEXT: fix: name it in that wait: hk.wait_for(..., tile)

// 273  @hk.kernel(grid=G, warps=1)
// 274  def w_unnamed(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 275      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 276      hk.group.load(s, a[0, 0, 0, 0])
// 277      hk.wait_for(s)
// 278      x = s.load(hk.RT(hk.bf16, 16, 16))
// 279      y = s.load(hk.RT(hk.bf16, 16, 16))
// 280      hk.wait_for(y)
// 281      o[0, 0, 0, 0] = x + y
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_unnamed(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_unnamed", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":275:0)
    %3 = arith.constant 0 : index loc("kernels.py":276:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":276:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":277:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":278:0)
    %5 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":279:0)
    "kt.wait_for"(%5) : (!kt.rt<16x16xbf16, row>) -> () loc("kernels.py":280:0)
    %6 = "kt.binary"(%4, %5) <{fn = "add"}> : (!kt.rt<16x16xbf16, row>, !kt.rt<16x16xbf16, row>) -> !kt.rt<16x16xbf16, row> loc("kernels.py":281:0)
    "kt.store"(%1, %3, %3, %3, %3, %6) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":281:0)
    func.return loc("kernels.py":273:0)
  } loc("kernels.py":273:0)
}

// -----

// CHECK: kernels.py:104: error: in kernel 'w_filling', shared load: shared load reads the shared tile that the group load at line 103 is still filling
// CHECK-NEXT: fix: call hk.wait_for(tile) first (then hk.barrier() if other warps read what this one copied)

// 100  @hk.kernel(grid=G, warps=1)
// 101  def w_filling(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 102      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 103      hk.group.load(s, a[0, 0, 0, 0])
// 104      x = s.load(hk.RT(hk.bf16, 16, 16))
// 105      hk.wait_for(s, x)
// 106      o[0, 0, 0, 0] = x
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_filling(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_filling", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":102:0)
    %3 = arith.constant 0 : index loc("kernels.py":103:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":103:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":104:0)
    "kt.wait_for"(%2, %4) : (!kt.st<16x16xbf16>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":105:0)
    "kt.store"(%1, %3, %3, %3, %3, %4) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":106:0)
    func.return loc("kernels.py":100:0)
  } loc("kernels.py":100:0)
}

// -----

// Trap 4: a barrier does not complete an asynchronous copy.
// CHECK: kernels.py:113: error: in kernel 'w_trap4', shared load: the copy into the shared tile at line 111 is still in flight at the barrier at line 112: on gfx950 it completes on vmcnt, which a barrier does not wait for; wait_for(tile) before the barrier
// CHECK-NEXT: fix: a barrier orders the warps, not the asynchronous copy: hk.wait_for(tile), then hk.barrier(), then read

// 108  @hk.kernel(grid=G, warps=4)
// 109  def w_trap4(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 110      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 111      hk.group.load(s, a[0, 0, 0, 0])
// 112      hk.barrier()
// 113      x = s.load(hk.RT(hk.bf16, 16, 16))
// 114      hk.wait_for(s, x)
// 115      o[0, 0, 0, 0] = x
builtin.module attributes {kt.target = "gfx950"} {
  func.func @w_trap4(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_trap4", kt.warps = 4 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":110:0)
    %3 = arith.constant 0 : index loc("kernels.py":111:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":111:0)
    "kt.barrier"() : () -> () loc("kernels.py":112:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":113:0)
    "kt.wait_for"(%2, %4) : (!kt.st<16x16xbf16>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":114:0)
    "kt.store"(%1, %3, %3, %3, %3, %4) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":115:0)
    func.return loc("kernels.py":108:0)
  } loc("kernels.py":108:0)
}

// -----

// CHECK: kernels.py:113: error: in kernel 'w_trap4', shared load: the copy into the shared tile at line 111 is still in flight at the barrier at line 112: on sm_90a it completes on cp.async group, which a barrier does not wait for; wait_for(tile) before the barrier

// 108  @hk.kernel(grid=G, warps=4)
// 109  def w_trap4(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 110      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 111      hk.group.load(s, a[0, 0, 0, 0])
// 112      hk.barrier()
// 113      x = s.load(hk.RT(hk.bf16, 16, 16))
// 114      hk.wait_for(s, x)
// 115      o[0, 0, 0, 0] = x
builtin.module attributes {kt.target = "sm_90a"} {
  func.func @w_trap4(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_trap4", kt.warps = 4 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":110:0)
    %3 = arith.constant 0 : index loc("kernels.py":111:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":111:0)
    "kt.barrier"() : () -> () loc("kernels.py":112:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":113:0)
    "kt.wait_for"(%2, %4) : (!kt.st<16x16xbf16>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":114:0)
    "kt.store"(%1, %3, %3, %3, %3, %4) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":115:0)
    func.return loc("kernels.py":108:0)
  } loc("kernels.py":108:0)
}

// -----

// CHECK: kernels.py:121: error: in kernel 'w_reuse', group load: group load into the shared tile that the group load at line 120 is still filling
// CHECK-NEXT: fix: call hk.wait_for(tile) before loading into it again, or load into another buffer

// 117  @hk.kernel(grid=G, warps=1)
// 118  def w_reuse(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 119      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 120      hk.group.load(s, a[0, 0, 0, 0])
// 121      hk.group.load(s, a[0, 0, 0, 1])
// 122      hk.wait_for(s)
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_reuse(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_reuse", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":119:0)
    %3 = arith.constant 0 : index loc("kernels.py":120:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":120:0)
    %4 = arith.constant 1 : index loc("kernels.py":121:0)
    "kt.copy_async"(%0, %3, %3, %3, %4, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":121:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":122:0)
    func.return loc("kernels.py":117:0)
  } loc("kernels.py":117:0)
}

// -----

// CHECK: kernels.py:130: error: in kernel 'w_reuse_read', group load: group load into the shared tile that the shared load at line 129 is still reading
// CHECK-NEXT: fix: call hk.wait_for(register tile) on that shared load's result before overwriting its source

// 124  @hk.kernel(grid=G, warps=1)
// 125  def w_reuse_read(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 126      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 127      hk.group.load(s, a[0, 0, 0, 0])
// 128      hk.wait_for(s)
// 129      x = s.load(hk.RT(hk.bf16, 16, 16))
// 130      hk.group.load(s, a[0, 0, 0, 1])
// 131      hk.wait_for(s, x)
// 132      o[0, 0, 0, 0] = x
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_reuse_read(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_reuse_read", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":126:0)
    %3 = arith.constant 0 : index loc("kernels.py":127:0)
    "kt.copy_async"(%0, %3, %3, %3, %3, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":127:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":128:0)
    %4 = "kt.lds_load"(%2, %3, %3) : (!kt.st<16x16xbf16>, index, index) -> !kt.rt<16x16xbf16, row> loc("kernels.py":129:0)
    %5 = arith.constant 1 : index loc("kernels.py":130:0)
    "kt.copy_async"(%0, %3, %3, %3, %5, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":130:0)
    "kt.wait_for"(%2, %4) : (!kt.st<16x16xbf16>, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":131:0)
    "kt.store"(%1, %3, %3, %3, %3, %4) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x16xbf16, row>) -> () loc("kernels.py":132:0)
    func.return loc("kernels.py":124:0)
  } loc("kernels.py":124:0)
}

// -----

// CHECK: kernels.py:139: error: in kernel 'w_end', group load: this group load is still in flight when the kernel ends: nothing waits for its data
// CHECK-NEXT: fix: call hk.wait_for(tile) on its shared tile before the kernel returns, or drop the load

// 134  @hk.kernel(grid=G, warps=1)
// 135  def w_end(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 136      s = hk.shared(hk.ST(hk.bf16, 16, 16))
// 137      t = hk.shared(hk.ST(hk.bf16, 16, 16))
// 138      hk.group.load(s, a[0, 0, 0, 0])
// 139      hk.group.load(t, a[0, 0, 0, 1])
// 140      hk.wait_for(s)
builtin.module attributes {kt.target = "gfx942"} {
  func.func @w_end(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "w_end", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":136:0)
    %3 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":137:0)
    %4 = arith.constant 0 : index loc("kernels.py":138:0)
    "kt.copy_async"(%0, %4, %4, %4, %4, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":138:0)
    %5 = arith.constant 1 : index loc("kernels.py":139:0)
    "kt.copy_async"(%0, %4, %4, %4, %5, %3) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x16xbf16>) -> () loc("kernels.py":139:0)
    "kt.wait_for"(%2) : (!kt.st<16x16xbf16>) -> () loc("kernels.py":140:0)
    func.return loc("kernels.py":134:0)
  } loc("kernels.py":134:0)
}

// -----

// An mma from shared reads its shared tile when it runs: not while a group load still fills it.
// CHECK: kernels.py:43: error: in kernel 'w_mma_shared_filling', mma from shared: mma from shared reads the shared tile that the group load at line 40 is still filling
// CHECK-NEXT: fix: call hk.wait_for(tile) first (then hk.barrier() if other warps read what this one copied)

//  37  @hk.kernel(grid=G, warps=4)
//  38  def w_mma_shared_filling(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
//  39      sb = hk.shared(hk.ST(hk.bf16, 64, 32))
//  40      hk.group.load(sb, b[0, 0, 0, 0])
//  41      ra = a[0, 0, hk.arch.warp_id, 0].load(hk.RT(hk.bf16, 16, 32))
//  42      acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
//  43      acc += ra @ sb.T
//  44      hk.wait_for(sb)
//  45      c[0, 0, hk.arch.warp_id, 0] = acc
builtin.module attributes {kt.target = "sm_90a"} {
  func.func @w_mma_shared_filling(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "w_mma_shared_filling", kt.warps = 4 : i64} {
    %3 = "kt.alloc"() : () -> !kt.st<64x32xbf16> loc("kernels.py":39:0)
    %4 = arith.constant 0 : index loc("kernels.py":40:0)
    "kt.copy_async"(%1, %4, %4, %4, %4, %3) : (!kt.global<bf16>, index, index, index, index, !kt.st<64x32xbf16>) -> () loc("kernels.py":40:0)
    %5 = "kt.warp_id"() : () -> index loc("kernels.py":41:0)
    %6 = "kt.load"(%0, %4, %4, %5, %4) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x32xbf16, row> loc("kernels.py":41:0)
    %7 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x64xf32, row> loc("kernels.py":42:0)
    %8 = "kt.mma_shared"(%6, %3, %7) : (!kt.rt<16x32xbf16, row>, !kt.st<64x32xbf16>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xf32, row> loc("kernels.py":43:0)
    "kt.wait_for"(%3) : (!kt.st<64x32xbf16>) -> () loc("kernels.py":44:0)
    %9 = "kt.warp_id"() : () -> index loc("kernels.py":45:0)
    "kt.store"(%2, %4, %4, %9, %4, %8) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x64xf32, row>) -> () loc("kernels.py":45:0)
    func.return loc("kernels.py":37:0)
  } loc("kernels.py":37:0)
}

// RUN: ktile-opt %s -p fragments,lds-alloc,budgets --split-input-file --verify-diagnostics 2>&1 | filecheck %s
//
// budgets: the peak of live register tiles and vectors (bytes per lane: rows*cols*element
// bytes / wave size, times the lanes that replicate an MMA operand fragment) is recorded as
// kt.vgpr_estimate; over the target's registers it is an error (a spill is certain: trap 2),
// above 75% a warning; shared memory above 90% is a warning. Warnings go to stderr. Each case
// is a kernel traced with the pass pipeline bypassed; its source is shown above it, and the
// loc lines are its lines. fragments runs first (operand fragments cost registers), lds-alloc
// first (budgets reads kt.lds_bytes).

// RDNA3 holds WMMA operands twice: acc 32 + a 2*16 + b 2*16 registers at the mma.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME:    kt.vgpr_estimate = 96 : i64

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
builtin.module attributes {kt.target = "gfx1100"} {
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

// Wave64, no replication: acc 16 + a 8 + b 8.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME:    kt.vgpr_estimate = 32 : i64

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

// Trap 2: two 128x128 fp32 tiles are 512 registers per lane on wave64.
// CHECK: kernels.py:178: error: in kernel 'b_spill', add: about 512 registers per lane are live at this add, over the 256 a lane can address on gfx942: a spill is certain, and a spill reorders memory traffic around the waits (live here: the 128x128 fp32 tile from line 176 (256 registers), the 128x128 fp32 tile from line 177 (256 registers))
// CHECK-NEXT: fix: use smaller tiles, or more warps each holding a smaller share of the work

// 174  @hk.kernel(grid=G, warps=1)
// 175  def b_spill(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
// 176      x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 128, 128))
// 177      y = a[0, 0, 0, 1].load(hk.RT(hk.fp32, 128, 128))
// 178      o[0, 0, 0, 0] = x + y
builtin.module attributes {kt.target = "gfx942"} {
  func.func @b_spill(%0: !kt.global<f32>, %1: !kt.global<f32>) attributes {kt.kernel = "b_spill", kt.warps = 1 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":176:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<128x128xf32, row> loc("kernels.py":176:0)
    %4 = arith.constant 1 : index loc("kernels.py":177:0)
    %5 = "kt.load"(%0, %2, %2, %2, %4) <{pad = 0.000000e+00 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<128x128xf32, row> loc("kernels.py":177:0)
    %6 = "kt.binary"(%3, %5) <{fn = "add"}> : (!kt.rt<128x128xf32, row>, !kt.rt<128x128xf32, row>) -> !kt.rt<128x128xf32, row> loc("kernels.py":178:0)
    "kt.store"(%1, %2, %2, %2, %2, %6) : (!kt.global<f32>, index, index, index, index, !kt.rt<128x128xf32, row>) -> () loc("kernels.py":178:0)
    func.return loc("kernels.py":174:0)
  } loc("kernels.py":174:0)
}

// -----

// CHECK: kernels.py:185: warning: in kernel 'b_warn': about 224 of the 256 registers per lane on gfx942 (88%) are live at this store: close to spilling (live here: the 64x128 fp32 tile from line 182 (128 registers), the 64x64 fp32 tile from line 183 (64 registers), the 64x32 fp32 tile from line 184 (32 registers))
// CHECK-LABEL: func.func @b_warn
// CHECK-SAME:    kt.vgpr_estimate = 224 : i64

// 180  @hk.kernel(grid=G, warps=1)
// 181  def b_warn(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
// 182      x = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 128))
// 183      y = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 64))
// 184      z = a[0, 0, 0, 0].load(hk.RT(hk.fp32, 64, 32))
// 185      o[0, 0, 0, 0] = x
// 186      o[0, 0, 0, 1] = y
// 187      o[0, 0, 0, 2] = z
builtin.module attributes {kt.target = "gfx942"} {
  func.func @b_warn(%0: !kt.global<f32>, %1: !kt.global<f32>) attributes {kt.kernel = "b_warn", kt.warps = 1 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":182:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<64x128xf32, row> loc("kernels.py":182:0)
    %4 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<64x64xf32, row> loc("kernels.py":183:0)
    %5 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<f32>, index, index, index, index) -> !kt.rt<64x32xf32, row> loc("kernels.py":184:0)
    "kt.store"(%1, %2, %2, %2, %2, %3) : (!kt.global<f32>, index, index, index, index, !kt.rt<64x128xf32, row>) -> () loc("kernels.py":185:0)
    %6 = arith.constant 1 : index loc("kernels.py":186:0)
    "kt.store"(%1, %2, %2, %2, %6, %4) : (!kt.global<f32>, index, index, index, index, !kt.rt<64x64xf32, row>) -> () loc("kernels.py":186:0)
    %7 = arith.constant 2 : index loc("kernels.py":187:0)
    "kt.store"(%1, %2, %2, %2, %7, %5) : (!kt.global<f32>, index, index, index, index, !kt.rt<64x32xf32, row>) -> () loc("kernels.py":187:0)
    func.return loc("kernels.py":180:0)
  } loc("kernels.py":180:0)
}

// -----

// CHECK: kernels.py:189: warning: in kernel 'b_shared': the shared tiles take 63488 of the 65536 bytes of shared memory per block on gfx942 (97%)
// CHECK-LABEL: func.func @b_shared
// CHECK-SAME:    kt.lds_bytes = 63488 : i64, kt.vgpr_estimate = 0 : i64

// 189  @hk.kernel(grid=G, warps=1)
// 190  def b_shared(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
// 191      s = hk.shared(hk.ST(hk.bf16, 128, 128))
// 192      t = hk.shared(hk.ST(hk.bf16, 120, 128))
builtin.module attributes {kt.target = "gfx942"} {
  func.func @b_shared(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "b_shared", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<128x128xbf16> loc("kernels.py":191:0)
    %3 = "kt.alloc"() : () -> !kt.st<120x128xbf16> loc("kernels.py":192:0)
    func.return loc("kernels.py":189:0)
  } loc("kernels.py":189:0)
}

// REQUIRES: mlir-opt
// RUN: ktile-opt %s -p verify,fragments,lds-alloc,waits,budgets --print-op-generic | mlir-opt --allow-unregistered-dialect | filecheck %s
//
// Upstream MLIR reads the checked module in generic form, derived properties included.

// CHECK-LABEL: func.func @gemm
// CHECK-SAME:    kt.lds_bytes = 8192 : i64
// CHECK:         "kt.alloc"() <{offset = 6144 : i64}> : () -> !kt.st<32x32xbf16>
// CHECK:         scf.for
// CHECK:           "kt.wait_for"(%{{.*}}, %{{.*}}) <{vm = 2 : i64}>
// CHECK:           "kt.mma"({{.*}}) <{variant = "ABt"}> : (!kt.rt<32x32xbf16, row, a>, !kt.rt<32x32xbf16, row, b>, !kt.rt<32x32xf32, row, acc>) -> !kt.rt<32x32xf32, row, acc>

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

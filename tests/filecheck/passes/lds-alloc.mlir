// RUN: ktile-opt %s -p lds-alloc --split-input-file --verify-diagnostics | filecheck %s
//
// lds-alloc: each kt.alloc gets a 16-byte aligned byte offset (the target's mma_shared_alignment
// for a tile an mma reads directly), in program order; the kernel
// records the total as kt.lds_bytes; a total over the target's shared memory is refused,
// listing every allocation. Each case is a kernel traced with the pass pipeline bypassed; its
// source is shown above it, and the loc lines are its lines.

// A 12-byte vector pushes the next tile to the next 16-byte boundary (2060 -> 2064).
// CHECK-LABEL: func.func @l_ok
// CHECK-SAME:    kt.lds_bytes = 2576 : i64
// CHECK-NEXT:    "kt.alloc"() <{offset = 0 : i64}> : () -> !kt.st<32x32xbf16>
// CHECK-NEXT:    "kt.alloc"() <{offset = 2048 : i64}> : () -> !kt.sv<3xf32>
// CHECK-NEXT:    "kt.alloc"() <{offset = 2064 : i64}> : () -> !kt.st<16x16xbf16>

//  76  @hk.kernel(grid=G, warps=1)
//  77  def l_ok(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//  78      s = hk.shared(hk.ST(hk.bf16, 32, 32))
//  79      v = hk.shared(hk.SV(hk.fp32, 3))
//  80      t = hk.shared(hk.ST(hk.bf16, 16, 16))
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @l_ok(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "l_ok", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<32x32xbf16> loc("kernels.py":78:0)
    %3 = "kt.alloc"() : () -> !kt.sv<3xf32> loc("kernels.py":79:0)
    %4 = "kt.alloc"() : () -> !kt.st<16x16xbf16> loc("kernels.py":80:0)
    func.return loc("kernels.py":76:0)
  } loc("kernels.py":76:0)
}

// -----

// CHECK-LABEL: func.func @gemm
// CHECK-SAME:    kt.lds_bytes = 8192 : i64
// CHECK:         "kt.alloc"() <{offset = 0 : i64}>
// CHECK-NEXT:    "kt.alloc"() <{offset = 2048 : i64}>
// CHECK-NEXT:    "kt.alloc"() <{offset = 4096 : i64}>
// CHECK-NEXT:    "kt.alloc"() <{offset = 6144 : i64}>

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

// The error points at the first allocation that does not fit.
// CHECK: kernels.py:86: error: in kernel 'l_over', shared: the shared tiles need 66560 bytes, over gfx942's 65536 bytes of shared memory per block (64x128 fp32 shared tile at line 84: 32768 bytes; 64x128 fp32 shared tile at line 85: 32768 bytes; 16x16 fp32 shared tile at line 86: 1024 bytes)
// CHECK-NEXT: fix: use smaller shared tiles or fewer of them (one buffer fewer in a multi-buffered loop), or keep a tile in registers

//  82  @hk.kernel(grid=G, warps=1)
//  83  def l_over(a: hk.Tensor[hk.fp32], o: hk.Tensor[hk.fp32]):
//  84      s = hk.shared(hk.ST(hk.fp32, 64, 128))
//  85      t = hk.shared(hk.ST(hk.fp32, 64, 128))
//  86      u = hk.shared(hk.ST(hk.fp32, 16, 16))
builtin.module attributes {kt.target = "gfx942"} {
  func.func @l_over(%0: !kt.global<f32>, %1: !kt.global<f32>) attributes {kt.kernel = "l_over", kt.warps = 1 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<64x128xf32> loc("kernels.py":84:0)
    %3 = "kt.alloc"() : () -> !kt.st<64x128xf32> loc("kernels.py":85:0)
    %4 = "kt.alloc"() : () -> !kt.st<16x16xf32> loc("kernels.py":86:0)
    func.return loc("kernels.py":82:0)
  } loc("kernels.py":82:0)
}

// -----

// On sm_90a a shared tile an mma reads directly starts on a 1024-byte boundary (its wgmma
// swizzle atoms repeat there); the tile it is loaded from needs only 16 bytes.
// CHECK-LABEL: func.func @l_mma_shared
// CHECK-SAME:    kt.lds_bytes = 17408 : i64
// CHECK-NEXT:    "kt.alloc"() <{offset = 0 : i64}> : () -> !kt.sv<16xf32>
// CHECK-NEXT:    "kt.alloc"() <{offset = 1024 : i64}> : () -> !kt.st<64x64xbf16>
// CHECK-NEXT:    "kt.alloc"() <{offset = 9216 : i64}> : () -> !kt.st<64x64xbf16>

//  25  @hk.kernel(grid=G, warps=4)
//  26  def l_mma_shared(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
//  27      v = hk.shared(hk.SV(hk.fp32, 16))
//  28      sb = hk.shared(hk.ST(hk.bf16, 64, 64))
//  29      sa = hk.shared(hk.ST(hk.bf16, 64, 64))
//  30      ra = sa.load(hk.RT(hk.bf16, 16, 64), row=hk.arch.warp_id)
//  31      hk.wait_for(ra)
//  32      acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
//  33      acc += ra @ sb.T
//  34      c[0, 0, hk.arch.warp_id, 0] = acc
builtin.module attributes {kt.target = "sm_90a"} {
  func.func @l_mma_shared(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "l_mma_shared", kt.warps = 4 : i64} {
    %3 = "kt.alloc"() : () -> !kt.sv<16xf32> loc("kernels.py":27:0)
    %4 = "kt.alloc"() : () -> !kt.st<64x64xbf16> loc("kernels.py":28:0)
    %5 = "kt.alloc"() : () -> !kt.st<64x64xbf16> loc("kernels.py":29:0)
    %6 = "kt.warp_id"() : () -> index loc("kernels.py":30:0)
    %7 = arith.constant 0 : index loc("kernels.py":30:0)
    %8 = "kt.lds_load"(%5, %6, %7) : (!kt.st<64x64xbf16>, index, index) -> !kt.rt<16x64xbf16, row> loc("kernels.py":30:0)
    "kt.wait_for"(%8) : (!kt.rt<16x64xbf16, row>) -> () loc("kernels.py":31:0)
    %9 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x64xf32, row> loc("kernels.py":32:0)
    %10 = "kt.mma_shared"(%8, %4, %9) : (!kt.rt<16x64xbf16, row>, !kt.st<64x64xbf16>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xf32, row> loc("kernels.py":33:0)
    %11 = "kt.warp_id"() : () -> index loc("kernels.py":34:0)
    "kt.store"(%2, %7, %7, %11, %7, %10) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x64xf32, row>) -> () loc("kernels.py":34:0)
    func.return loc("kernels.py":25:0)
  } loc("kernels.py":25:0)
}

// -----

// The same kernel for gfx1100: AMD reads B into registers first, so 16 bytes do.
// CHECK-LABEL: func.func @l_mma_shared
// CHECK-SAME:    kt.lds_bytes = 16448 : i64
// CHECK-NEXT:    "kt.alloc"() <{offset = 0 : i64}> : () -> !kt.sv<16xf32>
// CHECK-NEXT:    "kt.alloc"() <{offset = 64 : i64}> : () -> !kt.st<64x64xbf16>
// CHECK-NEXT:    "kt.alloc"() <{offset = 8256 : i64}> : () -> !kt.st<64x64xbf16>

builtin.module attributes {kt.target = "gfx1100"} {
  func.func @l_mma_shared(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "l_mma_shared", kt.warps = 4 : i64} {
    %3 = "kt.alloc"() : () -> !kt.sv<16xf32> loc("kernels.py":27:0)
    %4 = "kt.alloc"() : () -> !kt.st<64x64xbf16> loc("kernels.py":28:0)
    %5 = "kt.alloc"() : () -> !kt.st<64x64xbf16> loc("kernels.py":29:0)
    %6 = "kt.warp_id"() : () -> index loc("kernels.py":30:0)
    %7 = arith.constant 0 : index loc("kernels.py":30:0)
    %8 = "kt.lds_load"(%5, %6, %7) : (!kt.st<64x64xbf16>, index, index) -> !kt.rt<16x64xbf16, row> loc("kernels.py":30:0)
    "kt.wait_for"(%8) : (!kt.rt<16x64xbf16, row>) -> () loc("kernels.py":31:0)
    %9 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x64xf32, row> loc("kernels.py":32:0)
    %10 = "kt.mma_shared"(%8, %4, %9) : (!kt.rt<16x64xbf16, row>, !kt.st<64x64xbf16>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xf32, row> loc("kernels.py":33:0)
    %11 = "kt.warp_id"() : () -> index loc("kernels.py":34:0)
    "kt.store"(%2, %7, %7, %11, %7, %10) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x64xf32, row>) -> () loc("kernels.py":34:0)
    func.return loc("kernels.py":25:0)
  } loc("kernels.py":25:0)
}

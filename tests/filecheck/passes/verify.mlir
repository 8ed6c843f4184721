// RUN: ktile-opt %s -p verify --split-input-file --verify-diagnostics | filecheck %s
//
// verify: the block fits the target, every dtype is supported there, no workgroup-wide op
// (barrier, group load, group reduce, shared alloc, mma from shared) sits under control flow
// that depends on the warp id, and every mma from shared has a warpgroup MMA's shape. Each case is a kernel traced with the pass pipeline bypassed; its source is
// shown above it, and the loc lines are its lines.

// A kernel that fits passes unchanged.
// CHECK-LABEL: func.func @v_ok
// CHECK-SAME:    kt.warps = 4
// CHECK:         "kt.binary"
// CHECK:         "kt.store"

//   5  @hk.kernel(grid=G, warps=4)
//   6  def v_ok(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//   7      idx = hk.tile_coord(0, 0, hk.arch.block_idx.y, hk.arch.block_idx.x)
//   8      o[idx] = a[idx].load(hk.RT(hk.bf16, 16, 64)) * 2.0
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @v_ok(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "v_ok", kt.warps = 4 : i64} {
    %2 = "kt.block_idx"() <{dim = 1 : i64}> : () -> index loc("kernels.py":7:0)
    %3 = "kt.block_idx"() <{dim = 0 : i64}> : () -> index loc("kernels.py":7:0)
    %4 = arith.constant 0 : index loc("kernels.py":8:0)
    %5 = "kt.load"(%0, %4, %4, %2, %3) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x64xbf16, row> loc("kernels.py":8:0)
    %6 = arith.constant 2.000000e+00 : f32 loc("kernels.py":8:0)
    %7 = "kt.binary"(%5, %6) <{fn = "mul"}> : (!kt.rt<16x64xbf16, row>, f32) -> !kt.rt<16x64xbf16, row> loc("kernels.py":8:0)
    "kt.store"(%1, %4, %4, %2, %3, %7) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x64xbf16, row>) -> () loc("kernels.py":8:0)
    func.return loc("kernels.py":5:0)
  } loc("kernels.py":5:0)
}

// -----

// A group reduce gives every warp the same value: a branch on it is uniform.
// CHECK-LABEL: func.func @v_uniform
// CHECK:         scf.if
// CHECK-NEXT:      "kt.barrier"

//  36  @hk.kernel(grid=G, warps=4)
//  37  def v_uniform(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//  38      s = hk.group.sum(hk.to_float(hk.arch.warp_id))
//  39      if s > 1.0:
//  40          hk.barrier()
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @v_uniform(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "v_uniform", kt.warps = 4 : i64} {
    %2 = "kt.warp_id"() : () -> index loc("kernels.py":38:0)
    %3 = arith.index_cast %2 : index to i64 loc("kernels.py":38:0)
    %4 = arith.sitofp %3 : i64 to f32 loc("kernels.py":38:0)
    %5 = "kt.block_reduce"(%4) <{kind = "sum"}> : (f32) -> f32 loc("kernels.py":38:0)
    %6 = arith.constant 1.000000e+00 : f32 loc("kernels.py":39:0)
    %7 = arith.cmpf ogt, %5, %6 : f32 loc("kernels.py":39:0)
    scf.if %7 {
      "kt.barrier"() : () -> () loc("kernels.py":40:0)
    } else {
    } loc("kernels.py":39:0)
    func.return loc("kernels.py":36:0)
  } loc("kernels.py":36:0)
}

// -----

// CHECK: kernels.py:10: error: in kernel 'v_warps': 32 warps of 64 lanes are 2048 threads, over gfx942's limit of 1024 threads per block
// CHECK-NEXT: fix: use at most 16 warps (@hk.kernel(..., warps=16))

//  10  @hk.kernel(grid=G, warps=32)
//  11  def v_warps(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//  12      o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.bf16, 16, 64))
builtin.module attributes {kt.target = "gfx942"} {
  func.func @v_warps(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "v_warps", kt.warps = 32 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":12:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x64xbf16, row> loc("kernels.py":12:0)
    "kt.store"(%1, %2, %2, %2, %2, %3) : (!kt.global<bf16>, index, index, index, index, !kt.rt<16x64xbf16, row>) -> () loc("kernels.py":12:0)
    func.return loc("kernels.py":10:0)
  } loc("kernels.py":10:0)
}

// -----

// CHECK: kernels.py:17: error: in kernel 'v_barrier_if', barrier: barrier inside a branch (the `if` at line 16) whose condition depends on the warp id: warps that do not reach it never arrive, and the block hangs
// CHECK-NEXT: fix: move it out of the branch or loop, or make the condition the same for every warp (not computed from hk.arch.warp_id)

//  14  @hk.kernel(grid=G, warps=4)
//  15  def v_barrier_if(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//  16      if hk.arch.warp_id == 0:
//  17          hk.barrier()
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @v_barrier_if(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "v_barrier_if", kt.warps = 4 : i64} {
    %2 = "kt.warp_id"() : () -> index loc("kernels.py":16:0)
    %3 = arith.constant 0 : index loc("kernels.py":16:0)
    %4 = arith.cmpi eq, %2, %3 : index loc("kernels.py":16:0)
    scf.if %4 {
      "kt.barrier"() : () -> () loc("kernels.py":17:0)
    } else {
    } loc("kernels.py":16:0)
    func.return loc("kernels.py":14:0)
  } loc("kernels.py":14:0)
}

// -----

// CHECK: kernels.py:23: error: in kernel 'v_copy_loop', group load: group load inside a loop (the `for` at line 22) whose bounds depend on the warp id: every warp of the block copies its part of the tile

//  19  @hk.kernel(grid=G, warps=4)
//  20  def v_copy_loop(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//  21      s = hk.shared(hk.ST(hk.bf16, 32, 32))
//  22      for i in hk.range(hk.arch.warp_id):
//  23          hk.group.load(s, a[0, 0, i, 0])
//  24          hk.wait_for(s)
builtin.module attributes {kt.target = "gfx950"} {
  func.func @v_copy_loop(%0: !kt.global<bf16>, %1: !kt.global<bf16>) attributes {kt.kernel = "v_copy_loop", kt.warps = 4 : i64} {
    %2 = "kt.alloc"() : () -> !kt.st<32x32xbf16> loc("kernels.py":21:0)
    %3 = "kt.warp_id"() : () -> index loc("kernels.py":22:0)
    %4 = arith.constant 0 : index loc("kernels.py":22:0)
    %5 = arith.constant 1 : index loc("kernels.py":22:0)
    scf.for %6 = %4 to %3 step %5 {
      %7 = arith.constant 0 : index loc("kernels.py":23:0)
      "kt.copy_async"(%0, %7, %7, %6, %7, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<32x32xbf16>) -> () loc("kernels.py":23:0)
      "kt.wait_for"(%2) : (!kt.st<32x32xbf16>) -> () loc("kernels.py":24:0)
    } loc("kernels.py":22:0)
    func.return loc("kernels.py":19:0)
  } loc("kernels.py":19:0)
}

// -----

// The warp id reaches the condition through a loop-carried value.
// CHECK: kernels.py:33: error: in kernel 'v_carried', group reduce: group reduce inside a branch (the `if` at line 32) whose condition depends on the warp id: it combines a value from every warp of the block

//  26  @hk.kernel(grid=G, warps=4)
//  27  def v_carried(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
//  28      w = hk.arch.block_idx.x
//  29      for i in hk.range(4):
//  30          w = w + hk.arch.warp_id
//  31      v = hk.zeros(hk.RV(hk.fp32, 16))
//  32      if w > 2:
//  33          v = hk.group.sum(v)
//  34      o[0, 0, 0, 0] = v
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @v_carried(%0: !kt.global<bf16>, %1: !kt.global<f32>) attributes {kt.kernel = "v_carried", kt.warps = 4 : i64} {
    %2 = "kt.block_idx"() <{dim = 0 : i64}> : () -> index loc("kernels.py":28:0)
    %3 = arith.constant 0 : index loc("kernels.py":29:0)
    %4 = arith.constant 4 : index loc("kernels.py":29:0)
    %5 = arith.constant 1 : index loc("kernels.py":29:0)
    %6 = scf.for %7 = %3 to %4 step %5 iter_args(%8 = %2) -> (index) {
      %9 = "kt.warp_id"() : () -> index loc("kernels.py":30:0)
      %10 = arith.addi %8, %9 : index loc("kernels.py":30:0)
      scf.yield %10 : index loc("kernels.py":29:0)
    } loc("kernels.py":29:0)
    %11 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rv<16xf32, row> loc("kernels.py":31:0)
    %12 = arith.constant 2 : index loc("kernels.py":32:0)
    %13 = arith.cmpi sgt, %6, %12 : index loc("kernels.py":32:0)
    %14 = scf.if %13 -> (!kt.rv<16xf32, row>) {
      %15 = "kt.block_reduce"(%11) <{kind = "sum"}> : (!kt.rv<16xf32, row>) -> !kt.rv<16xf32, row> loc("kernels.py":33:0)
      scf.yield %15 : !kt.rv<16xf32, row> loc("kernels.py":32:0)
    } else {
      scf.yield %11 : !kt.rv<16xf32, row> loc("kernels.py":32:0)
    } loc("kernels.py":32:0)
    "kt.store"(%1, %3, %3, %3, %3, %14) : (!kt.global<f32>, index, index, index, index, !kt.rv<16xf32, row>) -> () loc("kernels.py":34:0)
    func.return loc("kernels.py":26:0)
  } loc("kernels.py":26:0)
}

// -----

// CHECK: kernels.py:199: error: in kernel 'v_while', group reduce: group reduce inside a loop (the `while` at line 198) whose condition depends on the warp id

// 194  @hk.kernel(grid=G, warps=4)
// 195  def v_while(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.fp32]):
// 196      n = hk.arch.warp_id
// 197      v = hk.zeros(hk.RV(hk.fp32, 16))
// 198      while n > 0:
// 199          v = hk.group.max(v)
// 200          n = n - 1
// 201      o[0, 0, 0, 0] = v
builtin.module attributes {kt.target = "gfx942"} {
  func.func @v_while(%0: !kt.global<bf16>, %1: !kt.global<f32>) attributes {kt.kernel = "v_while", kt.warps = 4 : i64} {
    %2 = "kt.warp_id"() : () -> index loc("kernels.py":196:0)
    %3 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rv<16xf32, row> loc("kernels.py":197:0)
    %4, %5 = scf.while (%6 = %3, %7 = %2) : (!kt.rv<16xf32, row>, index) -> (!kt.rv<16xf32, row>, index) {
      %8 = arith.constant 0 : index loc("kernels.py":198:0)
      %9 = arith.cmpi sgt, %7, %8 : index loc("kernels.py":198:0)
      scf.condition(%9) %6, %7 : !kt.rv<16xf32, row>, index loc("kernels.py":198:0)
    } do {
    ^bb0(%10: !kt.rv<16xf32, row>, %11: index):
      %12 = "kt.block_reduce"(%10) <{kind = "max"}> : (!kt.rv<16xf32, row>) -> !kt.rv<16xf32, row> loc("kernels.py":199:0)
      %13 = arith.constant 1 : index loc("kernels.py":200:0)
      %14 = arith.subi %11, %13 : index loc("kernels.py":200:0)
      scf.yield %12, %14 : !kt.rv<16xf32, row>, index loc("kernels.py":198:0)
    } loc("kernels.py":198:0)
    %15 = arith.constant 0 : index loc("kernels.py":201:0)
    "kt.store"(%1, %15, %15, %15, %15, %4) : (!kt.global<f32>, index, index, index, index, !kt.rv<16xf32, row>) -> () loc("kernels.py":201:0)
    func.return loc("kernels.py":194:0)
  } loc("kernels.py":194:0)
}

// -----

// CHECK: kernels.py:42: error: in kernel 'v_fp8', tensor parameter 1: fp8 is not supported on gfx942
// CHECK-NEXT: fix: use one of bf16, fp16, fp32, i32, i8, bool on gfx942, or trace for a target that has fp8 (gfx1201, gfx950, sm_90a)

//  42  @hk.kernel(grid=G, warps=1)
//  43  def v_fp8(a: hk.Tensor[hk.fp8], o: hk.Tensor[hk.fp8]):
//  44      o[0, 0, 0, 0] = a[0, 0, 0, 0].load(hk.RT(hk.fp8, 16, 64))
builtin.module attributes {kt.target = "gfx942"} {
  func.func @v_fp8(%0: !kt.global<f8E4M3FN>, %1: !kt.global<f8E4M3FN>) attributes {kt.kernel = "v_fp8", kt.warps = 1 : i64} {
    %2 = arith.constant 0 : index loc("kernels.py":44:0)
    %3 = "kt.load"(%0, %2, %2, %2, %2) <{pad = 0.000000e+00 : f64}> : (!kt.global<f8E4M3FN>, index, index, index, index) -> !kt.rt<16x64xf8E4M3FN, row> loc("kernels.py":44:0)
    "kt.store"(%1, %2, %2, %2, %2, %3) : (!kt.global<f8E4M3FN>, index, index, index, index, !kt.rt<16x64xf8E4M3FN, row>) -> () loc("kernels.py":44:0)
    func.return loc("kernels.py":42:0)
  } loc("kernels.py":42:0)
}

// -----

// An mma from shared is issued by a warpgroup's four warps together on sm_90a (wgmma), so no
// warp may skip it.
// CHECK: kernels.py:12: error: in kernel 'v_mma_shared_branch', mma from shared: mma from shared inside a branch (the `if` at line 11) whose condition depends on the warp id: on sm_90a the four warps of a warpgroup issue it together as one wgmma, and a warp that does not reach it leaves the others waiting
// CHECK-NEXT: fix: move it out of the branch or loop

//   6  @hk.kernel(grid=G, warps=4)
//   7  def v_mma_shared_branch(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
//   8      sb = hk.shared(hk.ST(hk.bf16, 64, 32))
//   9      acc = hk.zeros(hk.RT(hk.fp32, 16, 64))
//  10      ra = a[0, 0, hk.arch.warp_id, 0].load(hk.RT(hk.bf16, 16, 32))
//  11      if hk.arch.warp_id < 2:
//  12          acc += ra @ sb.T
//  13      c[0, 0, hk.arch.warp_id, 0] = acc
builtin.module attributes {kt.target = "gfx1100"} {
  func.func @v_mma_shared_branch(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "v_mma_shared_branch", kt.warps = 4 : i64} {
    %3 = "kt.alloc"() : () -> !kt.st<64x32xbf16> loc("kernels.py":8:0)
    %4 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x64xf32, row> loc("kernels.py":9:0)
    %5 = "kt.warp_id"() : () -> index loc("kernels.py":10:0)
    %6 = arith.constant 0 : index loc("kernels.py":10:0)
    %7 = "kt.load"(%0, %6, %6, %5, %6) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x32xbf16, row> loc("kernels.py":10:0)
    %8 = "kt.warp_id"() : () -> index loc("kernels.py":11:0)
    %9 = arith.constant 2 : index loc("kernels.py":11:0)
    %10 = arith.cmpi slt, %8, %9 : index loc("kernels.py":11:0)
    %11 = scf.if %10 -> (!kt.rt<16x64xf32, row>) {
      %12 = "kt.mma_shared"(%7, %3, %4) : (!kt.rt<16x32xbf16, row>, !kt.st<64x32xbf16>, !kt.rt<16x64xf32, row>) -> !kt.rt<16x64xf32, row> loc("kernels.py":12:0)
      scf.yield %12 : !kt.rt<16x64xf32, row> loc("kernels.py":11:0)
    } else {
      scf.yield %4 : !kt.rt<16x64xf32, row> loc("kernels.py":11:0)
    } loc("kernels.py":11:0)
    %13 = "kt.warp_id"() : () -> index loc("kernels.py":13:0)
    "kt.store"(%2, %6, %6, %13, %6, %11) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x64xf32, row>) -> () loc("kernels.py":13:0)
    func.return loc("kernels.py":6:0)
  } loc("kernels.py":6:0)
}

// -----

// The shared B of an mma from shared has at most 256 rows, wgmma's widest N (on every target,
// so a kernel that traces for one traces for all).
// CHECK: kernels.py:21: error: in kernel 'v_mma_shared_wide', mma from shared: `a @ s.T`: a is 16x32 and the shared tile 512x32; N (the shared tile's rows) must be a multiple of 8 up to 256, the widest warpgroup MMA (wgmma n256)
// CHECK-NEXT: fix: split B into shared tiles of at most 256 rows, each multiplied into its own accumulator

//  16  @hk.kernel(grid=G, warps=4)
//  17  def v_mma_shared_wide(a: hk.Tensor[hk.bf16], b: hk.Tensor[hk.bf16], c: hk.Tensor[hk.fp32]):
//  18      sb = hk.shared(hk.ST(hk.bf16, 512, 32))
//  19      ra = a[0, 0, hk.arch.warp_id, 0].load(hk.RT(hk.bf16, 16, 32))
//  20      acc = hk.zeros(hk.RT(hk.fp32, 16, 512))
//  21      acc += ra @ sb.T
//  22      c[0, 0, hk.arch.warp_id, 0] = acc
builtin.module attributes {kt.target = "gfx942"} {
  func.func @v_mma_shared_wide(%0: !kt.global<bf16>, %1: !kt.global<bf16>, %2: !kt.global<f32>) attributes {kt.kernel = "v_mma_shared_wide", kt.warps = 4 : i64} {
    %3 = "kt.alloc"() : () -> !kt.st<512x32xbf16> loc("kernels.py":18:0)
    %4 = "kt.warp_id"() : () -> index loc("kernels.py":19:0)
    %5 = arith.constant 0 : index loc("kernels.py":19:0)
    %6 = "kt.load"(%0, %5, %5, %4, %5) <{pad = 0.000000e+00 : f64}> : (!kt.global<bf16>, index, index, index, index) -> !kt.rt<16x32xbf16, row> loc("kernels.py":19:0)
    %7 = "kt.fill"() <{value = 0.000000e+00 : f64}> : () -> !kt.rt<16x512xf32, row> loc("kernels.py":20:0)
    %8 = "kt.mma_shared"(%6, %3, %7) : (!kt.rt<16x32xbf16, row>, !kt.st<512x32xbf16>, !kt.rt<16x512xf32, row>) -> !kt.rt<16x512xf32, row> loc("kernels.py":21:0)
    %9 = "kt.warp_id"() : () -> index loc("kernels.py":22:0)
    "kt.store"(%2, %5, %5, %9, %5, %8) : (!kt.global<f32>, index, index, index, index, !kt.rt<16x512xf32, row>) -> () loc("kernels.py":22:0)
    func.return loc("kernels.py":16:0)
  } loc("kernels.py":16:0)
}

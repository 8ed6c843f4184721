// RUN: ktile-opt %s -p tensor-maps --split-input-file | filecheck %s
//
// tensor-maps: on a target with tensor copies (sm_90a) each group load into a shared tile
// whose layout is a TMA swizzle mode, from a kernel parameter, gets `map`: an index into the
// kernel's kt.tensor_maps, one entry per (parameter, tile shape) = [parameter, box cols, box
// rows, swizzle bytes, element bytes]. A shared vector's copy gets none. Elsewhere (an AMD
// target, or a module traced without tensor copies) nothing changes.

// Two 16x64 bf16 tiles from `a` share map 0 (box 64 x 16, 128B swizzle); the vector from `o`
// stays a cp.async copy.
// CHECK-LABEL: func.func @tm
// CHECK-SAME:    kt.tensor_maps = {{\[}}[0 : i64, 64 : i64, 16 : i64, 128 : i64, 2 : i64]]
// CHECK:         "kt.copy_async"(%0, %5, %5, %5, %5, %2) <{map = 0 : i64}>
// CHECK:         "kt.copy_async"(%0, %5, %5, %6, %5, %3) <{map = 0 : i64}>
// CHECK:         "kt.copy_async"(%1, %5, %5, %5, %5, %4) :

//   4  @hk.kernel(grid=(1, 1, 1), warps=4)
//   5  def tm(a: hk.Tensor[hk.bf16], o: hk.Tensor[hk.bf16]):
//   6      s = hk.shared(hk.ST(hk.bf16, 16, 64))
//   7      t = hk.shared(hk.ST(hk.bf16, 16, 64))
//   8      v = hk.shared(hk.SV(hk.bf16, 64))
//   9      hk.group.load(s, a[0, 0, 0, 0])
//  10      hk.group.load(t, a[0, 0, 1, 0])
//  11      hk.group.load(v, o[0, 0, 0, 0])
//  12      hk.wait_for(s, t, v)
"builtin.module"() ({
  "func.func"() <{sym_name = "tm", function_type = (!kt.global<bf16>, !kt.global<bf16>) -> ()}> ({
  ^bb0(%0: !kt.global<bf16>, %1: !kt.global<bf16>):
    %2 = "kt.alloc"() : () -> !kt.st<16x64xbf16> loc("kernels.py":6:0)
    %3 = "kt.alloc"() : () -> !kt.st<16x64xbf16> loc("kernels.py":7:0)
    %4 = "kt.alloc"() : () -> !kt.sv<64xbf16> loc("kernels.py":8:0)
    %5 = "arith.constant"() <{value = 0 : index}> : () -> index loc("kernels.py":9:0)
    "kt.copy_async"(%0, %5, %5, %5, %5, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x64xbf16>) -> () loc("kernels.py":9:0)
    %6 = "arith.constant"() <{value = 1 : index}> : () -> index loc("kernels.py":10:0)
    "kt.copy_async"(%0, %5, %5, %6, %5, %3) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x64xbf16>) -> () loc("kernels.py":10:0)
    "kt.copy_async"(%1, %5, %5, %5, %5, %4) : (!kt.global<bf16>, index, index, index, index, !kt.sv<64xbf16>) -> () loc("kernels.py":11:0)
    "kt.wait_for"(%2, %3, %4) : (!kt.st<16x64xbf16>, !kt.st<16x64xbf16>, !kt.sv<64xbf16>) -> () loc("kernels.py":12:0)
    "func.return"() : () -> () loc("kernels.py":4:0)
  }) {kt.kernel = "tm", kt.warps = 4 : i64} : () -> () loc("kernels.py":4:0)
}) {kt.target = "sm_90a"} : () -> ()

// -----

// The same kernel for gfx950 (no tensor copies): no map, no kt.tensor_maps.
// CHECK-LABEL: func.func @tm
// CHECK-NOT:     kt.tensor_maps
// CHECK-NOT:     map =
// CHECK:         func.return
"builtin.module"() ({
  "func.func"() <{sym_name = "tm", function_type = (!kt.global<bf16>, !kt.global<bf16>) -> ()}> ({
  ^bb0(%0: !kt.global<bf16>, %1: !kt.global<bf16>):
    %2 = "kt.alloc"() : () -> !kt.st<16x64xbf16> loc("kernels.py":6:0)
    %5 = "arith.constant"() <{value = 0 : index}> : () -> index loc("kernels.py":9:0)
    "kt.copy_async"(%0, %5, %5, %5, %5, %2) : (!kt.global<bf16>, index, index, index, index, !kt.st<16x64xbf16>) -> () loc("kernels.py":9:0)
    "kt.wait_for"(%2) : (!kt.st<16x64xbf16>) -> () loc("kernels.py":12:0)
    "func.return"() : () -> () loc("kernels.py":4:0)
  }) {kt.kernel = "tm", kt.warps = 4 : i64} : () -> () loc("kernels.py":4:0)
}) {kt.target = "gfx950"} : () -> ()

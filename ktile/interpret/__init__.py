"""The IR interpreter: runs a checked kt module with numpy, the same module that is
translated to C++, so a kernel has one semantics.

    from ktile.interpret import run_module
    run_module(module, arrays)   # arrays[i]: the i-th tensor, a 4-D numpy carrier, in place

What running means:

- Grid. The grid function (`func.func` with `kt.grid`) runs on the arrays' extents and gives
  (x, y, z) block counts; blocks run in z, y, x order (block_idx dim 0 = x, 1 = y, 2 = z).
  A count <= 0 runs nothing.
- Warps. Each block runs `kt.warps` = W warps, each executing the kernel body with its own
  registers (kt.warp_id = 0..W-1), in lockstep: a warp runs until it reaches a meeting
  (kt.barrier, kt.block_reduce), then the next; when all wait at the same meeting it
  completes and all continue. A warp that ended or waits at another meeting is an error.
- Values. Register tiles are 2-D numpy arrays in logical (row-major) order whatever their
  layout or fragment (those matter only to the C++); vectors are 1-D; scalars are Python
  ints (index, iN, wrapped to N bits), floats (f32, rounded to float32) and bools (i1).
  Every tile or vector result is rounded to its dtype (`DType.round`: bf16/fp16/fp8 on a
  float32 carrier); integer arithmetic wraps as C++ does, a float → int cast truncates
  toward zero and saturates. Masks are numpy bool.
- Globals hold values already representable in their dtype, so loads do not round; a store
  writes only the elements inside the global. Tile coordinates (b, d, r, c) of an R×C
  tile are rows [r·R, r·R+R), columns [c·C, c·C+C) of g[b, d]; a vector of length L reads
  row r (in elements), columns [c·L, c·L+L). Anything outside the global reads `pad`.
  Gather/scatter rows by index: an index < 0 or >= rows reads zeros / is dropped.
- Shared memory. One buffer per block per kt.alloc, shared by its warps, NaN for floats
  (a read of memory nothing wrote shows up) and zero for integers. A group copy
  (kt.copy_async) is split among the warps (warp w moves rows [w·R/W, (w+1)·R/W) when W
  divides R, else warp 0 moves all); the global is read at issue, and the rows land when
  the issuing warp's kt.wait_for completes the copy. kt.lds_load takes its value at issue
  but the register is in flight until a wait completes it; it reads sub-tile (row, col) of
  the buffer, and a coordinate outside it is an error at the load (on the GPU it reads other
  shared memory). kt.lds_store writes at once.
- Waits. kt.wait_for {vm, lds} completes all but the `vm` newest group copies and the `lds`
  newest shared loads of this warp. As in the C++ (`kt::wait<-1, ...>`), a count the waits
  pass did not set leaves that counter alone; a kind the target keeps no counter for (the
  scoreboarded shared loads of NVIDIA) completes at every wait. The errors a missing wait
  makes: a register read by any op but kt.wait_for (carrying it into or out of a loop or
  branch included: that copies its registers) while its shared load is in flight; a shared
  load from, or store into, a tile a copy is still landing in; a block ending with anything
  in flight.
- Meetings. kt.barrier only meets; kt.block_reduce gives every warp the reduction over
  warps 0..W-1 in that order (fixed, so a result reproduces run to run).
- Math. kt.mma is acc + op(a) @ op(b) as a float32 matmul (exact integers for i8), and
  kt.mma_shared acc + a @ bᵀ likewise with b the shared tile as the warp finds it (a shared
  a gives the warp its rows), complete at once as on every target but sm_90a; float
  unary and binary math is float32 (gelu's erf is rounded once); reductions accumulate in
  float32 (int32 for integers); max/min propagate NaN.

Each op is compiled once into a closure (`compile.py`, handler tables in `ops_*.py`), so a
run does no per-op dispatch. An op without a handler is an InternalError naming it.
"""
from __future__ import annotations

from .run import run_module

__all__ = ["run_module"]

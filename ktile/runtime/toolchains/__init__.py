"""Toolchain drivers, one module per vendor: the compiler command, its identity for the cache
key, its errors turned into kernel errors, and its gate. `ktile.runtime.build` picks one from
its table by `target.vendor`:

- `amd`: hipcc or Debian's clang++-22 (device-only HIP) → an AMDGPU code object, gated by
  cocheck on the code object itself (resources, spills, waits); `amd_quality` is its report
  (resources, occupancy, the instruction mix of the kernel and of its hot loop);
- `nvcc` (+ `ptxas`): nvcc → a cubin, gated by the `ptxas -v` resource report.

`diagnostics` turns any compiler's errors into a KernelError at the kernel's Python line."""

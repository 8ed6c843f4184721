"""The static quality report of an AMD build: what cocheck read from the code object
(resources, occupancy, warnings) and the instruction mix of the kernel and of its hot loop.
Compiled code only: no AMD GPU has run it, so nothing here is measured.

- `mix`: counting one stretch of code (MMAs, LDS and global accesses by width, global→LDS
  copies, waits, barriers);
- `loops`: the control-flow graph, its natural loops, and the hot-loop rule (its doc);
- `report`: `KernelMix` (whole kernel beside hot loop) and `AmdReport` (`Build.quality`).
"""
from .loops import Loop, find_loops, hot_loop
from .mix import Mix, access_bits, count
from .report import AmdReport, KernelMix, kernel_mix, mix_of

__all__ = ["AmdReport", "KernelMix", "Loop", "Mix", "access_bits", "count", "find_loops",
           "hot_loop", "kernel_mix", "mix_of"]

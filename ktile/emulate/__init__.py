"""Wave emulation (test tier 2): the generated AMD C++ run on the host CPU.

The kernel's C++ for an AMD target is compiled for the CPU against an emulation of the
instruction layer the tile headers use (include/ktile/amd/...: WMMA / MFMA by their exact lane
maps, LDS, ds_bpermute, waits, barriers, the global->LDS DMA); everything above that layer is
the device code unchanged. A block's lanes run as fibers, waves in lockstep at every wave
instruction, and the ISA's preconditions are checked as it runs: a broken one is an
EmulationError at the kernel's line. docs/emulation.md says what is checked and what is not.

    from ktile.emulate import emulate
    emulate(kernel, a, b, out, target="gfx950")
"""
from .build import EMULATION_INCLUDE, build_emulator, find_host_compiler
from .report import EmulationError
from .run import emulate

__all__ = ["EMULATION_INCLUDE", "EmulationError", "build_emulator", "emulate", "find_host_compiler"]

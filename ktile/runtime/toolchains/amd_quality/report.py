"""A kernel's static quality report: cocheck's resources, occupancy and warnings, then the
instruction mix of the whole kernel beside its hot loop's (`Build.report()` for AMD)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ...cocheck.archinfo import arch_info
from ...cocheck.disasm import Instruction, disassemble, function_ranges
from ...cocheck.readelf import read_elf
from ...cocheck.report import FunctionReport
from .loops import Loop, find_loops, hot_loop
from .mix import Mix, count


@dataclass
class KernelMix:
    whole: Mix
    hot_loop: Mix | None
    loop: Loop | None
    loops: int

    @property
    def narrow_lds_reads(self) -> int:
        """LDS reads narrower than 128 bits in the hot loop (all of them when there is none)."""
        return (self.hot_loop or self.whole).narrow_lds_reads()

    def report_lines(self) -> list[str]:
        """The whole kernel and the hot loop side by side, then the hot loop's mnemonics."""
        if self.loop is None:
            header, hot_rows = "hot loop: none (no loop)", []
        else:
            loops = f"{self.loops} loop{'s' * (self.loops != 1)} in the kernel"
            header = (f"hot loop at 0x{self.loop.header:x} (depth {self.loop.depth}; {loops})")
            hot_rows = self.hot_loop.rows(dma_row=bool(self.whole.lds_dma))
        rows = self.whole.rows()
        width = max(len(count) for _, count in rows) + 3
        lines = [f"  {'instruction mix':<18}{'whole kernel':<{width}}{header}"]
        for index, (what, count) in enumerate(rows):
            hot = hot_rows[index][1] if hot_rows else ""
            lines.append(f"    {what:<16}{count:<{width}}{hot}".rstrip())
        if self.hot_loop is not None and self.hot_loop.mnemonics:
            lines.append(f"  hot loop          {self.hot_loop.listing()}")
        return lines


def mix_of(body: list[Instruction], arch) -> KernelMix:
    """The mix of one function's instructions, whole and in its hot loop."""
    loops = find_loops(body, arch)
    hot = hot_loop(loops, body)
    return KernelMix(whole=count(body, arch),
                     hot_loop=None if hot is None else count(hot.instructions(body), arch),
                     loop=hot, loops=len(loops))


def kernel_mix(code: Path, kernel: str, target: str) -> KernelMix:
    """The instruction mix of `kernel` in the code object, whole and in its hot loop."""
    instructions = disassemble(code, target)
    # without the kernel's symbol (cocheck has warned), the whole code stands for the kernel
    span = function_ranges(read_elf(code).symbols, instructions, {kernel}).get(kernel)
    body = [i for i in instructions if span is None or span[0] <= i.address < span[1]]
    return mix_of(body, arch_info(target))


@dataclass
class AmdReport:
    """One kernel's code object as cocheck sees it, with its instruction mix (computed when
    first asked for: a cache hit that only loads the kernel does not disassemble twice)."""
    kernel: str
    target: str
    threads: int
    lds_dynamic: int
    checked: FunctionReport
    code_path: Path

    @functools.cached_property
    def mix(self) -> KernelMix:
        return kernel_mix(self.code_path, self.kernel, self.target)

    def report(self) -> str:
        res, occ = self.checked.resources, self.checked.occupancy
        wave = res.wave_size or "?"
        lines = [f"kernel '{self.kernel}' for {self.target}: {self.threads} threads per block "
                 f"(wave{wave})",
                 f"  registers     {res.vgprs} VGPRs ({res.agprs} AGPRs), {res.sgprs} SGPRs",
                 f"  spills        {res.vgpr_spills} VGPRs, {res.sgpr_spills} SGPRs; scratch "
                 f"{res.scratch_bytes} bytes per lane",
                 f"  LDS           {res.lds_bytes + self.lds_dynamic} bytes ({res.lds_bytes} "
                 f"static + {self.lds_dynamic} dynamic)"]
        if occ is not None:
            lines.append(f"  occupancy     {occ.waves} of {occ.max_waves} waves per SIMD "
                         f"(VGPR-limited: {occ.allocated_vgprs} of {occ.file_vgprs} VGPRs per "
                         f"lane allocated)")
        warnings = [f for f in self.checked.findings if not f.failing]
        lines.append(f"  waits         {self.checked.instructions_checked} instructions "
                     f"checked, no hazard" + "".join(f"; {w.kind}: {w.message}"
                                                     for w in warnings))
        lines.extend(self.mix.report_lines())
        return "\n".join(lines)

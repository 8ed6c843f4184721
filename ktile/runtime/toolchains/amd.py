"""The AMD toolchain driver: generated C++ → one AMDGPU code object per target.

    clang++-22 -x hip --offload-arch=gfx1100 --cuda-device-only --no-gpu-bundle-output \
        -nogpuinc -nogpulib -O3 -std=c++17 -I <ktile/include> kernel.hip -o kernel.hsaco

The compiler is ROCm's hipcc when there is one (`KTILE_HIPCC`, else `hipcc` on PATH when it
is HIP 6 or later), else Debian's clang++-22 (`KTILE_CLANG`, else `clang++-22` on PATH, else
/usr/lib/llvm-22/bin/clang++). Both get the same flags: device-only HIP, no ROCm headers
(`-nogpuinc`: `ktile/amd/device.hpp` gives `__global__` and the rest) and no device libraries
(`-nogpulib`: the tile headers use `__builtin_amdgcn_*` only), so the code object is the same
whichever driver made it. Without `-c` the driver links with lld, and `--no-gpu-bundle-output`
keeps the result a plain ELF code object (`.hsaco`) instead of a clang offload bundle. No
fast-math: the kernel's float semantics are the interpreter's.

The gate is `ktile.runtime.cocheck`, run on the code object on every build and every cache
hit: a spill, scratch use, a wait hazard (a register read before the wait that covers its
load), an LDS-DMA hazard, or a broken `max_vgprs` / `min_occupancy` limit refuses the build
with cocheck's message and fix. The build's report adds the hot loop's instruction mix.

No AMD GPU is needed, and none has run these code objects: they are compiled and statically
checked only (docs/amd.md).
"""
from __future__ import annotations

import functools
import os
import re
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ... import config
from ...errors import KernelError, SourceLoc
from ..cache import BuildFailed, CacheEntry, CompileResult, Compiler, run_command
from ..cocheck import Limits, Options, ToolMissing, check_code_object
from ..cocheck.archinfo import arch_info
from ..cocheck.disasm import Instruction, disassemble, function_ranges
from ..cocheck.inputs import CodeObjectFile
from ..cocheck.isa import decode, memory_access, wait_counts
from ..cocheck.readelf import read_elf
from ..cocheck.report import FunctionReport, ObjectReport
from ..gates import ResourceReport
from .diagnostics import Diagnostic, compile_error

SOURCE_NAME = "kernel.hip"
CODE_NAME = "kernel.hsaco"
CLANG_NAMES = ("clang++-22",)
CLANG_FALLBACK = "/usr/lib/llvm-22/bin/clang++"
MIN_HIP_MAJOR = 6          # Debian bookworm's hipcc 5.2 drives clang-15: no gfx942/950/1201
OPTIONS = ("--cuda-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3",
           "-std=c++17")
INSTALL_HINT = ("install Debian's LLVM 22 (apt-get install -y clang-22 lld-22 llvm-22; "
                "scripts/setup.sh does), or point KTILE_CLANG at a clang++ that knows gfx942, "
                "gfx950 and gfx1201 (LLVM 22 is the tested one), or KTILE_HIPCC at ROCm's hipcc")

# clang's `file:12:7: error: ...` (`#line` makes `file` the kernel's .py), and the notes that
# name the lines a template was instantiated from
_DIAGNOSTIC = re.compile(r"^(?P<file>[^:\s][^:]*):(?P<line>\d+):(?:\d+:)? (?P<kind>(?:fatal )?"
                         r"error|warning|note|remark): (?P<message>.*)$")
_HIP_VERSION = re.compile(r"HIP version:\s*(\d+)\.")


# ---- finding the compiler ---------------------------------------------------------------

def find_compiler() -> tuple[str, str]:
    """(kind, path): ("hipcc", ...) or ("clang", ...), in the order the module doc gives."""
    for variable, kind in ((config.HIPCC, "hipcc"), (config.CLANG, "clang")):
        named = variable.get()
        if named:
            return kind, _executable(named, variable)
    hipcc = shutil.which("hipcc")
    if hipcc and _hip_major(hipcc) >= MIN_HIP_MAJOR:
        return "hipcc", hipcc
    for name in CLANG_NAMES:
        if found := shutil.which(name):
            return "clang", found
    if os.access(CLANG_FALLBACK, os.X_OK):
        return "clang", CLANG_FALLBACK
    raise KernelError("building for an AMD target needs ROCm's hipcc or Debian's clang++-22; "
                      f"found neither ({config.HIPCC.name}, hipcc on PATH, {config.CLANG.name}, "
                      f"clang++-22 on PATH, {CLANG_FALLBACK})", hint=INSTALL_HINT)


def _executable(named: str, variable) -> str:
    found = named if os.path.sep in named else shutil.which(named)
    if found and os.path.isfile(found) and os.access(found, os.X_OK):
        return found
    raise KernelError(f"{variable.name}={named} is not an executable file",
                      hint=f"point {variable.name} at the compiler, or unset it")


def _hip_major(hipcc: str) -> int:
    """The HIP major version `hipcc --version` reports; 0 when it reports none."""
    found = _HIP_VERSION.search(_version_text(hipcc))
    return int(found.group(1)) if found else 0


@functools.lru_cache(maxsize=None)
def _version_text(path: str) -> str:
    result = run_command([path, "--version"], timeout=60)
    if result.returncode != 0:
        raise KernelError(f"{path} --version failed (exit {result.returncode}): "
                          f"{result.log.strip()[:300]}", hint=INSTALL_HINT)
    return result.log.strip()


def toolchain() -> "AmdToolchain":
    kind, path = find_compiler()
    return AmdToolchain(path, kind)


# ---- the driver -------------------------------------------------------------------------

@dataclass(frozen=True)
class AmdToolchain:
    path: str
    kind: str                      # "hipcc" or "clang"
    source_name: str = SOURCE_NAME
    code_name: str = CODE_NAME

    @property
    def name(self) -> str:
        return os.path.basename(self.path)

    @property
    def identity(self) -> str:
        """The compiler's path and `--version` text: part of every cache key (asked once)."""
        return f"{self.kind} {os.path.realpath(self.path)}\n{_version_text(self.path)}"

    def flags(self, target) -> list[str]:
        """The options that decide the code object (paths left out: they are not content)."""
        return ["-x", "hip", f"--offload-arch={target.name}", *OPTIONS]

    def compiler(self, target, include_dirs: list[Path]) -> Compiler:
        command = [self.path, *self.flags(target),
                   *(arg for d in include_dirs for arg in ("-I", str(d)))]

        def compile_source(source: Path, code: Path) -> CompileResult:
            return run_command([*command, str(source), "-o", str(code)])
        return compile_source

    def error(self, failure: BuildFailed, kernel: str, target,
              include_dirs: list[Path]) -> KernelError:
        """The KernelError for a failed compile: at the kernel's line when clang names one."""
        return compile_error(self.name, clang_errors(failure.log), failure, kernel, target,
                             include_dirs)

    def gate(self, entry: CacheEntry, kernel: str, target, *, warps: int, lds_bytes: int,
             limits, loc: SourceLoc | None) -> tuple[ResourceReport, "AmdReport"]:
        """cocheck over the code object: the build's resources and report, or the refusal."""
        threads = warps * target.wave_size
        checked = _checked_kernel(entry.code_path, kernel, target, limits, loc)
        _refuse_failing(checked, target, loc, kernel)
        report = AmdReport(kernel, target.name, threads, lds_bytes, checked, entry.code_path)
        _refuse_oversized(report, target, loc)
        res = checked.resources
        resources = ResourceReport(kernel=kernel, target=target.name, registers=res.vgprs or 0,
                                   stack_bytes=res.scratch_bytes, shared_static=res.lds_bytes,
                                   shared_dynamic=lds_bytes, threads=threads)
        return resources, report


def clang_errors(log: str) -> list[Diagnostic]:
    """clang's errors, each with the lines its `in instantiation of ...` notes name."""
    errors: list[Diagnostic] = []
    current: Diagnostic | None = None
    for line in log.splitlines():
        m = _DIAGNOSTIC.match(line)
        if m is None:
            continue
        kind, file, number = m.group("kind"), m.group("file"), int(m.group("line"))
        if "error" in kind:
            current = Diagnostic(file, number, m.group("message"), line)
            errors.append(current)
        elif kind == "note" and current is not None:
            if m.group("message").startswith("in instantiation of"):
                current.instantiated_at.append((file, number))
        else:
            current = None
    return errors


# ---- the gate: cocheck's result as the build's -----------------------------------------

def _checked_kernel(code: Path, kernel: str, target, limits, loc) -> FunctionReport:
    options = Options(Limits(max_vgprs=limits.max_vgprs, min_occupancy=limits.min_occupancy),
                      mcpu=target.name)
    try:
        checked: ObjectReport = check_code_object(CodeObjectFile(str(code), code), options)
    except ToolMissing as missing:
        raise KernelError(f"the AMD build gate cannot read the code object: {missing}",
                          kernel=kernel, hint=INSTALL_HINT) from None
    if checked.error is not None:
        raise KernelError(f"the {target.name} code object cannot be checked: {checked.error}",
                          loc=loc, kernel=kernel, hint="report it with the code object")
    found = next((f for f in checked.functions if f.is_kernel and f.name == kernel), None)
    if found is None:
        names = ", ".join(f.name for f in checked.functions if f.is_kernel) or "none"
        raise KernelError(f"the {target.name} code object has no kernel named '{kernel}' "
                          f"(kernels: {names})", loc=loc, kernel=kernel,
                          hint="the kernel must be `extern \"C\" __global__` under this name")
    return found


def _refuse_failing(checked: FunctionReport, target, loc, kernel: str) -> None:
    """A spill, scratch, hazard or broken limit: the first one, with its fix, as the error."""
    failing = [f for f in checked.findings if f.failing]
    if not failing:
        return
    first = failing[0]
    where = f" (at 0x{first.address:x} in the code object)" if first.address is not None else ""
    more = "" if len(failing) == 1 else \
        f"; also: {', '.join(f.kind for f in failing[1:])}"
    raise KernelError(f"the {target.name} build is refused by the code-object check "
                      f"({first.kind}){where}: {first.message}{more}", loc=loc, kernel=kernel,
                      hint=first.fix)


def _refuse_oversized(report: "AmdReport", target, loc) -> None:
    """What the launch would be refused for: more LDS, or more threads, than the kernel has."""
    res = report.checked.resources
    if res.lds_bytes + report.lds_dynamic > target.lds_bytes:
        raise KernelError(f"the kernel needs {res.lds_bytes} bytes of static and "
                          f"{report.lds_dynamic} bytes of dynamic LDS, over the "
                          f"{target.lds_bytes} bytes a workgroup has on {target.name}", loc=loc,
                          kernel=report.kernel, hint="use smaller or fewer shared tiles")
    if res.max_threads is not None and report.threads > res.max_threads:
        raise KernelError(f"the launch uses {report.threads} threads per block, but the code "
                          f"object was compiled for at most {res.max_threads}", loc=loc,
                          kernel=report.kernel,
                          hint=f"declare __launch_bounds__({report.threads}) on the kernel")


# ---- the static quality report ------------------------------------------------------------

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


# ---- the instruction mix: the whole kernel and its hot loop --------------------------------
#
# A loop is a backward branch: a branch to an earlier address spans [target, branch]. The hot
# loop is the innermost loop holding the kernel's loop-resident work: of the loops holding the
# most MMAs (where no loop holds one, the most memory operations), the most deeply nested, then
# the longest. The literal "innermost backward branch" is not used because ktile's tile loads
# nest a per-element loop for partial edge tiles inside the main loop: it is the innermost
# loop, but cold, and holds no MMA. Counts are of the code as laid out (an unrolled loop shows
# its unrolled body; a nested loop's body counts once in its parent); trip counts are unknown.

MMA_PREFIXES = ("v_wmma_", "v_swmmac_", "v_mfma_", "v_smfmac_")
LDS_READ_PREFIXES = ("ds_read", "ds_load")
LDS_WRITE_PREFIXES = ("ds_write", "ds_store")
GLOBAL_LOAD_PREFIXES = ("global_load", "buffer_load", "flat_load")
GLOBAL_STORE_PREFIXES = ("global_store", "buffer_store", "flat_store")
MEMORY_PREFIXES = (*LDS_READ_PREFIXES, *LDS_WRITE_PREFIXES, *GLOBAL_LOAD_PREFIXES,
                   *GLOBAL_STORE_PREFIXES)
BARRIERS = ("s_barrier", "s_barrier_wait")     # gfx12 splits one into signal + wait
WIDE_BITS = 128
# the width part of a memory mnemonic, in bits per lane (gfx9 dwordx4, gfx11+ b128, ...)
WIDTH_BITS = {"b128": 128, "dwordx4": 128, "b96": 96, "dwordx3": 96, "b64": 64, "dwordx2": 64,
              "b32": 32, "dword": 32, "b16": 16, "u16": 16, "i16": 16, "ushort": 16,
              "sshort": 16, "short": 16, "u8": 8, "i8": 8, "ubyte": 8, "sbyte": 8, "byte": 8}


def access_bits(mnemonic: str) -> int | None:
    """Bits one lane moves: the first width in the name, twice for the two-address LDS forms
    (ds_read2_b64, ds_load_2addr_b64)."""
    parts = mnemonic.split("_")
    width = next((WIDTH_BITS[p] for p in parts[2:] if p in WIDTH_BITS), None)
    twice = parts[1].startswith(("read2", "write2")) or "2addr" in parts
    return width * 2 if width and twice else width


@dataclass
class Mix:
    """Counts of one stretch of code, by the classes the report shows."""
    instructions: int = 0
    mma: Counter = field(default_factory=Counter)            # mnemonic -> count
    lds_reads: Counter = field(default_factory=Counter)      # bits per lane -> count
    lds_writes: Counter = field(default_factory=Counter)
    global_loads: Counter = field(default_factory=Counter)
    global_stores: Counter = field(default_factory=Counter)
    lds_dma: int = 0                                         # global -> LDS copies
    waits: int = 0
    barriers: int = 0
    mnemonics: Counter = field(default_factory=Counter)     # every memory/MMA mnemonic seen

    def add(self, instruction: Instruction, arch) -> None:
        mnemonic, operands = instruction.mnemonic, instruction.operands
        self.instructions += 1
        counted = self._memory(mnemonic, operands, arch) or self._other(mnemonic, operands, arch)
        if counted:
            self.mnemonics[mnemonic] += 1

    def _memory(self, mnemonic: str, operands: str, arch) -> bool:
        bits = access_bits(mnemonic)
        access = memory_access(mnemonic, operands, arch)
        if access is not None and access.lds_dma:
            self.lds_dma += 1
        elif mnemonic.startswith(LDS_READ_PREFIXES):
            self.lds_reads[bits] += 1
        elif mnemonic.startswith(LDS_WRITE_PREFIXES):
            self.lds_writes[bits] += 1
        elif mnemonic.startswith(GLOBAL_LOAD_PREFIXES):
            self.global_loads[bits] += 1
        elif mnemonic.startswith(GLOBAL_STORE_PREFIXES):
            self.global_stores[bits] += 1
        else:
            return False
        return True

    def _other(self, mnemonic: str, operands: str, arch) -> bool:
        if mnemonic.startswith(MMA_PREFIXES):
            self.mma[mnemonic] += 1
        elif wait_counts(mnemonic, operands, arch)[0] is not None:
            self.waits += 1
        elif mnemonic in BARRIERS:
            self.barriers += 1
        else:
            return False
        return True

    def rows(self) -> list[tuple[str, str]]:
        """(what, count) rows of the report table."""
        rows = [("instructions", str(self.instructions)), ("MMA", str(sum(self.mma.values()))),
                ("LDS reads", _by_width(self.lds_reads)),
                ("LDS writes", _by_width(self.lds_writes)),
                ("global loads", _by_width(self.global_loads)),
                ("global stores", _by_width(self.global_stores))]
        if self.lds_dma:
            rows.append(("global->LDS", str(self.lds_dma)))
        return rows + [("waits", str(self.waits)), ("barriers", str(self.barriers))]

    def listing(self) -> str:
        return ", ".join(f"{name} x{count}" for name, count in sorted(self.mnemonics.items()))


def _by_width(counts: Counter) -> str:
    """`12 (128-bit 8, 64-bit 4)`: the total, then per width, widest first."""
    total = sum(counts.values())
    if not total:
        return "0"
    widths = sorted(counts, key=lambda bits: -(bits or 0))
    shown = ", ".join(f"{bits}-bit {counts[bits]}" if bits else f"other {counts[bits]}"
                      for bits in widths)
    return f"{total} ({shown})"


@dataclass(frozen=True)
class Loop:
    start: int          # the branch target: the loop's first instruction
    end: int            # the backward branch itself
    depth: int          # loops around it, itself included

    def contains(self, other: "Loop") -> bool:
        return self != other and self.start <= other.start and other.end <= self.end


@dataclass
class KernelMix:
    whole: Mix
    hot_loop: Mix | None
    loop: Loop | None
    loops: int

    @property
    def narrow_lds_reads(self) -> int:
        """LDS reads narrower than 128 bits in the hot loop (all of them when there is none)."""
        mix = self.hot_loop or self.whole
        return sum(n for bits, n in mix.lds_reads.items() if (bits or 0) < WIDE_BITS)

    def report_lines(self) -> list[str]:
        """The whole kernel and the hot loop side by side, then the hot loop's mnemonics."""
        if self.loop is None:
            header, hot_rows = "hot loop: none (no backward branch)", []
        else:
            loops = f"{self.loops} loop{'s' * (self.loops != 1)} in the kernel"
            header = (f"hot loop 0x{self.loop.start:x}-0x{self.loop.end:x} (depth "
                      f"{self.loop.depth}; {loops})")
            hot_rows = self.hot_loop.rows()
        rows = self.whole.rows()
        width = max(len(count) for _, count in rows) + 3
        lines = [f"  {'instruction mix':<18}{'whole kernel':<{width}}{header}"]
        for index, (what, count) in enumerate(rows):
            hot = hot_rows[index][1] if hot_rows else ""
            lines.append(f"    {what:<16}{count:<{width}}{hot}".rstrip())
        if self.hot_loop is not None and self.hot_loop.mnemonics:
            lines.append(f"  hot loop          {self.hot_loop.listing()}")
        return lines


def kernel_mix(code: Path, kernel: str, target: str) -> KernelMix:
    """The instruction mix of `kernel` in the code object, whole and in its hot loop."""
    arch = arch_info(target)
    instructions = disassemble(code, target)
    # without the kernel's symbol (cocheck has warned), the whole code stands for the kernel
    span = function_ranges(read_elf(code).symbols, instructions, {kernel}).get(kernel)
    body = [i for i in instructions if span is None or span[0] <= i.address < span[1]]
    loops = find_loops(body, arch)
    hot = hot_loop(loops, body)
    return KernelMix(whole=count(body, arch),
                     hot_loop=None if hot is None else
                     count([i for i in body if hot.start <= i.address <= hot.end], arch),
                     loop=hot, loops=len(loops))


def count(instructions: list[Instruction], arch) -> Mix:
    mix = Mix()
    for instruction in instructions:
        mix.add(instruction, arch)
    return mix


def find_loops(body: list[Instruction], arch) -> list[Loop]:
    spans = []
    for instruction in body:
        if not instruction.mnemonic.startswith(("s_branch", "s_cbranch_")):
            continue
        target = decode(instruction, arch).branch_target
        if target is not None and target <= instruction.address:
            spans.append((target, instruction.address))
    plain = [Loop(s, e, 0) for s, e in spans]
    return [Loop(loop.start, loop.end, 1 + sum(other.contains(loop) for other in plain))
            for loop in plain]


def hot_loop(loops: list[Loop], body: list[Instruction]) -> Loop | None:
    if not loops:
        return None
    mmas = {loop: _count_in(loop, body, MMA_PREFIXES) for loop in loops}
    work = mmas if any(mmas.values()) else \
        {loop: _count_in(loop, body, MEMORY_PREFIXES) for loop in loops}
    most = max(work.values())
    holding = [loop for loop in loops if work[loop] == most]
    return max(holding, key=lambda loop: (loop.depth, loop.end - loop.start))


def _count_in(loop: Loop, body: list[Instruction], prefixes: tuple[str, ...]) -> int:
    return sum(loop.start <= i.address <= loop.end and i.mnemonic.startswith(prefixes)
               for i in body)

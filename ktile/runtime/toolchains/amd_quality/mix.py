"""The instruction mix of a stretch of AMDGPU code: MMAs by mnemonic, LDS and global accesses
by bits per lane, global→LDS copies, memory-counter waits and barriers.

Widths come from the mnemonic (`b128`/`dwordx4` = 128, `b64`/`dwordx2` = 64, `u16`, `ushort`,
...), doubled for the two-address LDS forms (`ds_read2_b64`, `ds_load_2addr_b64`). A wait is
any memory-counter wait cocheck reads (`s_waitcnt*`, gfx12 `s_wait_*cnt`; not `s_wait_alu`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...cocheck.disasm import Instruction
from ...cocheck.isa import memory_access, wait_counts

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


def is_mma(instruction: Instruction) -> bool:
    return instruction.mnemonic.startswith(MMA_PREFIXES)


def is_memory(instruction: Instruction) -> bool:
    return instruction.mnemonic.startswith(MEMORY_PREFIXES)


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

    def narrow_lds_reads(self) -> int:
        """LDS reads narrower than 128 bits per lane (the trap-3 signature in a hot loop)."""
        return sum(n for bits, n in self.lds_reads.items() if (bits or 0) < WIDE_BITS)

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

    def rows(self, dma_row: bool = False) -> list[tuple[str, str]]:
        """(what, count) rows of the report table; the global->LDS row where there are such
        copies, or where `dma_row` asks for it (to line up with a column that has them)."""
        rows = [("instructions", str(self.instructions)), ("MMA", str(sum(self.mma.values()))),
                ("MMA / instr.", f"{self.mma_density():.3f}"),
                ("LDS reads", _by_width(self.lds_reads)),
                ("LDS writes", _by_width(self.lds_writes)),
                ("global loads", _by_width(self.global_loads)),
                ("global stores", _by_width(self.global_stores))]
        if self.lds_dma or dma_row:
            rows.append(("global->LDS", str(self.lds_dma)))
        return rows + [("waits", str(self.waits)), ("barriers", str(self.barriers))]

    def mma_density(self) -> float:
        """MMA instructions per instruction (issue #12's figure for a hot loop; 0 if empty)."""
        return sum(self.mma.values()) / self.instructions if self.instructions else 0.0

    def listing(self) -> str:
        return ", ".join(f"{name} x{count}" for name, count in sorted(self.mnemonics.items()))


def count(instructions: list[Instruction], arch) -> Mix:
    mix = Mix()
    for instruction in instructions:
        mix.add(instruction, arch)
    return mix


def _by_width(counts: Counter) -> str:
    """`12 (128-bit 8, 64-bit 4)`: the total, then per width, widest first."""
    total = sum(counts.values())
    if not total:
        return "0"
    widths = sorted(counts, key=lambda bits: -(bits or 0))
    shown = ", ".join(f"{bits}-bit {counts[bits]}" if bits else f"other {counts[bits]}"
                      for bits in widths)
    return f"{total} ({shown})"

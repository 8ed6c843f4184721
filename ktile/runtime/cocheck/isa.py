"""What one disassembled instruction does, as far as the wait check cares: the registers it
writes and reads, the memory counter(s) it increments, the waits it performs, and where
control goes next.

Operand convention of the AMDGPU assembler: the destination comes first (two destinations for
the VOP3b carry forms), except for instructions with none (stores, compares into SCC, waits,
branches, gfx10+ v_cmpx, and loads with the `lds` modifier, whose first operand is an address:
the data goes to LDS, not to a register). Implicit operands (VCC of the e32 forms, EXEC, M0)
are not tracked: no memory load writes them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .archinfo import ArchInfo
from .disasm import Instruction

Reg = tuple[str, int]                       # ("v", 3), ("s", 4), ("a", 0)

REGISTER = re.compile(r"(?<![\w.\]])([vsa])(?:(\d+)|\[(\d+):(\d+)\])(?:\.[lh])?(?![\w\[])")
VOP3B = re.compile(r"^v_((add|sub|subrev)_co(_ci)?_u32|(addc|subb|subbrev)_co_u32|div_scale_f"
                   r"|mad_(co_)?(u64_u32|i64_i32))")
# destinations these also read: accumulate-into-destination forms and lane writes
TIED = re.compile(r"^v_(fmac|mac|pk_fmac|dot\d+c|dot\d+_\w+c|writelane)")
LEGACY_FIELD = re.compile(r"\b(vmcnt|lgkmcnt|vscnt|expcnt)\((\d+)\)")
SPLIT_WAIT = re.compile(r"^s_wait_(loadcnt|storecnt|samplecnt|bvhcnt|dscnt|kmcnt|expcnt)$")
SPLIT_PAIR = {"s_wait_loadcnt_dscnt": "loadcnt", "s_wait_storecnt_dscnt": "storecnt"}
LEGACY_SINGLE = re.compile(r"^s_waitcnt_(vmcnt|lgkmcnt|vscnt|expcnt)$")
LDS_MODIFIER = re.compile(r"(?<![\w:])lds(?![\w:])")

NO_DESTINATION = (
    "s_cmp", "s_bitcmp", "s_cbranch", "s_branch", "s_setpc", "s_wait", "s_nop", "s_barrier",
    "s_endpgm", "s_setprio", "s_delay_alu", "s_sleep", "s_trap", "s_dcache", "s_icache",
    "s_setreg", "s_set_gpr_idx", "s_code_end", "s_clause", "s_ttrace", "s_denorm_mode",
    "s_round_mode", "s_singleuse_vdst", "s_inst_prefetch", "s_prefetch", "s_wakeup",
    "s_sethalt", "s_incperflevel", "s_decperflevel", "s_setkill", "s_version", "s_store",
    "s_buffer_store", "s_scratch_store", "s_atc_probe", "s_dealloc_vgprs", "s_setvskip",
    "s_monitor_sleep", "exp", "v_nop",
)
SMEM = ("s_load", "s_buffer_load", "s_scratch_load", "s_store", "s_buffer_store",
        "s_scratch_store", "s_atomic", "s_buffer_atomic", "s_memtime", "s_memrealtime",
        "s_dcache", "s_atc_probe")
SMEM_RESULT = ("s_load", "s_buffer_load", "s_scratch_load", "s_memtime", "s_memrealtime")
VMEM = ("buffer_", "tbuffer_", "global_", "scratch_", "image_", "flat_")
DS_RESULT = ("ds_read", "ds_load", "ds_swizzle", "ds_permute", "ds_bpermute", "ds_append",
             "ds_consume", "ds_bvh_stack", "ds_ordered_count")
DS_NOT_READING_LDS = ("ds_write", "ds_store", "ds_swizzle", "ds_permute", "ds_bpermute",
                      "ds_nop", "ds_gws", "ds_ordered_count")
CACHE_CONTROL_ON_LOADS = ("_inv", "_wbinvl1")
ATOMIC_RETURN = re.compile(r"(?<![\w:])(glc|sc0)(?![\w:])|TH_ATOMIC_RETURN")


@dataclass(frozen=True)
class MemoryAccess:
    kind: str                   # vmem_load, vmem_store, sample, bvh, lds, gds, smem, msg,
                                # flat_load, flat_store (archinfo's classes)
    counters: tuple[str, ...]   # the counters it increments on this arch
    writes_registers: bool      # its destination registers are written when it completes
    lds_dma: bool               # a global/buffer load with `lds`: writes LDS, counts on vmcnt
    reads_lds: bool             # a DS operation that reads LDS memory


@dataclass(frozen=True)
class Decoded:
    defs: frozenset[Reg]
    uses: frozenset[Reg]
    memory: MemoryAccess | None = None
    wait: dict[str, int] | None = None      # counter -> count, for a wait instruction
    legacy_wait_on_split: bool = False      # s_waitcnt on gfx12: not counted as a wait
    branch_target: int | None = None
    conditional: bool = False
    ends: bool = False                      # s_endpgm, s_setpc_b64: no fall-through
    call: bool = False
    barrier: bool = False


def registers(text: str) -> frozenset[Reg]:
    found = set()
    for bank, single, first, last in REGISTER.findall(text):
        low, high = (int(single), int(single)) if single else (int(first), int(last))
        found.update((bank, index) for index in range(low, high + 1))
    return frozenset(found)


def split_operands(operands: str) -> list[str]:
    """Operands at top-level commas; modifiers stay attached to the last one."""
    parts, depth, current = [], 0, []
    for char in operands:
        depth += char in "[("
        depth -= char in "])"
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def decode(instruction: Instruction, arch: ArchInfo) -> Decoded:
    mnemonic, operands = instruction.mnemonic, instruction.operands
    defs, uses = _registers_of(instruction.text, arch)
    memory = memory_access(mnemonic, operands, arch)
    if memory is not None and not memory.writes_registers:
        defs, uses = frozenset(), defs | uses
    wait, legacy = wait_counts(mnemonic, operands, arch)
    target = _branch_target(instruction)
    return Decoded(
        defs=defs, uses=uses, memory=memory, wait=wait, legacy_wait_on_split=legacy,
        branch_target=target, conditional=mnemonic.startswith("s_cbranch_"),
        ends=mnemonic.startswith("s_endpgm") or mnemonic in ("s_setpc_b64", "s_rfe_b64"),
        call=mnemonic in ("s_swappc_b64", "s_call_b64"),
        barrier=mnemonic in ("s_barrier", "s_barrier_wait"))


def _registers_of(text: str, arch: ArchInfo) -> tuple[frozenset[Reg], frozenset[Reg]]:
    """(written, read) registers; a VOPD pair (`a :: b`) is both halves together."""
    defs, uses = frozenset(), frozenset()
    for half in text.split("::"):
        parts = half.strip().split(None, 1)
        half_defs, half_uses = _operand_roles(parts[0], parts[1] if len(parts) > 1 else "", arch)
        defs, uses = defs | half_defs, uses | half_uses
    return defs, uses


def _operand_roles(mnemonic: str, operands: str, arch: ArchInfo):
    parts = split_operands(operands)
    if not parts or _has_no_destination(mnemonic, arch):
        return frozenset(), registers(operands)
    written = 2 if VOP3B.match(mnemonic) else 1
    defs = frozenset().union(*(registers(p) for p in parts[:written]))
    uses = frozenset().union(*(registers(p) for p in parts[written:]))
    if TIED.match(mnemonic):
        uses = uses | defs
    return defs, uses


def _has_no_destination(mnemonic: str, arch: ArchInfo) -> bool:
    if mnemonic.startswith("s_sendmsg"):
        return "_rtn" not in mnemonic
    if mnemonic.startswith("v_cmpx"):
        return not arch.cmpx_writes_sgpr
    return mnemonic.startswith(NO_DESTINATION)


def memory_access(mnemonic: str, operands: str, arch: ArchInfo) -> MemoryAccess | None:
    kind = _memory_kind(mnemonic, operands)
    if kind is None:
        return None
    lds_dma = kind == "vmem_load" and _is_lds_dma(mnemonic, operands)
    writes = _writes_registers(kind, mnemonic, operands) and not lds_dma
    reads_lds = kind == "lds" and not mnemonic.startswith(DS_NOT_READING_LDS)
    return MemoryAccess(kind, arch.waits.counters_of[kind], writes, lds_dma, reads_lds)


def _memory_kind(mnemonic: str, operands: str) -> str | None:
    if mnemonic.startswith("ds_"):
        gds = mnemonic.startswith(("ds_gws", "ds_ordered")) or re.search(r"\bgds\b", operands)
        return "gds" if gds else "lds"
    if mnemonic.startswith(SMEM):
        return "smem"
    if mnemonic.startswith("s_sendmsg"):
        return "msg"
    if not mnemonic.startswith(VMEM):
        return None
    if mnemonic.startswith("image_"):
        return _image_kind(mnemonic, operands)
    loads = _is_load_like(mnemonic, operands)
    if mnemonic.startswith("flat_"):
        return "flat_load" if loads else "flat_store"
    return "vmem_load" if loads else "vmem_store"


def _image_kind(mnemonic: str, operands: str) -> str:
    if mnemonic.startswith(("image_sample", "image_gather", "image_get_lod")):
        return "sample"
    if mnemonic.startswith("image_bvh"):
        return "bvh"
    return "vmem_load" if _is_load_like(mnemonic, operands) else "vmem_store"


def _is_load_like(mnemonic: str, operands: str) -> bool:
    """Counts on the load counter: loads, atomics that return, cache invalidations."""
    if "atomic" in mnemonic:
        return bool(ATOMIC_RETURN.search(operands))
    if "_load" in mnemonic or "get_resinfo" in mnemonic:
        return True
    return mnemonic.endswith(CACHE_CONTROL_ON_LOADS) or "_inv" in mnemonic


def _is_lds_dma(mnemonic: str, operands: str) -> bool:
    return "_lds_" in mnemonic or mnemonic.endswith("_lds") or bool(LDS_MODIFIER.search(operands))


def _writes_registers(kind: str, mnemonic: str, operands: str) -> bool:
    if kind in ("lds", "gds"):
        return mnemonic.startswith(DS_RESULT) or "_rtn" in mnemonic
    if kind == "smem":
        return mnemonic.startswith(SMEM_RESULT) or (
            "atomic" in mnemonic and bool(ATOMIC_RETURN.search(operands)))
    if kind == "msg":
        return "_rtn" in mnemonic
    if kind in ("sample", "bvh"):
        return True
    return kind in ("vmem_load", "flat_load") and not mnemonic.endswith(CACHE_CONTROL_ON_LOADS) \
        and "_inv" not in mnemonic


def wait_counts(mnemonic: str, operands: str, arch: ArchInfo) -> tuple[dict[str, int] | None, bool]:
    """(counter -> count the wait drains it to, True for a legacy s_waitcnt on gfx12).

    A wait whose count cocheck cannot read (an SGPR operand) waits on nothing here."""
    if mnemonic == "s_waitcnt":
        if arch.waits.split:
            return {}, True
        return {c: int(n) for c, n in LEGACY_FIELD.findall(operands) if c != "expcnt"}, False
    single = LEGACY_SINGLE.match(mnemonic)
    if single and not arch.waits.split:
        return _single_wait(single.group(1), split_operands(operands)), False
    split = SPLIT_WAIT.match(mnemonic)
    if split and arch.waits.split:
        counts = {split.group(1): _immediate(operands)}
        return {c: n for c, n in counts.items() if c != "expcnt" and n is not None}, False
    if mnemonic in SPLIT_PAIR and arch.waits.split:
        return _paired_wait(SPLIT_PAIR[mnemonic], _immediate(operands)), False
    return None, False


def _single_wait(counter: str, parts: list[str]) -> dict[str, int]:
    """`s_waitcnt_vscnt null, 0x0`: the count is the SGPR's value plus the immediate."""
    if counter == "expcnt" or len(parts) != 2 or parts[0] != "null":
        return {}
    count = _immediate(parts[1])
    return {} if count is None else {counter: count}


def _paired_wait(first: str, value: int | None) -> dict[str, int]:
    """s_wait_loadcnt_dscnt / s_wait_storecnt_dscnt: the first count in bits 13:8, dscnt in
    bits 5:0."""
    if value is None:
        return {}
    return {first: (value >> 8) & 0x3F, "dscnt": value & 0x3F}


def _immediate(text: str) -> int | None:
    try:
        return int(text.strip().split()[0], 0)
    except (ValueError, IndexError):
        return None


def _branch_target(instruction: Instruction) -> int | None:
    """s_branch / s_cbranch_*: the next instruction's address plus 4 × the signed 16-bit
    offset (objdump prints it unsigned)."""
    if not instruction.mnemonic.startswith(("s_branch", "s_cbranch_")):
        return None
    offset = _immediate(instruction.operands)
    if offset is None or instruction.mnemonic in ("s_cbranch_join", "s_cbranch_g_fork"):
        return None
    signed = offset - 0x10000 if offset & 0x8000 else offset
    return instruction.address + 4 + 4 * signed

"""cocheck's pieces without the LLVM tools: the instruction model, the wait arithmetic on a
canned objdump listing, the metadata reader, and agreement with ktile's target tables."""
import pytest

from ktile import targets
from ktile.runtime.cocheck.archinfo import UnknownArch, arch_info
from ktile.runtime.cocheck.disasm import Instruction, parse_listing
from ktile.runtime.cocheck.isa import decode
from ktile.runtime.cocheck.readelf import _kernels, _metadata_block
from ktile.runtime.cocheck.waits import check_function

pytestmark = pytest.mark.tier1

AMD = [t for t in targets.all_targets() if t.vendor == "amd"]


def decoded(text: str, arch: str):
    return decode(Instruction(0x100, text, 4), arch_info(arch))


def regs(names: str) -> frozenset:
    return frozenset((n[0], int(n[1:])) for n in names.split())


@pytest.mark.parametrize("target", AMD, ids=lambda t: t.name)
def test_fix_spellings_are_the_target_tables(target):
    waits = arch_info(target.name).waits
    for counter in target.wait_counters:
        assert waits.spelling(counter.isa_name, 3) == counter.wait_asm.format(n=3)
        assert waits.max_count[counter.isa_name] == counter.max_count


def test_an_lds_load_writes_no_register_and_counts_on_vmcnt():
    d = decoded("buffer_load_dwordx4 v1, s[4:7], 0 offen lds", "gfx950")
    assert d.defs == frozenset() and ("v", 1) in d.uses
    assert d.memory.lds_dma and d.memory.counters == ("vmcnt",)
    assert decoded("global_load_lds_dwordx4 v[2:3], off", "gfx950").memory.lds_dma


@pytest.mark.parametrize("text, arch, defs, uses", [
    ("v_add_co_u32 v0, s0, s0, v2", "gfx1100", "v0 s0", "s0 v2"),
    ("v_cmpx_eq_u32_e64 s0, v1", "gfx1100", "", "s0 v1"),
    ("v_cmpx_eq_u32_e64 s[0:1], v0, v1", "gfx942", "s0 s1", "v0 v1"),
    ("v_dual_mov_b32 v3, 0 :: v_dual_add_nc_u32 v0, 1, v0", "gfx1100", "v0 v3", "v0"),
    ("global_store_b32 v[0:1], v2, off", "gfx1100", "", "v0 v1 v2"),
    ("ds_write_b32 v1, v2", "gfx942", "", "v1 v2"),
    ("global_atomic_add v0, v1, v2, s[0:1] sc0", "gfx942", "v0", "v1 v2 s0 s1"),
    ("global_atomic_add_u32 v1, v2, s[0:1]", "gfx1201", "", "v1 v2 s0 s1"),
    ("v_mov_b16_e32 v1.l, v2.h", "gfx1100", "v1", "v2"),
])
def test_destinations_and_sources(text, arch, defs, uses):
    d = decoded(text, arch)
    assert (d.defs, d.uses) == (regs(defs) if defs else frozenset(), regs(uses))


@pytest.mark.parametrize("text, arch, wait", [
    ("s_waitcnt vmcnt(0) lgkmcnt(3)", "gfx942", {"vmcnt": 0, "lgkmcnt": 3}),
    ("s_waitcnt vmcnt(0) expcnt(0) lgkmcnt(0)", "gfx1100", {"vmcnt": 0, "lgkmcnt": 0}),
    ("s_waitcnt_vscnt null, 0x0", "gfx1100", {"vscnt": 0}),
    ("s_waitcnt_vmcnt s0, 0x0", "gfx1100", {}),           # an SGPR count: unknown, no wait
    ("s_wait_loadcnt_dscnt 0x102", "gfx1201", {"loadcnt": 1, "dscnt": 2}),
    ("s_wait_kmcnt 0x0", "gfx1201", {"kmcnt": 0}),
])
def test_waits(text, arch, wait):
    assert decoded(text, arch).wait == wait


def test_legacy_wait_on_gfx12_is_flagged_and_waits_on_nothing():
    d = decoded("s_waitcnt vmcnt(0)", "gfx1201")
    assert d.wait == {} and d.legacy_wait_on_split


def test_branch_targets_are_signed_word_offsets():
    assert decoded("s_cbranch_scc0 65516", "gfx1100").branch_target == 0x100 + 4 - 80
    assert decoded("s_branch 3", "gfx942").branch_target == 0x100 + 4 + 12


def test_unknown_archs_are_refused_by_name():
    with pytest.raises(UnknownArch, match="gfx9 to gfx12"):
        arch_info("gfx803")
    assert arch_info("gfx90a").registers is None      # checked, without occupancy


LISTING = """
x.hsaco:\tfile format elf64-amdgpu

Disassembly of section .text:

0000000000001500 <k>:
; k():
; /src/k.s:3
\tglobal_load_b32 v1, v0, s[2:3]                 // 000000001500: DC520000 01020000
; /src/k.s:4
\tglobal_load_b32 v2, v0, s[2:3] offset:4        // 000000001508: DC520004 02020000
\ts_cmp_eq_u32 s2, 0                             // 000000001510: BF068002
\ts_cbranch_scc1 1                               // 000000001514: BFA20001 <k+0x1c>
\ts_waitcnt vmcnt(0)                             // 000000001518: BF8903F7
\ts_waitcnt vmcnt(1)                             // 00000000151C: BF8907F7
\tv_add_f32_e32 v3, v1, v1                       // 000000001520: 06060301
\tv_add_f32_e32 v3, v2, v3                       // 000000001524: 06060702
\ts_endpgm                                       // 000000001528: BFB00000
\ts_code_end                                     // 00000000152C: BF9F0000
"""


def test_a_canned_listing_through_the_wait_check():
    instructions = parse_listing(LISTING)
    assert [i.source for i in instructions[:2]] == ["/src/k.s:3", "/src/k.s:4"]
    found, reached = check_function("k", instructions, arch_info("gfx1100"))
    assert reached == 9                               # s_code_end is never reached
    [finding] = found
    assert finding.address == 0x1524 and finding.details["registers"] == "v2"
    assert finding.details["wait"] == ["s_waitcnt vmcnt(0)"]


def test_an_unreadable_code_line_is_an_error_not_a_dropped_instruction():
    from ktile.runtime.cocheck.llvm import ToolFailed
    with pytest.raises(ToolFailed, match="cannot read"):
        parse_listing("Disassembly of section .text:\n\ts_nop 0 garbled\n")


METADATA = """
Displaying notes found in: .note
    AMDGPU Metadata:
        ---
amdhsa.kernels:
  - .agpr_count:     44
    .args:
      - .address_space:  global
        .offset:         0
    .name:           'k one'
    .private_segment_fixed_size: 0
    .uses_dynamic_stack: false
    .vgpr_count:     300
  - .name:           k2
    .vgpr_spill_count: 3
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
...
"""


def test_metadata_keys_per_kernel_and_nested_lists_skipped():
    kernels = _kernels(_metadata_block(METADATA))
    assert kernels == [{".agpr_count": 44, ".name": "k one", ".private_segment_fixed_size": 0,
                        ".uses_dynamic_stack": False, ".vgpr_count": 300},
                       {".name": "k2", ".vgpr_spill_count": 3}]

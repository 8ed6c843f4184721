"""The AMD quality report on hand-made disassembly: access widths, the counts of a mix, the
loops of the control-flow graph and the hot-loop rule (ktile/runtime/toolchains/amd_quality).
No compiler needed; tests/tier1/test_amd_quality.py pins the reports of compiled examples."""
import pytest

from ktile.runtime.cocheck.archinfo import arch_info
from ktile.runtime.cocheck.disasm import Instruction
from ktile.runtime.toolchains import amd_quality as quality

BASE = 0x100
MFMA = "v_mfma_f32_16x16x32_bf16 v[0:3], v[4:7], v[8:11], v[0:3]"
WMMA = "v_wmma_f32_16x16x16_bf16 v[0:7], v[8:15], v[16:23], v[0:7]"


def listing(*lines: str) -> list[Instruction]:
    """Instructions 4 bytes apart from BASE; `-> N` in a branch is the index it jumps to."""
    code = []
    for index, text in enumerate(lines):
        if "->" in text:
            mnemonic, target = text.split("->")
            offset = (int(target) - index - 1) & 0xFFFF      # in words, after this one
            text = f"{mnemonic.strip()} {offset}"
        code.append(Instruction(BASE + 4 * index, text, 4))
    return code


def at(index: int) -> int:
    return BASE + 4 * index


def hot(body, arch="gfx1100"):
    return quality.hot_loop(quality.find_loops(body, arch_info(arch)), body)


# ---- widths and counts ----------------------------------------------------------------------

@pytest.mark.parametrize("mnemonic,bits", [
    ("ds_read_b128", 128), ("ds_load_b128", 128), ("ds_read_b64_tr_b16", 64),
    ("ds_read2_b64", 128), ("ds_load_2addr_b32", 64), ("ds_read_u16", 16),
    ("global_load_dwordx4", 128), ("global_load_b96", 96), ("buffer_load_ushort", 16),
    ("global_load_d16_hi_b16", 16), ("buffer_load_dword", 32), ("ds_write_b32", 32),
    ("s_waitcnt", None),
])
def test_access_widths(mnemonic, bits):
    assert quality.access_bits(mnemonic) == bits


@pytest.mark.parametrize("planted,narrow", [
    ("ds_load_b128 v[0:3], v8", 0), ("ds_read2_b64 v[0:3], v8 offset1:1", 0),
    ("ds_load_b64 v[0:1], v8", 1), ("ds_read_u16 v0, v8", 1), ("ds_load_2addr_b32 v[0:1], v8", 1),
])
def test_a_planted_narrow_lds_read_is_counted(planted, narrow):
    body = listing("ds_load_b128 v[4:7], v8", planted, WMMA, "s_cbranch_scc0 -> 0", "s_endpgm")
    mix = quality.mix_of(body, arch_info("gfx1100"))
    assert mix.hot_loop.narrow_lds_reads() == narrow == mix.narrow_lds_reads
    assert sum(mix.hot_loop.lds_reads.values()) == 2


def test_a_mix_counts_each_class():
    arch = arch_info("gfx950")
    mix = quality.count(listing(
        "global_load_dwordx4 v[0:3], v[4:5], off", "buffer_load_ushort v0, v1, s[0:3], 0 offen",
        "buffer_load_dword v1, s[4:7], 0 offen lds", "ds_read_b128 v[0:3], v8",
        "ds_write_b64 v8, v[0:1]", "global_store_dword v[4:5], v0, off", MFMA, MFMA,
        "s_waitcnt vmcnt(0)", "s_barrier", "v_add_f32_e32 v0, v0, v0"), arch)
    assert mix.instructions == 11 and mix.mma == {"v_mfma_f32_16x16x32_bf16": 2}
    assert mix.global_loads == {128: 1, 16: 1} and mix.lds_dma == 1
    assert mix.lds_reads == {128: 1} and mix.lds_writes == {64: 1}
    assert mix.global_stores == {32: 1} and mix.waits == 1 and mix.barriers == 1


# ---- loops ------------------------------------------------------------------------------------

def test_nested_loops_and_their_depths():
    body = listing(
        "global_load_dwordx4 v[0:3], v[4:5], off",      # 0
        "ds_read_b128 v[0:3], v8",                       # 1  outer loop
        "ds_read_b64 v[0:1], v8",                        # 2  inner loop
        MFMA,
        "s_waitcnt lgkmcnt(0)",
        "s_cbranch_scc0 -> 2",                           # 5
        "s_barrier",
        "s_cbranch_scc1 -> 1",                           # 7
        "ds_read_u16 v0, v1",                            # 8  a second, shallower loop
        "s_cbranch_scc1 -> 8",
        "s_endpgm")
    loops = quality.find_loops(body, arch_info("gfx942"))
    assert sorted((lp.header, lp.end, lp.depth) for lp in loops) == [
        (at(1), at(7), 1), (at(2), at(5), 2), (at(8), at(9), 1)]
    chosen = hot(body, "gfx942")
    assert chosen.header == at(2)
    mix = quality.count(chosen.instructions(body), arch_info("gfx942"))
    assert mix.mma == {"v_mfma_f32_16x16x32_bf16": 1} and mix.lds_reads == {64: 1}
    assert mix.waits == 1 and mix.barriers == 0 and mix.instructions == 4


def test_back_edges_to_one_header_are_one_loop_with_both_paths():
    """clang's layout of the attention K loop on gfx1100: one path of the loop ends in a
    back edge half way, the fast-path loads come after it, then a second back edge."""
    body = listing(
        "s_mov_b32 s0, 0",                               # 0
        WMMA,                                            # 1  loop header
        "s_cbranch_vccnz -> 5",                          # 2
        "buffer_load_u16 v0, v1, s[0:3], 0 offen",       # 3  edge-tile path
        "s_cbranch_scc0 -> 1",                           # 4  back edge 1
        "buffer_load_b128 v[0:3], v1, s[0:3], 0 offen",  # 5  fast path
        "s_cbranch_scc0 -> 1",                           # 6  back edge 2
        "s_endpgm")
    loops = quality.find_loops(body, arch_info("gfx1100"))
    assert [(lp.header, lp.back_edges, lp.depth) for lp in loops] == [(at(1), 2, 1)]
    mix = quality.count(loops[0].instructions(body), arch_info("gfx1100"))
    assert mix.global_loads == {16: 1, 128: 1}


def test_a_rotated_loop_is_headed_where_it_is_entered():
    body = listing(
        "s_branch -> 3",                                 # 0  into the loop's test
        WMMA,                                            # 1  body
        "ds_load_b128 v[0:3], v8",
        "s_cmp_lt_i32 s0, s1",                           # 3  header: entered here
        "s_cbranch_scc1 -> 1",                           # 4
        "s_endpgm")
    (loop,) = quality.find_loops(body, arch_info("gfx1100"))
    assert loop.header == at(3) and loop.addresses == frozenset(at(i) for i in range(1, 5))


def test_a_cold_block_branching_back_to_where_it_rejoins_is_no_loop():
    """A cold path laid out after s_endpgm that branches back up: an earlier target, but no
    cycle; the main loop between them stays depth 1."""
    body = listing(
        "s_cbranch_scc0 -> 7",                           # 0  to the cold block
        "s_mov_b32 s0, 0",                               # 1  rejoin point
        WMMA,                                            # 2  main loop
        "s_cbranch_scc0 -> 2",                           # 3
        "s_endpgm",                                      # 4
        "s_nop 0", "s_nop 0",
        "buffer_load_u16 v0, v1, s[0:3], 0 offen",       # 7  cold block
        "s_branch -> 1")                                 # 8  back to the rejoin point
    loops = quality.find_loops(body, arch_info("gfx1100"))
    assert [(lp.header, lp.depth) for lp in loops] == [(at(2), 1)]


def test_a_cold_edge_loop_nested_in_the_main_loop_is_not_the_hot_loop():
    body = listing(
        "ds_load_b128 v[0:3], v8",                       # 0  main loop
        WMMA,
        "buffer_load_u16 v0, v1, s[0:3], 0 offen",       # 2  edge loop
        "s_cbranch_vccnz -> 2",
        "s_cbranch_scc0 -> 0",                           # 4
        "s_endpgm")
    loops = quality.find_loops(body, arch_info("gfx1100"))
    assert max(lp.depth for lp in loops) == 2
    assert hot(body).header == at(0)


def test_an_outer_loop_around_the_main_loop_is_passed_over():
    body = listing(
        "s_mov_b32 s0, 0",                               # 0  outer (a loop over tiles)
        "ds_load_b128 v[0:3], v8",                       # 1  main loop
        WMMA,
        "s_cbranch_scc0 -> 1",                           # 3
        "buffer_store_b128 v[0:3], v1, s[0:3], 0 offen",
        "s_cbranch_scc1 -> 0",                           # 5
        "s_endpgm")
    assert hot(body).header == at(1)


def test_of_two_copies_of_the_main_loop_the_one_without_element_accesses_is_hot():
    body = listing(
        "s_cbranch_scc0 -> 5",                           # 0
        "buffer_load_u16 v0, v1, s[0:3], 0 offen",       # 1  edge copy, the longer one
        "buffer_load_u16 v2, v1, s[0:3], 0 offen offset:2",
        WMMA, "s_cbranch_scc0 -> 1",
        "buffer_load_b128 v[0:3], v1, s[0:3], 0 offen",  # 5  fast copy
        WMMA, "s_cbranch_scc0 -> 5",
        "s_endpgm")
    assert hot(body).header == at(5)


def test_without_mmas_the_hot_loop_holds_the_most_memory_operations():
    body = listing(
        "global_load_dwordx4 v[0:3], v[4:5], off",       # 0  main loop
        "ds_write_b128 v8, v[0:3]",
        "v_add_f32_e32 v9, v9, v9",                      # 2  a nested ALU loop
        "s_cbranch_vccnz -> 2",
        "s_cbranch_scc0 -> 0",
        "s_endpgm")
    assert hot(body, "gfx942").header == at(0)


def test_no_loop_no_hot_loop():
    body = listing("s_endpgm")
    assert hot(body) is None
    mix = quality.mix_of(body, arch_info("gfx1100"))
    assert mix.loop is None and "hot loop: none (no loop)" in mix.report_lines()[0]


def test_the_report_names_the_hot_loop_and_lists_its_mnemonics():
    body = listing("ds_load_b128 v[0:3], v8", WMMA, "s_cbranch_scc0 -> 0", "s_endpgm")
    lines = quality.mix_of(body, arch_info("gfx1100")).report_lines()
    assert "hot loop at 0x100 (depth 1; 1 loop in the kernel)" in lines[0]
    assert lines[-1].split() == ["hot", "loop", "ds_load_b128", "x1,",
                                 "v_wmma_f32_16x16x16_bf16", "x1"]


def test_a_global_to_lds_copy_outside_the_hot_loop_lines_up_as_zero_in_it():
    body = listing("buffer_load_dword v1, s[4:7], 0 offen lds",
                   "ds_read_b128 v[0:3], v8", MFMA, "s_cbranch_scc0 -> 1", "s_endpgm")
    lines = quality.mix_of(body, arch_info("gfx942")).report_lines()
    [row] = [line for line in lines if "global->LDS" in line]
    assert row.split() == ["global->LDS", "1", "0"]

"""The target tables: each loads, is consistent with itself, and states the facts we rely on."""
from __future__ import annotations

from pathlib import Path

import pytest

from ktile import dtypes
from ktile.errors import KernelError
from ktile.targets import NAMES, FragmentMap, Target, all_targets, get

TARGETS = {t.name: t for t in all_targets()}


def _tile_dims(target: Target, operand: str) -> tuple[int, int]:
    """(rows, cols) of the tile a fragment map covers: m×k for A, k×n for B, m×n for acc."""
    shape = target.mma_shape_for("bf16")
    return {"a": (shape.m, shape.k), "b": (shape.k, shape.n), "acc": (shape.m, shape.n)}[operand]


def _position(fragment: FragmentMap, row: int, col: int) -> tuple[int, int]:
    env = {"__builtins__": {}, "row": row, "col": col}
    return eval(fragment.lane, env), eval(fragment.slot, env)


def _positions(target: Target, fragment: FragmentMap) -> list[tuple[int, int]]:
    """Every (lane, slot) that holds an element of the tile, replicas included."""
    rows, cols = _tile_dims(target, fragment.operand)
    stride = target.wave_size // fragment.replicated
    out = []
    for row in range(rows):
        for col in range(cols):
            lane, slot = _position(fragment, row, col)
            out += [(lane + r * stride, slot) for r in range(fragment.replicated)]
    return out


def test_every_named_target_loads():
    assert set(TARGETS) == set(NAMES)
    for name, target in TARGETS.items():
        assert isinstance(target, Target)
        assert target.name == name
        assert get(name) is target


def test_unknown_target_is_a_kernel_error_naming_the_valid_ones():
    with pytest.raises(KernelError) as info:
        get("gfx9999")
    text = str(info.value)
    assert "gfx9999" in text
    for name in NAMES:
        assert name in text


@pytest.mark.parametrize("name, wave", [("gfx1100", 32), ("gfx1201", 32), ("gfx942", 64),
                                        ("gfx950", 64), ("sm_90a", 32)])
def test_wave_size(name, wave):
    assert get(name).wave_size == wave
    assert get(name).max_warps == 1024 // wave


@pytest.mark.parametrize("name", NAMES)
def test_fragments_cover_the_tile_exactly(name):
    target = get(name)
    assert sorted(f.operand for f in target.fragments) == ["a", "acc", "b"]
    for fragment in target.fragments:
        assert target.wave_size % fragment.replicated == 0
        rows, cols = _tile_dims(target, fragment.operand)
        held = rows * cols * fragment.replicated
        assert held % target.wave_size == 0, f"{name} {fragment.operand}: uneven split"
        slots = held // target.wave_size
        positions = _positions(target, fragment)
        assert all(0 <= lane < target.wave_size for lane, _ in positions)
        assert all(0 <= slot < slots for _, slot in positions)
        # no two elements share a register position, and every position holds one
        assert len(set(positions)) == len(positions) == target.wave_size * slots


@pytest.mark.parametrize("name", NAMES)
def test_fragments_describe_the_preferred_16bit_mma(name):
    target = get(name)
    bf16, fp16 = target.mma_shape_for("bf16"), target.mma_shape_for("fp16")
    assert bf16 is not None and fp16 is not None
    assert (bf16.m, bf16.n, bf16.k) == (fp16.m, fp16.n, fp16.k)
    assert bf16.acc == fp16.acc == "fp32"


# (target, operand, row, col) -> (lane, slot), read off the ISA / PTX fragment tables
SPOT_CHECKS = [
    ("gfx1100", "acc", 1, 0, (16, 0)),     # odd rows live in the upper half-wave
    ("gfx1100", "acc", 14, 5, (5, 7)),
    ("gfx1100", "a", 3, 9, (3, 9)),        # lane = row, slot = k; replica in lane 19
    ("gfx1201", "a", 3, 9, (19, 1)),       # k 8..15 in lanes 16..31
    ("gfx1201", "acc", 9, 2, (18, 1)),     # rows 8..15 in lanes 16..31
    ("gfx942", "a", 5, 6, (21, 2)),        # k = 4*(l//16) + r
    ("gfx942", "acc", 5, 3, (19, 1)),      # row = 4*(l//16) + r
    ("gfx950", "a", 5, 30, (53, 6)),       # k = 8*(l//16) + r
    ("gfx950", "acc", 15, 15, (63, 3)),
    ("sm_90a", "a", 9, 11, (5, 7)),        # a7: row groupID+8, col 2*tig+1+8
    ("sm_90a", "b", 10, 7, (29, 2)),       # b2: row 2*tig+8, col groupID
    ("sm_90a", "acc", 9, 3, (5, 3)),       # c3: row groupID+8, col 2*tig+1
]


@pytest.mark.parametrize("name, operand, row, col, expected", SPOT_CHECKS)
def test_fragment_spot_values(name, operand, row, col, expected):
    fragment = next(f for f in get(name).fragments if f.operand == operand)
    assert _position(fragment, row, col) == expected


def test_rdna3_operands_are_replicated_and_rdna4_are_not():
    replicated = {f.operand: f.replicated for f in get("gfx1100").fragments}
    assert replicated == {"a": 2, "b": 2, "acc": 1}
    assert all(f.replicated == 1 for f in get("gfx1201").fragments)


def test_fp8_mma():
    assert not get("gfx1100").has_fp8_mma
    assert get("gfx1201").has_fp8_mma
    assert get("gfx950").has_fp8_mma
    assert get("sm_90a").has_fp8_mma
    # gfx942's fp8 MFMA reads e4m3fnuz, not ktile's e4m3fn: recorded, never selected
    gfx942 = get("gfx942")
    assert not gfx942.has_fp8_mma and not gfx942.supports_dtype("fp8")
    assert any(s.dtype == "fp8_e4m3fnuz" for s in gfx942.mma_shapes)
    assert gfx942.mma_shape_for("fp8_e4m3fnuz").instruction == "v_mfma_f32_16x16x32_fp8_fp8"


@pytest.mark.parametrize("name", NAMES)
def test_dtypes_are_ktile_dtypes_and_mma_types_are_held(name):
    target = get(name)
    for dtype in target.dtypes:
        assert dtypes.lookup(dtype) is not None, dtype
    for shape in target.mma_shapes:
        assert target.supports_dtype(shape.acc)
        assert target.supports_dtype(shape.dtype) == (dtypes.lookup(shape.dtype) is not None)


@pytest.mark.parametrize("name, vm, lds", [("gfx1100", 63, 63), ("gfx1201", 63, 63),
                                           ("gfx942", 63, 15), ("gfx950", 63, 15),
                                           ("sm_90a", 63, None)])
def test_wait_counters(name, vm, lds):
    target = get(name)
    assert target.wait_counter("vm").max_count == vm
    counter = target.wait_counter("lds")
    assert (counter.max_count if counter else None) == lds
    for counter in target.wait_counters:
        assert "{n}" in counter.wait_asm
    names = {c.name for c in target.wait_counters}
    assert len(names) == len(target.wait_counters)


def test_gfx12_waits_are_split_counters():
    spelled = {c.name: c.wait_asm.format(n=0) for c in get("gfx1201").wait_counters}
    assert spelled == {"vm": "s_wait_loadcnt 0", "lds": "s_wait_dscnt 0"}
    assert get("gfx1100").wait_counter("lds").wait_asm.format(n=2) == "s_waitcnt lgkmcnt(2)"


@pytest.mark.parametrize("name, lds_bytes", [("gfx1100", 65536), ("gfx1201", 65536),
                                             ("gfx942", 65536), ("gfx950", 163840),
                                             ("sm_90a", 232448)])
def test_shared_memory(name, lds_bytes):
    assert get(name).lds_bytes == lds_bytes


@pytest.mark.parametrize("name, dma, width, async_copy", [
    ("gfx1100", False, 0, False), ("gfx1201", False, 0, False), ("gfx942", True, 4, True),
    ("gfx950", True, 16, True), ("sm_90a", False, 0, True)])
def test_async_copy_paths(name, dma, width, async_copy):
    target = get(name)
    assert (target.has_lds_dma, target.lds_dma_bytes_per_lane, target.has_async_copy) == \
        (dma, width, async_copy)
    # a DMA is an asynchronous path, and it completes on a counter the waits pass can drain
    if target.has_lds_dma:
        assert target.has_async_copy and target.wait_counter("vm") is not None


def test_registers():
    assert [(get(n).vgprs_per_lane, get(n).agprs_per_lane) for n in NAMES] == \
        [(256, 0), (256, 0), (256, 256), (256, 256), (255, 0)]
    # the register file of one SIMD / sub-partition holds a full-size wave at least once
    for target in all_targets():
        per_wave = (target.vgprs_per_lane + target.agprs_per_lane) * target.wave_size * 4
        assert target.register_file_bytes >= per_wave


def test_fast_operand_layout():
    assert {n: get(n).fast_lds_operand_layout for n in NAMES} == {
        "gfx1100": "row", "gfx1201": "row", "gfx942": "row", "gfx950": None, "sm_90a": None}


@pytest.mark.parametrize("name", NAMES)
def test_family_and_vendor(name):
    target = get(name)
    assert target.vendor in ("amd", "nvidia")
    assert target.family in ("rdna3", "rdna4", "cdna3", "cdna4", "hopper")
    assert (target.vendor == "nvidia") == (target.family == "hopper")
    assert (target.sgprs == 0) == (target.vendor == "nvidia")


# docs/targets.md's table, row by row, as the tables would print it
def _mma_cell(target: Target, dtype: str) -> str:
    shape = target.mma_shape_for(dtype)
    return f"{shape.m}×{shape.n}×{shape.k} `{shape.instruction}`" if shape else "—"


def _wait_cell(target: Target, name: str) -> str:
    counter = target.wait_counter(name)
    return f"`{counter.wait_asm}`, max {counter.max_count}" if counter else "—"


DOC_ROWS = {
    "vendor / family": lambda t: f"{t.vendor} / {t.family}",
    "wave size": lambda t: str(t.wave_size),
    "max threads per block": lambda t: str(t.max_threads_per_block),
    "shared memory per block (bytes)": lambda t: str(t.lds_bytes),
    "VGPRs / AGPRs per lane": lambda t: f"{t.vgprs_per_lane} / {t.agprs_per_lane}",
    "SGPRs per wave": lambda t: str(t.sgprs) if t.sgprs else "—",
    "register file per SIMD / SMSP (bytes)": lambda t: str(t.register_file_bytes),
    "bf16 MMA (preferred)": lambda t: _mma_cell(t, "bf16"),
    "fp16 MMA": lambda t: _mma_cell(t, "fp16"),
    "i8 MMA": lambda t: _mma_cell(t, "i8"),
    "fp8 MMA": lambda t: _mma_cell(t, "fp8"),
    "operand replication": lambda t: str(next(f.replicated for f in t.fragments
                                              if f.operand == "a")),
    "vm wait": lambda t: _wait_cell(t, "vm"),
    "lds wait": lambda t: _wait_cell(t, "lds"),
    "global→LDS DMA (bytes/lane)": lambda t: str(t.lds_dma_bytes_per_lane) if t.has_lds_dma
    else "—",
    "async global→shared": lambda t: "yes" if t.has_async_copy else "no",
    "fast 16-bit operand layout": lambda t: t.fast_lds_operand_layout or "both",
    "global index limit (extents; row / column strides, elements and bytes)":
        lambda t: str(t.global_index_limit) if t.global_index_limit else "—",
    "dtypes": lambda t: ", ".join(t.dtypes),
}


def _doc_table(heading: str) -> dict[str, dict[str, str]]:
    """The first markdown table under `heading` in docs/targets.md: {row label: {column: cell}}."""
    text = (Path(__file__).parents[2] / "docs" / "targets.md").read_text()
    lines = text.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    header, body = rows[0], rows[2:]
    return {r[0]: dict(zip(header[1:], r[1:])) for r in body}


def test_docs_table_matches_the_tables():
    table = _doc_table("## The five targets")
    assert set(table) == set(DOC_ROWS)
    for label, cell_of in DOC_ROWS.items():
        assert table[label] == {t.name: cell_of(t) for t in all_targets()}, label


def test_docs_fragment_table_matches_the_tables():
    table = _doc_table("## Fragment lane maps")
    for target in all_targets():
        row = next(cells for label, cells in table.items() if label.startswith(target.name))
        for fragment in target.fragments:
            name = fragment.operand.upper() if fragment.operand != "acc" else "acc"
            assert row[f"{name} lane"] == f"`{fragment.lane}`"
            assert row[f"{name} slot"] == f"`{fragment.slot}`"

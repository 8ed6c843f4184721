"""The emulated instruction layer stands in for exactly the device's: it shadows the same files,
states the same facts and MMA overloads, and its lane maps are the target tables' FragmentMaps."""
import re
import subprocess
from pathlib import Path

import pytest

from ktile import targets
from ktile.emulate import EMULATION_INCLUDE, find_host_compiler
from ktile.runtime.cache import INCLUDE_DIR

pytestmark = pytest.mark.tier2

FAMILIES = {t.name: t.family for t in targets.all_targets() if t.vendor == "amd"}
LAYER = {"ktile/amd/device.hpp", "ktile/amd/common/isa_lanes.hpp",
         "ktile/amd/common/isa_memory.hpp",
         *(f"ktile/amd/{family}/isa.hpp" for family in FAMILIES.values())}


def _text(root: Path, family: str) -> str:
    return (root / "ktile/amd" / family / "isa.hpp").read_text()


def test_the_emulation_shadows_exactly_the_instruction_layer():
    shadowing = (EMULATION_INCLUDE / "ktile/amd").rglob("*")
    shadows = {p.relative_to(EMULATION_INCLUDE).as_posix() for p in shadowing if p.is_file()}
    assert shadows == LAYER
    assert all((INCLUDE_DIR / path).is_file() for path in LAYER)


@pytest.mark.parametrize("family", sorted(set(FAMILIES.values())))
def test_facts_and_matrix_operands_are_the_devices(family):
    def facts(text):
        return sorted(re.findall(r"^constexpr [^;]*;", text, re.M) +
                      re.findall(r"^template <> struct mma_operand[^\n]*", text, re.M))

    def overloads(text):
        signature = r"void mma\((vec<[^>]*>& d, const vec<[^>]*>& a, const vec<[^>]*>& b)\)"
        return sorted(re.findall(signature, text))
    device, emulated = _text(INCLUDE_DIR, family), _text(EMULATION_INCLUDE, family)
    assert facts(emulated) == facts(device)
    assert overloads(emulated) == overloads(device) and overloads(device)


MAPS_PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include "ktile/emulation/lane_maps.hpp"
using namespace kt::emulation;
int main(int argc, char** argv) {
  const int k = atoi(argv[1]), per_lane = atoi(argv[2]), acc_per_lane = atoi(argv[3]), wave = atoi(argv[4]);
  const acc_order order = argv[5][0] == 'i' ? acc_order::interleaved : acc_order::blocked;
  for (int l = 0; l < wave; ++l) for (int e = 0; e < per_lane; ++e) {
    const matrix_element at = operand_element(k, per_lane, l, e);
    std::printf("operand %d %d %d %d\n", l, e, at.row, at.col);
  }
  for (int l = 0; l < wave; ++l) for (int e = 0; e < acc_per_lane; ++e) {
    const matrix_element at = accumulator_element(order, wave, acc_per_lane, l, e);
    std::printf("acc %d %d %d %d\n", l, e, at.row, at.col);
  }
}
"""


@pytest.fixture(scope="module")
def maps_program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lane_maps")
    (folder / "maps.cpp").write_text(MAPS_PROGRAM)
    subprocess.run([find_host_compiler(), "-std=c++17", "-I", str(EMULATION_INCLUDE),
                    str(folder / "maps.cpp"), "-o", str(folder / "maps")], check=True)
    return folder / "maps"


def _emulated_maps(program, target):
    """The emulator's maps for the target's bf16 instruction, with the parameters its isa.hpp uses."""
    text = _text(EMULATION_INCLUDE, target.family)
    found = re.search(r"void mma\(vec<float, (\d+)>& d, const vec<__bf16, (\d+)>& a.*\n"
                      r"\s*kt::emulation::multiply<acc_order::(\w+), (\d+)>", text)
    acc_per_lane, per_lane, order, k = found.groups()
    assert int(k) == target.mma_shape_for("bf16").k
    out = subprocess.run([str(program), k, per_lane, acc_per_lane, str(target.wave_size), order],
                         capture_output=True, text=True, check=True).stdout
    maps = {"operand": {}, "acc": {}}
    for line in out.splitlines():
        kind, lane, e, row, col = line.split()
        maps[kind][(int(lane), int(e))] = (int(row), int(col))
    return maps


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_lane_maps_are_the_target_tables(name, maps_program):
    """Each element of the table's A, B and accumulator tile is where the emulator reads or
    writes it: (lane, slot) from the table's formulas, every replica included."""
    target = targets.get(name)
    maps = _emulated_maps(maps_program, target)
    shape = target.mma_shape_for("bf16")
    for fragment in target.fragments:
        tiles = {"a": (shape.m, shape.k), "b": (shape.k, shape.n), "acc": (shape.m, shape.n)}
        rows, cols = tiles[fragment.operand]
        held_by = maps["acc"] if fragment.operand == "acc" else maps["operand"]
        stride = target.wave_size // fragment.replicated
        for row in range(rows):
            for col in range(cols):
                env = {"__builtins__": {}, "row": row, "col": col}
                lane, slot = eval(fragment.lane, env), eval(fragment.slot, env)
                for r in range(fragment.replicated):
                    held = held_by[(lane + r * stride, slot)]
                    # the emulator names an operand element (lane's row of A / column of B, k)
                    want = {"a": (row, col), "b": (col, row), "acc": (row, col)}[fragment.operand]
                    assert held == want, f"{name} {fragment.operand} ({row}, {col})"

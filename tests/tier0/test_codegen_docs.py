"""docs/cpp-api.md against the code: the table of which counter each asynchronous op completes
on agrees with the target tables, and every op → C++ row names a function the table emits."""
import re
from pathlib import Path

import pytest

from ktile.codegen.lower_compute import BINARY_FUNCTIONS, UNARY_FUNCTIONS
from ktile.ir import ops as kt
from ktile.targets import NAMES, get

DOC = (Path(__file__).resolve().parents[2] / "docs" / "cpp-api.md").read_text()


def _counter_rows() -> dict[str, list[str]]:
    section = DOC.split("### Which counter each asynchronous op completes on", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] in NAMES:
            rows[cells[0]] = cells[1:]
    return rows


ROWS = _counter_rows()


def test_every_target_has_a_row():
    assert sorted(ROWS) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_copy_async_completes_on_the_vm_counter_where_there_is_an_async_path(name):
    target, copy_cell = get(name), ROWS[name][0]
    vm = target.wait_counter("vm")
    if target.has_async_copy:
        assert copy_cell.startswith(f"`{vm.isa_name}`")
        assert ("DMA" in copy_cell) == target.has_lds_dma
    else:
        assert copy_cell.startswith("no asynchronous path")


@pytest.mark.parametrize("name", NAMES)
def test_lds_load_completes_on_the_lds_counter_or_none(name):
    lds = get(name).wait_counter("lds")
    cell = ROWS[name][1]
    assert cell.startswith(f"`{lds.isa_name}`" if lds else "none")


@pytest.mark.parametrize("name", NAMES)
def test_the_wait_spelling_is_the_tables_wait_asm(name):
    cell = ROWS[name][2]
    spelled = [f"`{c.wait_asm.format(n=c.name.upper())}`" for c in get(name).wait_counters]
    assert cell == ", ".join(spelled)


def test_every_elementwise_function_is_documented():
    for fn in (*kt.UNARY_FNS, *kt.BINARY_FNS):
        cpp = {**UNARY_FUNCTIONS, **BINARY_FUNCTIONS}[fn]
        plain = cpp.removeprefix("kt::")
        assert re.search(rf"`kt::[^`]*\b{plain}\b|`{cpp}`", DOC), cpp

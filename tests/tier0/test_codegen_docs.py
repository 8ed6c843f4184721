"""docs/cpp-api.md against the code: the table of which counter each asynchronous op completes
on agrees with the target tables, and every op → C++ row names a function the table emits.
Elementwise functions are documented once, in docs/language.md's function table; cpp-api.md
refers to it and lists only the functions a kernel spells as an operator."""
import re
from pathlib import Path

import pytest

from ktile.codegen.lower_compute import BINARY_FUNCTIONS, UNARY_FUNCTIONS
from ktile.ir import elementwise
from ktile.ir import ops as kt
from ktile.targets import NAMES, get

DOCS = Path(__file__).resolve().parents[2] / "docs"
DOC = (DOCS / "cpp-api.md").read_text()
LANGUAGE = (DOCS / "language.md").read_text()


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


def _language_functions() -> set[str]:
    """The hk names in docs/language.md's function table: its first column's cells read
    `hk.exp exp2 log`, one name per word."""
    table = LANGUAGE.split("| function | takes | computes |", 1)[1].split("\n\n", 1)[0]
    names = set()
    for line in table.splitlines():
        cell = line.strip().strip("|").split("|")[0].strip()
        if cell.startswith("`hk."):
            names.update(cell.strip("`").removeprefix("hk.").split())
    return names


def _lowers_to_its_hk_name(row) -> bool:
    """hk.<name> lowers to kt::<name>: language.md's table documents its C++ name too."""
    return row.hk is not None and row.cpp == f"kt::{row.hk}"


def test_language_md_lists_every_named_function_once_and_no_other():
    assert _language_functions() == {f.hk for f in elementwise.FUNCTIONS if f.hk}


def test_cpp_api_refers_elementwise_functions_to_language_md():
    assert "language.md's function table" in DOC and "(language.md#operations)" in DOC


@pytest.mark.parametrize("row", [f for f in elementwise.FUNCTIONS if not _lowers_to_its_hk_name(f)],
                         ids=lambda f: f.name)
def test_a_function_language_md_does_not_name_is_in_cpp_api(row):
    cpp = {**UNARY_FUNCTIONS, **BINARY_FUNCTIONS}[row.name]
    plain = cpp.removeprefix("kt::")
    assert re.search(rf"`kt::[^`]*\b{plain}\b|`{cpp}`", DOC), cpp


def test_every_function_of_the_dialect_is_a_row():
    assert set(kt.UNARY_FNS) | set(kt.BINARY_FNS) == set(elementwise.BY_NAME)

"""C++ names for SSA values: the names the IR printer gives them, so the IR and the C++ read
side by side.

    %7 (a numbered value)          → v7
    %acc (a value with a name hint) → v_acc

The names come from printing the whole module once, as `ktile.ir.printing.module_text` does
(custom form), so they match `trace().dump()` and `ktile-opt` output. Numbering restarts in
each function, as the printer's does; the C++ functions are separate scopes too.
"""
from __future__ import annotations

import io
import re

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.printer import Printer

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
ARRIVALS = "kt_arrivals"   # the kernel's kt::arrivals (values are v…, so kt_… never clash)


def tensor_map_name(index: int) -> str:
    """The kernel parameter holding tensor map `index` (kt.tensor_maps)."""
    return f"kt_map{index}"


def value_names(module: ModuleOp) -> dict[SSAValue, str]:
    """Every SSA value of `module` → its C++ variable name."""
    printer = Printer(stream=io.StringIO())
    printer.print_op(module)
    # The printer keeps the names it gave in `_ssa_values`; reading them (rather than
    # renumbering ourselves) is what guarantees the C++ uses the numbers a reader sees.
    printed: dict[SSAValue, str] = printer._ssa_values  # noqa: SLF001
    names: dict[SSAValue, str] = {}
    taken: set[str] = set()
    for value, name in printed.items():
        names[value] = _unique(cpp_name(name), taken) if not name.isdigit() else cpp_name(name)
    return names


def cpp_name(printed: str) -> str:
    """The C++ identifier of a printed SSA name (without its `%`)."""
    if printed.isdigit():
        return f"v{printed}"
    return "v_" + _NOT_IDENTIFIER.sub("_", printed)


def _unique(name: str, taken: set[str]) -> str:
    """Hinted names may collide once sanitized (`%a.b`, `%a_b`); numbered ones never do."""
    candidate, n = name, 1
    while candidate in taken:
        candidate, n = f"{name}_{n}", n + 1
    taken.add(candidate)
    return candidate

"""C++ names for SSA values: the names the IR printer gives them, so the IR and the C++ read
side by side.

    %7 (a numbered value)          → v7
    %acc (a value with a name hint) → v_acc

The names are the ones xDSL's printer gives (`ktile.ir.printing.module_text`, custom form), so
they match `trace().dump()` and `ktile-opt` output, but they are computed by a walk of the
module rather than by printing it (printing cost most of the translation): the printer names
a value where it is defined, in print order: an op's results, then each block's arguments and
ops, region by region. Numbering restarts in each function (an isolated op), as the printer's
does; the C++ functions are separate scopes too. tests/tier0/test_verification_speed_paths.py
pins that the walk and the printer agree.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import IsolatedFromAbove

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
ARRIVALS = "kt_arrivals"   # the kernel's kt::arrivals (values are v…, so kt_… never clash)


def tensor_map_name(index: int) -> str:
    """The kernel parameter holding tensor map `index` (kt.tensor_maps)."""
    return f"kt_map{index}"


def value_names(module: ModuleOp) -> dict[SSAValue, str]:
    """Every SSA value of `module` → its C++ variable name."""
    printed: dict[SSAValue, str] = {}
    _name_op(module, _Scope(), printed)
    names: dict[SSAValue, str] = {}
    taken: set[str] = set()
    for value, name in printed.items():
        names[value] = _unique(cpp_name(name), taken) if not name.isdigit() else cpp_name(name)
    return names


@dataclass
class _Scope:
    """The printer's naming state in one isolated scope: the next number, and how many
    values took each name hint (`%acc`, `%acc_1`, ...)."""
    next_number: int = 0
    hints: dict[str, int] = field(default_factory=dict)

    def inner(self) -> _Scope:
        return _Scope(self.next_number, dict(self.hints))

    def name(self, value: SSAValue) -> str:
        hint = value.name_hint
        if not hint:
            self.next_number += 1
            return str(self.next_number - 1)
        count = self.hints.get(hint, 0)
        self.hints[hint] = count + 1
        return f"{hint}_{count}" if count else hint


def _name_op(op: Operation, scope: _Scope, printed: dict[SSAValue, str]) -> None:
    """Names `op`'s results, then what its regions define, as the printer would."""
    for result in op.results:
        printed[result] = scope.name(result)
    if op.regions and op.has_trait(IsolatedFromAbove):
        scope = scope.inner()
    for region in op.regions:
        for block in region.blocks:
            for arg in block.args:
                printed[arg] = scope.name(arg)
            for inner in block.ops:
                _name_op(inner, scope, printed)


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

"""IR → C++: a checked kt module translated against ktile's tile headers (docs/cpp-api.md).

    from ktile.codegen import translate
    source = translate(module, target)      # target: a Target, an arch name, or None (the
                                            # module's kt.target)

One C++ line per op, values named as the IR printer names them (%7 → v7), `#line` directives
back to the kernel's Python lines, and after every wait a `kt::bind` of each register tile it
waited for (trap 1). The op → C++ table is `lowering.LOWERINGS`, one file per op family.
"""
from __future__ import annotations

from .program import header_path, translate, translate_lines
from .writer import CppLine

__all__ = ["CppLine", "header_path", "translate", "translate_lines"]

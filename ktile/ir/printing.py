"""Module ↔ text, in the custom or the generic form, with or without locations."""
from __future__ import annotations

import io

from xdsl.printer import Printer


def module_text(module, generic: bool = False, locations: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic, print_debuginfo=locations).print_op(module)
    return out.getvalue() + "\n"


def parse_module(text: str):
    from xdsl.parser import Parser

    from .dialect import shared_context
    return Parser(shared_context(), text).parse_module()

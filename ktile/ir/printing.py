"""Module ↔ text, in the custom or the generic form, with or without locations."""
from __future__ import annotations

import io

from xdsl.printer import Printer

from ..errors import KernelError, SourceLoc


def module_text(module, generic: bool = False, locations: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic, print_debuginfo=locations).print_op(module)
    return out.getvalue() + "\n"


def parse_module(text: str, name: str = "<text>", verify: bool = False):
    """The module `text` holds (custom or generic form). Text that does not parse is a
    KernelError at `name`:line; with `verify`, so is IR that fails verification (the kt ops'
    relations, ktile/ir/verifiers.py, and xDSL's own checks)."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError, VerifyException

    from .dialect import shared_context
    from .query import verify_module
    try:
        module = Parser(shared_context(), text, name).parse_module()
    except ParseError as err:
        raise syntax_error(err) from None
    except VerifyException as err:  # an attribute refused while it was built
        raise KernelError(f"{name}: {str(err).strip()}") from None
    if verify:
        verify_module(module)
    return module


def syntax_error(err) -> KernelError:
    """A ParseError as the author reads it: file:line, what is wrong, the line and a caret."""
    where = err.span.get_location()
    shown = str(err).split("\n")[1:-2]  # the source line and its caret, without the message
    context = "\n".join(f"    {line}" for line in shown)
    return KernelError(f"{err.msg}\n{context}".rstrip(),
                       loc=SourceLoc(where.file, where.line, where.col))

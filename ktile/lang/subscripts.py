"""Subscripts of a kernel's Python lists by device values: `bufs[k % 2]`.

Python indexes a list only by an int (through `__index__`), so a list of shared tiles indexed
by a traced integer cannot pick its tile by itself. The kernel rewrite turns each subscript it
reads, `c[i]`, into `__kt_subscript(c, i)`: a list or tuple of shared tiles indexed by a device
integer becomes a tile chosen on the device (`shared_ops.select_shared`); anything else is
indexed as Python would (`c[i]`), so globals, tiles, dicts and Python lists keep their meaning.
Slices and stores (`g[idx] = v`) are left as written.
"""
from __future__ import annotations

import ast

from .shared_ops import is_shared_list, select_shared
from .values import Scalar

HELPER = "__kt_subscript"


def subscript(container, index):
    """`container[index]`, except a list of shared tiles indexed by a device integer."""
    if isinstance(index, Scalar) and is_shared_list(container):
        return select_shared(container, index)
    return container[index]


class SubscriptRewriter(ast.NodeTransformer):
    """`c[i]` read in the kernel → `__kt_subscript(c, i)`, at the subscript's own position.

    Parameter annotations and defaults are left alone: they are evaluated once, when the
    rewritten function is defined, and `hk.Tensor[hk.bf16]` is no list of shared tiles."""

    def visit_arguments(self, node: ast.arguments) -> ast.arguments:
        return node

    def visit_Subscript(self, node: ast.Subscript):
        self.generic_visit(node)
        # a tuple or a literal is never a device integer: `g[0, r]` keeps Python's own subscript
        if not isinstance(node.ctx, ast.Load) or isinstance(node.slice, _NEVER_DEVICE) \
                or _has_slice(node.slice):
            return node
        call = ast.Call(func=ast.Name(id=HELPER, ctx=ast.Load()),
                        args=[node.value, node.slice], keywords=[])
        return ast.copy_location(call, node)


_NEVER_DEVICE = (ast.Tuple, ast.Constant, ast.Slice)


def reads_subscripts(body_source: str) -> bool:
    """Whether a kernel body's source may read a subscript: without a `[` there is nothing to
    rewrite, and the rewrite skips its walk of the tree."""
    return "[" in body_source


def _has_slice(index: ast.expr) -> bool:
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(p, ast.Slice) for p in parts)


HELPERS = {HELPER: subscript}

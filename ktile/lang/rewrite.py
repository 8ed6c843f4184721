"""The control-flow rewrite: a kernel's `for`/`if`/`while` statements become calls.

    for k in range(n):            def __kt_for_body_1(k, __kt_vals):
        acc += f(k)         →         (acc,) = __kt_vals
                                      acc += f(k)
                                      return (acc,)
                                  (acc,) = __kt_for((n,), False, __kt_for_body_1,
                                                    __kt_capture(locals(), ('acc',)), ('acc',))

`ktile.lang.control` then decides at trace time: Python values run the body in Python (the
loop unrolls, the branch is chosen); device values trace it into scf. Line numbers are kept,
so every op and error still points at the author's line.
"""
from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from typing import Callable

from ..errors import KernelError, SourceLoc
from .sources import source_lines
from .subscripts import SubscriptRewriter, reads_subscripts

_counter = itertools.count(1)


class _AssignedNames(ast.NodeVisitor):
    """Names a statement list binds, not looking into nested functions or comprehensions."""

    def __init__(self):
        self.names: list[str] = []

    def _add(self, name: str) -> None:
        if not name.startswith("__kt") and name not in self.names:
            self.names.append(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node) -> None:
        return None

    def visit_ListComp(self, node) -> None:
        return None

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp


def assigned_names(stmts: list[ast.stmt], exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
    finder = _AssignedNames()
    for stmt in stmts:
        finder.visit(stmt)
    return tuple(n for n in finder.names if n not in exclude)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _has_jump(stmts: list[ast.stmt]) -> bool:
    """break/continue/return that leave this body (not those of nested loops or functions)."""
    return any(_jumps(stmt, in_loop=False) for stmt in stmts)


def _jumps(node: ast.AST, in_loop: bool) -> bool:
    if isinstance(node, _SCOPES):
        return False
    if isinstance(node, ast.Return):
        return True
    if isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
        return True
    nested = in_loop or isinstance(node, (ast.For, ast.While))
    return any(_jumps(child, nested) for child in ast.iter_child_nodes(node))


def _is_range_call(node: ast.expr) -> tuple[bool, bool]:
    """(is a range call, is hk.range / ktile.range which forces a runtime loop)."""
    if not isinstance(node, ast.Call):
        return False, False
    if isinstance(node.func, ast.Name) and node.func.id == "range":
        return True, False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "range":
        return True, True
    return False, False


def _name(id_: str, ctx=None) -> ast.Name:
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _tuple_of_names(names: tuple[str, ...], ctx) -> ast.Tuple:
    return ast.Tuple(elts=[_name(n, ctx) for n in names], ctx=ctx)


def _str_tuple(names: tuple[str, ...]) -> ast.Tuple:
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def _capture(names: tuple[str, ...]) -> ast.Call:
    locals_call = ast.Call(func=_name("locals"), args=[], keywords=[])
    return ast.Call(func=_name("__kt_capture"), args=[locals_call, _str_tuple(names)], keywords=[])


def _body_fn(fname: str, params: list[str], names: tuple[str, ...], body: list[ast.stmt]):
    unpack = ast.Assign(targets=[_tuple_of_names(names, ast.Store())], value=_name("__kt_vals"))
    ret = ast.Return(value=_tuple_of_names(names, ast.Load()))
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in params + ["__kt_vals"]],
                         kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.FunctionDef(name=fname, args=args, body=[unpack, *body, ret], decorator_list=[],
                           returns=None, type_params=[])


def _rebound_by(call: ast.expr) -> list[str]:
    """Names an hk-dsl in-place call updates: the receiver of `t.exp_()` / `t.fill_(v)` (a
    method ending in one `_`) and the name given as `into=`. Tiles are SSA values here, so the
    call returns the new value and the statement rebinds these names to it."""
    if not isinstance(call, ast.Call):
        return []
    names = [kw.value.id for kw in call.keywords
             if kw.arg == "into" and isinstance(kw.value, ast.Name)]
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
            f.attr.endswith("_") and not f.attr.endswith("__") and not f.attr.startswith("_"):
        names.append(f.value.id)
    return [n for i, n in enumerate(names) if n not in names[:i]]


def _into_target(call: ast.expr) -> ast.expr | None:
    """The `into=` expression of a call when it is not a plain name (refused: the rewrite can
    rebind only names)."""
    if not isinstance(call, ast.Call):
        return None
    return next((kw.value for kw in call.keywords
                 if kw.arg == "into" and not isinstance(kw.value, ast.Name)), None)


class ControlFlowRewriter(ast.NodeTransformer):
    def __init__(self, filename: str):
        self.filename = filename

    def visit_Expr(self, node: ast.Expr):
        """`t.exp_()`, `hk.mma(..., into=acc)` as statements become `t = t.exp_()`, `acc =
        hk.mma(..., into=acc)`: hk's in-place updates as rebinding (see `_rebound_by`)."""
        self._check_into(node.value)
        names = _rebound_by(node.value)
        if not names:
            return node
        return ast.copy_location(ast.Assign(targets=[_name(n, ast.Store()) for n in names],
                                            value=node.value), node)

    def visit_Assign(self, node: ast.Assign):
        """`y = t.exp_()` also rebinds t."""
        self._check_into(node.value)
        names = [n for n in _rebound_by(node.value)
                 if not any(isinstance(t, ast.Name) and t.id == n for t in node.targets)]
        node.targets = [*node.targets, *(_name(n, ast.Store()) for n in names)]
        return node

    def _check_into(self, value: ast.expr) -> None:
        target = _into_target(value)
        if target is not None:
            self._fail(value, "into= names a variable in ktile (it rebinds that name)",
                       hint="assign the value to a name first, or drop into= and assign the "
                            "result")

    def _fail(self, node: ast.AST, message: str, hint: str | None = None):
        raise KernelError(message, loc=SourceLoc(self.filename, node.lineno), hint=hint)

    def visit_For(self, node: ast.For):
        self.generic_visit(node)
        is_range, forced = _is_range_call(node.iter)
        if not is_range:
            return node
        if _has_jump(node.body) or node.orelse:
            if forced:
                self._fail(node, "a runtime loop (hk.range) cannot use break, continue, return "
                                 "or else", hint="use `while` with a condition instead")
            node.iter = ast.Call(func=_name("__kt_static_range"), args=node.iter.args, keywords=[])
            return node
        if not isinstance(node.target, ast.Name):
            self._fail(node, "a range loop's variable must be a single name")
        if any(kw.arg != "unroll" or not forced for kw in node.iter.keywords):
            self._fail(node, "range() takes positional arguments only (hk.range also unroll=)")
        node.iter.keywords = []  # hk's unroll= is a hint: the C++ compiler unrolls itself
        names = assigned_names(node.body, exclude=(node.target.id,))
        fname = f"__kt_for_body_{next(_counter)}"
        fn = _body_fn(fname, [node.target.id], names, node.body)
        call = ast.Call(func=_name("__kt_for"), args=[
            ast.Tuple(elts=list(node.iter.args), ctx=ast.Load()), ast.Constant(forced),
            _name(fname), _capture(names), _str_tuple(names)], keywords=[])
        return self._emit(node, fn, names, call)

    def visit_If(self, node: ast.If):
        self.generic_visit(node)
        names = assigned_names(node.body + node.orelse)
        k = next(_counter)
        then_fn = _body_fn(f"__kt_then_{k}", [], names, node.body or [ast.Pass()])
        else_fn = _body_fn(f"__kt_else_{k}", [], names, node.orelse or [ast.Pass()])
        if _has_jump(node.body + node.orelse):
            return node  # branches that return or break stay Python branches
        call = ast.Call(func=_name("__kt_if"), args=[
            node.test, _name(then_fn.name), _name(else_fn.name), _capture(names),
            _str_tuple(names)], keywords=[])
        out = self._emit(node, [then_fn, else_fn], names, call)
        return out

    def visit_While(self, node: ast.While):
        self.generic_visit(node)
        if _has_jump(node.body) or node.orelse:
            return node
        names = assigned_names(node.body)
        k = next(_counter)
        cond_fn = _body_fn(f"__kt_cond_{k}", [], names, [])
        cond_fn.body[-1] = ast.Return(value=node.test)
        body_fn = _body_fn(f"__kt_while_body_{k}", [], names, node.body)
        call = ast.Call(func=_name("__kt_while"), args=[
            _name(cond_fn.name), _name(body_fn.name), _capture(names), _str_tuple(names)],
            keywords=[])
        return self._emit(node, [cond_fn, body_fn], names, call)

    def _emit(self, node: ast.stmt, fns, names: tuple[str, ...], call: ast.Call):
        fns = fns if isinstance(fns, list) else [fns]
        if names:
            assign = ast.Assign(targets=[_tuple_of_names(names, ast.Store())], value=call)
        else:
            assign = ast.Expr(value=call)
        out = [*fns, assign]
        for new in out:
            _locate(new, node)
        return out


def _locate(new: ast.AST, old: ast.stmt) -> None:
    """Generated nodes take the statement's line; the user's own statements keep theirs."""
    for n in ast.walk(new):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            n.lineno, n.col_offset = old.lineno, old.col_offset
            n.end_lineno, n.end_col_offset = old.end_lineno, old.end_col_offset


def rewrite_function(fn: Callable, extra_globals: dict) -> Callable:
    """`fn` with its control flow rewritten, compiled against its own globals and closure.
    The rewrite depends only on `fn`'s code (source, file, free variables): it is compiled once
    per code object, and a kernel defined anew by the same `def` only binds its namespace."""
    code = _REWRITTEN.get(fn.__code__)
    if code is None:
        code = _REWRITTEN[fn.__code__] = _rewritten_code(fn)
    namespace = dict(fn.__globals__)
    namespace.update(extra_globals)
    exec(code, namespace)
    factory = namespace["__kt_make"]
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    rewritten = factory(*cells)
    rewritten.__name__, rewritten.__qualname__ = fn.__name__, fn.__qualname__
    return rewritten


_REWRITTEN: dict = {}


def _rewritten_code(fn: Callable):
    """The module code defining `__kt_make(<free vars>)`, which returns `fn` rewritten."""
    try:
        lines, first = source_lines(fn)
    except (OSError, TypeError) as exc:
        raise KernelError(f"the source of kernel '{fn.__name__}' is not available ({exc})",
                          hint="define kernels in a .py file, not in an interactive prompt") from exc
    filename = inspect.getsourcefile(fn) or "<unknown>"
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source)
    ast.increment_lineno(tree, first - 1)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise KernelError(f"@kernel decorates a function, got {type(fdef).__name__}")
    fdef.decorator_list = []
    # under its own name the function would be a local of the wrapper below, and a call of
    # that name in its body (an @hk.func calling itself) would bypass the decorator
    fdef.name = f"__kt_rewritten_{fdef.name}"
    body_source = "".join(lines[fdef.body[0].lineno - first:])
    fdef = ControlFlowRewriter(filename).visit(fdef)
    if reads_subscripts(body_source):   # bufs[k % 2]: a list of shared tiles, device index
        fdef = SubscriptRewriter().visit(fdef)
    tree.body = [_closure_wrapper(fn, fdef)]
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


def _closure_wrapper(fn: Callable, fdef: ast.FunctionDef) -> ast.FunctionDef:
    """def __kt_make(<free vars>): <fdef>; return fdef — so closures keep working."""
    freevars = list(fn.__code__.co_freevars)
    args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=v) for v in freevars], kwonlyargs=[],
                         kw_defaults=[], defaults=[])
    return ast.FunctionDef(name="__kt_make", args=args,
                           body=[fdef, ast.Return(value=_name(fdef.name))], decorator_list=[],
                           returns=None, type_params=[])

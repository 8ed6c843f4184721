"""The elementwise functions of kt.unary and kt.binary: one row each, the only place a function
is defined.

A row holds the function's name (the ops' `fn` property), its arity, its dtype rule, what it
computes (numpy semantics, which the interpreter runs and Python constants fold with), the
C++ header function it lowers to, and how a kernel author writes it. Everything else is
derived from this table: `hk.<name>` and `hk.math.<name>` (ktile.lang.elementwise), the
`t.<name>()` methods of tiles and vectors (ktile.lang.hk_methods), the dialect's name lists and the verifiers' rules (ktile.ir.ops), the interpreter's functions
(ktile.interpret.ops_elementwise) and the translation's names (ktile.codegen.lower_compute).
The C++ side keeps one line per row in ktile/include/ktile/common/elementwise_ops.hpp; a
test checks that the two lists agree.

Semantics are written against the numpy module passed in (`np`), so that reading the table
(as `import ktile` does) loads no numpy. Float math is float32: the interpreter hands a
float32 array or scalar and rounds the result to the result's dtype; integer math gets int64.

Adding a function: a row here, a line in common/elementwise_ops.hpp (and a math shim line
per vendor only if it needs an intrinsic the shims lack), and its line in docs/language.md's
function table, which also documents its C++ name (hk.expm1 was added so: three files).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

# The dtype rules. Unary: "float" (float tiles only), "number" (float or integer), "mask"
# (i1). Binary: "arithmetic" (numbers, mixed ones promoted), "compare" (numbers to a mask),
# "bitwise" (integers or masks).
UNARY_RULES = ("float", "number", "mask")
BINARY_RULES = ("arithmetic", "compare", "bitwise")


@dataclass(frozen=True)
class Function:
    """One elementwise function. `floating` / `integer` / `logical`: (np, *operands) -> the
    result in that domain, None where the function has no meaning there (a binary function
    without integer semantics computes in float32 whatever its operands: pow). `hk`: the
    name a kernel calls it by (`hk.<hk>`, `hk.math.<hk>`), None when it is spelled as an
    operator only (`spelled`)."""
    name: str
    arity: int
    rule: str
    cpp: str
    floating: Callable | None = None
    integer: Callable | None = None
    logical: Callable | None = None
    hk: str | None = None
    spelled: str = ""

    def fold(self, *values: float) -> float:
        """The function of Python numbers, in double precision (a constant of the kernel)."""
        import numpy as np
        with np.errstate(all="ignore"):
            return float(self.floating(np, *(np.float64(v) for v in values)))


def _float_unary(name: str, floating: Callable, *, cpp: str | None = None) -> Function:
    """A float-only function, called as hk.<name>(x)."""
    return Function(name, 1, "float", cpp or f"kt::{name}", floating=floating, hk=name,
                    spelled=f"hk.{name}(x)")


def _sigmoid(np, x):
    """e = exp(-|x|), r = 1 / (1 + e); r for x >= 0, e·r below (each step rounded): the
    denominator stays in [1, 2], so nothing overflows (sigmoid(-100) is e^-100, not 0) and the
    targets divide with their 1-ulp reciprocal (within 2^-21 relative of this)."""
    e = np.exp(-np.abs(x))
    r = 1 / (1 + e)
    return np.where(x >= 0, r, e * r)[()]


_ERF = None


def _erf_double(np, x):
    """erf of float64 values, element by element (math.erf): about 1 ulp of a double."""
    global _ERF
    if _ERF is None:
        _ERF = np.frompyfunc(math.erf, 1, 1)
    return np.asarray(_ERF(np.asarray(x, np.float64)), np.float64)


def _gelu(np, x):
    """The exact (erf) form, as torch's default gelu: erf(x / sqrt 2) evaluated in double and
    rounded once to float32, the rest in float32 as a float32 kernel computes it. The targets
    compute erf in float32 (2 ulp): within |x|·2^-22 of this."""
    x32 = np.asarray(x, np.float32)
    erf = _erf_double(np, x32.astype(np.float64) * math.sqrt(0.5)).astype(np.float32)
    return np.float32(0.5) * x32 * (np.float32(1) + erf)


# sin and cos reduce x by k·pi/2 with k = rint(x·2/pi) exact in a double: |x| < 2^52·pi/2.
# Beyond that they are NaN on every target (ktile/include/ktile/common/math_double.hpp: a
# correct reduction of larger floats needs Payne-Hanek's table, which costs a local array).
SIN_COS_RANGE = 6999999976046592.0   # 7.0e15f, the float the headers compare |x| with


def _sin_cos(name: str) -> Callable:
    """np.sin or np.cos evaluated in double and rounded once (the headers' result, correctly
    rounded), NaN where |x| >= SIN_COS_RANGE."""
    def semantics(np, x):
        wide = np.asarray(x, np.float64)
        with np.errstate(invalid="ignore"):
            value = np.where(np.abs(wide) < SIN_COS_RANGE, getattr(np, name)(wide), np.nan)
        return value.astype(np.result_type(x))[()]
    return semantics


def _int_div(np, x, y):
    """Integer division truncating toward zero, as C++ does."""
    q = np.floor_divide(x, y)
    return q + ((q * y != x) & ((x < 0) != (y < 0)))


def _arithmetic(name: str, floating, integer, spelled: str, hk: str | None = None) -> Function:
    return Function(name, 2, "arithmetic", f"kt::{name}", floating=floating, integer=integer,
                    hk=hk, spelled=spelled)


def _compare(name: str, compare, operator: str) -> Function:
    return Function(name, 2, "compare", f"kt::{name}", floating=compare, integer=compare,
                    spelled=f"x {operator} y")


FUNCTIONS: tuple[Function, ...] = (
    # ---- unary ---------------------------------------------------------------------------
    Function("neg", 1, "number", "kt::neg", floating=lambda np, x: np.negative(x),
             integer=lambda np, x: np.negative(x), spelled="-x"),
    Function("not", 1, "mask", "kt::logical_not", logical=lambda np, x: np.logical_not(x),
             spelled="~mask"),
    Function("abs", 1, "number", "kt::abs", floating=lambda np, x: np.abs(x),
             integer=lambda np, x: np.abs(x), hk="abs", spelled="hk.abs(x)"),
    Function("relu", 1, "number", "kt::relu", floating=lambda np, x: np.maximum(x, 0),
             integer=lambda np, x: np.maximum(x, 0), hk="relu", spelled="hk.relu(x)"),
    _float_unary("exp", lambda np, x: np.exp(x)),
    _float_unary("exp2", lambda np, x: np.exp2(x)),
    _float_unary("exp2_fast", lambda np, x: np.exp2(x)),   # the targets: sm_90a's one MUFU.EX2
                 # (ex2.approx.ftz), results under 2^-126 flushed to 0 (docs/language.md)
    _float_unary("expm1", lambda np, x:   # in double, rounded once, as the headers
                 np.expm1(np.asarray(x, np.float64)).astype(np.result_type(x))[()]),
    _float_unary("log", lambda np, x: np.log(x)),
    _float_unary("log2", lambda np, x: np.log2(x)),
    _float_unary("sqrt", lambda np, x: np.sqrt(x)),
    _float_unary("rsqrt", lambda np, x: 1 / np.sqrt(x)),   # two IEEE roundings
    _float_unary("rsqrt_fast", lambda np, x: 1 / np.sqrt(x)),   # the targets: the hardware's
                 # approximate 1/sqrt, within 2^-22 relative (docs/language.md's bound)
    _float_unary("silu", lambda np, x: x * _sigmoid(np, x)),
    _float_unary("silu_fast", lambda np, x: x * _sigmoid(np, x)),   # the targets: exp2 of
                 # a rounded product and a 1-ulp reciprocal (docs/language.md's bound)
    _float_unary("gelu", _gelu),
    _float_unary("erf", lambda np, x:   # correctly rounded; the targets' float erf: 2 ulp
                 _erf_double(np, x).astype(np.result_type(x))[()]),
    _float_unary("sigmoid", _sigmoid),
    _float_unary("tanh", lambda np, x: np.tanh(x)),
    _float_unary("sin", _sin_cos("sin")),
    _float_unary("cos", _sin_cos("cos")),
    _float_unary("round", lambda np, x: np.rint(x)),   # half to even
    _float_unary("floor", lambda np, x: np.floor(x)),
    _float_unary("ceil", lambda np, x: np.ceil(x)),
    _float_unary("trunc", lambda np, x: np.trunc(x)),
    Function("recip", 1, "float", "kt::recip", floating=lambda np, x: 1 / x,
             spelled="(IR only: kt.unary recip)"),
    # ---- binary --------------------------------------------------------------------------
    _arithmetic("add", lambda np, x, y: np.add(x, y), lambda np, x, y: np.add(x, y), "x + y"),
    _arithmetic("sub", lambda np, x, y: np.subtract(x, y), lambda np, x, y: np.subtract(x, y),
                "x - y"),
    _arithmetic("mul", lambda np, x, y: np.multiply(x, y), lambda np, x, y: np.multiply(x, y),
                "x * y"),
    _arithmetic("div", lambda np, x, y: np.divide(x, y), _int_div, "x / y"),
    _arithmetic("max", lambda np, x, y: np.maximum(x, y), lambda np, x, y: np.maximum(x, y),
                "hk.maximum(x, y)", hk="maximum"),
    _arithmetic("min", lambda np, x, y: np.minimum(x, y), lambda np, x, y: np.minimum(x, y),
                "hk.minimum(x, y)", hk="minimum"),
    _arithmetic("pow", lambda np, x, y: np.power(x, y), None, "x ** y"),
    _compare("eq", lambda np, x, y: np.equal(x, y), "=="),
    _compare("ne", lambda np, x, y: np.not_equal(x, y), "!="),
    _compare("lt", lambda np, x, y: np.less(x, y), "<"),
    _compare("le", lambda np, x, y: np.less_equal(x, y), "<="),
    _compare("gt", lambda np, x, y: np.greater(x, y), ">"),
    _compare("ge", lambda np, x, y: np.greater_equal(x, y), ">="),
    Function("and", 2, "bitwise", "kt::bitwise_and", integer=lambda np, x, y: np.bitwise_and(x, y),
             logical=lambda np, x, y: np.logical_and(x, y), spelled="x & y"),
    Function("or", 2, "bitwise", "kt::bitwise_or", integer=lambda np, x, y: np.bitwise_or(x, y),
             logical=lambda np, x, y: np.logical_or(x, y), spelled="x | y"),
)

BY_NAME: dict[str, Function] = {f.name: f for f in FUNCTIONS}
UNARY: tuple[Function, ...] = tuple(f for f in FUNCTIONS if f.arity == 1)
BINARY: tuple[Function, ...] = tuple(f for f in FUNCTIONS if f.arity == 2)
# hk.<name> -> its row, for the functions a kernel calls by name
BY_HK_NAME: dict[str, Function] = {f.hk: f for f in FUNCTIONS if f.hk is not None}


def names_with_rule(rule: str) -> tuple[str, ...]:
    return tuple(f.name for f in FUNCTIONS if f.rule == rule)

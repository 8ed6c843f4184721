"""hk-dsl's methods on register tiles and vectors: `t.sum(axis=1)`, `t.exp()`, `t.exp_()`,
`t.maximum(u, into=c)`, `t.right_fill_(n)`, `v[:, None]`, `m.max_(t.max(axis=1))`.

Invariant: a method never changes the value it is called on. Tiles are SSA values in ktile, so
an "in place" method (`t.exp_()`, `t.fill_(v)`, anything given `into=x`) returns the new value
and the control-flow rewrite rebinds the name (`t.exp_()` runs as `t = t.exp_()`, `f(..., into=x)`
as `x = f(..., into=x)`): that is what lets hk's in-place updates cross runtime loops and branches.
`into=` must name a value of the result's type.

Axes: hk's `axis=1` reduces along a row (one value per row: hk's col_vec, ktile's
`RV(..., axis="row")`); `axis=0` along a column (hk's row_vec, ktile's axis "col").
"""
from __future__ import annotations

from ..ir import elementwise as _functions
from . import tracer

# hk axis -> the ktile vector axis of the result (what the value is "per")
_PER = {1: "row", 0: "col", -1: "row"}
# the maps spelled as methods (`t.exp()`, all with `into=`): every unary function of the
# elementwise table that a kernel calls by name, so a new row is a method with no edit here
UNARY_METHODS = tuple(f.hk for f in _functions.UNARY if f.hk)


def landed(result, into):
    """`result`, checked to fit the value `into` names (the rewrite rebinds that name)."""
    if into is None:
        return result
    from .values import describe
    if getattr(into, "ty", None) != getattr(result, "ty", None):
        raise tracer.error(f"into= names {describe(into)} but the result is {describe(result)}",
                           hint="into= takes a value of the result's type and dtype (convert "
                                "with .to(...), or drop into= and use the returned value)")
    return result


def _axis_per(axis) -> str:
    if axis not in _PER or isinstance(axis, bool):
        raise tracer.error(f"axis must be 1 (one value per row) or 0 (one per column), got "
                           f"{axis!r}", hint="t.sum(axis=1) gives each row's sum")
    return _PER[axis]


def _no_order(lanes, xor) -> None:
    """hk's `lanes=`/`xor=` fix a gfx950 strip reduction's lane order; ktile reduces in the
    target's own fixed order, so a stated one cannot be honoured."""
    if lanes is not None or xor is not None:
        raise tracer.error("lanes= and xor= state a gfx950 strip reduction order that ktile does "
                           "not reproduce", hint="drop them: ktile's reductions have one fixed, "
                           "deterministic order per target")


def _unary_method(fn: str):
    def method(self, *, into=None):
        from . import elementwise
        return landed(getattr(elementwise, fn)(self), into)
    method.__name__ = fn
    method.__doc__ = f"Elementwise {fn} (hk-dsl's method form); `into=` rebinds that value."
    return method


def _in_place(fn: str):
    def method(self):
        from . import elementwise
        return getattr(elementwise, fn)(self)
    method.__name__ = f"{fn}_"
    method.__doc__ = f"`t.{fn}_()`: t becomes {fn}(t) (the rewrite rebinds t)."
    return method


class ElementwiseMethods:
    """Methods hk-dsl puts on both tiles and vectors."""
    # numpy would call `t.exp()` for `np.exp(t)` now that the method exists: a numpy function
    # on a device value stays the author's mistake (numpy's operators still defer to ours)
    __array_ufunc__ = None

    def maximum(self, other, *, into=None):
        return landed(self._binary("max", other), into)

    def minimum(self, other, *, into=None):
        return landed(self._binary("min", other), into)

    def copy(self, *, into=None):
        return landed(self, into)

    def zero_(self):
        return self.fill_(0.0)

    def fill_(self, value: float):
        from .elementwise import full
        return full(self._desc(), value)

    def neg_infty_(self):
        return self.fill_(float("-inf"))


for _fn in UNARY_METHODS:
    setattr(ElementwiseMethods, _fn, _unary_method(_fn))
for _fn in ("exp", "exp2", "rsqrt"):
    setattr(ElementwiseMethods, f"{_fn}_", _in_place(_fn))


class TileMethods(ElementwiseMethods):
    """hk-dsl's register tile methods."""

    def sum(self, axis: int = 1, *, lanes=None, xor=None, times=None):
        """One value per row (axis=1) or per column (axis=0); `times=u` sums t*u."""
        _no_order(lanes, xor)
        from .tiles import reduce_tile
        src = self if times is None else self * times
        return reduce_tile(src, "sum", _axis_per(axis))

    def max(self, axis: int = 1, *, lanes=None, xor=None):
        _no_order(lanes, xor)
        from .tiles import reduce_tile
        return reduce_tile(self, "max", _axis_per(axis))

    def min(self, axis: int = 1, *, lanes=None, xor=None):
        _no_order(lanes, xor)
        from .tiles import reduce_tile
        return reduce_tile(self, "min", _axis_per(axis))

    def step(self, *, into=None):
        """1 where the element is positive, else 0 (`x * (r - p).step()` keeps r > p)."""
        from .elementwise import full, where
        return landed(where(self > 0, 1.0, full(self.desc, 0.0)), into)

    def left_fill_(self, idx, value=0.0, *, into=None):
        """Columns before idx become value."""
        return landed(self._masked("col", "lt", idx, value), into)

    def right_fill_(self, idx, value=0.0, *, into=None):
        """Columns from idx on become value (a ragged last column block)."""
        return landed(self._masked("col", "ge", idx, value), into)

    def upper_fill_(self, idx, value=0.0, *, into=None):
        """Rows before idx become value."""
        return landed(self._masked("row", "lt", idx, value), into)

    def lower_fill_(self, idx, value=0.0, *, into=None):
        """Rows from idx on become value."""
        return landed(self._masked("row", "ge", idx, value), into)

    def _masked(self, axis: str, cmp: str, idx, value):
        from .. import dtypes
        from .elementwise import iota, where
        from .types import RT
        at = iota(RT(dtypes.i32, self.rows, self.cols), axis)
        return where(at._binary(cmp, idx), value, self)

    def _desc(self):
        return self.desc


class VecMethods(ElementwiseMethods):
    """hk-dsl's register vector methods."""

    def __getitem__(self, key):
        """`v[:, None]` (a value per row, broadcast along the row) or `v[None, :]` (a value per
        column): the vector itself, its kind checked, for hk's explicit broadcasts."""
        per = _broadcast_axis(key)
        if per is None:
            raise tracer.error("a register vector is indexed only as v[:, None] or v[None, :] "
                               "(an explicit broadcast)", hint="elements are not addressable")
        if per != self.axis:
            spelled = "v[:, None]" if per == "row" else "v[None, :]"
            raise tracer.error(f"{spelled} broadcasts a vector with one value per {per}, but this "
                               f"is {self.describe()} (one value per {self.axis})",
                               hint="v[:, None] for a col_vec (t.sum(axis=1)), v[None, :] for a "
                                    "row_vec (t.sum(axis=0))")
        return self

    def max_(self, reduction):
        """hk's running fold `m.max_(t.max(axis=1))`: m becomes max(m, that)."""
        return self._binary("max", reduction)

    def min_(self, reduction):
        return self._binary("min", reduction)

    def _desc(self):
        from .types import RV
        return RV(self.dtype, self.length, self.axis)


def _broadcast_axis(key) -> str | None:
    """"row" for `[:, None]`, "col" for `[None, :]`, else None."""
    if not isinstance(key, tuple) or len(key) != 2:
        return None
    whole = [isinstance(k, slice) and (k.start, k.stop, k.step) == (None, None, None) for k in key]
    if whole == [True, False] and key[1] is None:
        return "row"
    if whole == [False, True] and key[0] is None:
        return "col"
    return None

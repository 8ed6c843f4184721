"""The functions a kernel body calls, as `hk.<name>`: coordinates, and the namespaces `arch`,
`math`, `group` and `lds` grouping them as hk-dsl does. The functions themselves live by family
in `elementwise.py`, `mma.py` and `transfers.py`; each checks its arguments against the kernel
author's intent and emits one op through the builder seam.
"""
from __future__ import annotations

from . import tracer
from .elementwise import *  # noqa: F401,F403  (re-exported as hk.<name>)
from .elementwise import FUNCTIONS, block_reduce
from .memory import Coord
from .mma import *  # noqa: F401,F403
from .shared_ops import group_reduce as _group_reduce
from .transfers import *  # noqa: F401,F403
from .transfers import barrier, load_async, shared
from .values import Scalar, as_index, as_scalar


def _b():
    return tracer.current().builder


# ---- coordinates and integer helpers -------------------------------------------------------

def tile_coord(batch, depth, row, col) -> Coord:
    """The tile at (batch, depth, row tile, col tile) of a 4-D global."""
    return Coord((batch, depth, row, col))


def elem_coord(batch, depth, row, col) -> Coord:
    """The tile whose first element is (batch, depth, row, col) of a 4-D global: an R×C tile
    at elem_coord(b, d, r, c) is rows [r, r+R), columns [c, c+C) of g[b, d], for any r and c
    (hk-dsl's `g.at[...]`); elements past the global's edge read the pad / are not written,
    as for tile coordinates."""
    return Coord((batch, depth, row, col), unit="element")


def cdiv(a, b):
    """Ceiling division; Python ints stay Python ints."""
    if isinstance(a, int) and isinstance(b, int):
        return -(-a // b)
    return as_index(a, "cdiv numerator")._binary("cdiv", b)




# ---- namespaces ----------------------------------------------------------------------------

class _Namespace:
    """A group of builtins (`hk.arch`, `hk.math`, ...): a name it lacks is the author's typo,
    refused with the names it has."""
    _spelled = "hk"

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise tracer.unknown_name(self._spelled, name, dir(self))


class _BlockIdx(_Namespace):
    _spelled = "hk.arch.block_idx"

    @property
    def x(self) -> Scalar: return Scalar(_b().block_idx(0))
    @property
    def y(self) -> Scalar: return Scalar(_b().block_idx(1))
    @property
    def z(self) -> Scalar: return Scalar(_b().block_idx(2))


class _Arch(_Namespace):
    """hk.arch: what the hardware gives a running block."""
    _spelled = "hk.arch"
    block_idx = _BlockIdx()

    @property
    def warp_id(self) -> Scalar:
        return Scalar(_b().warp_id())

    @property
    def num_warps(self) -> int:
        return tracer.current().warps

    @property
    def wave_size(self) -> int:
        return tracer.current().target.wave_size

    @property
    def shared_bytes(self) -> int:
        """The target's shared memory per block in bytes, a Python int while tracing (to size
        staging buffers per target)."""
        return tracer.current().target.lds_bytes

    @staticmethod
    def barrier() -> None:
        barrier()


class _Math(_Namespace):
    """hk.math: the elementwise functions called by name (hk.math.exp is hk.exp), as hk-dsl
    groups them; one per row of the functions' table (ktile/ir/elementwise.py)."""
    _spelled = "hk.math"


for _name, _function in FUNCTIONS.items():
    setattr(_Math, _name, staticmethod(_function))
hk_compat.add_math_forms(_Math)  # hk-dsl's into= and add/sub/mul/div


class _Group(_Namespace):
    """hk.group: operations of the whole block's warps together."""
    _spelled = "hk.group"
    load = staticmethod(load_async)

    # A register tile combines elementwise over warps (a tree through shared memory); a
    # vector or scalar folds warps in order (shared_ops.group_reduce).
    @staticmethod
    def sum(x): return _group_reduce("sum", x)

    @staticmethod
    def max(x): return _group_reduce("max", x)

    @staticmethod
    def min(x): return _group_reduce("min", x)


class _Lds(_Namespace):
    """hk.lds: shared memory (LDS on AMD)."""
    _spelled = "hk.lds"
    alloc = staticmethod(shared)
    load_async = staticmethod(load_async)


arch = _Arch()
math = _Math()
group = _Group()
lds = _Lds()

__all__ = [n for n in dir() if not n.startswith("_")]

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
from .shared_ops import select_shared as _select_shared
from .transfers import *  # noqa: F401,F403
from .transfers import barrier, load_async, shared, wait_for
from .types import SV
from .values import Scalar, as_index, as_scalar
from . import hk_compat
from .hk_compat import (broadcast_col, broadcast_row, col_vec, coord, full, if_, max, min,
                        neg_infty, rand, row_vec, scope, uniform, zeros)


def _b():
    return tracer.current().builder


# ---- coordinates and integer helpers -------------------------------------------------------

def tile_coord(batch=0, depth=0, row=0, col=0) -> Coord:  # hk: parts default to 0
    """The tile at (batch, depth, row tile, col tile) of a 4-D global: an R×C tile at
    tile_coord(b, d, r, c) is rows [r·R, r·R+R), columns [c·C, c·C+C) of g[b, d]."""
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

    def __call__(self) -> "_BlockIdx":  # hk also spells it hk.arch.block_idx().x
        return self

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
        """This warp's index in the block; hk calls it (`hk.arch.warp_id()`), ktile reads it."""
        return hk_compat.CallableScalar(_b().warp_id())

    @property
    def num_warps(self) -> int:
        """The block's warps; inside a pipeline role's function, the role's (hk.pipeline: on
        sm_90a the block also holds the other role's warps)."""
        trace = tracer.current()
        return getattr(trace, "role_warps", None) or trace.warps

    @property
    def wave_size(self) -> int:
        return tracer.current().target.wave_size

    @property
    def shared_bytes(self) -> int:
        """The target's shared memory per block in bytes, a Python int while tracing (to size
        staging buffers per target)."""
        return tracer.current().target.lds_bytes

    @staticmethod
    def barrier(drain: bool = False) -> None:
        """Every warp meets here. hk's drain=True also retires shared reads first: ktile's
        waits pass already orders every shared access around a barrier."""
        barrier()

    # hk-dsl's AMD schedule controls. ktile derives its waits and leaves instruction
    # scheduling to the compiler, so these are checked and mean nothing on any target
    # (docs/hk-compat.md): results never depend on them.
    SCHED_CLASSES = hk_compat.SCHED_CLASSES
    pingpong = staticmethod(hk_compat.pingpong)

    @staticmethod
    def target():
        return hk_compat.Target(tracer.current().target)

    @staticmethod
    def xcd_id() -> Scalar:
        """ktile places no block by XCD, so on every target the GPU reads as one XCD: 0."""
        return Scalar(_b().const_index(0))

    @staticmethod
    def xcd_count() -> int:
        return 1

    @staticmethod
    def sched_barrier(allow=()) -> None:
        hk_compat.check_sched_classes(allow)

    @staticmethod
    def sched_group_barrier(classes, size: int, sync_id: int = 0) -> None:
        hk_compat.check_sched_classes(classes)
        hk_compat.check_level(size, 0, 1 << 16, "sched_group_barrier size")

    @staticmethod
    def setprio(level: int) -> None:
        hk_compat.check_level(level, 0, 3, "setprio")

    @staticmethod
    def vm_wait(keep: int = 0) -> None:
        """ktile's waits pass derives every wait its copies need: nothing to add."""
        hk_compat.check_level(keep, 0, 63, "vm_wait")

    @staticmethod
    def pin(*values) -> None:
        return None


class _Math(_Namespace):
    """hk.math: the elementwise functions called by name (hk.math.exp is hk.exp), as hk-dsl
    groups them; one per row of the functions' table (ktile/ir/elementwise.py)."""
    _spelled = "hk.math"


for _name, _function in FUNCTIONS.items():
    setattr(_Math, _name, staticmethod(_function))
hk_compat.add_math_forms(_Math)  # hk-dsl's into= and add/sub/mul/div


class _Group(_Namespace):
    """hk.group: operations of the whole block's warps together (ktile: `hk.group.load` is the
    asynchronous copy, `.sum/.max/.min` the cross-warp reductions); called, hk-dsl's
    `hk.group(W)`, a Group whose loads wait by default."""
    _spelled = "hk.group"
    load = staticmethod(load_async)

    def __call__(self, warps: int) -> "hk_compat.Group":
        return hk_compat.Group(warps)

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
    alloc = staticmethod(hk_compat.lds_alloc)  # hk's: name=, count=; its loads wait
    select = staticmethod(_select_shared)  # bufs[i] spelled as a call: a device-picked tile
    load_async = staticmethod(load_async)
    wait_for = staticmethod(wait_for)

    @staticmethod
    def alloc_vec(desc: SV, name: str = "svec"):
        return hk_compat.lds_alloc(desc, name)


class _Collective(_Namespace):
    """hk.collective: combining values across the block's warps."""
    _spelled = "hk.collective"
    COMBINERS = ("add", "max", "min")
    cross_warp = staticmethod(hk_compat.cross_warp)


arch = _Arch()
math = _Math()
group = _Group()
lds = _Lds()
collective = _Collective()

__all__ = [n for n in dir() if not n.startswith("_")]

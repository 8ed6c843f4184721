"""The configuration space the tuner searches, per op: candidate routes at one shape bucket.

A space is generated from the op's own built-in table, so it stays valid while the op's
kernels change: the bases are the default (the route the built-in table chooses at the
bucket's largest shape on the target) and the first fitting route of each other kernel,
and each base is varied along the constants its `vary` names (halved and doubled). A rule
may then derive a constant of the variant from the base's (a held row kernel keeps HELD x
WARPS, the vectors a block holds, at least the base's). Candidates that break a kernel's
requirements or gates are refused later, with the reason (`candidates.py`).

Only ops with a warm-up call (`ktile.ops.warmup.CALLS`, how to call the op at rows x cols)
can be timed, so only those have spaces.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

MAX_WARPS = 32            # 1024 threads per block on a 32-lane warp
MAX_HELD = 8              # vectors a warp holds in registers; more spills on every target


def held_cover(base: dict, variant: dict) -> dict | None:
    """A held row kernel's HELD for a variant of `base`: the vectors (tiles) per warp that
    cover what the base covered, HELD x WARPS kept at least the base's (whatever the width of
    one vector); None past MAX_HELD."""
    if "HELD" not in base or "WARPS" not in base:
        return variant
    held = -(-base["HELD"] * base["WARPS"] // variant["WARPS"])
    return {**variant, "HELD": held} if held <= MAX_HELD else None


def tile_cover(base: dict, variant: dict) -> dict | None:
    """A row-tile norm kernel's HELD for a variant of `base` (C view columns a tile, WARPS):
    HELD x C x WARPS, the view columns a block holds, kept at least the base's; None for a
    tile under one 16-column block or past MAX_HELD. Kernels without C: `held_cover`."""
    if "C" not in base or "HELD" not in base or "WARPS" not in base:
        return held_cover(base, variant)
    if variant["C"] < 16:
        return None
    cover = base["HELD"] * base["C"] * base["WARPS"]
    held = -(-cover // (variant["C"] * variant["WARPS"]))
    return {**variant, "HELD": held} if held <= MAX_HELD else None


@dataclass(frozen=True)
class Space:
    """Which constants vary (each x1/2, x1, x2) and the rule that fixes the derived ones."""
    vary: tuple[str, ...] = ("WARPS",)
    derive: Callable[[dict, dict], dict | None] = lambda base, variant: variant

    def candidates(self, op, target: str, rows: int, cols: int) -> list:
        """The default route at rows x cols first, then every distinct variant of every base."""
        from ..ops._library import RoutingTable
        builtin = RoutingTable(op.table.routes)          # not the measured table
        default = builtin.choose(rows, cols, target)
        bases = [default]            # and the first route of each other kernel that fits
        for route in op.table.routes:
            if route.fits(rows, cols, target) and all(b.kernel != route.kernel for b in bases):
                bases.append(route)
        found = [default]            # as the built-in table has it, whatever `derive` says
        seen = {(default.kernel, tuple(sorted(default.constants.items())))}
        for base in bases:
            for constants in self._variants(base.constants):
                route = replace(base, constants=constants)
                key = (route.kernel, tuple(sorted(constants.items())))
                if key not in seen:
                    seen.add(key)
                    found.append(route)
        return found

    def _variants(self, constants: dict) -> list[dict]:
        variants = [dict(constants)]
        for name in self.vary:
            if name not in constants:
                continue
            value = constants[name]
            variants = [{**v, name: n} for v in variants
                        for n in (value // 2, value, value * 2) if 1 <= n <= _limit(name)]
        derived = [self.derive(constants, v) for v in variants]
        return [v for v in derived if v is not None]


def _limit(name: str) -> int:
    return MAX_WARPS if name == "WARPS" else 1 << 16


# the norms' tiles vary in width too: the latency routes (few rows) are narrow tiles over many
# warps, the bandwidth routes wide ones over few (ktile/ops/rmsnorm/config.py)
NORMS = Space(vary=("WARPS", "C"), derive=tile_cover)

SPACES: dict[str, Space] = {
    "rms_norm": NORMS,
    "fused_add_rms_norm": NORMS,
    "layer_norm": NORMS,
    "softmax": Space(vary=("WARPS", "C")),
    "act_and_mul": Space(vary=("WARPS", "COLS")),
    # not elementwise: it chooses through a table of its own per kernel name
    # (elementwise/config.py), which `pinned` does not reach, so a candidate could not be timed
}


def space_of(op_name: str) -> Space:
    from ..errors import InputError
    space = SPACES.get(op_name)
    if space is None:
        raise InputError(f"the tuner has no configuration space for op {op_name!r}",
                         hint=f"tune one of: {', '.join(sorted(SPACES))}")
    return space

"""What every engine integration shares (docs/integrations.md).

- **Switches**: `KTILE_<ENGINE>=0` leaves the engine entirely stock; `KTILE_<ENGINE>_<OP>=0`
  turns one routed op off (`enabled`). Read when the integration is installed.
- **Counters**: per route, calls made eagerly and calls recorded while a CUDA graph was being
  captured (a captured call replays without passing through Python again), plus calls that fell
  back to the engine's own path and shadow-mode mismatches (`record`, `counters`, `reset`).
- **The engine contract**: every symbol an integration hooks is named with the parameters it
  must have (`Hook`); `install` checks them all first and, on any mismatch, changes nothing and
  warns once, naming what moved. Installed patches can be undone (`Installed.undo`).
- **The CUDA-graph contract**: each routed op declares `graph="safe"` (no host sync, no
  allocation that escapes the graph, no data-dependent shapes) or `"never"`; a "never" op called
  during capture raises at once instead of recording something wrong (`check_graph`).
- **Shadow mode**: `KTILE_<ENGINE>_SHADOW=1` runs the engine's own path beside each routed call
  and counts results that differ beyond the op's tolerance (`shadow_compare`).
"""
from __future__ import annotations

import inspect
import os
import threading
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

GRAPH_CONTRACTS = ("safe", "never")

_LOCK = threading.Lock()
_COUNTS: dict[str, dict[str, int]] = defaultdict(lambda: {"eager": 0, "captured": 0,
                                                          "fallback": 0, "reference": 0,
                                                          "shadow_mismatch": 0})


# ---- switches --------------------------------------------------------------------------------

def _flag(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None or value.strip() == "" else value.strip()


def enabled(engine: str, op: str | None = None) -> bool:
    """Whether `engine`'s integration (or its routed `op`) is on: `KTILE_<ENGINE>=0` turns the
    whole integration off, `KTILE_<ENGINE>_<OP>=0` one op. Anything but "0" counts as on."""
    if _flag(f"KTILE_{engine.upper()}") == "0":
        return False
    return op is None or _flag(f"KTILE_{engine.upper()}_{op.upper()}") != "0"


def shadow(engine: str) -> bool:
    return _flag(f"KTILE_{engine.upper()}_SHADOW") == "1"


# ---- counters --------------------------------------------------------------------------------

_CAPTURE_PROBE: list = []    # [torch.cuda.is_current_stream_capturing, or None without CUDA]


def capturing() -> bool:
    """True while the current CUDA stream is capturing a graph (every routed call asks: whether
    CUDA is there is asked once)."""
    if not _CAPTURE_PROBE:
        import torch
        _CAPTURE_PROBE.append(torch.cuda.is_current_stream_capturing
                              if torch.cuda.is_available() else None)
    probe = _CAPTURE_PROBE[0]
    return probe is not None and bool(probe())


def record(route: str, kind: str | None = None) -> None:
    """Count one call of `route`: kind "eager" or "captured" (found from the stream when None),
    "fallback" (the engine's own path ran), "reference" (of the routed calls, one where the
    op's reference ran instead of its kernel: the CPU above the interpreter's size) or
    "shadow_mismatch"."""
    if kind is None:
        kind = "captured" if capturing() else "eager"
    with _LOCK:
        _COUNTS[route][kind] += 1


def counters() -> dict[str, dict[str, int]]:
    """route -> {"eager", "captured", "fallback", "reference", "shadow_mismatch"}: a copy."""
    with _LOCK:
        return {route: dict(c) for route, c in _COUNTS.items()}


def calls(route: str) -> int:
    c = counters().get(route, {})
    return c.get("eager", 0) + c.get("captured", 0)


def reset() -> None:
    with _LOCK:
        _COUNTS.clear()


# ---- the CUDA-graph contract ---------------------------------------------------------------

def check_graph(route: str, graph: str) -> None:
    """Refuse a "never" op inside a CUDA-graph capture, before it records anything."""
    if graph not in GRAPH_CONTRACTS:
        raise ValueError(f"route {route!r}: graph contract {graph!r} is not one of "
                         f"{GRAPH_CONTRACTS}")
    if graph == "never" and capturing():
        raise RuntimeError(f"ktile route {route!r} is declared graph='never' (it synchronises "
                           f"with the host or allocates per call) and was called during CUDA "
                           f"graph capture; turn the route off for captured runs "
                           f"(KTILE_<ENGINE>_<OP>=0) or run this part eagerly")


# ---- shadow mode ----------------------------------------------------------------------------

def shadow_compare(route: str, got, want, atol: float, rtol: float) -> bool:
    """Whether `got` matches the engine's `want` (tensors, or tuples of them) within tolerance;
    a mismatch is counted and warned about once per route."""
    import torch
    pairs = list(zip(got, want)) if isinstance(got, (tuple, list)) else [(got, want)]
    ok = all(torch.allclose(g.float(), w.float(), atol=atol, rtol=rtol) for g, w in pairs)
    if not ok:
        first = _COUNTS.get(route, {}).get("shadow_mismatch", 0) == 0
        record(route, "shadow_mismatch")
        if first:
            worst = max(float((g.float() - w.float()).abs().max()) for g, w in pairs)
            warnings.warn(f"ktile shadow mode: route {route!r} differs from the engine's own "
                          f"path by up to {worst:.3g} (atol {atol}, rtol {rtol})",
                          RuntimeWarning, stacklevel=3)
    return ok


# ---- the engine contract -------------------------------------------------------------------

@dataclass(frozen=True)
class Hook:
    """One symbol an integration replaces: `owner.attr` (owner a class or module, or its dotted
    path) must exist and take at least `params` (names, in order, `self` included for methods)."""
    owner: Any
    attr: str
    params: tuple[str, ...]
    replacement: Callable | None = None

    def resolve(self):
        owner = self.owner
        if isinstance(owner, str):
            import importlib
            module, _, rest = owner.partition(":")
            owner = importlib.import_module(module)
            for part in filter(None, rest.split(".")):
                owner = getattr(owner, part)
        return owner

    def mismatch(self) -> str | None:
        """Why the engine no longer matches this hook (None: it does)."""
        try:
            owner = self.resolve()
        except (ImportError, AttributeError) as err:
            return f"{self.owner}: cannot be imported ({err})"
        target = getattr(owner, self.attr, None)
        where = f"{getattr(owner, '__qualname__', owner)}.{self.attr}"
        if target is None:
            return f"{where} is gone"
        try:
            names = tuple(inspect.signature(target).parameters)
        except (TypeError, ValueError):
            return f"{where} has no readable signature"
        if names[:len(self.params)] != self.params:
            return (f"{where} takes ({', '.join(names)}), the integration expects "
                    f"({', '.join(self.params)}, ...)")
        return None


@dataclass
class Installed:
    """Patches in place, undoable: (owner, attr, original) per hook."""
    engine: str
    originals: list[tuple[Any, str, Any]] = field(default_factory=list)

    def undo(self) -> None:
        for owner, attr, original in reversed(self.originals):
            setattr(owner, attr, original)
        self.originals.clear()


def install(engine: str, hooks: list[Hook]) -> Installed | None:
    """Check every hook, then replace each `owner.attr` by its replacement; on any mismatch
    (or with `KTILE_<ENGINE>=0`) change nothing: one warning names everything that moved."""
    if not enabled(engine):
        return None
    moved = [m for m in (h.mismatch() for h in hooks) if m is not None]
    if moved:
        warnings.warn(f"ktile: the {engine} integration is off, the engine stays stock: "
                      + "; ".join(moved), RuntimeWarning, stacklevel=2)
        return None
    done = Installed(engine)
    for hook in hooks:
        owner = hook.resolve()
        done.originals.append((owner, hook.attr, owner.__dict__.get(hook.attr,
                                                                     getattr(owner, hook.attr))))
        setattr(owner, hook.attr, hook.replacement)
    return done

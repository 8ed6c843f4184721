"""What the op benchmark times: one `Bench` per public function of `ktile.ops`.

A bench names its shapes (the full sweep and the `--quick` subset), makes the inputs of one
shape, calls ktile and the alternatives (torch eager, the same formula under torch.compile, a
Triton kernel from triton_kernels.py), and counts the bytes the op must move: each input read
once and each output written once, in the dtypes the call uses. `compare` says how close an
alternative's output must be to ktile's (a wrong fast baseline is a bug, not a win).

The benches themselves live in bench_norms.py, bench_pointwise.py, bench_rows.py and
bench_quant.py; `benches()` collects them by name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

# relative tolerance of an alternative against ktile, per output dtype: a couple of roundings
# to the dtype (formulas differ in where they round), far below what a wrong kernel gives
REL_TOL = {"bfloat16": 2 ** -5, "float16": 2 ** -8, "float32": 1e-4}


DEVICE = ["cuda"]   # where inputs are made; the CPU tests switch it to "cpu" (the interpreter)


def dev() -> str:
    return DEVICE[0]


@dataclass(frozen=True)
class Shape:
    """One swept point: `dims` fixes the inputs; `x` is the plot's axis and `group` its line."""
    dims: dict
    x: int
    group: int | str

    @property
    def label(self) -> str:
        return "x".join(str(v) for v in self.dims.values())


@dataclass(frozen=True)
class Bench:
    name: str                                    # the ktile.ops function timed
    shapes: tuple                                # every Shape of the full sweep
    quick: tuple                                 # the --quick subset
    make: Callable                               # (Shape) -> tuple of CUDA tensors and scalars
    ktile: Callable                              # (*inputs) -> result
    torch: Callable                              # eager formula (also the one compiled)
    nbytes: Callable                             # (Shape) -> bytes the op must move
    triton: str | None = None                    # key of triton_kernels.KERNELS
    compare: Callable | None = None              # (got, want) -> (error, tolerance)
    mutates: tuple = ()                          # input positions written in place
    unchecked: tuple = ()                        # alternatives whose output differs by design
    notes: str = ""
    axis: str = "rows"                           # what Shape.x counts
    extra: dict = field(default_factory=dict)


def library(name: str):
    """`ktile.ops.<name>`, looked up at its first call: loading the op library costs seconds,
    which listing or refusing ops need not pay."""
    def call(*args, **kwargs):
        import ktile.ops
        return getattr(ktile.ops, name)(*args, **kwargs)
    call.__name__ = name
    return call


# a few rows of narrow data: what the CPU interpreter checks in seconds
SMALL = {"rows": 3, "cols": 96, "tokens": 3, "intermediate": 64, "hidden": 64, "elements": 1000}


def small(bench: Bench) -> Shape:
    """The bench's first quick shape, shrunk to interpreter size."""
    first = bench.quick[0]
    return Shape({k: SMALL[k] for k in first.dims}, SMALL[next(iter(first.dims))], first.group)


def typical(bench: Bench) -> Shape:
    """A shape users run: the middle of the quick sweep (e.g. 4096 rows)."""
    ordered = sorted(bench.quick, key=lambda s: (s.x, str(s.group)))
    return ordered[len(ordered) // 2]


def tensors(result) -> list:
    """The tensors of an op's result (a tensor, or a tuple of them and Nones), in order."""
    import torch
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in tensors(r)]
    return []


def close(got, want) -> tuple[float, float]:
    """Largest error over the outputs, relative to each output's largest magnitude."""
    worst, tol = 0.0, 0.0
    got_list, want_list = tensors(got), tensors(want)
    if len(got_list) != len(want_list):
        return float("inf"), 0.0
    for g, w in zip(got_list, want_list):
        if g.shape != w.shape:
            return float("inf"), 0.0
        g32, w32 = g.float(), w.float()
        scale = max(w32.abs().max().item(), 1e-30) if w32.numel() else 1.0
        worst = max(worst, (g32 - w32).abs().max().item() / scale if w32.numel() else 0.0)
        tol = max(tol, REL_TOL.get(str(w.dtype).removeprefix("torch."), 1e-4))
    return worst, tol


def grid(rows, widths) -> tuple:
    """rows × widths as Shapes (x = rows, one line per width)."""
    return tuple(Shape({"rows": r, "cols": c}, r, c) for c in widths for r in rows)


def element_size(dtype) -> int:
    import torch
    return torch.empty((), dtype=dtype).element_size()


def _collect() -> dict[str, Bench]:
    from . import bench_norms, bench_pointwise, bench_quant, bench_rows
    benches = [*bench_norms.BENCHES, *bench_pointwise.BENCHES, *bench_rows.BENCHES,
               *bench_quant.BENCHES]
    return {b.name: b for b in benches}


_BENCHES: dict[str, Bench] | None = None


def benches() -> dict[str, Bench]:
    global _BENCHES
    if _BENCHES is None:
        _BENCHES = _collect()
    return _BENCHES

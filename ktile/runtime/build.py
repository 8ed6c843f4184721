"""Building a traced kernel into a code object: through the cache, through the gate.

    b = kernel.build(target="sm_90a", BLOCK=64)     # or build_trace(kernel.trace(...))
    b.code_path, b.code, b.key, b.resources, print(b.report())

The toolchain driver is chosen by `target.vendor` from `TOOLCHAINS`; a driver module offers
`toolchain()`, whose object gives the compiler's identity, its flags, the compile function,
the KernelError for a failed compile, and the gate. A driver that reads its code object has a
`gate(entry, kernel, target, warps=, lds_bytes=, limits=, loc=)` returning the resource report
and its own quality report (AMD: cocheck); one that reads its compiler's log has
`resources(log, kernel, target, warps=, lds_bytes=)`, whose report goes through the shared
resource gate (NVIDIA: ptxas -v). The gate runs on every build and on every cache hit, so a
hit is refused exactly like the build it replays.

`BuildLimits` are checks, not flags: they do not change the code object, so they are not part
of the cache key, and a hit is checked against the limits of the call that asks for it.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from ..errors import InputError, KernelError, SourceLoc
from .cache import INCLUDE_DIR, BuildCache, BuildFailed, CacheEntry, build_key, header_hash
from .gates import ResourceReport, resource_gate

# target.vendor → the driver module of its toolchain; a vendor missing here has none yet
TOOLCHAINS = {
    "amd": "ktile.runtime.toolchains.amd",
    "nvidia": "ktile.runtime.toolchains.nvcc",
}


@dataclass(frozen=True)
class BuildLimits:
    """Optional limits a build must meet, beyond the gate's own refusals."""
    max_vgprs: int | None = None         # VGPRs per lane (AGPRs included where unified)
    min_occupancy: int | None = None     # waves per SIMD, VGPR-limited estimate

    def __post_init__(self) -> None:
        for name in ("max_vgprs", "min_occupancy"):
            value = getattr(self, name)
            if value is None or (isinstance(value, int) and not isinstance(value, bool)
                                 and value >= 1):
                continue
            raise InputError(f"BuildLimits {name} must be a positive int or None, got "
                             f"{value!r}", hint=f"BuildLimits({name}=128), or leave it out")

    def __bool__(self) -> bool:
        return self.max_vgprs is not None or self.min_occupancy is not None


@dataclass(frozen=True)
class Build:
    """One kernel built for one target: its code object in the cache and what it uses."""
    kernel: str
    target: str
    key: str
    entry: CacheEntry
    resources: ResourceReport
    lds_bytes: int                # dynamic shared memory the launch passes (kt.lds_bytes)
    warps: int
    threads: int                  # per block: warps × wave size
    cache_hit: bool
    quality: object | None = None  # the driver's own report, where it has one (AMD: cocheck's
                                   # resources and occupancy, the hot loop's instruction mix)

    @property
    def code_path(self) -> Path:
        return self.entry.code_path

    @property
    def code(self) -> bytes:
        return self.entry.code()

    @property
    def source_path(self) -> Path:
        return self.entry.source_path

    def report(self) -> str:
        origin = "cache hit" if self.cache_hit else "built"
        summary = self.resources.report() if self.quality is None else self.quality.report()
        return (f"{summary}\n"
                f"  code object   {self.code_path} ({origin}, key {self.key[:16]})")


def toolchain_for(target):
    """The driver of `target`'s vendor; a clear error for a vendor without one."""
    module = TOOLCHAINS.get(target.vendor)
    if module is None:
        have = ", ".join(sorted(TOOLCHAINS))
        raise KernelError(f"the {target.vendor.upper()} toolchain driver is not built into ktile "
                          f"yet, so {target.name} code cannot be compiled here",
                          hint=f"build for a target of a vendor that has one ({have}), or run "
                               f"the kernel on the interpreter (k.interpret(...))")
    return import_module(module).toolchain()


def build_trace(trace, cache: BuildCache | None = None,
                include_dirs: list[Path] | None = None,
                limits: BuildLimits = BuildLimits()) -> Build:
    """Build a KernelTrace: its C++, the launch facts from its module, the kernel's line."""
    from ..ir.query import kernel_func, loc_of
    if not isinstance(limits, BuildLimits):
        raise InputError(f"limits must be a ktile.runtime.build.BuildLimits, got "
                         f"{type(limits).__name__} {limits!r}", kernel=trace.name,
                         hint="k.build(target, limits=BuildLimits(max_vgprs=128, "
                              "min_occupancy=2))")
    fn = kernel_func(trace.module)
    lds = fn.attributes.get("kt.lds_bytes")
    return build_source(trace.source(), trace.target, trace.name,
                        warps=trace.warps, lds_bytes=0 if lds is None else lds.value.data,
                        loc=loc_of(fn), cache=cache, include_dirs=include_dirs, limits=limits)


def build_source(source: str, target, kernel: str, *, warps: int = 1, lds_bytes: int = 0,
                 loc: SourceLoc | None = None, cache: BuildCache | None = None,
                 include_dirs: list[Path] | None = None,
                 limits: BuildLimits = BuildLimits()) -> Build:
    """Build C++ `source` whose entry function is `kernel`, for `target` (a Target)."""
    chain = toolchain_for(target)
    _check_limits_apply(chain, kernel, limits, loc)
    includes = [Path(d) for d in (include_dirs or [INCLUDE_DIR])]
    flags = chain.flags(target)
    key = build_key(source=source, headers="\n".join(header_hash(d) for d in includes),
                    toolchain=chain.identity, flags=flags, target=target.name)
    cache = cache or BuildCache.default()
    meta = {"kernel": kernel, "target": target.name, "toolchain": chain.name, "flags": flags}
    try:
        entry, hit = cache.get_or_build(key, source, chain.compiler(target, includes),
                                        source_name=chain.source_name, code_name=chain.code_name,
                                        meta=meta)
    except BuildFailed as failure:
        raise chain.error(failure, kernel, target, includes) from None
    report, quality = _gate(chain, entry, kernel, target, warps=warps, lds_bytes=lds_bytes,
                            limits=limits, loc=loc)
    return Build(kernel, target.name, key, entry, report, lds_bytes, warps,
                 warps * target.wave_size, hit, quality)


def _check_limits_apply(chain, kernel: str, limits: BuildLimits, loc: SourceLoc | None) -> None:
    """Limits only a code-object gate checks are refused before compiling, not after."""
    if limits and not hasattr(chain, "gate"):
        raise KernelError(f"the {chain.name} driver does not check max_vgprs / min_occupancy "
                          f"({limits})", kernel=kernel, loc=loc,
                          hint="build without limits, or for a target whose driver checks them "
                               "(AMD)")


def _gate(chain, entry: CacheEntry, kernel: str, target, *, warps: int, lds_bytes: int,
          limits: BuildLimits, loc: SourceLoc | None) -> tuple[ResourceReport, object | None]:
    """The driver's gate over the code object where it has one; else the resource report it
    reads from the compiler's log, through the shared resource gate."""
    if hasattr(chain, "gate"):
        return chain.gate(entry, kernel, target, warps=warps, lds_bytes=lds_bytes,
                          limits=limits, loc=loc)
    _check_limits_apply(chain, kernel, limits, loc)
    report = chain.resources(entry.log(), kernel, target, warps=warps, lds_bytes=lds_bytes)
    return resource_gate(report, loc), None

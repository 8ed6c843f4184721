"""Building a traced kernel into a code object: through the cache, through the gate.

    b = kernel.build(target="sm_90a", BLOCK=64)     # or build_trace(kernel.trace(...))
    b.code_path, b.code, b.key, b.resources, print(b.report())

The toolchain driver is chosen by `target.vendor` from `TOOLCHAINS`; a driver module offers
`toolchain()`, whose object gives the compiler's identity, its flags, the compile function,
the resource report read from its log, and the KernelError for a failed compile. The resource
gate runs on every build and on every cache hit, so a hit is refused exactly like the build
it replays.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from ..errors import KernelError, SourceLoc
from .cache import INCLUDE_DIR, BuildCache, BuildFailed, CacheEntry, build_key, header_hash
from .gates import ResourceReport, resource_gate

# target.vendor → the driver module of its toolchain; a vendor missing here has none yet
TOOLCHAINS = {
    "nvidia": "ktile.runtime.toolchains.nvcc",
}


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
        return (f"{self.resources.report()}\n"
                f"  code object   {self.code_path} ({origin}, key {self.key[:16]})")


def toolchain_for(target):
    """The driver of `target`'s vendor; a clear error for a vendor without one."""
    module = TOOLCHAINS.get(target.vendor)
    if module is None:
        have = ", ".join(sorted(TOOLCHAINS))
        raise KernelError(f"the {target.vendor.upper()} toolchain driver is not built into ktile "
                          f"yet, so {target.name} code cannot be compiled here",
                          hint=f"build for a target of a vendor that has one ({have}), e.g. "
                               f"target='sm_90a', or run the kernel on the interpreter "
                               f"(k.interpret(...))")
    return import_module(module).toolchain()


def build_trace(trace, cache: BuildCache | None = None,
                include_dirs: list[Path] | None = None) -> Build:
    """Build a KernelTrace: its C++, the launch facts from its module, the kernel's line."""
    from ..ir.query import kernel_func, loc_of
    fn = kernel_func(trace.module)
    lds = fn.attributes.get("kt.lds_bytes")
    return build_source(trace.source(), trace.target, trace.name,
                        warps=trace.warps, lds_bytes=0 if lds is None else lds.value.data,
                        loc=loc_of(fn), cache=cache, include_dirs=include_dirs)


def build_source(source: str, target, kernel: str, *, warps: int = 1, lds_bytes: int = 0,
                 loc: SourceLoc | None = None, cache: BuildCache | None = None,
                 include_dirs: list[Path] | None = None) -> Build:
    """Build C++ `source` whose entry function is `kernel`, for `target` (a Target)."""
    chain = toolchain_for(target)
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
    report = chain.resources(entry.log(), kernel, target, warps=warps, lds_bytes=lds_bytes)
    resource_gate(report, loc)
    return Build(kernel, target.name, key, entry, report, lds_bytes, warps,
                 warps * target.wave_size, hit)

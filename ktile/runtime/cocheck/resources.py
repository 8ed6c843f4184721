"""The resource gate: what each kernel's metadata says it uses, and what cocheck refuses.

Refused: any register spill and any private (scratch) segment — scratch traffic is reordered
against the hand-placed waits (trap 2), so a spilling kernel is wrong, not slow — and, when
asked, more VGPRs than --max-vgprs or fewer waves per SIMD than --min-occupancy. SGPRs spilled
into VGPR lanes alone (v_writelane / v_readlane; the metadata then counts SGPR spills and no
scratch) move nothing through memory, and are refused as spills all the same, with their own
message and fix. Reported:
VGPRs (on gfx90a+ the unified count, AGPRs included), AGPRs, SGPRs, static LDS and a
VGPR-limited occupancy estimate.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from . import findings as kinds
from .archinfo import ArchInfo
from .findings import Finding

SPILL_FIX = ("keep fewer values live at once (smaller tiles; finish with one tile before "
             "loading the next), or give the kernel more VGPRs: a smaller maximum workgroup "
             "size (__launch_bounds__ / amdgpu_flat_work_group_size) or a looser "
             "amdgpu_num_vgpr / amdgpu_waves_per_eu")
SGPR_SPILL_FIX = ("keep fewer scalar values live at once: fewer uniform values (tile coordinates, "
                  "strides, bounds, buffer descriptors) held across the loop, or smaller tiles, "
                  "whose unrolled code holds fewer of them")
SCRATCH_FIX = ("index local arrays only with compile-time constants (fully unrolled loops) so "
               "they stay in registers, or stage the data in LDS; avoid calls that need a stack")


@dataclass(frozen=True)
class KernelResources:
    name: str
    vgprs: int | None               # .vgpr_count: AGPRs included on gfx90a+ (unified file)
    agprs: int
    sgprs: int | None
    vgpr_spills: int
    sgpr_spills: int
    scratch_bytes: int              # .private_segment_fixed_size, per lane
    dynamic_stack: bool
    lds_bytes: int                  # .group_segment_fixed_size: static LDS only
    wave_size: int | None
    max_threads: int | None

    @classmethod
    def from_metadata(cls, meta: dict) -> "KernelResources":
        number = lambda key, default=0: int(meta.get(key, default) or 0)  # noqa: E731
        optional = lambda key: int(meta[key]) if key in meta else None  # noqa: E731
        return cls(name=str(meta.get(".name", "?")), vgprs=optional(".vgpr_count"),
                   agprs=number(".agpr_count"), sgprs=optional(".sgpr_count"),
                   vgpr_spills=number(".vgpr_spill_count"),
                   sgpr_spills=number(".sgpr_spill_count"),
                   scratch_bytes=number(".private_segment_fixed_size"),
                   dynamic_stack=bool(meta.get(".uses_dynamic_stack", False)),
                   lds_bytes=number(".group_segment_fixed_size"),
                   wave_size=optional(".wavefront_size"),
                   max_threads=optional(".max_flat_workgroup_size"))

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "name"}


@dataclass(frozen=True)
class Occupancy:
    waves: int                  # per SIMD, as the VGPRs allow
    max_waves: int
    allocated_vgprs: int        # the VGPR count rounded up to the allocation granule
    file_vgprs: int             # VGPRs one SIMD lane holds, at this kernel's wave size

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Limits:
    max_vgprs: int | None = None
    min_occupancy: int | None = None


def occupancy(res: KernelResources, arch: ArchInfo) -> Occupancy | None:
    regs = arch.registers
    if regs is None or res.vgprs is None:
        return None
    wave = res.wave_size or regs.wave_size
    return Occupancy(regs.waves_per_simd(res.vgprs, wave), regs.max_waves,
                     regs.allocated(res.vgprs, wave), regs.file_vgprs(wave))


def resource_findings(res: KernelResources, arch: ArchInfo, limits: Limits,
                      display: str) -> list[Finding]:
    found = [_spills(res, arch, display), _scratch(res, arch, display),
             _lds(res, arch, display), _max_vgprs(res, limits, display),
             *_min_occupancy(res, arch, limits, display)]
    return [f for f in found if f is not None]


def _spills(res: KernelResources, arch: ArchInfo, display: str) -> Finding | None:
    if not (res.vgpr_spills or res.sgpr_spills):
        return None
    details = {"vgpr_spills": res.vgpr_spills, "sgpr_spills": res.sgpr_spills,
               "scratch_bytes": res.scratch_bytes}
    if not (res.vgpr_spills or res.scratch_bytes):
        return Finding(kinds.SPILL, display, _lane_spill_message(res, arch), SGPR_SPILL_FIX,
                       details=details)
    fix = SPILL_FIX if res.vgpr_spills else SGPR_SPILL_FIX
    return Finding(kinds.SPILL, display, _scratch_spill_message(res, arch), fix,
                   details=details)


def _lane_spill_message(res: KernelResources, arch: ArchInfo) -> str:
    """SGPRs spilled, no VGPR spill and no scratch: they went into VGPR lanes."""
    return (f"spills {res.sgpr_spills} SGPRs into VGPR lanes on {arch.name} (v_writelane / "
            f"v_readlane; no scratch memory) at {res.sgprs} SGPRs: the kernel keeps more "
            f"scalar values live than its SGPRs hold. No memory traffic, so its waits are "
            f"not at stake, but every spill is refused (trap 2): the compiler adds a "
            f"v_writelane / v_readlane per spill and reload, and a VGPR to hold the lanes")


def _scratch_spill_message(res: KernelResources, arch: ArchInfo) -> str:
    sgprs = f"{res.sgpr_spills} SGPRs into VGPR lanes or scratch memory"
    if res.vgpr_spills:
        what = f"{res.vgpr_spills} VGPRs go through scratch memory ({res.scratch_bytes} bytes " \
               f"per lane)" + (f", and {sgprs}," if res.sgpr_spills else "")
    else:
        what = f"{sgprs} ({res.scratch_bytes} bytes of scratch per lane)"
    return (f"spills registers on {arch.name}: {what} at {res.vgprs} VGPRs. Spill traffic is "
            f"reordered against the kernel's hand-placed waits, so a spilling kernel is "
            f"refused, not run slowly")


def _scratch(res: KernelResources, arch: ArchInfo, display: str) -> Finding | None:
    spills = res.vgpr_spills or res.sgpr_spills
    if spills or not (res.scratch_bytes or res.dynamic_stack):
        return None
    stack = " and a dynamic stack" if res.dynamic_stack else ""
    message = (f"uses {res.scratch_bytes} bytes of private (scratch) memory per lane{stack} on "
               f"{arch.name} without spilling: a local array indexed at run time, or a call "
               f"stack, lives in scratch, whose traffic the kernel's waits do not order")
    return Finding(kinds.SCRATCH, display, message, SCRATCH_FIX,
                   details={"scratch_bytes": res.scratch_bytes,
                            "dynamic_stack": res.dynamic_stack})


def _lds(res: KernelResources, arch: ArchInfo, display: str) -> Finding | None:
    limit = arch.registers.lds_bytes if arch.registers else None
    if limit is None or res.lds_bytes <= limit:
        return None
    message = (f"declares {res.lds_bytes} bytes of static LDS, more than the {limit} bytes "
               f"a workgroup has on {arch.name}")
    return Finding(kinds.LDS_LIMIT, display, message,
                   f"use at most {limit} bytes of LDS per workgroup")


def _max_vgprs(res: KernelResources, limits: Limits, display: str) -> Finding | None:
    if limits.max_vgprs is None or res.vgprs is None or res.vgprs <= limits.max_vgprs:
        return None
    agprs = f" ({res.agprs} of them AGPRs)" if res.agprs else ""
    message = f"uses {res.vgprs} VGPRs{agprs}, above the limit of {limits.max_vgprs} " \
              f"(--max-vgprs)"
    return Finding(kinds.MAX_VGPRS, display, message,
                   f"keep {res.vgprs - limits.max_vgprs} fewer registers live, or raise "
                   f"--max-vgprs", details={"vgprs": res.vgprs, "limit": limits.max_vgprs})


def _min_occupancy(res: KernelResources, arch: ArchInfo, limits: Limits,
                   display: str) -> list[Finding]:
    wanted = limits.min_occupancy
    if wanted is None:
        return []
    occ = occupancy(res, arch)
    if occ is None:
        return [Finding(kinds.NOT_CHECKED, display, failing=False,
                        message=f"--min-occupancy not checked: cocheck has no register-file "
                                f"facts for {arch.name}",
                        fix="check the occupancy with the vendor's tools")]
    if occ.waves >= wanted:
        return []
    if wanted > occ.max_waves:  # no register budget reaches it: say so, not "use 24 VGPRs"
        return [Finding(kinds.MIN_OCCUPANCY, display,
                        f"--min-occupancy {wanted} is more waves per SIMD than {arch.name} "
                        f"holds ({occ.max_waves}), whatever the kernel's registers",
                        f"ask for at most {occ.max_waves} waves per SIMD",
                        details={"waves": occ.waves, "required": wanted,
                                 "max_waves": occ.max_waves})]
    wave = res.wave_size or arch.registers.wave_size
    budget = arch.registers.vgprs_for(wanted, wave)
    message = (f"fits {occ.waves} waves per SIMD on {arch.name}, below the required {wanted} "
               f"(--min-occupancy): its {res.vgprs} VGPRs are allocated as "
               f"{occ.allocated_vgprs} of the {occ.file_vgprs} each SIMD lane holds")
    return [Finding(kinds.MIN_OCCUPANCY, display, message,
                    f"use at most {budget} VGPRs to fit {wanted} waves per SIMD",
                    details={"waves": occ.waves, "required": wanted, "vgpr_budget": budget})]

"""What cocheck needs to know about an AMDGPU arch, and the one place that looks it up by name.

Two kinds of fact:
- the wait counters of the ISA generation (gfx9, gfx10/11: vmcnt / lgkmcnt (/ vscnt);
  gfx12: loadcnt / storecnt / samplecnt / bvhcnt / dscnt / kmcnt), which any gfx9-gfx12 code
  object gets, ktile target or not;
- the register file, for the occupancy estimate: from `ktile.targets` for ktile's targets
  (register file, VGPR allocation granule, most waves a SIMD holds). Other archs are checked
  without an occupancy estimate.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ... import targets
from ...targets import Target

# Memory-operation classes and the counters each increments, per wait model. A "flat" access
# may reach LDS, so it counts on the LDS counter too.
LEGACY_GFX9 = {
    "vmem_load": ("vmcnt",), "vmem_store": ("vmcnt",), "sample": ("vmcnt",), "bvh": ("vmcnt",),
    "lds": ("lgkmcnt",), "gds": ("lgkmcnt",), "smem": ("lgkmcnt",), "msg": ("lgkmcnt",),
    "flat_load": ("vmcnt", "lgkmcnt"), "flat_store": ("vmcnt", "lgkmcnt"),
}
LEGACY_GFX10 = {**LEGACY_GFX9, "vmem_store": ("vscnt",), "flat_store": ("vscnt", "lgkmcnt")}
SPLIT_GFX12 = {
    "vmem_load": ("loadcnt",), "vmem_store": ("storecnt",), "sample": ("samplecnt",),
    "bvh": ("bvhcnt",), "lds": ("dscnt",), "gds": ("dscnt",), "smem": ("kmcnt",),
    "msg": ("kmcnt",), "flat_load": ("loadcnt", "dscnt"), "flat_store": ("storecnt", "dscnt"),
}

# AMDGPUBaseInfo: the widest count each wait can encode
MAX_COUNT = {"vmcnt": 63, "lgkmcnt": 63, "vscnt": 63, "loadcnt": 63, "storecnt": 63,
             "samplecnt": 63, "bvhcnt": 7, "dscnt": 63, "kmcnt": 31}
GFX9_MAX_COUNT = {**MAX_COUNT, "lgkmcnt": 15}

LEGACY_SPELLING = {"vmcnt": "s_waitcnt vmcnt({n})", "lgkmcnt": "s_waitcnt lgkmcnt({n})",
                   "vscnt": "s_waitcnt_vscnt null, {n}"}


GFX_NAME = re.compile(r"^gfx(\d+)[a-z]?$")


class UnknownArch(Exception):
    """An arch whose wait counters cocheck does not know."""


@dataclass(frozen=True)
class WaitModel:
    counters_of: dict[str, tuple[str, ...]]     # memory-operation class -> counters
    max_count: dict[str, int]
    split: bool                                 # gfx12 s_wait_*cnt, not s_waitcnt

    @property
    def barrier_spelling(self) -> str:
        return "s_barrier_signal -1` then `s_barrier_wait -1" if self.split else "s_barrier"

    def spelling(self, counter: str, count: int) -> str:
        """The wait instruction that brings `counter` to `count`, as the assembler takes it."""
        if self.split:
            return f"s_wait_{counter} {count}"
        return LEGACY_SPELLING[counter].format(n=count)


@dataclass(frozen=True)
class RegisterFile:
    vgprs_per_simd_lane: int        # at the target's own wave size
    wave_size: int
    granule: int                    # VGPRs are allocated in multiples of this
    max_waves: int                  # per SIMD
    max_vgprs: int                  # the most one wave may use (AGPRs included where unified)
    lds_bytes: int
    sgprs: int

    def file_vgprs(self, wave_size: int) -> int:
        """VGPRs one SIMD lane holds for a kernel of this wave size (a wave64 kernel on a
        wave32 part takes two lanes' worth: half the file, half the granule)."""
        return self.vgprs_per_simd_lane // self._scale(wave_size)

    def allocated(self, vgprs: int, wave_size: int) -> int:
        granule = max(1, self.granule // self._scale(wave_size))
        return max(granule, -(-vgprs // granule) * granule)

    def waves_per_simd(self, vgprs: int, wave_size: int) -> int:
        """Waves of one kernel a SIMD holds, as its VGPRs allow."""
        return min(self.max_waves, self.file_vgprs(wave_size) // self.allocated(vgprs, wave_size))

    def vgprs_for(self, waves: int, wave_size: int) -> int:
        """The most VGPRs a kernel may use and still fit `waves` waves per SIMD."""
        granule = max(1, self.granule // self._scale(wave_size))
        per_wave = self.file_vgprs(wave_size) // max(1, waves)
        return min(self.max_vgprs, per_wave // granule * granule)

    def _scale(self, wave_size: int) -> int:
        return max(1, wave_size // self.wave_size)


@dataclass(frozen=True)
class ArchInfo:
    name: str
    generation: int                 # the gfx major version: 9, 10, 11, 12
    waits: WaitModel
    cmpx_writes_sgpr: bool          # gfx9's v_cmpx has an SGPR destination; gfx10+ writes EXEC
    registers: RegisterFile | None  # None: no occupancy estimate for this arch
    target: Target | None


def arch_info(name: str) -> ArchInfo:
    generation = generation_of(name)
    if generation < 9 or generation > 12:
        raise UnknownArch(f"{name}: cocheck knows the wait counters of gfx9 to gfx12 only")
    target = targets.get(name) if name in targets.NAMES else None
    return ArchInfo(name=name, generation=generation, waits=_wait_model(generation),
                    cmpx_writes_sgpr=generation == 9, registers=_register_file(target),
                    target=target)


def generation_of(name: str) -> int:
    found = GFX_NAME.match(name)
    if not found:
        raise UnknownArch(f"{name!r} is not an AMDGPU arch name (gfx942, gfx1100, ...)")
    digits = found.group(1)
    return int(digits[:2]) if len(digits) >= 4 else int(digits[0])


def _wait_model(generation: int) -> WaitModel:
    if generation >= 12:
        return WaitModel(SPLIT_GFX12, MAX_COUNT, split=True)
    if generation >= 10:
        return WaitModel(LEGACY_GFX10, MAX_COUNT, split=False)
    return WaitModel(LEGACY_GFX9, GFX9_MAX_COUNT, split=False)


def _register_file(target: Target | None) -> RegisterFile | None:
    if target is None or not target.vgpr_granule:  # 0: no AMD register-file facts
        return None
    granule, max_waves = target.vgpr_granule, target.max_waves_per_simd
    per_lane = target.register_file_bytes // (4 * target.wave_size)
    return RegisterFile(vgprs_per_simd_lane=per_lane, wave_size=target.wave_size,
                        granule=granule, max_waves=max_waves,
                        max_vgprs=target.vgprs_per_lane + target.agprs_per_lane,
                        lds_bytes=target.lds_bytes, sgprs=target.sgprs)

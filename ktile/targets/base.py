"""What a target is: the facts the passes, translation and interpreter ask about, as data.

No code outside `ktile/targets/` compares arch names: it asks a `Target` for a capability
(`target.has_lds_dma`, `target.mma_shape_for(dtype)`). Adding an arch is adding a table.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MmaShape:
    """One matrix-core instruction: D(m×n, acc) += A(m×k, dtype) · B(k×n, dtype)."""
    m: int
    n: int
    k: int
    dtype: str          # operand dtype name as in ktile.dtypes (bf16, fp16, fp8, i8); a name
                        # ktile.dtypes lacks (fp8_e4m3fnuz) records an instruction for reports
                        # that no kernel type selects
    acc: str            # accumulator dtype name (fp32, i32)
    instruction: str    # the ISA mnemonic, for reports and docs


@dataclass(frozen=True)
class FragmentMap:
    """Which lane holds which element of an MMA operand or accumulator fragment.

    `lane_of(row, col)` and `slot_of(row, col)` are given as formulas over the instruction's
    tile (m×k for A, k×n for B, m×n for the accumulator), written as Python expressions in
    `row`, `col` and the constants of the instruction; `replicated` counts how many lanes hold
    each element (RDNA3 WMMA: 2, operands are replicated across the half-waves).

    `slot` numbers the element inside the lane's fragment (PTX a0..a7; two 16-bit slots share
    one 32-bit register). `lane` names the lowest lane holding the element; its replicas are
    `lane + r * (wave_size // replicated)` for r in range(replicated)."""
    operand: str        # "a", "b" or "acc"
    lane: str
    slot: str
    replicated: int = 1


@dataclass(frozen=True)
class WaitCounter:
    """A hardware counter that a wait instruction drains to a count."""
    name: str           # as ktile's waits pass calls it: "vm" (global→shared) or "lds"
    isa_name: str       # vmcnt, lgkmcnt, loadcnt, dscnt, cp.async group, mbarrier
    max_count: int      # the largest count the instruction can encode
    wait_asm: str = ""  # the wait as emitted, "{n}" standing for the count: the spelling differs
                        # per ISA and a wrong one may still assemble (gfx12 takes s_waitcnt)


@dataclass(frozen=True)
class TensorBox:
    """The TMA box of a copy into one shared tile shape: `cols` × `rows` elements (one
    swizzle atom wide), `swizzle_bytes` the swizzle mode (128, 64 or 32)."""
    cols: int
    rows: int
    swizzle_bytes: int


@dataclass(frozen=True)
class Multiprocessor:
    """One NVIDIA multiprocessor's limits, for the occupancy estimate of a build."""
    registers: int                  # 32-bit registers per SM
    partitions: int                 # sub-partitions: a warp lives on one, with 1/partitions of the file
    register_unit: int              # registers are allocated per warp in units of this
    max_warps: int
    max_blocks: int
    shared_bytes: int               # shared memory per SM
    shared_reserved_per_block: int  # the runtime's own shared memory per resident block

    def register_limited_warps(self, registers: int, warps: int) -> int:
        """Resident warps per multiprocessor that `registers` per thread allow for blocks of
        `warps` warps (the registers limit of an occupancy; ptxas.occupancy takes the others
        too)."""
        per_warp = -(-max(registers, 1) * 32 // self.register_unit) * self.register_unit
        blocks = self.partitions * (self.registers // self.partitions // per_warp) // warps
        return min(blocks * warps, self.max_warps)


@dataclass(frozen=True)
class Target:
    name: str                       # gfx1100, sm_90a
    vendor: str                     # "amd" or "nvidia"
    family: str                     # rdna3, rdna4, cdna3, cdna4, hopper (header folder name)
    wave_size: int                  # threads per wave / warp
    max_threads_per_block: int
    lds_bytes: int                  # shared memory a block may use
    vgprs_per_lane: int             # architectural vector registers a lane may address
    agprs_per_lane: int             # accumulation registers (CDNA), 0 where none
    sgprs: int                      # scalar registers a wave may use (0 on NVIDIA)
    register_file_bytes: int        # per SIMD / SM sub-partition, for occupancy
    mma_shapes: tuple[MmaShape, ...]     # the first one per dtype is the preferred one
    fragments: tuple[FragmentMap, ...]   # lane maps of mma_shape_for("bf16"); fp16 shares them
    wait_counters: tuple[WaitCounter, ...]  # no counter of a name: that kind needs no wait
                                            # (NVIDIA shared→register loads are scoreboarded)
    has_lds_dma: bool               # AMD global→LDS DMA (buffer/global_load … lds): bypasses
                                    # registers, completes on the "vm" counter
    has_async_copy: bool            # any asynchronous global→shared path: the AMD DMA, or
                                    # NVIDIA cp.async / TMA (which are not has_lds_dma)
    fast_lds_operand_layout: str | None  # 16-bit MMA operand layout read at full width, None: both
    dtypes: tuple[str, ...]         # element types this target can hold and compute in
    lds_dma_bytes_per_lane: int = 0  # widest global→LDS DMA per lane (gfx942: 4, gfx950: 16)
    vgpr_granule: int = 0            # VGPRs are allocated in multiples of this (AMD; 0: unknown)
    max_waves_per_simd: int = 0      # the most waves one SIMD holds (AMD; 0: unknown)
    flat_layout: str = "row"         # the header layout tag a flat-layout tile is held in: "flat"
                                     # where the target's headers implement memory order
                                     # (sm_90a), else the row layout (each element in one lane;
                                     # layouts are internal, so results are the same)
    mma_shared_alignment: int = 16   # bytes a shared tile that an mma reads directly (the b of
                                     # `a @ s.T`) is aligned to: sm_90a's wgmma swizzle repeats
                                     # on 1024-byte boundaries of the shared address
    mma_shared_kn_dtypes: tuple[str, ...] = ()  # operand types whose `a @ s` (the shared b
                                     # holding B as K×N, N contiguous) the target issues
                                     # (sm_90a: wgmma's transposed-B form, 16-bit types only)
    multiprocessor: Multiprocessor | None = None  # NVIDIA: one SM's limits (occupancy)
    global_index_limit: int = 0      # a global argument's extents, and its row / column
                                     # strides in elements and in bytes, must be below
                                     # this (AMD buffer addressing); 0: no such limit
    tensor_copy_swizzles: tuple[int, ...] = ()  # row widths in bytes (a multiple of the first,
                                     # or one of the others) whose shared tile layout is a TMA
                                     # swizzle mode: group loads into such tiles are TMA copies,
                                     # completing on an mbarrier per tile (sm_90a)
    max_arrivals: int = 0            # the most tiles a kernel's TMA copies may write
    warp_specialization: bool = False  # warpgroup roles (a producer issuing TMA copies,
                                     # consumers issuing MMAs) over mbarrier-synchronised
                                     # stages, with per-role register limits (setmaxnreg)
    copy_alignment: int = 16         # bytes a tile a TMA copy writes is aligned to (sm_90a:
                                     # the swizzle repeats on 1024-byte boundaries)
    # The register model of the budgets pass (trace time): a register vector's elements are
    # held by this many lanes each, along (rows, cols), as the tiles it broadcasts onto lay out
    # their rows and columns (1: spread over the wave, the AMD default until measured)
    vector_replication: tuple[int, int] = (1, 1)
    register_overhead: int = 0       # registers per lane beyond the live tiles and vectors
                                     # (indices, addresses, the globals' extents), calibrated
    load_registers_per_element: float = 0.0  # registers a register load from global holds per
                                     # element per lane while it is in flight (row addresses,
                                     # edge predicates), on top of its destination
    occupancy_warn_below: float = 0.0  # warn when the estimate leaves fewer resident warps per
                                     # multiprocessor than this share of its maximum (NVIDIA)
    notes: tuple[str, ...] = field(default=())

    def mma_shape_for(self, dtype: str) -> MmaShape | None:
        """The preferred MMA instruction for this operand dtype, None when there is none."""
        return next((s for s in self.mma_shapes if s.dtype == dtype), None)

    @property
    def has_fp8_mma(self) -> bool:
        return self.mma_shape_for("fp8") is not None

    def supports_dtype(self, dtype: str) -> bool:
        return dtype in self.dtypes

    def tensor_box(self, rows: int, cols: int, elem_bytes: int) -> TensorBox | None:
        """The TMA box of a copy into a rows × cols shared tile of `elem_bytes` elements, None
        when the target has no tensor copies or the tile's layout is no swizzle mode. Mirrors
        `kt::tensor_box` (nvidia/hopper/tensor_copy.hpp): a box is at most 256 rows and
        divides the tile's rows."""
        if not self.tensor_copy_swizzles:
            return None
        row_bytes, widest = cols * elem_bytes, self.tensor_copy_swizzles[0]
        swizzle = widest if row_bytes % widest == 0 else (
            row_bytes if row_bytes in self.tensor_copy_swizzles else 0)
        box_rows = rows if rows <= 256 else next(
            (b for b in range(256, 7, -8) if rows % b == 0), 0)
        if not swizzle or not box_rows:
            return None
        return TensorBox(swizzle // elem_bytes, box_rows, swizzle)

    def wait_counter(self, name: str) -> WaitCounter | None:
        return next((c for c in self.wait_counters if c.name == name), None)

    @property
    def max_warps(self) -> int:
        return self.max_threads_per_block // self.wave_size

"""sm_90a: NVIDIA Hopper (H100 / H200), warp 32, mma.sync and wgmma, cp.async and TMA.

Sources: CUDA C++ Programming Guide (compute capability 9.0 table), PTX ISA (mma.sync
fragment layouts for m16n8k16 / m16n8k32, wgmma, cp.async.wait_group). Numbers marked
"H200" were read with cuDeviceGetAttribute on the lent H200 (driver 580.159.04); numbers
marked "ptxas 13.0" come from nvcc 13.0 -arch=sm_90a and the SASS it emits.
"""
from __future__ import annotations

from .base import FragmentMap, MmaShape, Multiprocessor, Target, WaitCounter

_MMA = "mma.sync.aligned."
_WGMMA = "wgmma.mma_async.sync.aligned."

TARGET = Target(
    name="sm_90a",
    vendor="nvidia",
    family="hopper",
    wave_size=32,
    max_threads_per_block=1024,         # H200: MAX_THREADS_PER_BLOCK
    lds_bytes=232448,                   # H200: MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (227 KiB)
    vgprs_per_lane=255,                 # CUDA guide: max 255 registers per thread
    agprs_per_lane=0,
    sgprs=0,
    # H200: 65536 32-bit registers per SM, split over 4 SM sub-partitions
    register_file_bytes=65536 * 4 // 4,
    mma_shapes=(
        MmaShape(16, 8, 16, "bf16", "fp32", _MMA + "m16n8k16.row.col.f32.bf16.bf16.f32"),
        MmaShape(16, 8, 16, "fp16", "fp32", _MMA + "m16n8k16.row.col.f32.f16.f16.f32"),
        MmaShape(16, 8, 32, "i8", "i32", _MMA + "m16n8k32.row.col.s32.s8.s8.s32"),
        MmaShape(16, 8, 32, "fp8", "fp32", _MMA + "m16n8k32.row.col.f32.e4m3.e4m3.f32"),
        # warpgroup (4 warps, 128 threads) MMAs, operands from shared memory descriptors;
        # N runs up to 256 (the PTX ISA lists the N each type allows); the widest is
        # listed. ptxas 13.0 emits native HGMMA / IGMMA / QGMMA for these
        MmaShape(64, 256, 16, "bf16", "fp32", _WGMMA + "m64n256k16.f32.bf16.bf16"),
        MmaShape(64, 256, 16, "fp16", "fp32", _WGMMA + "m64n256k16.f32.f16.f16"),
        MmaShape(64, 256, 32, "i8", "i32", _WGMMA + "m64n256k32.s32.s8.s8"),
        MmaShape(64, 256, 32, "fp8", "fp32", _WGMMA + "m64n256k32.f32.e4m3.e4m3"),
    ),
    # PTX ISA, mma.m16n8k16 fragments: groupID = lane >> 2, threadID_in_group = lane % 4.
    # A a0..a7: row groupID (+8 for a2,a3,a6,a7), col 2*threadID_in_group + (i & 1) (+8 for i >= 4)
    # B b0..b3: row 2*threadID_in_group + (i & 1) (+8 for i >= 2), col groupID
    # C c0..c3: row groupID (+8 for i >= 2), col 2*threadID_in_group + (i & 1)
    fragments=(
        FragmentMap("a", lane="4 * (row % 8) + (col % 8) // 2",
                    slot="col % 2 + 2 * (row // 8) + 4 * (col // 8)"),
        FragmentMap("b", lane="4 * col + (row % 8) // 2", slot="row % 2 + 2 * (row // 8)"),
        FragmentMap("acc", lane="4 * (row % 8) + col // 2", slot="col % 2 + 2 * (row // 8)"),
    ),
    wait_counters=(
        # ptxas 13.0 emits DEPBAR.LE SB0, N with a 6-bit N and clamps anything above 63 to
        # 63 without a warning; the PTX ISA states no bound
        WaitCounter("vm", "cp.async group", 63, "cp.async.wait_group {n};"),
        # no "lds" counter: ldmatrix / ld.shared results are scoreboarded by the hardware
        # wgmma groups (an mma from shared stays in flight until wgmma.wait_group N); the
        # instruction takes any immediate, ktile's header 0..7
        WaitCounter("wgmma", "wgmma group", 7, "wgmma.wait_group.sync.aligned {n};"),
    ),
    has_lds_dma=False,                  # the AMD DMA kind; Hopper's paths are below
    has_async_copy=True,                # cp.async (sm_80+) and TMA cp.async.bulk (sm_90)
    fast_lds_operand_layout=None,       # ldmatrix and ldmatrix .trans both read 16-bit tiles
    flat_layout="flat",                 # flat_tile.hpp: 16-byte units per lane, no shuffles
    # PTX ISA, wgmma shared-memory layouts: the 128B swizzle XORs address bits 4-6 with bits
    # 7-9, so a tile a descriptor describes with base offset 0 starts on a 1024-byte boundary
    mma_shared_alignment=1024,
    # PTX ISA, wgmma: imm-trans-b (B N-major in shared memory) is allowed for .f16 / .bf16 only
    mma_shared_kn_dtypes=("bf16", "fp16"),
    # CUDA C++ Programming Guide, compute capability 9.0; H200 attributes (cuDeviceGetAttribute)
    # register_tile.hpp: a row vector holds rows 16c + 8h + lane_group (each element in the 4
    # lanes of a quad), a column vector columns 16c + 8h + 2t + {0, 1} (each in 8 lanes)
    vector_replication=(4, 8),
    # fitted to ptxas 13.0's counts of the 16 example kernels (-Xptxas -v, 2026-12-01): the
    # estimate is within tests/tier1/test_register_estimates.py's margin of each
    register_overhead=8,
    load_registers_per_element=1.25,
    # issue #10: below about a quarter of the SM's 64 warps, latency hiding is visibly short;
    # the estimate warns at trace time instead of the build's report alone. 14 warps (7 + 7,
    # 22%) is allowed: the H200 sweep of 2026-12-02 measured RMSNorm 4096 x 14336 fastest on
    # blocks of 7 warps x two 16 x 64 tiles (68.3 us; the 16-warp route padded to 16384: 93.4)
    occupancy_warn_below=14 / 64,
    multiprocessor=Multiprocessor(
        registers=65536, partitions=4, register_unit=256, max_warps=64, max_blocks=32,
        shared_bytes=233472,            # 228 KiB per SM
        shared_reserved_per_block=1024),
    dtypes=("bf16", "fp16", "fp32", "i32", "i8", "bool", "fp8"),
    # PTX ISA: cp.async.bulk.tensor (TMA) completes on an mbarrier (complete_tx), not on the
    # cp.async group counter; CUDA driver API, CUtensorMapSwizzle: the 128B / 64B / 32B modes
    # XOR address bits [4, 4+b) with [7, 7+b), exactly shared_tile.hpp's layouts
    max_arrivals=16,                    # kt::arrivals keeps two bits per slot in a register
    tensor_copy_swizzles=(128, 64, 32),
    copy_alignment=1024,                # a TMA copy's tile: the swizzle repeats per 1 KiB
    # PTX ISA 8.0: setmaxnreg (sm_90a) moves registers between warpgroups; mbarriers with
    # transaction counts let a producer warpgroup hand stages to consumer warpgroups
    warp_specialization=True,
    notes=(
        "mma.sync e4m3 has no native path on sm_90a: ptxas 13.0 unpacks to f16 "
        "(F2FP.F16.E4M3.UNPACK_B) and issues two HMMA.16816 (exact, but at f16 rate); "
        "wgmma e4m3 becomes a native QGMMA.",
        "TMA loads (cp.async.bulk.tensor) complete on an mbarrier, not on the cp.async "
        "group counter: a wait names the mbarriers of the TMA copies it completes.",
        "The shared-memory limit needs cudaFuncSetAttribute(MaxDynamicSharedMemorySize); "
        "without it a block gets 48 KiB, static and dynamic together. 1 KiB per block is reserved "
        "on top (H200).",
        "wgmma needs the 'a' suffix: sm_90 without it rejects wgmma.fence.",
    ),
)

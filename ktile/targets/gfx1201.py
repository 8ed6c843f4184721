"""gfx1201: RDNA4 (Radeon RX 9070 XT), wave32, gfx12 WMMA, split wait counters.

Sources: AMD "RDNA4 Instruction Set Architecture" (WMMA, S_WAIT_*CNT), LLVM AMDGPUUsage and
AMDGPUBaseInfo.cpp, GPUOpen "Using the Matrix Cores of AMD RDNA 4 architecture GPUs",
Triton's WMMA v2 linear layouts. Encodings and limits marked "llvm-mc-22"/"llc-22" were
checked with Debian's LLVM 22.1.8.
"""
from __future__ import annotations

from .base import FragmentMap, MmaShape, Target, WaitCounter

TARGET = Target(
    name="gfx1201",
    vendor="amd",
    family="rdna4",
    wave_size=32,
    max_threads_per_block=1024,         # HIP/LLVM max flat workgroup size
    lds_bytes=64 * 1024,                # llc-22: "local memory (65540) exceeds limit (65536)"
    vgprs_per_lane=256,
    agprs_per_lane=0,
    sgprs=106,                          # AMDGPUBaseInfo getAddressableNumSGPRs: gfx10+ 106
    # 1536 VGPRs x 32 lanes x 4 B per SIMD: llc-22 fits 180 live VGPRs at 1024 threads/block,
    # as on gfx1100 (a 1024-VGPR part such as gfx1102 stops at 128)
    register_file_bytes=1536 * 32 * 4,
    mma_shapes=(
        MmaShape(16, 16, 16, "bf16", "fp32", "v_wmma_f32_16x16x16_bf16"),
        MmaShape(16, 16, 16, "fp16", "fp32", "v_wmma_f32_16x16x16_f16"),
        MmaShape(16, 16, 16, "i8", "i32", "v_wmma_i32_16x16x16_iu8"),
        MmaShape(16, 16, 16, "fp8", "fp32", "v_wmma_f32_16x16x16_fp8_fp8"),  # OCP e4m3fn
    ),
    # gfx12 WMMA layout, changed from gfx11 (GPUOpen RDNA4 post): no half-wave replication.
    # A: lane l holds row l%16, k = 8*(l//16) .. +7 (4 VGPRs); B likewise with the column.
    # D: lane l, VGPR r -> row r + 8*(l//16), col l%16 (Triton WMMA v2, tinygrad gfx1201 model).
    fragments=(
        FragmentMap("a", lane="row + 16 * (col // 8)", slot="col % 8"),
        FragmentMap("b", lane="col + 16 * (row // 8)", slot="row % 8"),
        FragmentMap("acc", lane="col + 16 * (row // 8)", slot="row % 8"),
    ),
    wait_counters=(
        # gfx12 splits vmcnt/lgkmcnt; loadcnt and dscnt are 6 bits (AMDGPUBaseInfo)
        WaitCounter("vm", "loadcnt", 63, "s_wait_loadcnt {n}"),
        WaitCounter("lds", "dscnt", 63, "s_wait_dscnt {n}"),
    ),
    has_lds_dma=False,                  # llvm-mc-22: no buffer/global load ... lds on gfx1201
    has_async_copy=False,
    fast_lds_operand_layout="row",      # llvm-mc-22: ds_load_tr16_b128 not on gfx1201
    # LLVM AMDGPUBaseInfo getVGPRAllocGranule / getMaxWavesPerEU at this wave size; matches
    # clang-22's reported occupancy (tests/tier1/test_cocheck_resources.py)
    vgpr_granule=24,
    max_waves_per_simd=16,
    # buffer resources take 32-bit byte offsets; the headers give each one a range of
    # 0x7fffffff bytes and read extents and row / column strides as int32
    # (ktile/amd/common/isa_memory.hpp, global_window.hpp)
    global_index_limit=2**31,
    dtypes=("bf16", "fp16", "fp32", "i32", "i8", "bool", "fp8"),
    notes=(
        "Waits are s_wait_loadcnt / s_wait_dscnt / s_wait_storecnt / s_wait_kmcnt (kmcnt: 5 "
        "bits). The legacy s_waitcnt still assembles for gfx12 but LLVM never emits it.",
        "fp8 WMMA reads OCP e4m3fn (and e5m2 as bf8), not the fnuz formats of gfx942.",
        "global_load_tr_b128 transposes global->VGPR; there is no LDS transpose read.",
        "The gfx11 WMMA builtin is not rejected by clang's front end on gfx12: the backend "
        "fails to select it. Pick the gfx12 builtin (_w32_gfx12) by this table.",
    ),
)

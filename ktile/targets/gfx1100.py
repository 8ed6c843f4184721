"""gfx1100: RDNA3 (Radeon RX 7900 XTX / PRO W7900), wave32, WMMA.

Sources: AMD "RDNA3 Instruction Set Architecture" (WMMA, S_WAITCNT), LLVM AMDGPUUsage and
AMDGPUBaseInfo.cpp, GPUOpen "How to accelerate AI applications on RDNA 3 using WMMA".
Encodings and limits marked "llvm-mc-22"/"llc-22" were checked with Debian's LLVM 22.1.8.
"""
from __future__ import annotations

from .base import FragmentMap, MmaShape, Target, WaitCounter

TARGET = Target(
    name="gfx1100",
    vendor="amd",
    family="rdna3",
    wave_size=32,
    max_threads_per_block=1024,         # HIP/LLVM max flat workgroup size
    lds_bytes=64 * 1024,                # llc-22: "local memory (65540) exceeds limit (65536)"
    vgprs_per_lane=256,                 # 8-bit VGPR operand field
    agprs_per_lane=0,
    sgprs=106,                          # AMDGPUBaseInfo getAddressableNumSGPRs: gfx10+ 106
    # 1536 VGPRs x 32 lanes x 4 B per SIMD (LLVM Feature1_5xVGPRs; llc-22 fits 180 live VGPRs
    # at 1024 threads/block where gfx1102, with 1024 VGPRs, stops at 128)
    register_file_bytes=1536 * 32 * 4,
    mma_shapes=(
        MmaShape(16, 16, 16, "bf16", "fp32", "v_wmma_f32_16x16x16_bf16"),
        MmaShape(16, 16, 16, "fp16", "fp32", "v_wmma_f32_16x16x16_f16"),
        MmaShape(16, 16, 16, "i8", "i32", "v_wmma_i32_16x16x16_iu8"),
    ),
    # RDNA3 ISA WMMA layout (GPUOpen WMMA-on-RDNA3 post, tinygrad's gfx1100 emulator agrees):
    # A: lane holds row (mod 16) with all 16 k; B: lane holds column with all 16 k; lanes l and
    # l+16 must hold identical operand data. D: lane l, VGPR r -> row 2r + l//16, col l%16.
    fragments=(
        FragmentMap("a", lane="row", slot="col", replicated=2),
        FragmentMap("b", lane="col", slot="row", replicated=2),
        FragmentMap("acc", lane="col + 16 * (row % 2)", slot="row // 2"),
    ),
    wait_counters=(
        # vmcnt 6 bits, lgkmcnt 6 bits on gfx10+ (AMDGPUBaseInfo; llvm-mc-22 rejects 64)
        WaitCounter("vm", "vmcnt", 63, "s_waitcnt vmcnt({n})"),
        WaitCounter("lds", "lgkmcnt", 63, "s_waitcnt lgkmcnt({n})"),
    ),
    has_lds_dma=False,                  # clang-22: "needs target feature vmem-to-lds-load-insts"
    has_async_copy=False,
    fast_lds_operand_layout="row",      # only row layout reads as ds_load_b128; no LDS transpose
    # LLVM AMDGPUBaseInfo getVGPRAllocGranule / getMaxWavesPerEU at this wave size; matches
    # clang-22's reported occupancy (tests/tier1/test_cocheck_resources.py)
    vgpr_granule=24,
    max_waves_per_simd=16,
    # buffer resources take 32-bit byte offsets; the headers give each one a range of
    # 0x7fffffff bytes and read extents and row / column strides as int32
    # (ktile/amd/common/isa_memory.hpp, global_window.hpp)
    global_index_limit=2**31,
    dtypes=("bf16", "fp16", "fp32", "i32", "i8", "bool"),
    notes=(
        "WMMA operands are replicated across half-waves: a bf16 A/B fragment costs 8 VGPRs, "
        "as many as the fp32 accumulator; mismatched halves give undefined results, no fault.",
        "vmcnt counts loads only; stores drain on the separate vscnt (s_waitcnt_vscnt).",
        "lgkmcnt also counts scalar memory loads and messages, not only LDS.",
        "No fp8: WMMA fp8 arrives with gfx12.",
    ),
)

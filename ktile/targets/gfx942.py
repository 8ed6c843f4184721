"""gfx942: CDNA3 (Instinct MI300X / MI325X), wave64, MFMA, unified VGPR/AGPR file.

Sources: AMD "AMD Instinct MI300 / CDNA3 Instruction Set Architecture" (MFMA, S_WAITCNT,
buffer loads to LDS), LLVM AMDGPUUsage and AMDGPUBaseInfo.cpp, AMD Matrix Instruction
Calculator, HIP "FP8 numbers" reference. Encodings and limits marked "llvm-mc-22"/"llc-22"
were checked with Debian's LLVM 22.1.8.
"""
from __future__ import annotations

from .base import FragmentMap, MmaShape, Target, WaitCounter

TARGET = Target(
    name="gfx942",
    vendor="amd",
    family="cdna3",
    wave_size=64,
    max_threads_per_block=1024,         # HIP/LLVM max flat workgroup size
    lds_bytes=64 * 1024,                # llc-22: "local memory (65540) exceeds limit (65536)"
    vgprs_per_lane=256,                 # arch VGPRs; AGPRs come on top (AMDGPUUsage, gfx90a+)
    agprs_per_lane=256,
    sgprs=102,                          # AMDGPUBaseInfo getAddressableNumSGPRs: gfx8/9 102
    register_file_bytes=512 * 64 * 4,   # 512 unified VGPR+AGPR x 64 lanes x 4 B per SIMD
    mma_shapes=(
        MmaShape(16, 16, 16, "bf16", "fp32", "v_mfma_f32_16x16x16_bf16"),  # builtin ..._1k
        MmaShape(16, 16, 16, "fp16", "fp32", "v_mfma_f32_16x16x16_f16"),
        MmaShape(32, 32, 8, "bf16", "fp32", "v_mfma_f32_32x32x8_bf16"),
        MmaShape(32, 32, 8, "fp16", "fp32", "v_mfma_f32_32x32x8_f16"),
        MmaShape(16, 16, 32, "i8", "i32", "v_mfma_i32_16x16x32_i8"),
        MmaShape(32, 32, 16, "i8", "i32", "v_mfma_i32_32x32x16_i8"),
        # fnuz fp8 only: recorded under a dtype name ktile.dtypes lacks, see notes
        MmaShape(16, 16, 32, "fp8_e4m3fnuz", "fp32", "v_mfma_f32_16x16x32_fp8_fp8"),
        MmaShape(32, 32, 16, "fp8_e4m3fnuz", "fp32", "v_mfma_f32_32x32x16_fp8_fp8"),
    ),
    # v_mfma_f32_16x16x16_bf16 (Matrix Instruction Calculator; tinygrad's CDNA model agrees):
    # A: lane l holds row l%16, k = 4*(l//16) .. +3; B: column l%16, same k;
    # D: lane l, VGPR r -> row 4*(l//16) + r, col l%16.
    fragments=(
        FragmentMap("a", lane="row + 16 * (col // 4)", slot="col % 4"),
        FragmentMap("b", lane="col + 16 * (row // 4)", slot="row % 4"),
        FragmentMap("acc", lane="col + 16 * (row // 4)", slot="row % 4"),
    ),
    wait_counters=(
        # gfx9: vmcnt 6 bits (split field), lgkmcnt 4 bits (AMDGPUBaseInfo; llvm-mc-22)
        WaitCounter("vm", "vmcnt", 63, "s_waitcnt vmcnt({n})"),
        WaitCounter("lds", "lgkmcnt", 15, "s_waitcnt lgkmcnt({n})"),
    ),
    # buffer_load_{ubyte,ushort,dword} ... lds and global_load_lds_dword exist; the x4 forms
    # do not (llvm-mc-22; clang-22: "invalid size value" for 16 B)
    has_lds_dma=True,
    has_async_copy=True,
    lds_dma_bytes_per_lane=4,
    fast_lds_operand_layout="row",      # 4 consecutive k per lane: ds_read_b64; no LDS transpose
    # LLVM AMDGPUBaseInfo getVGPRAllocGranule / getMaxWavesPerEU at this wave size; matches
    # clang-22's reported occupancy (tests/tier1/test_cocheck_resources.py)
    vgpr_granule=8,
    max_waves_per_simd=8,
    # buffer resources take 32-bit byte offsets; the headers give each one a range of
    # 0x7fffffff bytes and read extents and row / column strides as int32
    # (ktile/amd/common/isa_memory.hpp, global_window.hpp)
    global_index_limit=2**31,
    dtypes=("bf16", "fp16", "fp32", "i32", "i8", "bool"),
    notes=(
        "fp8 MFMA reads e4m3fnuz (bias 8, max 240, 0x80 is NaN), not the OCP e4m3fn that "
        "ktile's fp8 is; the same bits mean another value. Its fp8 MFMAs are listed under "
        "fp8_e4m3fnuz, so has_fp8_mma is False until a conversion path exists.",
        "Global->LDS DMA is at most 4 B per lane and completes on vmcnt.",
        "The AGPR half of the register file is reached only through MFMA results and "
        "v_accvgpr moves; .vgpr_count in the code object counts both halves.",
    ),
)

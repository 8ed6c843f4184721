"""gfx950: CDNA4 (Instinct MI350X / MI355X), wave64, MFMA, 160 KiB LDS, global→LDS DMA.

Sources: AMD "AMD Instinct CDNA4 Instruction Set Architecture" (MFMA, buffer loads to LDS,
DS_READ_B64_TR_B16), LLVM AMDGPUUsage and AMDGPUBaseInfo.cpp, AMD Matrix Instruction
Calculator. Encodings and limits marked "llvm-mc-22"/"llc-22" were checked with Debian's
LLVM 22.1.8.
"""
from __future__ import annotations

from .base import FragmentMap, MmaShape, Target, WaitCounter

TARGET = Target(
    name="gfx950",
    vendor="amd",
    family="cdna4",
    wave_size=64,
    max_threads_per_block=1024,         # HIP/LLVM max flat workgroup size
    lds_bytes=160 * 1024,               # llc-22: "local memory (163844) exceeds limit (163840)"
    vgprs_per_lane=256,                 # arch VGPRs; AGPRs come on top (AMDGPUUsage, gfx90a+)
    agprs_per_lane=256,
    sgprs=102,                          # AMDGPUBaseInfo getAddressableNumSGPRs: gfx8/9 102
    register_file_bytes=512 * 64 * 4,   # 512 unified VGPR+AGPR x 64 lanes x 4 B per SIMD
    mma_shapes=(
        MmaShape(16, 16, 32, "bf16", "fp32", "v_mfma_f32_16x16x32_bf16"),
        MmaShape(16, 16, 32, "fp16", "fp32", "v_mfma_f32_16x16x32_f16"),
        MmaShape(32, 32, 16, "bf16", "fp32", "v_mfma_f32_32x32x16_bf16"),
        MmaShape(32, 32, 16, "fp16", "fp32", "v_mfma_f32_32x32x16_f16"),
        MmaShape(16, 16, 64, "i8", "i32", "v_mfma_i32_16x16x64_i8"),
        MmaShape(32, 32, 32, "i8", "i32", "v_mfma_i32_32x32x32_i8"),
        # fp8 is OCP e4m3fn here; the x32 form keeps the gfx942 lane pattern, the f8f6f4
        # forms (8 VGPRs per operand) run at twice the rate
        MmaShape(16, 16, 32, "fp8", "fp32", "v_mfma_f32_16x16x32_fp8_fp8"),
        MmaShape(32, 32, 16, "fp8", "fp32", "v_mfma_f32_32x32x16_fp8_fp8"),
        MmaShape(16, 16, 128, "fp8", "fp32", "v_mfma_f32_16x16x128_f8f6f4"),
        MmaShape(32, 32, 64, "fp8", "fp32", "v_mfma_f32_32x32x64_f8f6f4"),
    ),
    # v_mfma_f32_16x16x32_bf16 (Matrix Instruction Calculator; tinygrad's gfx950 model agrees):
    # A: lane l holds row l%16, k = 8*(l//16) .. +7; B: column l%16, same k;
    # D: lane l, VGPR r -> row 4*(l//16) + r, col l%16 (as for every 16x16 MFMA).
    fragments=(
        FragmentMap("a", lane="row + 16 * (col // 8)", slot="col % 8"),
        FragmentMap("b", lane="col + 16 * (row // 8)", slot="row % 8"),
        FragmentMap("acc", lane="col + 16 * (row // 4)", slot="row % 4"),
    ),
    wait_counters=(
        # gfx9: vmcnt 6 bits (split field), lgkmcnt 4 bits (AMDGPUBaseInfo; llvm-mc-22)
        WaitCounter("vm", "vmcnt", 63, "s_waitcnt vmcnt({n})"),
        WaitCounter("lds", "lgkmcnt", 15, "s_waitcnt lgkmcnt({n})"),
    ),
    # buffer_load_dwordx4 ... lds / global_load_lds_dwordx4 (llvm-mc-22): 16 B per lane,
    # written to LDS without passing through VGPRs; completion is counted by vmcnt
    has_lds_dma=True,
    has_async_copy=True,
    lds_dma_bytes_per_lane=16,
    fast_lds_operand_layout=None,       # ds_read_b64_tr_b16 reads the column layout at width
    # LLVM AMDGPUBaseInfo getVGPRAllocGranule / getMaxWavesPerEU at this wave size; matches
    # clang-22's reported occupancy (tests/tier1/test_cocheck_resources.py)
    vgpr_granule=8,
    max_waves_per_simd=8,
    # buffer resources take 32-bit byte offsets; the headers give each one a range of
    # 0x7fffffff bytes and read extents and row / column strides as int32
    # (ktile/amd/common/isa_memory.hpp, global_window.hpp)
    global_index_limit=2**31,
    dtypes=("bf16", "fp16", "fp32", "i32", "i8", "bool", "fp8"),
    notes=(
        "Global->LDS DMA (1, 2, 4, 12 or 16 B per lane) is asynchronous and completes on "
        "vmcnt: wait vmcnt, then barrier, before any wave reads the LDS it wrote.",
        "fp8 MFMAs read OCP e4m3fn (gfx942 read fnuz).",
        "The 16x16x16 / 32x32x8 bf16 MFMAs of gfx942 still exist at half the K per issue.",
    ),
)

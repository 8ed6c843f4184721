// Three SGPRs spilled into lanes of v7 and reloaded, as clang does when a kernel keeps more
// scalar values live than its SGPRs hold: no VGPR spill, no scratch (the metadata says so).
// Assembled by tests/tier1/test_cocheck_spills.py, with tests/data/cocheck on the include path.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	v_writelane_b32 v7, s4, 0
	v_writelane_b32 v7, s5, 1
	v_writelane_b32 v7, s6, 2
	s_waitcnt lgkmcnt(0)
	global_load_b32 v1, v0, s[2:3]
	v_readlane_b32 s4, v7, 0
	v_readlane_b32 s5, v7, 1
	v_readlane_b32 s6, v7, 2
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v2, s4, v1
	global_store_b32 v0, v2, s[2:3]
	s_endpgm
.Lplanted_end:
	.size planted, .Lplanted_end-planted
	.rodata
	.p2align 6
	.amdhsa_kernel planted
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_wavefront_size32 1
		.amdhsa_next_free_vgpr 8
		.amdhsa_next_free_sgpr 8
	.end_amdhsa_kernel
	.amdgpu_metadata
---
amdhsa.kernels:
  - .name: planted
    .symbol: planted.kd
    .kernarg_segment_size: 8
    .kernarg_segment_align: 8
    .group_segment_fixed_size: 0
    .private_segment_fixed_size: 0
    .wavefront_size: 32
    .sgpr_count: 106
    .vgpr_count: 8
    .vgpr_spill_count: 0
    .sgpr_spill_count: 3
    .max_flat_workgroup_size: 256
amdhsa.target: amdgcn-amd-amdhsa--gfx1100
amdhsa.version: [1, 2]
...
	.end_amdgpu_metadata

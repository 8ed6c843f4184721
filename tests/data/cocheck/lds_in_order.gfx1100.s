// LDS loads complete in order: lgkmcnt(1) covers the first of two, not the second; a
// register overwritten while an LDS load still writes it is a hazard too.
	.include "kernel_begin.inc"
	ds_load_b32 v1, v0
	ds_load_b32 v2, v0 offset:4
	s_waitcnt lgkmcnt(1)
	v_add_f32_e32 v3, v1, v1
	v_add_f32_e32 v4, v2, v2                 // expect wait-hazard: s_waitcnt lgkmcnt(0)
	ds_load_b32 v5, v0 offset:8
	v_mov_b32_e32 v5, 0                      // expect wait-hazard: s_waitcnt lgkmcnt(0)
	s_endpgm
	.include "kernel_end.gfx1100.inc"

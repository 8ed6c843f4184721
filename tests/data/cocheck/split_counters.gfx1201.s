// gfx12's split counters: s_wait_dscnt covers the LDS load, not the global one.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_wait_kmcnt 0x0
	global_load_b32 v1, v0, s[2:3]
	ds_load_b32 v2, v0
	s_wait_dscnt 0x0
	v_add_f32_e32 v3, v2, v2
	v_add_f32_e32 v4, v1, v1                 // expect wait-hazard: s_wait_loadcnt 0
	global_store_b32 v0, v4, s[2:3]
	s_endpgm
	.include "kernel_end.gfx1201.inc"

// A global load read with no wait: the add may see v1 before the load lands.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	global_load_b32 v1, v0, s[2:3]
	v_add_f32_e32 v2, v1, v1                 // expect wait-hazard: s_waitcnt vmcnt(0)
	global_store_b32 v0, v2, s[2:3]
	s_endpgm
	.include "kernel_end.gfx1100.inc"

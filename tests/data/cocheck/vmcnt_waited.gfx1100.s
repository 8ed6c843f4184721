// vmcnt_missing with its wait: clean.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	global_load_b32 v1, v0, s[2:3]
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v2, v1, v1
	global_store_b32 v0, v2, s[2:3]
	s_endpgm
	.include "kernel_end.gfx1100.inc"

// Scalar loads return out of order: lgkmcnt(1) after two of them covers neither.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_load_b64 s[4:5], s[0:1], 0x8
	s_waitcnt lgkmcnt(1)
	v_mov_b32_e32 v1, s2                     // expect wait-hazard: s_waitcnt lgkmcnt(0)
	s_waitcnt lgkmcnt(0)
	v_mov_b32_e32 v2, s4
	global_store_b32 v0, v1, s[4:5]
	s_endpgm
	.include "kernel_end.gfx1100.inc"

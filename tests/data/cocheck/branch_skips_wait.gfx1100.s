// The only wait sits on one side of a branch: where the paths meet, the load may still be in
// flight.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	global_load_b32 v1, v0, s[2:3]
	s_cmp_eq_u32 s2, 0
	s_cbranch_scc1 .Ljoin
	s_waitcnt vmcnt(0)
	v_mov_b32_e32 v3, v1
.Ljoin:
	v_add_f32_e32 v2, v1, v1                 // expect wait-hazard: s_waitcnt vmcnt(0)
	global_store_b32 v0, v2, s[2:3]
	s_endpgm
	.include "kernel_end.gfx1100.inc"

// A software-pipelined loop: the load for the next trip is issued at the bottom and waited at
// the top; the back edge carries it in flight. Clean.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_mov_b32 s4, 16
	s_waitcnt lgkmcnt(0)
	global_load_b32 v1, v0, s[2:3]
.Ltop:
	s_waitcnt vmcnt(0)
	v_add_f32_e32 v2, v1, v2
	global_load_b32 v1, v0, s[2:3] offset:64
	s_sub_u32 s4, s4, 1
	s_cmp_lg_u32 s4, 0
	s_cbranch_scc1 .Ltop
	s_waitcnt vmcnt(0)
	global_store_b32 v0, v2, s[2:3]
	s_endpgm
	.include "kernel_end.gfx1100.inc"

// gfx9 counts stores on vmcnt too, in order with the loads: after load, load, store,
// vmcnt(1) covers both loads. After two more loads, vmcnt(1) covers the first only.
	.include "kernel_begin.inc"
	s_load_dwordx2 s[2:3], s[0:1], 0x0
	s_waitcnt lgkmcnt(0)
	global_load_dword v1, v0, s[2:3]
	global_load_dword v2, v0, s[2:3] offset:4
	global_store_dword v0, v0, s[2:3] offset:8
	s_waitcnt vmcnt(1)
	v_add_f32_e32 v3, v1, v2
	global_load_dword v4, v0, s[2:3] offset:12
	global_load_dword v5, v0, s[2:3] offset:16
	s_waitcnt vmcnt(1)
	v_add_f32_e32 v3, v3, v4
	v_add_f32_e32 v3, v3, v5                 // expect wait-hazard: s_waitcnt vmcnt(0)
	global_store_dword v0, v3, s[2:3]
	s_endpgm
	.include "kernel_end.gfx942.inc"

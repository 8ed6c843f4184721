// split_counters with both waits in one instruction (loadcnt in bits 13:8, dscnt in 5:0),
// and a loadcnt count that covers the older of two loads: clean.
	.include "kernel_begin.inc"
	s_load_b64 s[2:3], s[0:1], 0x0
	s_wait_kmcnt 0x0
	global_load_b32 v1, v0, s[2:3]
	ds_load_b32 v2, v0
	global_load_b32 v5, v0, s[2:3] offset:4
	s_wait_loadcnt_dscnt 0x100
	v_add_f32_e32 v3, v2, v2
	v_add_f32_e32 v4, v1, v1
	s_wait_loadcnt 0x0
	v_add_f32_e32 v4, v4, v5
	global_store_b32 v0, v4, s[2:3]
	s_endpgm
	.include "kernel_end.gfx1201.inc"

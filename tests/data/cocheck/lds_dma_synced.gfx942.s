// gfx942's global->LDS copy is at most 4 bytes per lane (buffer_load_dword ... lds). Waited
// for on vmcnt, then a barrier, then the LDS read, and vmcnt(1) covering an older load while
// a newer one stays in flight: clean.
	.include "kernel_begin.inc"
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_mov_b32 m0, 0
	v_lshlrev_b32_e32 v1, 2, v0
	s_waitcnt lgkmcnt(0)
	buffer_load_dword v6, v1, s[4:7], 0 offen
	buffer_load_dword v1, s[4:7], 0 offen lds
	buffer_load_dword v7, v1, s[4:7], 0 offen offset:4
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b32 v2, v1
	v_add_f32_e32 v3, v6, v6
	s_waitcnt vmcnt(0) lgkmcnt(0)
	v_add_f32_e32 v3, v2, v7
	s_endpgm
	.include "kernel_end.gfx942.inc"

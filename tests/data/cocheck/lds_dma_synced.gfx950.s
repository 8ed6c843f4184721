// A global->LDS copy (buffer_load ... lds), its vmcnt wait, a barrier, then the LDS read:
// clean. The copy's first operand is an address, not a destination: v1 is free to reuse.
	.include "kernel_begin.inc"
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_mov_b32 m0, 0
	v_lshlrev_b32_e32 v1, 4, v0
	s_waitcnt lgkmcnt(0)
	buffer_load_dwordx4 v1, s[4:7], 0 offen lds
	v_and_b32_e32 v1, 0xff0, v1
	s_waitcnt vmcnt(0)
	s_barrier
	ds_read_b128 v[2:5], v1
	s_waitcnt lgkmcnt(0)
	s_endpgm
	.include "kernel_end.gfx950.inc"

// Trap 4: the copy is waited for, but no barrier follows, so other waves' copies may still
// be landing when this wave reads.
	.include "kernel_begin.inc"
	s_load_dwordx4 s[4:7], s[0:1], 0x0
	s_mov_b32 m0, 0
	v_lshlrev_b32_e32 v1, 4, v0
	s_waitcnt lgkmcnt(0)
	buffer_load_dwordx4 v1, s[4:7], 0 offen lds
	s_waitcnt vmcnt(0)
	ds_read_b128 v[2:5], v1                  // expect lds-dma-hazard: s_barrier
	s_waitcnt lgkmcnt(0)
	s_endpgm
	.include "kernel_end.gfx950.inc"

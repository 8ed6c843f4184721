// ktile / AMD instruction layer: memory — buffer loads and stores through a buffer resource
// (bounds checked by the hardware), plain global loads and stores, and LDS reads and writes by
// LDS byte address. Moves 1, 2, 4, 8, 12 or 16 bytes per lane, as a `word<BYTES>`.
//
// A buffer resource (V#) is four scalar registers: a base address, a byte range and the
// family's word 3 (`buffer_config`, its isa.hpp). An access whose offset is past the range
// reads zeros and writes nothing, without a fault and without a branch: the tile loads give
// the lanes and elements outside a global the offset `out_of_range`.
#pragma once

#include <cstdint>

#include "ktile/amd/common/isa_lanes.hpp"

namespace kt::isa {

template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));

// ---- what one access moves --------------------------------------------------------------------------
template <int BYTES> struct word_of {
  static_assert(BYTES == 0, "kt::isa: a memory access moves 1, 2, 4, 8, 12 or 16 bytes");
};
template <> struct word_of<1> { using type = uint8_t; };
template <> struct word_of<2> { using type = uint16_t; };
template <> struct word_of<4> { using type = uint32_t; };
template <> struct word_of<8> { using type = vec<uint32_t, 2>; };
template <> struct word_of<12> { using type = vec<uint32_t, 3>; };
template <> struct word_of<16> { using type = vec<uint32_t, 4>; };
template <int BYTES> using word = typename word_of<BYTES>::type;

// ---- buffer resources ------------------------------------------------------------------------------------
using buffer = __amdgpu_buffer_rsrc_t;

constexpr uint32_t buffer_range = 0x7fffffffu;   // the most bytes a resource covers from its base
constexpr uint32_t out_of_range = 0xffffffffu;   // an offset past every resource's range

// A resource over [base, base + bytes) (bytes <= buffer_range). `base` must be the same in
// every lane (tile origins are computed from scalars, which are); readfirstlane keeps the
// resource in scalar registers.
__device__ __forceinline__ buffer make_buffer(const void* base, uint32_t bytes = buffer_range) {
  const uint64_t at = uniform64(reinterpret_cast<uint64_t>(base));
  return __builtin_amdgcn_make_buffer_rsrc(reinterpret_cast<void*>(at), 0, static_cast<int>(bytes),
                                           static_cast<int>(buffer_config));
}

// buffer_load_{u8,u16,b32,b64,b96,b128} / buffer_load_{ubyte,ushort,dword,dwordx2..4}
template <int BYTES> __device__ __forceinline__ word<BYTES> buffer_load(buffer r, uint32_t offset) {
  const int at = static_cast<int>(offset);
  if constexpr (BYTES == 1) return __builtin_amdgcn_raw_buffer_load_b8(r, at, 0, 0);
  else if constexpr (BYTES == 2) return __builtin_amdgcn_raw_buffer_load_b16(r, at, 0, 0);
  else if constexpr (BYTES == 4) return __builtin_amdgcn_raw_buffer_load_b32(r, at, 0, 0);
  else if constexpr (BYTES == 8) return __builtin_amdgcn_raw_buffer_load_b64(r, at, 0, 0);
  else if constexpr (BYTES == 12) return __builtin_amdgcn_raw_buffer_load_b96(r, at, 0, 0);
  else return __builtin_amdgcn_raw_buffer_load_b128(r, at, 0, 0);
}

template <int BYTES> __device__ __forceinline__ void buffer_store(buffer r, uint32_t offset, word<BYTES> v) {
  const int at = static_cast<int>(offset);
  if constexpr (BYTES == 1) __builtin_amdgcn_raw_buffer_store_b8(v, r, at, 0, 0);
  else if constexpr (BYTES == 2) __builtin_amdgcn_raw_buffer_store_b16(v, r, at, 0, 0);
  else if constexpr (BYTES == 4) __builtin_amdgcn_raw_buffer_store_b32(v, r, at, 0, 0);
  else if constexpr (BYTES == 8) __builtin_amdgcn_raw_buffer_store_b64(v, r, at, 0, 0);
  else if constexpr (BYTES == 12) __builtin_amdgcn_raw_buffer_store_b96(v, r, at, 0, 0);
  else __builtin_amdgcn_raw_buffer_store_b128(v, r, at, 0, 0);
}

// ---- global memory by address -------------------------------------------------------------------------
// global_load / global_store at a 64-bit address aligned to BYTES (the rows of kt::gather /
// kt::scatter, whose rows differ per lane). The caller branches around lanes that must not access.
template <int BYTES> __device__ __forceinline__ word<BYTES> global_load(const void* p) {
  using global_word = __attribute__((address_space(1))) const word<BYTES>;
  return *reinterpret_cast<global_word*>(reinterpret_cast<uintptr_t>(p));
}
template <int BYTES> __device__ __forceinline__ void global_store(void* p, word<BYTES> v) {
  using global_word = __attribute__((address_space(1))) word<BYTES>;
  *reinterpret_cast<global_word*>(reinterpret_cast<uintptr_t>(p)) = v;
}

// ---- LDS ------------------------------------------------------------------------------------------------
// The LDS address of BYTES of static LDS owned by Owner (a type naming the user: one block of
// memory per Owner and size, beside the dynamic LDS; it shows in the code object's static LDS).
template <class Owner, int BYTES> __device__ __forceinline__ uint32_t static_lds() {
  __shared__ __attribute__((aligned(16))) unsigned char memory[BYTES];
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>((__attribute__((address_space(3))) const void*)memory));
}

// The block's dynamic LDS (the launch's shared-memory bytes).
__device__ __forceinline__ unsigned char* dynamic_lds() { return kt::amd::dynamic_lds(); }

// The LDS byte address of an object in shared memory (a kt::st, a __shared__ array).
__device__ __forceinline__ uint32_t lds_address(const void* shared_object) {
  using lds_ptr = __attribute__((address_space(3))) const void*;
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>((lds_ptr)shared_object));
}

// ds_read_{u8,u16,b32,b64,b96,b128} / ds_load_* at an LDS address aligned to BYTES. Visible to the
// compiler as LDS loads, so it waits for them itself before their values are used.
template <int BYTES> __device__ __forceinline__ word<BYTES> lds_read(uint32_t address) {
  using lds_word = __attribute__((address_space(3))) const word<BYTES>;
  return *(lds_word*)(address);
}
template <int BYTES> __device__ __forceinline__ void lds_write(uint32_t address, word<BYTES> v) {
  using lds_word = __attribute__((address_space(3))) word<BYTES>;
  *(lds_word*)(address) = v;
}

}  // namespace kt::isa

// ktile wave emulation of ktile/amd/common/isa_memory.hpp: buffer loads and stores with the
// hardware's range check, global loads and stores by address, LDS by address — each checked
// against the emulated machine's memory (ktile/emulation/global_memory.hpp, lds.hpp).
#pragma once

#include <cstdint>
#include <cstring>

#include "ktile/amd/common/isa_lanes.hpp"

namespace kt::isa {

template <class T, int N> using vec = T __attribute__((ext_vector_type(N)));

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

// A buffer resource: its base and byte range (word 3, `buffer_config`, has no host meaning).
struct buffer {
  const unsigned char* base;
  uint32_t range;
};

constexpr uint32_t buffer_range = 0x7fffffffu;
constexpr uint32_t out_of_range = 0xffffffffu;

inline buffer make_buffer(const void* base, uint32_t bytes = buffer_range) {
  if (bytes > buffer_range)
    kt::emulation::lanes().violation_here("buffer-range", "a buffer resource of %u bytes: the range is at most 0x%x",
                                          bytes, buffer_range);
  return buffer{static_cast<const unsigned char*>(base), bytes};
}

namespace detail {
// Whether an access of BYTES at `offset` is inside the resource's range (else: zeros, no write).
template <int BYTES> inline bool in_range(const char* what, buffer r, uint32_t offset) {
  const uint64_t end = static_cast<uint64_t>(offset) + BYTES;
  if (end <= r.range) return true;
  if (offset < r.range)
    kt::emulation::lanes().violation_here("buffer-partial-range", "%s of %d bytes at offset %u straddles the end of its "
                                          "resource's %u-byte range: the families differ in what such an access reads",
                                          what, BYTES, offset, r.range);
  return false;
}
}  // namespace detail

template <int BYTES> inline word<BYTES> buffer_load(buffer r, uint32_t offset) {
  word<BYTES> w{};
  if (!detail::in_range<BYTES>("buffer_load", r, offset)) return w;
  kt::emulation::machine().global.check("buffer_load", r.base + offset, BYTES, false, kt::emulation::lanes());
  std::memcpy(&w, r.base + offset, BYTES);
  return w;
}

template <int BYTES> inline void buffer_store(buffer r, uint32_t offset, word<BYTES> v) {
  if (!detail::in_range<BYTES>("buffer_store", r, offset)) return;
  kt::emulation::machine().global.check("buffer_store", r.base + offset, BYTES, true, kt::emulation::lanes());
  std::memcpy(const_cast<unsigned char*>(r.base) + offset, &v, BYTES);
}

template <int BYTES> inline word<BYTES> global_load(const void* p) {
  auto& m = kt::emulation::machine();
  m.global.check_aligned("global_load", p, BYTES, *m.lanes);
  m.global.check("global_load", p, BYTES, false, *m.lanes);
  word<BYTES> w;
  std::memcpy(&w, p, BYTES);
  return w;
}
template <int BYTES> inline void global_store(void* p, word<BYTES> v) {
  auto& m = kt::emulation::machine();
  m.global.check_aligned("global_store", p, BYTES, *m.lanes);
  m.global.check("global_store", p, BYTES, true, *m.lanes);
  std::memcpy(p, &v, BYTES);
}

// Static LDS: one allocation per Owner and size, made by the first lane that asks.
template <class Owner, int BYTES> inline uint32_t static_lds() {
  static const char owner = 0;   // one address per instantiation names the owner
  auto& m = kt::emulation::machine();
  return m.lds.static_allocation(&owner, BYTES, *m.lanes);
}

inline unsigned char* dynamic_lds() { return kt::amd::dynamic_lds(); }

inline uint32_t lds_address(const void* shared_object) {
  return static_cast<uint32_t>(static_cast<const unsigned char*>(shared_object) - kt::emulation::machine().lds.data());
}

template <int BYTES> inline word<BYTES> lds_read(uint32_t address) {
  auto& m = kt::emulation::machine();
  word<BYTES> w;
  m.lds.read(address, &w, BYTES, *m.lanes);
  return w;
}
template <int BYTES> inline void lds_write(uint32_t address, word<BYTES> v) {
  auto& m = kt::emulation::machine();
  m.lds.write(address, &v, BYTES, *m.lanes);
}

// buffer_load ... lds (the DMA families' dma_to_lds): lane i's GRANULE bytes at `offset` are
// for LDS address lds_base + GRANULE·i; out of range: zeros. In flight until the wave waits.
template <int GRANULE> inline void copy_to_lds(buffer r, uint32_t offset, uint32_t lds_base) {
  const word<GRANULE> data = buffer_load<GRANULE>(r, offset);
  auto& m = kt::emulation::machine();
  m.lds.start_copy(lds_base + GRANULE * static_cast<uint32_t>(lane()), &data, GRANULE, *m.lanes);
}

}  // namespace kt::isa

// ktile wave emulation: a block's LDS, with a shadow state per byte that the checks read.
//
// The LDS is the launch's dynamic bytes at address 0, then each static allocation
// (`static_lds<Owner, BYTES>`) 16-byte aligned, within the target's LDS size. Every access is a
// ds_read / ds_write (`read`, `write`) or a global->LDS copy (`start_copy`), and is refused
// (report.hpp) when it is
//   - outside the dynamic bytes and every static allocation, or not aligned to its size
//     (`lds-bounds`, `lds-alignment`);
//   - a read of bytes nothing in this block has written (`lds-uninitialized`): LDS starts
//     undefined;
//   - an access to bytes a global->LDS copy is still writing (`lds-copy-not-waited`): a copy
//     (CDNA's buffer_load ... lds) takes its global bytes when issued and lands in LDS only when
//     its wave waits (s_waitcnt vmcnt: `complete_copies`), the latest the hardware may;
//   - a race between waves with no block barrier between the two accesses (`lds-race`): a read
//     of bytes another wave wrote, a write that changes bytes another wave read or wrote. A write
//     that leaves a byte as it was races with nothing (waves storing the same values, as
//     replicated data does), and lanes of one wave do not race (its LDS instructions are ordered).
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ktile/emulation/lanes.hpp"

namespace kt::emulation {

class lds_memory {
 public:
  static constexpr uint32_t capacity = 160 * 1024;   // the largest LDS of ktile's AMD targets (gfx950)

  lds_memory() : bytes_(capacity), shadow_(capacity) {}

  // A new block: `dynamic` bytes at address 0, `limit` bytes in all (the target's LDS size).
  void start_block(uint32_t dynamic, uint32_t limit) {
    if (dynamic > limit || limit > capacity) emulator_bug("the launch's LDS does not fit the emulated LDS");
    ++generation_;
    limit_ = limit;
    regions_.assign(1, region{0, dynamic, nullptr});
    copies_.clear(), sites_.clear();
    static_top_ = (dynamic + 15) / 16 * 16;
  }

  unsigned char* data() { return bytes_.data(); }

  // The address of `bytes` of static LDS for `owner` (the same one for every lane, every call).
  uint32_t static_allocation(const void* owner, uint32_t bytes, const block_lanes& lanes) {
    for (const region& r : regions_)
      if (r.owner == owner && r.end - r.begin == bytes) return r.begin;
    const uint32_t at = static_top_;
    if (at + bytes > limit_)
      lanes.violation_here("lds-bounds", "static LDS of %u bytes at 0x%x passes the target's %u bytes of LDS",
                           bytes, at, limit_);
    regions_.push_back(region{at, at + bytes, owner});
    static_top_ = (at + bytes + 15) / 16 * 16;
    return at;
  }

  // ds_read: check, then take the bytes.
  void read(uint32_t address, void* to, int size, const block_lanes& lanes) {
    check_place("ds_read", address, size, lanes);
    const uint32_t me = 1u << lanes.wave(), epoch = lanes.barriers_passed();
    for (uint32_t a = address; a < address + size; ++a) {
      byte_state& s = shadow_[a];
      if (s.generation != generation_)
        lanes.violation_here("lds-uninitialized", "ds_read of %d bytes at LDS 0x%x reads byte 0x%x, which nothing in "
                             "this block has written: LDS starts undefined", size, address, a);
      if (s.pending) not_waited("ds_read", address, size, a, lanes);
      if (s.write_epoch == epoch && (s.writers & me) == 0)
        lanes.violation_here("lds-race", "wave %d reads LDS 0x%x (%d bytes) that wave %d wrote with no block barrier "
                             "between: add a kt::barrier after the write", lanes.wave(), address, size, first(s.writers));
      if (s.read_epoch != epoch) s.read_epoch = epoch, s.readers = 0;
      s.readers |= me;
    }
    std::memcpy(to, bytes_.data() + address, size);
  }

  // ds_write: check, then store the bytes.
  void write(uint32_t address, const void* from, int size, const block_lanes& lanes) {
    const auto* data = static_cast<const unsigned char*>(from);
    check_place("ds_write", address, size, lanes);
    check_writable("ds_write", address, data, size, lanes);
    for (int i = 0; i < size; ++i) store(address + i, data[i], lanes.wave(), lanes.barriers_passed());
  }

  // A global->LDS copy issued by the running lane's wave: `size` bytes for `address`, taken from
  // global memory now, in flight until the wave waits (complete_copies).
  void start_copy(uint32_t address, const void* from, int size, const block_lanes& lanes) {
    in_flight copy{address, size, lanes.wave(), site_of_copy(), {}};
    std::memcpy(copy.data, from, size);
    check_place("a global->LDS copy", address, size, lanes);
    check_writable("a global->LDS copy", address, copy.data, size, lanes);
    for (uint32_t a = address; a < address + size; ++a) {
      byte_state& s = in_this_block(a);
      s.pending = true, s.copy = static_cast<int32_t>(copies_.size());
    }
    copies_.push_back(copy);
  }

  // s_waitcnt vmcnt(0) of `wave`: its copies land, as its writes at this barrier epoch.
  void complete_copies(int wave, uint32_t epoch) {
    for (in_flight& c : copies_) {
      if (c.wave != wave || c.landed) continue;
      for (int i = 0; i < c.size; ++i) {
        shadow_[c.address + i].pending = false;
        store(c.address + i, c.data[i], wave, epoch);
      }
      c.landed = true;
    }
  }

 private:
  struct byte_state {
    uint32_t generation = 0;        // the block that wrote it; another: never written in this block
    uint32_t write_epoch = ~0u, read_epoch = ~0u;
    uint32_t writers = 0, readers = 0;   // waves that wrote its value / read it in that epoch, a bit each
    int32_t copy = -1;              // the copy in flight to it, in copies_
    bool pending = false;
  };
  struct in_flight {
    uint32_t address;
    int size, wave, site;           // site: the issuing stack, in sites_
    unsigned char data[16];
    bool landed = false;
  };
  struct region {
    uint32_t begin, end;
    const void* owner;              // null: the dynamic LDS
  };

  static int first(uint32_t waves) { return waves ? __builtin_ctz(waves) : -1; }

  void check_place(const char* what, uint32_t address, int size, const block_lanes& lanes) const {
    const uint32_t align = size == 12 ? 4 : static_cast<uint32_t>(size);
    if (address % align != 0)
      lanes.violation_here("lds-alignment", "%s of %d bytes at LDS 0x%x: the address must be a multiple of %u",
                           what, size, address, align);
    for (const region& r : regions_)
      if (address >= r.begin && static_cast<uint64_t>(address) + size <= r.end) return;
    lanes.violation_here("lds-bounds", "%s of %d bytes at LDS 0x%x is outside the block's LDS (dynamic 0x0..0x%x, "
                         "%d static allocation(s) after it)", what, size, address, regions_[0].end,
                         static_cast<int>(regions_.size()) - 1);
  }

  // A write of `data` may land: no copy still writes those bytes, and where it changes a byte no
  // other wave wrote or read it since the last barrier.
  void check_writable(const char* what, uint32_t address, const unsigned char* data, int size,
                      const block_lanes& lanes) const {
    const uint32_t me = 1u << lanes.wave(), epoch = lanes.barriers_passed();
    for (int i = 0; i < size; ++i) {
      const byte_state& s = shadow_[address + i];
      if (s.generation != generation_) continue;
      if (s.pending) not_waited(what, address, size, address + i, lanes);
      if (bytes_[address + i] == data[i]) continue;
      if (s.write_epoch == epoch && (s.writers & ~me) != 0)
        lanes.violation_here("lds-race", "wave %d writes LDS 0x%x (%d bytes) that wave %d also wrote, with other "
                             "values, with no block barrier between", lanes.wave(), address, size, first(s.writers & ~me));
      if (s.read_epoch == epoch && (s.readers & ~me) != 0)
        lanes.violation_here("lds-race", "wave %d overwrites LDS 0x%x (%d bytes) that wave %d read with no block "
                             "barrier between: add a kt::barrier before the write", lanes.wave(), address, size,
                             first(s.readers & ~me));
    }
  }

  // One byte written by `wave`: a new value starts a new set of writers; the same value adds one.
  void store(uint32_t a, unsigned char value, int wave, uint32_t epoch) {
    const bool changed = shadow_[a].generation != generation_ || bytes_[a] != value;
    byte_state& s = in_this_block(a);
    if (changed) s.writers = 0, s.write_epoch = epoch;
    if (s.write_epoch == epoch) s.writers |= 1u << wave;   // (an older value is published already)
    bytes_[a] = value;
  }

  // The byte's state, reset if it last changed in an earlier block.
  byte_state& in_this_block(uint32_t a) {
    byte_state& s = shadow_[a];
    if (s.generation != generation_) s = byte_state{}, s.generation = generation_;
    return s;
  }

  [[noreturn]] void not_waited(const char* what, uint32_t address, int size, uint32_t byte,
                               const block_lanes& lanes) const {
    const in_flight& c = copies_[shadow_[byte].copy];
    in_flight_report(lanes, &sites_[c.site], "%s of %d bytes at LDS 0x%x touches byte 0x%x, which a global->LDS "
                     "copy issued by wave %d is still writing: %s not waited for it (kt::wait<0, ...>), and a "
                     "barrier does not wait for copies in flight (trap 4)", what, size, address, byte, c.wave,
                     c.wave == lanes.wave() ? "this wave has" : "its wave has");
  }
  [[noreturn]] static void in_flight_report(const block_lanes& lanes, const stack_frames* issued, const char* format, ...) {
    va_list args;
    va_start(args, format);
    report_violation("lds-copy-not-waited", lanes.position(), issued, format, args);
  }

  // The issuing stack of the copy being started; consecutive copies from one place share it.
  int site_of_copy() {
    const stack_frames here = stack_frames::here();
    if (sites_.empty() || !(sites_.back() == here)) sites_.push_back(here);
    return static_cast<int>(sites_.size()) - 1;
  }

  std::vector<unsigned char> bytes_;
  std::vector<byte_state> shadow_;
  std::vector<region> regions_;
  std::vector<in_flight> copies_;
  std::vector<stack_frames> sites_;
  uint32_t generation_ = 0, limit_ = 0, static_top_ = 0;
};

}  // namespace kt::emulation

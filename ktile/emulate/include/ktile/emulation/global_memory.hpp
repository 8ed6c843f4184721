// ktile wave emulation: the kernel's global memory — its tensor arguments, and the check every
// global access passes.
//
// The harness registers each argument's bytes (the span from its first to its last element) and,
// for an argument the kernel writes, which of those bytes are elements (a strided view leaves
// gaps that belong to someone else). A buffer access inside its resource's range, or a global
// load / store by address, must lie inside one argument (`global-bounds`), a store inside its
// elements (`global-bounds`), and an address access must be aligned to its size
// (`global-alignment`). A buffer access past its range is the hardware's bounds check at work:
// it reads zeros and writes nothing, and is not an error; one that straddles the end of the range
// is (`buffer-partial-range`): the families differ in what it loads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ktile/emulation/lanes.hpp"

namespace kt::emulation {

struct tensor_bytes {
  std::string name;
  unsigned char* begin;
  uint64_t size;
  std::vector<unsigned char> is_element;   // per byte, for an argument the kernel writes; else empty
};

class global_memory {
 public:
  void add(tensor_bytes t) { tensors_.push_back(std::move(t)); }
  const std::vector<tensor_bytes>& tensors() const { return tensors_; }

  // `what` of `size` bytes at `p` (`write`: a store) lies inside one argument, its elements for a store.
  void check(const char* what, const void* p, int size, bool write, const block_lanes& lanes) const {
    const auto* at = static_cast<const unsigned char*>(p);
    const tensor_bytes* t = owner(at, size);
    if (t == nullptr)
      lanes.violation_here("global-bounds", "%s of %d bytes at %p is outside every tensor argument (%s)", what, size, p,
                           spans().c_str());
    if (!write || t->is_element.empty()) return;
    for (int i = 0; i < size; ++i)
      if (!t->is_element[at - t->begin + i])
        lanes.violation_here("global-bounds", "%s of %d bytes at byte %llu of '%s' writes between its elements (its "
                             "strides skip that byte)", what, size,
                             static_cast<unsigned long long>(at - t->begin + i), t->name.c_str());
  }

  void check_aligned(const char* what, const void* p, int size, const block_lanes& lanes) const {
    const uint64_t align = size == 12 ? 4 : static_cast<uint64_t>(size);
    if (reinterpret_cast<uint64_t>(p) % align != 0)
      lanes.violation_here("global-alignment", "%s of %d bytes at %p: the address must be a multiple of %llu", what,
                           size, p, static_cast<unsigned long long>(align));
  }

 private:
  const tensor_bytes* owner(const unsigned char* at, int size) const {
    for (const tensor_bytes& t : tensors_)
      if (at >= t.begin && at + size <= t.begin + t.size) return &t;
    return nullptr;
  }
  std::string spans() const {
    std::string out;
    char one[160];
    for (const tensor_bytes& t : tensors_) {
      std::snprintf(one, sizeof one, "%s'%s' %p..+%llu", out.empty() ? "" : ", ", t.name.c_str(),
                    static_cast<const void*>(t.begin), static_cast<unsigned long long>(t.size));
      out += one;
    }
    return out;
  }

  std::vector<tensor_bytes> tensors_;
};

}  // namespace kt::emulation

// ktile / AMD: kt::wait<VM, LDS> and kt::bind — traps 1 and 4 (docs/cpp-api.md, "Waits, binds
// and barriers").
//
// kt::wait<VM, LDS>() drains the family's counters (isa.hpp: s_waitcnt vmcnt / lgkmcnt on gfx9
// and gfx11, s_wait_loadcnt / s_wait_dscnt on gfx12). The counts are in ops, as the waits pass
// derives them, but one tile op is several instructions: so any count other than -1 waits for
// zero (always correct; it gives up overlap until the pass counts instructions). -1 leaves the
// counter alone. Either way a compiler memory barrier.
//
// kt::bind(t) is an empty asm reading and writing every VGPR of t: a wait carries no register
// dependence, and without it the compiler may hoist an MMA reading t above the wait.
#pragma once

#include "ktile/amd/common/register_tile.hpp"

namespace kt {

template <int VM, int LDS>
__device__ __forceinline__ void wait() {
  static_assert(VM >= -1 && VM <= isa::vm_max_count, "kt::wait: the global->shared count is -1 (no wait) or within the counter's range");
  static_assert(LDS >= -1 && LDS <= isa::lds_max_count, "kt::wait: the shared->register count is -1 (no wait) or within the counter's range");
  if constexpr (VM != -1) isa::wait_vm();
  if constexpr (LDS != -1) isa::wait_lds();
  isa::memory_order();
}

namespace detail {
// Pin the VGPRs of one register block (or scalar): 32-bit words through an empty asm each.
template <class V> __device__ __forceinline__ void pin_value(V& v) {
  if constexpr (sizeof(V) % 4 == 0) {
    auto words = __builtin_bit_cast(isa::vec<uint32_t, sizeof(V) / 4>, v);
    static_for<sizeof(V) / 4>([&](auto k) {
      uint32_t w = words[decltype(k)::value];
      isa::pin(w);
      words[decltype(k)::value] = w;
    });
    v = __builtin_bit_cast(V, words);
  } else {
    uint32_t w = bits32(v);
    isa::pin(w);
    v = from_bits32<V>(w);
  }
}
}  // namespace detail

template <class X> __device__ __forceinline__ void bind(X& t) {
  if constexpr (detail::is_tile<X>::value) {
    detail::static_for<X::map::blocks>([&](auto b) { detail::pin_value(t.data[decltype(b)::value].v); });
  } else if constexpr (detail::is_vec<X>::value) {
    detail::pin_value(t.data.v);
  } else {
    detail::pin_value(t);
  }
}

}  // namespace kt

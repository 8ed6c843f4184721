// ktile / NVIDIA Hopper: kt::arrivals<N, OFFSET>, the mbarriers sm_90a's TMA copies complete on.
//
// The lds-alloc pass gives each shared tile a TMA copy writes an arrival slot (0..N-1): an
// 8-byte mbarrier at OFFSET + 8·slot of the dynamic shared memory. The generated kernel
// declares one kt::arrivals first thing; its constructor has thread 0 initialise the N
// barriers, each expecting one arrival per thread of the block, and the block meet.
//
// A copy into slot S (`issued<S>()`, then every thread arrives once, lane 0 of warp 0 with the
// bytes the copy brings: tensor_copy.hpp) completes one phase of barrier S. Each thread keeps,
// in one register, the parity of the phase it waits for next (bit S) and which slots have a
// copy it has not waited for (bit 16 + S); `wait<S>()` spins on `mbarrier.try_wait.parity`
// for that phase and flips the parity. The waits pass names the slots each wait completes; a
// slot named on a path where its copy was already waited is skipped by the pending bit, so the
// parity never runs ahead of the barrier. Every thread runs every copy and wait (copies are
// block-wide ops), so the registers agree across the block and nvcc folds them away where the
// slots are known at each point.
#pragma once

#include <cstdint>

#include "ktile/nvidia/hopper/shared_tile.hpp"

namespace kt {
namespace detail {

__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" :: "r"(bar) : "memory");
}
// The arrival of the thread that also announces the bytes a tensor copy will bring.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbarrier_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  return done != 0;
}

}  // namespace detail

template <int N, int OFFSET>
struct arrivals {
  static_assert(N >= 1 && N <= 16, "kt::arrivals: 1..16 slots (the lds-alloc pass refuses more copied-into tiles)");
  static_assert(OFFSET >= 0 && OFFSET % 8 == 0, "kt::arrivals: mbarriers are 8-byte aligned");
  static constexpr int PENDING = 16;
  uint32_t state = 0;     // bit S: the parity of barrier S's phase waited for next;
                          // bit PENDING + S: a copy into slot S not waited for yet

  __device__ __forceinline__ arrivals() {
    if (threadIdx.x == 0) {
#pragma unroll
      for (int s = 0; s < N; ++s) detail::mbarrier_init(address(s), blockDim.x);
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
  }

  // The shared-window address of slot s's mbarrier.
  __device__ static __forceinline__ uint32_t address(int s) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(detail::dynamic_shared() + OFFSET + 8 * s));
  }

  template <int S> __device__ __forceinline__ void issued() {
    static_assert(S >= 0 && S < N, "kt::arrivals: no such slot");
    state |= 1u << (PENDING + S);
  }

  // Until the copy into slot S has landed (nothing when none is pending).
  template <int S> __device__ __forceinline__ void wait() {
    static_assert(S >= 0 && S < N, "kt::arrivals: no such slot");
    if (!(state & (1u << (PENDING + S)))) return;
    const uint32_t bar = address(S), phase = (state >> S) & 1u;
    while (!detail::mbarrier_try_wait(bar, phase)) {
    }
    state ^= (1u << S) | (1u << (PENDING + S));   // the next phase; nothing pending
  }
};

// Until the copies into every slot named have landed.
template <int... S, class A> __device__ __forceinline__ void wait_arrivals(A& a) {
  (a.template wait<S>(), ...);
}

}  // namespace kt

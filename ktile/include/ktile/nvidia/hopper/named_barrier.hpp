// ktile / NVIDIA Hopper: named barriers (kt.named_barrier, ktile/ir/ops_named_barrier.py).
//
// bar_sync<ID, THREADS>: the warp arrives on hardware barrier ID and waits until THREADS
// threads have arrived in this phase; bar_arrive<ID, THREADS> arrives and goes on. Warps of a
// block that run apart (warpgroup roles) order each other with them, e.g. two consumer
// warpgroups taking turns at their MMAs (FlashAttention-3's ping-pong). ID 0 is __syncthreads'.
#pragma once

namespace kt {

template <int ID, int THREADS> __device__ __forceinline__ void bar_sync() {
  static_assert(ID >= 1 && ID <= 15, "kt::bar_sync: the id is 1..15 (0 is __syncthreads')");
  static_assert(THREADS > 0 && THREADS % 32 == 0, "kt::bar_sync: THREADS counts whole warps");
  asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}

template <int ID, int THREADS> __device__ __forceinline__ void bar_arrive() {
  static_assert(ID >= 1 && ID <= 15, "kt::bar_arrive: the id is 1..15 (0 is __syncthreads')");
  static_assert(THREADS > 0 && THREADS % 32 == 0, "kt::bar_arrive: THREADS counts whole warps");
  asm volatile("bar.arrive %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}

}  // namespace kt

// ktile / NVIDIA Hopper: single global-memory accesses of 1 to 16 bytes, through CUDA's
// __ldca / __stwb (the default cache policy, ld.global.ca / st.global.wb).
//
// Why not plain dereferences: a bounds-checked `inside ? *p : pad` lets the compiler turn the
// two values into one load from a selected address, which puts `pad` in local memory — a
// stack frame in every kernel. These intrinsics are opaque, so the select stays a select.
#pragma once

#include <cstdint>

#include "ktile/nvidia/hopper/warp.hpp"

namespace kt {
namespace detail {

template <class T> __device__ __forceinline__ T load_global(const T* p) {
  if constexpr (sizeof(T) == 1) return from_bits<T>(__ldca(reinterpret_cast<const unsigned char*>(p)));
  else if constexpr (sizeof(T) == 2) return from_bits<T>(__ldca(reinterpret_cast<const unsigned short*>(p)));
  else if constexpr (sizeof(T) == 4) return from_bits<T>(__ldca(reinterpret_cast<const unsigned int*>(p)));
  else if constexpr (sizeof(T) == 8) return from_bits<T>(__ldca(reinterpret_cast<const uint2*>(p)));
  else {
    static_assert(sizeof(T) == 16, "kt: global accesses are 1, 2, 4, 8 or 16 bytes");
    return from_bits<T>(__ldca(reinterpret_cast<const uint4*>(p)));
  }
}

template <class T> __device__ __forceinline__ void store_global(T* p, const T& v) {
  if constexpr (sizeof(T) == 1) __stwb(reinterpret_cast<unsigned char*>(p), bits_of<unsigned char>(v));
  else if constexpr (sizeof(T) == 2) __stwb(reinterpret_cast<unsigned short*>(p), bits_of<unsigned short>(v));
  else if constexpr (sizeof(T) == 4) __stwb(reinterpret_cast<unsigned int*>(p), bits_of<unsigned int>(v));
  else if constexpr (sizeof(T) == 8) __stwb(reinterpret_cast<uint2*>(p), bits_of<uint2>(v));
  else {
    static_assert(sizeof(T) == 16, "kt: global accesses are 1, 2, 4, 8 or 16 bytes");
    __stwb(reinterpret_cast<uint4*>(p), bits_of<uint4>(v));
  }
}

}  // namespace detail
}  // namespace kt

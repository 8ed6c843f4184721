// ktile: scalar helpers where C++ has no operator with arith's meaning (docs/cpp-api.md,
// "Scalars"), and the constants kt::inf / kt::nan. Everything here is __host__ __device__
// (constexpr where it can be): the grid function runs on the host too. Vendor-neutral.
// CUDA and HIP define __host__ / __device__; a device-only prelude must define them too.
#pragma once

#include <type_traits>

namespace kt {

constexpr float inf = __builtin_huge_valf();
constexpr float nan = __builtin_nanf("");

// arith.floordivsi: signed division rounding toward -infinity.
template <class I>
__host__ __device__ constexpr I floordiv(I a, I b) {
  static_assert(std::is_integral<I>::value && std::is_signed<I>::value,
                "kt::floordiv takes signed integers (arith.floordivsi)");
  I q = a / b;
  bool inexact = q * b != a;
  return (inexact && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// arith.ceildivsi: signed division rounding toward +infinity.
template <class I>
__host__ __device__ constexpr I ceildiv(I a, I b) {
  static_assert(std::is_integral<I>::value && std::is_signed<I>::value,
                "kt::ceildiv takes signed integers (arith.ceildivsi)");
  I q = a / b;
  bool inexact = q * b != a;
  return (inexact && ((a < 0) == (b < 0))) ? q + 1 : q;
}

// arith.shrui: the bits of a shifted right as an unsigned value of a's width.
template <class I, class S>
__host__ __device__ constexpr I shift_right_logical(I a, S b) {
  static_assert(std::is_integral<I>::value, "kt::shift_right_logical takes an integer");
  using U = typename std::make_unsigned<I>::type;
  return static_cast<I>(static_cast<U>(a) >> b);
}

// arith.maximumf / minimumf: NaN if either operand is NaN; +0 is above -0.
// Whether a zero is -0 (1/-0 is -inf).
template <class F>
__host__ __device__ inline bool is_negative_zero(F a) {
  return a == F(0) && F(1) / a < F(0);
}

template <class F>
__host__ __device__ inline F maximum(F a, F b) {
  static_assert(std::is_floating_point<F>::value, "kt::maximum takes floats (arith.maximumf)");
  if (a != a || b != b) return a + b;           // a NaN operand: the sum is NaN
  if (a == b) return is_negative_zero(a) ? b : a;
  return a > b ? a : b;
}

template <class F>
__host__ __device__ inline F minimum(F a, F b) {
  static_assert(std::is_floating_point<F>::value, "kt::minimum takes floats (arith.minimumf)");
  if (a != a || b != b) return a + b;
  if (a == b) return is_negative_zero(a) ? a : b;
  return a < b ? a : b;
}

}  // namespace kt

// ktile / AMD: what each elementwise function computes on one element — the meaning the
// interpreter gives it (ktile/interpret/ops_elementwise.py).
//
// An op runs in one domain, chosen from its operands and result as the interpreter chooses:
//   floating  float32 math (every 16-/8-bit float widened exactly), rounded once to the result;
//   integer   int64 math, wrapped to the result's width (wrap_to);
//   logical   bool and / or / not.
// Comparisons run in floating when either operand is a float, else in integer. No fast-math:
// division, sqrt and 1/sqrt are IEEE; the transcendental functions are math.hpp's.
#pragma once

#include "ktile/common/scalar_ops.hpp"
#include "ktile/amd/common/math.hpp"
#include "ktile/amd/common/scalars.hpp"

namespace kt::detail {

enum class domain { floating, integer, logical };

// IEEE 754-2019 maximum / minimum (llvm.maximum: v_maximum_f32 on gfx950 and gfx12, a compare
// sequence elsewhere): NaN if either operand is NaN, +0 above -0 — kt::maximum's meaning.
__host__ __device__ __forceinline__ float max_nan(float a, float b) { return __builtin_elementwise_maximum(a, b); }
__host__ __device__ __forceinline__ float min_nan(float a, float b) { return __builtin_elementwise_minimum(a, b); }

// sigmoid as the interpreter evaluates it in float32: 1 / (1 + e^-x), each step rounded.
__host__ __device__ __forceinline__ float sigmoid_f(float x) { return 1.0f / (1.0f + math::exp_f(-x)); }

// ---- unary functions ----------------------------------------------------------------------------
// Float-only functions; integer tiles take only neg, abs and relu (the frontend refuses others).
#define KT_FLOAT_UNARY(NAME, EXPR)                                                          \
  struct NAME##_op {                                                                        \
    static constexpr bool has_int = false;                                                  \
    __host__ __device__ __forceinline__ static float floating(float x) { return EXPR; }     \
    __host__ __device__ __forceinline__ static int64_t integer(int64_t x) { return x; }     \
  };
KT_FLOAT_UNARY(exp, math::exp_f(x))
KT_FLOAT_UNARY(exp2, math::exp2_f(x))
KT_FLOAT_UNARY(log, math::log_f(x))
KT_FLOAT_UNARY(log2, math::log2_f(x))
KT_FLOAT_UNARY(sqrt, math::sqrt_f(x))
KT_FLOAT_UNARY(rsqrt, 1.0f / math::sqrt_f(x))   // two IEEE roundings, as the reference's 1/sqrt
KT_FLOAT_UNARY(silu, x * sigmoid_f(x))
KT_FLOAT_UNARY(gelu, math::gelu_f(x))
KT_FLOAT_UNARY(sin, math::sin_f(x))
KT_FLOAT_UNARY(cos, math::cos_f(x))
KT_FLOAT_UNARY(tanh, math::tanh_f(x))
KT_FLOAT_UNARY(sigmoid, sigmoid_f(x))
KT_FLOAT_UNARY(recip, 1.0f / x)
#undef KT_FLOAT_UNARY

struct neg_op {
  static constexpr bool has_int = true;
  __host__ __device__ __forceinline__ static float floating(float x) { return -x; }
  __host__ __device__ __forceinline__ static int64_t integer(int64_t x) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(x)); }
};
struct abs_op {
  static constexpr bool has_int = true;
  __host__ __device__ __forceinline__ static float floating(float x) { return __builtin_fabsf(x); }
  __host__ __device__ __forceinline__ static int64_t integer(int64_t x) { return x < 0 ? neg_op::integer(x) : x; }
};
struct relu_op {
  static constexpr bool has_int = true;
  __host__ __device__ __forceinline__ static float floating(float x) { return max_nan(x, 0.0f); }   // relu(NaN) is NaN
  __host__ __device__ __forceinline__ static int64_t integer(int64_t x) { return x < 0 ? 0 : x; }
};

struct logical_not_op {};

// ---- binary functions ---------------------------------------------------------------------------
#define KT_WRAPPING(OP) static_cast<int64_t>(static_cast<uint64_t>(a) OP static_cast<uint64_t>(b))
struct add_op { __host__ __device__ static float floating(float a, float b) { return a + b; }
                __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return KT_WRAPPING(+); } };
struct sub_op { __host__ __device__ static float floating(float a, float b) { return a - b; }
                __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return KT_WRAPPING(-); } };
struct mul_op { __host__ __device__ static float floating(float a, float b) { return a * b; }
                __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return KT_WRAPPING(*); } };
#undef KT_WRAPPING
struct div_op { __host__ __device__ static float floating(float a, float b) { return a / b; }
                // C++ truncating division; a zero divisor gives 0 rather than a trap
                __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; } };
struct max_op { __host__ __device__ static float floating(float a, float b) { return max_nan(a, b); }
                __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return a < b ? b : a; } };
struct min_op { __host__ __device__ static float floating(float a, float b) { return min_nan(a, b); }
                __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return a < b ? a : b; } };
struct pow_op { static constexpr bool always_float = true;
                __host__ __device__ static float floating(float a, float b) { return math::pow_f(a, b); }
                __host__ __device__ static int64_t integer(int64_t a, int64_t) { return a; } };
struct and_op { __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return a & b; }
                __host__ __device__ static bool logical(bool a, bool b) { return a && b; } };
struct or_op  { __host__ __device__ static int64_t integer(int64_t a, int64_t b) { return a | b; }
                __host__ __device__ static bool logical(bool a, bool b) { return a || b; } };

template <class Op> struct is_comparison : std::false_type {};
#define KT_COMPARE_OP(NAME, OP)                                                                          \
  struct NAME##_op { template <class V> __host__ __device__ static bool compare(V a, V b) { return a OP b; } }; \
  template <> struct is_comparison<NAME##_op> : std::true_type {};
KT_COMPARE_OP(eq, ==)
KT_COMPARE_OP(ne, !=)
KT_COMPARE_OP(lt, <)
KT_COMPARE_OP(le, <=)
KT_COMPARE_OP(gt, >)
KT_COMPARE_OP(ge, >=)
#undef KT_COMPARE_OP

template <class Op, class = void> struct is_always_float : std::false_type {};
template <class Op> struct is_always_float<Op, std::void_t<decltype(Op::always_float)>> : std::true_type {};
template <class Op, class = void> struct has_logical : std::false_type {};
template <class Op> struct has_logical<Op, std::void_t<decltype(&Op::logical)>> : std::true_type {};

// The domain a binary op runs in (the interpreter's `_binary_plan`).
template <class Op, class D, class X, class Y>
__host__ __device__ constexpr domain binary_domain() {
  constexpr bool any_float = is_float_elem<X>::value || is_float_elem<Y>::value;
  if constexpr (is_comparison<Op>::value) return any_float ? domain::floating : domain::integer;
  else if constexpr (has_logical<Op>::value && is_bool_elem<D>::value) return domain::logical;
  else if constexpr (is_always_float<Op>::value || is_float_elem<D>::value) return domain::floating;
  else return domain::integer;
}

// One element of `x op y`, rounded to D.
template <class Op, class D, class X, class Y>
__host__ __device__ __forceinline__ D apply_binary(X x, Y y) {
  constexpr domain dom = binary_domain<Op, D, X, Y>();
  if constexpr (is_comparison<Op>::value) {
    if constexpr (dom == domain::floating) return Op::compare(as_float(x), as_float(y));
    else return Op::compare(as_int(x), as_int(y));
  } else if constexpr (dom == domain::logical) {
    return Op::logical(as_bool(x), as_bool(y));
  } else if constexpr (dom == domain::floating) {
    return cast_to<D>(Op::floating(as_float(x), as_float(y)));   // pow of integers truncates
  } else {
    return wrap_to<D>(Op::integer(as_int(x), as_int(y)));
  }
}

// One element of `op x`, rounded to D (the result type is x's).
template <class Op, class D, class X>
__host__ __device__ __forceinline__ D apply_unary(X x) {
  if constexpr (std::is_same<Op, logical_not_op>::value) {
    return !as_bool(x);
  } else if constexpr (is_float_elem<D>::value) {
    return round_float<D>(Op::floating(as_float(x)));
  } else {
    static_assert(Op::has_int, "kt: this function needs a float tile (only neg, abs and relu apply to integers)");
    return wrap_to<D>(Op::integer(as_int(x)));
  }
}

}  // namespace kt::detail

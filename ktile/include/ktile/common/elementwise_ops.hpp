// ktile: what each elementwise function computes on one element — one functor per row of the
// functions' table (ktile/ir/elementwise.py), the meaning the interpreter gives it. The same
// on every vendor.
//
// An op runs in one domain, chosen from its operands and result as the interpreter chooses:
//   floating  float32 math (every 16-/8-bit float widened exactly), rounded once to the result;
//   integer   int64 math, wrapped to the result's width (wrap_to);
//   logical   bool and / or / not.
// Comparisons run in floating when either operand is a float, else in integer. No fast-math:
// division, sqrt and 1/sqrt are IEEE, except where a function below says otherwise (sigmoid's
// reciprocal of a denominator in [1, 2]; silu_fast). No double precision on the activations' paths
// (gelu, erf, silu, sigmoid): float32 only, like torch's CUDA kernels.
//
// Written against the vendor's math shim (amd/common/elementwise_ops.hpp,
// nvidia/hopper/elementwise_ops.hpp), which includes this file after it has defined
//   KT_ELEMENT_FN     the functors' qualifiers (__device__ __forceinline__, and __host__ where
//                     the vendor's math compiles for the host);
//   kt::detail::math  exp_f exp2_f log_f log2_f sqrt_f sin_f cos_f tanh_f pow_f abs_f
//                     rint_f floor_f ceil_f trunc_f,
//                     erf_f (float erf, within 2 ulp of the exact value),
//                     rcp_unit_f (1/d for d in [1, 2], within 1 ulp: one hardware reciprocal;
//                     silu_fast_f takes it for any d >= 1, where it is 1 ulp too, a result
//                     below 2^-126 possibly 0),
//                     max_nan min_nan (NaN-propagating, +0 above -0);
// and both include common/math_double.hpp: exp_d expm1_d log_d (double -> double, for a float
// function evaluated in double and rounded once) and sin_cos_f.
// A new float function of the table is one line of KT_FLOAT_UNARY_FUNCTIONS below.
#pragma once

#include <cstdint>
#include <type_traits>

namespace kt::detail {

enum class domain { floating, integer, logical };

using math::max_nan;   // the reductions combine with them too
using math::min_nan;

// sigmoid in float32 as the interpreter evaluates it (ktile/ir/elementwise.py): e = e^-|x|,
// r = 1 / (1 + e), r for x >= 0 and e·r below. The denominator lies in [1, 2], so the division
// is the hardware's reciprocal (1 ulp) instead of an IEEE division, and nothing overflows:
// sigmoid(-100) is e^-100 (subnormal), not 0. Within 2^-21 relative of the interpreter's.
KT_ELEMENT_FN float sigmoid_f(float x) {
  const float e = math::exp_f(-math::abs_f(x));
  const float r = math::rcp_unit_f(1.0f + e);
  return x >= 0.0f ? r : e * r;
}

// silu for 16-bit results (the gated activations): x · 1 / (1 + 2^(−x·log2 e)), the exponent
// rounded once to float32 and the reciprocal the hardware's (1 ulp over the whole range): 8
// instructions a value on sm_90a where silu takes 13. Within 2^-20 + |x|·2^-23 relative of
// silu (the product's rounding scales e^-x's error by |x|); below x = −87.3 the reciprocal of
// 1 + e^-x falls under 2^-126 and the result is ±0 where |silu(x)| < 2^-119.
KT_ELEMENT_FN float silu_fast_f(float x) {
  return x * math::rcp_unit_f(1.0f + math::exp2_f(x * -1.44269504f));
}

// gelu, the exact (erf) form in float32 as torch's CUDA kernel: x/2 · (1 + erf(x · (1/√2))).
// Within |x|·2^-22 of the interpreter's (which rounds erf of the exact argument once; for
// x < 0, 1 + erf cancels, so the bound is relative to |x|, not to the result).
KT_ELEMENT_FN float gelu_f(float x) { return 0.5f * x * (1.0f + math::erf_f(x * 0.70710678f)); }

// ---- unary functions ----------------------------------------------------------------------------
// The float-only functions, X(name, the float32 result for float32 x): the table's rows of
// rule "float". Integer tiles take only neg, abs and relu (the verifier refuses the others).
#define KT_FLOAT_UNARY_FUNCTIONS(X)                                                          \
  X(exp, math::exp_f(x))                                                                     \
  X(exp2, math::exp2_f(x))                                                                   \
  X(exp2_fast, math::exp2_approx_f(x)) /* sm_90a: ex2.approx.ftz, subnormals 0 */            \
  X(expm1, static_cast<float>(math::expm1_d(x))) /* in double, rounded once */               \
  X(log, math::log_f(x))                                                                     \
  X(log2, math::log2_f(x))                                                                   \
  X(sqrt, math::sqrt_f(x))                                                                   \
  X(rsqrt, 1.0f / math::sqrt_f(x)) /* two IEEE roundings, as the reference's 1/sqrt */       \
  X(rsqrt_fast, math::rsqrt_approx_f(x)) /* the hardware's 1/sqrt, within 2^-22 relative */ \
  X(silu, x * sigmoid_f(x))                                                                  \
  X(silu_fast, silu_fast_f(x))                                                               \
  X(gelu, gelu_f(x))                                                                         \
  X(erf, math::erf_f(x)) /* within 2 ulp */                                                  \
  X(sigmoid, sigmoid_f(x))                                                                   \
  X(tanh, math::tanh_f(x))                                                                   \
  X(sin, math::sin_f(x))                                                                     \
  X(cos, math::cos_f(x))                                                                     \
  X(round, math::rint_f(x)) /* to nearest, ties to even, as numpy.rint */                    \
  X(floor, math::floor_f(x))                                                                 \
  X(ceil, math::ceil_f(x))                                                                   \
  X(trunc, math::trunc_f(x))                                                                 \
  X(recip, 1.0f / x)

#define KT_DEFINE_FLOAT_UNARY(NAME, EXPR)                                                    \
  struct NAME##_op {                                                                         \
    static constexpr bool has_int = false;                                                   \
    KT_ELEMENT_FN static float floating(float x) { return EXPR; }                            \
    KT_ELEMENT_FN static int64_t integer(int64_t x) { return x; }                            \
  };
KT_FLOAT_UNARY_FUNCTIONS(KT_DEFINE_FLOAT_UNARY)
#undef KT_DEFINE_FLOAT_UNARY

struct neg_op {
  static constexpr bool has_int = true;
  KT_ELEMENT_FN static float floating(float x) { return -x; }
  KT_ELEMENT_FN static int64_t integer(int64_t x) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(x)); }
};
struct abs_op {
  static constexpr bool has_int = true;
  KT_ELEMENT_FN static float floating(float x) { return math::abs_f(x); }
  KT_ELEMENT_FN static int64_t integer(int64_t x) { return x < 0 ? neg_op::integer(x) : x; }
};
struct relu_op {
  static constexpr bool has_int = true;
  KT_ELEMENT_FN static float floating(float x) { return math::max_nan(x, 0.0f); }   // relu(NaN) is NaN
  KT_ELEMENT_FN static int64_t integer(int64_t x) { return x < 0 ? 0 : x; }
};

struct logical_not_op {};

// ---- binary functions ---------------------------------------------------------------------------
#define KT_WRAPPING(OP) static_cast<int64_t>(static_cast<uint64_t>(a) OP static_cast<uint64_t>(b))
struct add_op { KT_ELEMENT_FN static float floating(float a, float b) { return a + b; }
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return KT_WRAPPING(+); } };
struct sub_op { KT_ELEMENT_FN static float floating(float a, float b) { return a - b; }
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return KT_WRAPPING(-); } };
struct mul_op { KT_ELEMENT_FN static float floating(float a, float b) { return a * b; }
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return KT_WRAPPING(*); } };
#undef KT_WRAPPING
struct div_op { KT_ELEMENT_FN static float floating(float a, float b) { return a / b; }
                // C++ truncating division; a zero divisor gives 0 rather than a trap
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; } };
struct max_op { KT_ELEMENT_FN static float floating(float a, float b) { return math::max_nan(a, b); }
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return a < b ? b : a; } };
struct min_op { KT_ELEMENT_FN static float floating(float a, float b) { return math::min_nan(a, b); }
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return a < b ? a : b; } };
struct pow_op { static constexpr bool always_float = true;
                KT_ELEMENT_FN static float floating(float a, float b) { return math::pow_f(a, b); }
                KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t) { return a; } };
struct and_op { KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return a & b; }
                KT_ELEMENT_FN static bool logical(bool a, bool b) { return a && b; } };
struct or_op  { KT_ELEMENT_FN static int64_t integer(int64_t a, int64_t b) { return a | b; }
                KT_ELEMENT_FN static bool logical(bool a, bool b) { return a || b; } };

template <class Op> struct is_comparison : std::false_type {};
#define KT_COMPARE_OP(NAME, OP)                                                                          \
  struct NAME##_op { template <class V> KT_ELEMENT_FN static bool compare(V a, V b) { return a OP b; } }; \
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
KT_ELEMENT_FN D apply_binary(X x, Y y) {
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
KT_ELEMENT_FN D apply_unary(X x) {
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

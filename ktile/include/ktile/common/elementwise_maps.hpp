// ktile: the kt.unary / kt.binary functions the translation calls, `kt::exp(dst, x)`,
// `kt::add(dst, x, y)`: one per row of the functions' table (ktile/ir/elementwise.py), each a
// map of its functor (common/elementwise_ops.hpp) over a tile, a vector or a scalar.
//
// Included at the end of the vendor's maps.hpp, which defines detail::map_unary<Op>(dst, x)
// and detail::map_binary<Op>(dst, x, y) — how a vendor walks its registers. A float function
// added to KT_FLOAT_UNARY_FUNCTIONS gets its kt:: function here with no further line.
#pragma once

namespace kt {

#define KT_UNARY(NAME, OP) \
  template <class D, class X> __device__ __forceinline__ void NAME(D& dst, const X& x) { detail::map_unary<detail::OP>(dst, x); }
#define KT_FLOAT_UNARY_MAP(NAME, EXPR) KT_UNARY(NAME, NAME##_op)
KT_FLOAT_UNARY_FUNCTIONS(KT_FLOAT_UNARY_MAP)
KT_UNARY(neg, neg_op) KT_UNARY(relu, relu_op) KT_UNARY(abs, abs_op)
KT_UNARY(logical_not, logical_not_op)
#undef KT_FLOAT_UNARY_MAP
#undef KT_UNARY

#define KT_BINARY(NAME, OP)                                                                  \
  template <class D, class X, class Y>                                                       \
  __device__ __forceinline__ void NAME(D& dst, const X& x, const Y& y) { detail::map_binary<detail::OP>(dst, x, y); }
KT_BINARY(add, add_op) KT_BINARY(sub, sub_op) KT_BINARY(mul, mul_op) KT_BINARY(div, div_op)
KT_BINARY(max, max_op) KT_BINARY(min, min_op) KT_BINARY(pow, pow_op)
KT_BINARY(eq, eq_op) KT_BINARY(ne, ne_op) KT_BINARY(lt, lt_op) KT_BINARY(le, le_op)
KT_BINARY(gt, gt_op) KT_BINARY(ge, ge_op)
KT_BINARY(bitwise_and, and_op) KT_BINARY(bitwise_or, or_op)
#undef KT_BINARY

}  // namespace kt

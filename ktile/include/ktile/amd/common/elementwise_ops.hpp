// ktile / AMD: the math shim under the elementwise functors (ktile/common/elementwise_ops.hpp,
// the same on every vendor): what kt::detail::math lacks from math.hpp, and the functors'
// qualifiers. Everything is __host__ __device__: wave emulation compiles it for the host.
#pragma once

#include "ktile/amd/device.hpp"
#include "ktile/common/scalar_ops.hpp"
#include "ktile/amd/common/math.hpp"
#include "ktile/amd/common/scalars.hpp"

#define KT_ELEMENT_FN __host__ __device__ __forceinline__

namespace kt::detail::math {

// IEEE 754-2019 maximum / minimum (llvm.maximum: v_maximum_f32 on gfx950 and gfx12, a compare
// sequence elsewhere): NaN if either operand is NaN, +0 above -0 — kt::maximum's meaning.
KT_ELEMENT_FN float max_nan(float a, float b) { return __builtin_elementwise_maximum(a, b); }
KT_ELEMENT_FN float min_nan(float a, float b) { return __builtin_elementwise_minimum(a, b); }

KT_ELEMENT_FN float abs_f(float x) { return __builtin_fabsf(x); }
// 1/d for d in [1, 2] (sigmoid's denominator): v_rcp_f32 (device.hpp, 1 ulp), instead of the
// IEEE division's scale / fma / fixup sequence; wave emulation divides exactly.
KT_ELEMENT_FN float rcp_unit_f(float d) { return kt::amd::rcp_approx(d); }
// 1/sqrt(x) in one v_rsq_f32 (1 ulp; hk.rsqrt_fast); wave emulation computes 1 / sqrt.
KT_ELEMENT_FN float rsqrt_approx_f(float x) { return kt::amd::rsqrt_approx(x); }
// 2^x (hk.exp2_fast): exp2 itself here (v_exp_f32 with its range fix-up; wave emulation exp2f).
KT_ELEMENT_FN float exp2_approx_f(float x) { return exp2_f(x); }
// Rounding to an integral float: one instruction each (v_rndne / v_floor / v_ceil / v_trunc_f32).
KT_ELEMENT_FN float rint_f(float x) { return __builtin_rintf(x); }   // ties to even
KT_ELEMENT_FN float floor_f(float x) { return __builtin_floorf(x); }
KT_ELEMENT_FN float ceil_f(float x) { return __builtin_ceilf(x); }
KT_ELEMENT_FN float trunc_f(float x) { return __builtin_truncf(x); }

}  // namespace kt::detail::math

#include "ktile/common/elementwise_ops.hpp"

// ktile / AMD RDNA3 (gfx1100): the lane layout of each register tile, by element type and MMA
// fragment (common/lane_layout.hpp has the vocabulary, docs/amd-headers.md the pictures).
//
// kt::mma issues WMMA with its operands exchanged, so the hardware computes Dᵀ = Bᵀ·Aᵀ and its
// accumulator registers hold D with lane l on row l % 16 (common/mma.hpp). Then:
//   operands (frag_a, frag_b)  one group, 16 elements: lane l holds all 16 k of row l % 16, and
//                              lanes l, l + 16 hold the same (WMMA reads both half-waves)
//   accumulator (frag_acc)     2 groups of 8, interleaved: lane l holds columns 2e + l / 16
//   anything else (frag_none)  2 groups of 8, blocked: lane l holds columns 8·(l / 16) .. +7,
//                              16 bytes of bf16 per access to memory
// frag_none differs from frag_acc so that elementwise kernels move memory 16 bytes at a time;
// mixing the two (an MMA result scaled, then stored) costs a lane exchange (relayout.hpp).
#pragma once

#include "ktile/amd/common/lane_layout.hpp"

namespace kt::detail {

using none_layout = lane_layout<2, 8, false>;
using acc_layout = lane_layout<2, 8, true>;
using operand_layout = lane_layout<1, 16, false>;   // 16 k of 16-bit or 8-bit elements

template <class T, class Frag> struct fragment_layout { using type = none_layout; };
template <class T> struct fragment_layout<T, frag_acc> { using type = acc_layout; };
template <class T> struct fragment_layout<T, frag_a> { using type = operand_layout; };
template <class T> struct fragment_layout<T, frag_b> { using type = operand_layout; };

}  // namespace kt::detail

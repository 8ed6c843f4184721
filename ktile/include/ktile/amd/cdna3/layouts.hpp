// ktile / AMD CDNA3 (gfx942): the lane layout of each register tile, by element type and MMA
// fragment (common/lane_layout.hpp has the vocabulary, docs/amd-headers.md the pictures).
//
// kt::mma issues MFMA with its operands exchanged, so the hardware computes Dᵀ = Bᵀ·Aᵀ and its
// accumulator registers hold D with lane l on row l % 16 (common/mma.hpp). Then:
//   accumulator, anything else and 16-bit operands (16x16x16 MFMA)
//                    4 groups of 4, blocked: lane l holds columns (or k) 4·(l / 16) .. +3
//   int8 operands (16x16x32 MFMA)
//                    4 groups of 8, blocked: lane l holds k 8·(l / 16) .. +7
// Every 16-bit tile shares one layout: an accumulator cast to bf16 is an operand as it stands.
#pragma once

#include <cstdint>

#include "ktile/amd/common/lane_layout.hpp"

namespace kt::detail {

using none_layout = lane_layout<4, 4, false>;
using acc_layout = none_layout;

template <class T> struct operand_layout_of { using type = none_layout; };
template <> struct operand_layout_of<int8_t> { using type = lane_layout<4, 8, false>; };

template <class T, class Frag> struct fragment_layout { using type = none_layout; };
template <class T> struct fragment_layout<T, frag_acc> { using type = acc_layout; };
template <class T> struct fragment_layout<T, frag_a> { using type = typename operand_layout_of<T>::type; };
template <class T> struct fragment_layout<T, frag_b> { using type = typename operand_layout_of<T>::type; };

}  // namespace kt::detail

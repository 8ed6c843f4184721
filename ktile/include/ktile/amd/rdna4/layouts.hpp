// ktile / AMD RDNA4 (gfx1201): the lane layout of each register tile, by element type and MMA
// fragment (common/lane_layout.hpp has the vocabulary, docs/amd-headers.md the pictures).
//
// kt::mma issues WMMA with its operands exchanged, so the hardware computes Dᵀ = Bᵀ·Aᵀ and its
// accumulator registers hold D with lane l on row l % 16 (common/mma.hpp). gfx12's WMMA keeps
// no replicas, and its operands and accumulator then share one layout: 2 groups of 8, blocked,
// lane l holding columns (or k) 8·(l / 16) .. +7 of row l % 16 — for every element type and
// every fragment. Like NVIDIA's mma.sync fragments: elementwise ops between any tiles, and an
// accumulator cast to a 16-bit operand, are lane-local; memory moves 16 bytes of bf16 at a time.
// The gfx12 accumulator layout is the target table's (Triton's WMMA v2 layout), never run.
#pragma once

#include "ktile/amd/common/lane_layout.hpp"

namespace kt::detail {

using none_layout = lane_layout<2, 8, false>;
using acc_layout = none_layout;

template <class T, class Frag> struct fragment_layout { using type = none_layout; };

}  // namespace kt::detail

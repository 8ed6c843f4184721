// ktile / AMD: the tile library every family shares, in dependency order — everything in
// docs/cpp-api.md but kt::copy_async, whose path (DMA or registers) is the family's.
//
// It is written against the instruction layer (isa_lanes.hpp, isa_memory.hpp and the family's
// isa.hpp: wave size, waits, MMAs) and the family's lane layouts (layouts.hpp), which the
// family's kernel.hpp includes first. Nothing here names an architecture.
#pragma once

#include "ktile/common/tags.hpp"
#include "ktile/common/global_layout.hpp"
#include "ktile/common/scalar_ops.hpp"

#include "ktile/amd/common/compile_time.hpp"     // static_for, bits
#include "ktile/amd/common/scalars.hpp"          // bf16 / half / fp8, casts
#include "ktile/amd/common/math.hpp"             // float math without device libraries
#include "ktile/amd/common/lane_layout.hpp"      // which lane holds which element
#include "ktile/amd/common/register_tile.hpp"    // kt::rt, kt::rv
#include "ktile/amd/common/relayout.hpp"         // moving values between register maps
#include "ktile/amd/common/elementwise_ops.hpp"  // what each function computes
#include "ktile/amd/common/maps.hpp"             // unary / binary / select / cast / fill / iota / causal_mask
#include "ktile/amd/common/reductions.hpp"       // row_* / col_* / vec_*
#include "ktile/amd/common/block_reduce.hpp"     // block_reduce_*<WARPS>
#include "ktile/amd/common/block.hpp"            // block_idx_*, warp_id, barrier
#include "ktile/amd/common/global_tile.hpp"      // load / store
#include "ktile/common/scalar_load.hpp"         // load_scalar: one element as a scalar
#include "ktile/amd/common/global_rows.hpp"      // gather / scatter
#include "ktile/amd/common/shared_tile.hpp"      // kt::st, kt::sv, kt::shared_at
#include "ktile/amd/common/shared_access.hpp"    // lds_load / lds_store
#include "ktile/common/tile_block_reduce.hpp"        // block_reduce_tile_*<WARPS>: over warps' tiles
#include "ktile/amd/common/sync.hpp"             // wait / bind
#include "ktile/amd/common/mma.hpp"              // mma_AB / ABt / AtB / AtBt
#include "ktile/amd/common/mma_shared.hpp"       // mma_ABt_shared: B read from a shared tile
#include "ktile/amd/common/rand.hpp"             // Philox-4x32-10, tl.rand's draws

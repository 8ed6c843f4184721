// ktile / NVIDIA Hopper (sm_90a): the one header a generated kernel includes
// (`#include "ktile/nvidia/hopper/kernel.hpp"`, compiled by nvcc with -I ktile/include).
//
// It implements docs/cpp-api.md for sm_90a. The shared vocabulary (tags, kt::gl, kt::coord,
// kt::dim3, scalar helpers) is in ktile/common/; everything NVIDIA-specific is here, one
// concept per header. nvcc itself gives __global__, __device__, __host__ and __launch_bounds__
// their CUDA meaning. Layouts and their reasons: docs/hopper.md.
#pragma once

#include "ktile/common/tags.hpp"
#include "ktile/common/global_layout.hpp"
#include "ktile/common/scalar_ops.hpp"

#include "ktile/nvidia/hopper/scalars.hpp"          // bf16 / half / fp8, casts, pairs
#include "ktile/nvidia/hopper/warp.hpp"             // block / warp / lane, shuffles
#include "ktile/nvidia/hopper/register_tile.hpp"    // kt::rt, kt::rv and their lane layouts
#include "ktile/nvidia/hopper/layout_convert.hpp"   // row <-> col, vector forms
#include "ktile/nvidia/hopper/elementwise_ops.hpp"  // what each function computes
#include "ktile/nvidia/hopper/maps.hpp"             // unary / binary / select / cast / fill / iota / causal_mask
#include "ktile/nvidia/hopper/reductions.hpp"       // row_* / col_* / tile_* / vec_*
#include "ktile/nvidia/hopper/block_reduce.hpp"     // block_reduce_*<WARPS>
#include "ktile/nvidia/hopper/global_rows.hpp"      // the wide global <-> register row engine
#include "ktile/nvidia/hopper/global_tile.hpp"      // load / store / gather / scatter
#include "ktile/nvidia/hopper/flat_tile.hpp"        // load / store of flat-layout tiles
#include "ktile/nvidia/hopper/shared_tile.hpp"      // kt::st, kt::sv, kt::shared_at
#include "ktile/nvidia/hopper/async_copy.hpp"       // copy_async / wait / bind / barrier
#include "ktile/nvidia/hopper/shared_access.hpp"    // lds_load / lds_store (ldmatrix, stmatrix)
#include "ktile/common/tile_block_reduce.hpp"          // block_reduce_tile_*<WARPS>: over warps' tiles
#include "ktile/nvidia/hopper/mma.hpp"              // mma_AB / ABt / AtB / AtBt
#include "ktile/nvidia/hopper/mma_shared.hpp"       // mma_ABt_shared: B from a shared tile (wgmma)
#include "ktile/nvidia/hopper/mma_shared_kn.hpp"    // mma_AB_shared: B held K×N in shared (wgmma trans-b)
#include "ktile/nvidia/hopper/pipeline.hpp"         // warpgroup roles over mbarrier stages, setmaxnreg
#include "ktile/nvidia/hopper/named_barrier.hpp"    // bar.sync / bar.arrive: warpgroups taking turns
#include "ktile/nvidia/hopper/rand.hpp"             // Philox-4x32-10, tl.rand's draws
#include "ktile/common/scalar_load.hpp"            // load_scalar: one element as a scalar

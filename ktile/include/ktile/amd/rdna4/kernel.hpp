// ktile / AMD RDNA4 (gfx1201): the one header a generated kernel includes
// (`#include "ktile/amd/rdna4/kernel.hpp"`, compiled by clang -x hip --cuda-device-only
// -nogpuinc -nogpulib with -I ktile/include; ktile/runtime/toolchains/amd.py).
//
// It implements docs/cpp-api.md for gfx1201: the device prelude, this family's instruction
// layer and lane layouts, the shared AMD tile library, and its copy path. docs/amd-headers.md
// has the layouts and their reasons. Compiled and statically checked only: no RDNA4 GPU ran it.
#pragma once

#include "ktile/amd/device.hpp"
#include "ktile/amd/rdna4/isa.hpp"           // wave32, split waits, gfx12 WMMA
#include "ktile/amd/rdna4/layouts.hpp"       // lane layouts of operands, accumulators, other tiles
#include "ktile/amd/common/tile_library.hpp"
#include "ktile/amd/rdna4/copy_async.hpp"    // through registers: no global->LDS DMA

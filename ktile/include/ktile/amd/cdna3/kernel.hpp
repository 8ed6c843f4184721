// ktile / AMD CDNA3 (gfx942): the one header a generated kernel includes
// (`#include "ktile/amd/cdna3/kernel.hpp"`, compiled by clang -x hip --cuda-device-only
// -nogpuinc -nogpulib with -I ktile/include; ktile/runtime/toolchains/amd.py).
//
// It implements docs/cpp-api.md for gfx942: the device prelude, this family's instruction
// layer and lane layouts, the shared AMD tile library, and its copy path. docs/amd-headers.md
// has the layouts and their reasons. Compiled and statically checked only: no CDNA3 GPU ran it.
#pragma once

#include "ktile/amd/device.hpp"
#include "ktile/amd/cdna3/isa.hpp"           // wave64, waits, MFMA, global->LDS DMA
#include "ktile/amd/cdna3/layouts.hpp"       // lane layouts of operands, accumulators, other tiles
#include "ktile/amd/common/tile_library.hpp"
#include "ktile/amd/cdna3/copy_async.hpp"    // global->LDS DMA, 4 bytes per lane

// ktile wave emulation of ktile/amd/device.hpp: HIP's attribute spellings as plain C++, and the
// hardware queries answered by the emulated machine (ktile/emulation/machine.hpp).
//
// Found before the real header on the include path (ktile/emulate/build.py), as are the other
// instruction-layer headers: common/isa_lanes.hpp, common/isa_memory.hpp, <family>/isa.hpp.
// Every other header is the device code, compiled for the host unchanged.
#pragma once

#include "ktile/emulation/machine.hpp"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)

namespace kt::amd {

inline unsigned thread_idx_x() { return static_cast<unsigned>(kt::emulation::lanes().thread()); }
inline unsigned thread_idx_y() { return 0; }
inline unsigned thread_idx_z() { return 0; }
inline unsigned block_idx_x() { return kt::emulation::lanes().block(0); }
inline unsigned block_idx_y() { return kt::emulation::lanes().block(1); }
inline unsigned block_idx_z() { return kt::emulation::lanes().block(2); }
inline unsigned wave_size() { return static_cast<unsigned>(kt::emulation::lanes().wave_size()); }
inline unsigned lane_id() { return static_cast<unsigned>(kt::emulation::lanes().lane()); }
inline unsigned wave_id() { return static_cast<unsigned>(kt::emulation::lanes().wave()); }
inline float rcp_approx(float d) { return 1.0f / d; }   // v_rcp_f32's 1 ulp: here exact
inline float rsqrt_approx(float x) { return 1.0f / __builtin_sqrtf(x); }   // v_rsq_f32: 1 ulp
inline void block_barrier() { kt::emulation::block_barrier(); }
inline unsigned char* dynamic_lds() { return kt::emulation::machine().lds.data(); }

}  // namespace kt::amd

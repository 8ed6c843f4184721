// ktile wave emulation: the emulated machine (the block's lanes, its LDS, the kernel's global
// memory) and the wave-level instructions every family shares: the waits and the barrier.
//
// One block runs at a time (harness.hpp); the emulated instruction layer reaches the machine
// through `machine()`.
#pragma once

#include <memory>

#include "ktile/emulation/global_memory.hpp"
#include "ktile/emulation/lanes.hpp"
#include "ktile/emulation/lds.hpp"

namespace kt::emulation {

struct emulated_machine {
  std::unique_ptr<block_lanes> lanes;   // made by the harness, for the launch's block shape
  lds_memory lds;
  global_memory global;
};

inline emulated_machine& machine() {
  static emulated_machine m;
  return m;
}
inline block_lanes& lanes() { return *machine().lanes; }

// s_waitcnt vmcnt(0) / s_wait_loadcnt 0: a wave instruction; the wave's global->LDS copies land.
// (Global loads into registers are synchronous here: the compiler waits for those itself.)
inline void wait_vm() {
  block_lanes& l = lanes();
  l.meet<char>("the global-load wait (vmcnt)", char{0}, [&](const char*, char*) {
    machine().lds.complete_copies(l.wave(), l.barriers_passed());
  });
}

// s_waitcnt lgkmcnt(0) / s_wait_dscnt 0: a wave instruction. LDS reads and writes are complete
// when issued here (the compiler waits for their registers itself), so it only meets the wave.
inline void wait_lds() {
  lanes().meet<char>("the LDS wait (lgkmcnt)", char{0}, [](const char*, char*) {});
}

// s_barrier: every wave of the block that has not ended meets; LDS writes before it are visible
// after it (the race check's epoch advances). Copies in flight stay in flight (trap 4).
inline void block_barrier() { lanes().barrier(); }

}  // namespace kt::emulation

// ktile wave emulation: the lanes of one block, run in lockstep on one host thread.
//
// Every lane is a fiber (ucontext) with its own stack. The scheduler runs the ready lanes in
// order; a lane runs until it reaches a wave instruction (`meet`: ds_bpermute, an MMA, a wait),
// the block barrier, or the kernel's end. A wave instruction completes when all lanes of the
// wave have issued it: the last one to arrive computes it for the wave from every lane's
// operands, and the wave goes on. So between two such points the lanes of a wave run one after
// another, and the waves of a block interleave only at them; what a lane computes alone does not
// depend on that order, and what lanes share (LDS, the MMA's operands) is checked where they meet.
//
// The whole wave must issue a wave instruction (WMMA and MFMA need EXEC all ones; the headers
// issue ds_bpermute and the waits with every lane): a lane that reaches another one, a barrier
// or the end while its wave waits is reported (`wave-divergence`). The barrier completes when
// every lane that has not ended is at it (a wave that ended no longer takes part, as on AMD).
#pragma once

#include <cstdint>
#include <cstring>
#include <sys/mman.h>
#include <ucontext.h>
#include <vector>

#include "ktile/emulation/report.hpp"

namespace kt::emulation {

enum class lane_state : uint8_t { ready, at_wave_op, at_barrier, done };

class block_lanes {
 public:
  static constexpr int slot_bytes = 256;       // a lane's operands of one wave instruction, at most
  static constexpr size_t stack_bytes = 256 * 1024;

  block_lanes(int threads, int wave_size) : threads_(threads), wave_size_(wave_size), fibers_(threads),
                                            meetings_(threads / wave_size) {
    stacks_ = static_cast<unsigned char*>(mmap(nullptr, threads * stride(), PROT_READ | PROT_WRITE,
                                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (stacks_ == MAP_FAILED) emulator_bug("cannot map the lanes' stacks");
    for (int t = 0; t < threads; ++t) mprotect(stacks_ + t * stride(), guard_bytes, PROT_NONE);  // overflow faults
  }
  ~block_lanes() { munmap(stacks_, threads_ * stride()); }
  block_lanes(const block_lanes&) = delete;
  block_lanes& operator=(const block_lanes&) = delete;

  // Run `body(arg)` in every lane of block (x, y, z) until every lane has ended.
  void run(const unsigned block[3], void (*body)(void*), void* arg) {
    for (int i = 0; i < 3; ++i) where_.block[i] = block[i];
    body_ = body, body_arg_ = arg, live_ = threads_, at_barrier_ = 0, barriers_ = 0;
    for (auto& m : meetings_) m.arrived = 0;
    for (int t = 0; t < threads_; ++t) start_fiber(t);
    while (live_ > 0) {
      bool moved = false;
      for (int t = 0; t < threads_; ++t) {
        if (fibers_[t].state != lane_state::ready) continue;
        moved = true;
        resume(t);
        if (fibers_[t].state == lane_state::done) lane_ended();
      }
      if (!moved) report_stall();
    }
  }

  int thread() const { return current_; }
  int lane() const { return current_ % wave_size_; }
  int wave() const { return current_ / wave_size_; }
  int threads() const { return threads_; }
  int wave_size() const { return wave_size_; }
  int waves() const { return threads_ / wave_size_; }
  unsigned block(int axis) const { return where_.block[axis]; }
  uint32_t barriers_passed() const { return barriers_; }   // the barrier epoch (lds.hpp's race check)

  lane_position position() const { return position_of(current_); }
  lane_position position_of(int thread) const {
    lane_position p = where_;
    p.wave = thread / wave_size_, p.lane = thread % wave_size_;
    return p;
  }

  // A wave instruction: every lane of the wave gives `in`; when the last arrives,
  // `compute(const In* ins, Out* outs)` runs once over all of them (index = lane); each lane
  // gets its `Out`.
  template <class Out, class In, class Compute>
  Out meet(const char* op, const In& in, Compute&& compute) {
    static_assert(sizeof(In) <= slot_bytes && sizeof(Out) <= slot_bytes, "kt::emulation: a lane's operands fit its slot");
    meeting& m = meetings_[wave()];
    if (m.arrived != 0 && std::strcmp(m.op, op) != 0)
      violation_here("wave-divergence", "lane %d issues %s while other lanes of wave %d wait at %s: the whole wave "
                     "must issue a wave instruction together", lane(), op, wave(), m.op);
    m.op = op;
    std::memcpy(m.inputs + lane() * slot_bytes, &in, sizeof(In));
    if (++m.arrived < wave_size_) {
      park(lane_state::at_wave_op);
    } else {
      m.arrived = 0;
      In ins[64];
      Out outs[64];
      for (int l = 0; l < wave_size_; ++l) std::memcpy(&ins[l], m.inputs + l * slot_bytes, sizeof(In));
      compute(static_cast<const In*>(ins), outs);
      for (int l = 0; l < wave_size_; ++l) std::memcpy(m.outputs + l * slot_bytes, &outs[l], sizeof(Out));
      release_wave(wave());
      park(lane_state::ready);   // the wave goes on from its first lane
    }
    Out out;
    std::memcpy(&out, m.outputs + lane() * slot_bytes, sizeof(Out));
    return out;
  }

  // The block barrier (s_barrier): the lanes that have not ended meet; `barriers_passed` counts it.
  void barrier() {
    if (++at_barrier_ < live_) {
      park(lane_state::at_barrier);
    } else {
      release_barrier();
      park(lane_state::ready);   // the block goes on from its first lane
    }
  }

  [[noreturn]] void violation_here(const char* check, const char* format, ...) const {
    va_list args;
    va_start(args, format);
    report_violation(check, position(), nullptr, format, args);
  }

 private:
  static constexpr size_t guard_bytes = 4096;
  static size_t stride() { return stack_bytes + guard_bytes; }

  struct fiber {
    ucontext_t context;
    lane_state state = lane_state::done;
  };
  struct meeting {
    const char* op = "";
    int arrived = 0;
    alignas(64) unsigned char inputs[64 * slot_bytes];
    alignas(64) unsigned char outputs[64 * slot_bytes];
  };

  static block_lanes*& running() {
    static block_lanes* lanes = nullptr;
    return lanes;
  }
  static void fiber_entry() {
    block_lanes& self = *running();
    self.body_(self.body_arg_);
    self.fibers_[self.current_].state = lane_state::done;   // uc_link returns to the scheduler
  }

  void start_fiber(int t) {
    fiber& f = fibers_[t];
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stacks_ + t * stride() + guard_bytes;
    f.context.uc_stack.ss_size = stack_bytes;
    f.context.uc_link = &scheduler_;
    makecontext(&f.context, fiber_entry, 0);
    f.state = lane_state::ready;
  }
  void resume(int t) {
    current_ = t;
    running() = this;
    swapcontext(&scheduler_, &fibers_[t].context);
  }
  // Give the host thread back to the scheduler until this lane is ready again.
  void park(lane_state why) {
    fiber& f = fibers_[current_];
    f.state = why;
    swapcontext(&f.context, &scheduler_);
    if (stall_message_ != nullptr) violation_here("wave-divergence", "%s", stall_message_);
  }
  void release_wave(int w) {
    for (int l = 0; l < wave_size_; ++l) {
      fiber& f = fibers_[w * wave_size_ + l];
      if (f.state == lane_state::at_wave_op) f.state = lane_state::ready;
    }
  }
  void release_barrier() {
    at_barrier_ = 0;
    ++barriers_;
    for (auto& f : fibers_)
      if (f.state == lane_state::at_barrier) f.state = lane_state::ready;
  }
  void lane_ended() {
    --live_;
    if (at_barrier_ > 0 && at_barrier_ == live_) release_barrier();
  }

  // Nothing can run: some wave waits at a wave instruction that part of it will never issue.
  // The report comes from a waiting lane, so that its stack names the instruction's line.
  [[noreturn]] void report_stall() {
    for (int w = 0; w < waves(); ++w) {
      const meeting& m = meetings_[w];
      if (m.arrived == 0) continue;
      int waiting = -1, elsewhere = -1;
      for (int l = 0; l < wave_size_; ++l) {
        const int t = w * wave_size_ + l;
        if (fibers_[t].state == lane_state::at_wave_op) waiting = waiting < 0 ? t : waiting;
        else elsewhere = elsewhere < 0 ? t : elsewhere;
      }
      if (waiting < 0 || elsewhere < 0) continue;
      const bool ended = fibers_[elsewhere].state == lane_state::done;
      std::snprintf(stall_text_, sizeof stall_text_,
                    "%d lanes of wave %d wait at %s, but lane %d %s: the whole wave must issue a wave "
                    "instruction together (WMMA / MFMA need EXEC all ones)", m.arrived, w, m.op,
                    elsewhere % wave_size_, ended ? "has left the kernel" : "waits at a block barrier");
      stall_message_ = stall_text_;
      resume(waiting);   // reports from the waiting lane; does not return
    }
    emulator_bug("no lane can run, and no wave waits at a wave instruction");
  }

  int threads_, wave_size_;
  std::vector<fiber> fibers_;
  std::vector<meeting> meetings_;
  unsigned char* stacks_ = nullptr;
  ucontext_t scheduler_;
  lane_position where_;
  void (*body_)(void*) = nullptr;
  void* body_arg_ = nullptr;
  int current_ = 0, live_ = 0, at_barrier_ = 0;
  uint32_t barriers_ = 0;
  const char* stall_message_ = nullptr;
  char stall_text_[512];
};

}  // namespace kt::emulation

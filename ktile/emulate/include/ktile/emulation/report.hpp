// ktile wave emulation: how a broken ISA precondition is reported.
//
// The emulated instruction layer checks the hardware's preconditions as the kernel runs. The
// first broken one ends the run with one report on stderr, between two marker lines, which
// ktile/emulate/report.py turns into an EmulationError:
//
//   ktile-emulation-violation
//   check: lds-copy-not-waited            the precondition's name (docs/emulation.md lists them)
//   block: 0 0 0
//   wave: 1
//   lane: 5
//   message: ...                          one line
//   base: 0x5581...                       where the executable is loaded
//   frames: 0x5581... 0x5581...           the reporting lane's stack (symbolized: the kernel line)
//   issued: 0x5581... ...                 optional: where the instruction in question was issued
//   ktile-emulation-end
//
// then the process exits with `violation_exit`.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

namespace kt::emulation {

constexpr int violation_exit = 86;

// A lane's call stack as return addresses (the executable has line tables: -gline-tables-only).
struct stack_frames {
  static constexpr int capacity = 24;
  void* at[capacity];
  int count = 0;

  static stack_frames here() {
    stack_frames f;
    f.count = backtrace(f.at, capacity);
    return f;
  }
  bool operator==(const stack_frames& o) const {
    if (count != o.count) return false;
    for (int i = 0; i < count; ++i)
      if (at[i] != o.at[i]) return false;
    return true;
  }
};

// Where the reported lane is: its block, wave and lane.
struct lane_position {
  unsigned block[3] = {0, 0, 0};
  int wave = -1, lane = -1;
};

namespace detail {

inline void print_frames(const char* label, const stack_frames& frames) {
  std::fprintf(stderr, "%s:", label);
  for (int i = 0; i < frames.count; ++i) std::fprintf(stderr, " %p", frames.at[i]);
  std::fprintf(stderr, "\n");
}

inline const void* load_base() {
  Dl_info info{};
  return dladdr(reinterpret_cast<void*>(&load_base), &info) ? info.dli_fbase : nullptr;
}

}  // namespace detail

// Report `check` at `where` and end the run. `issued`: the stack that issued the instruction the
// message is about (a copy still in flight), or null.
[[noreturn]] inline void report_violation(const char* check, const lane_position& where,
                                          const stack_frames* issued, const char* format, va_list args) {
  char message[1024];
  std::vsnprintf(message, sizeof message, format, args);
  for (char* c = message; *c; ++c)
    if (*c == '\n') *c = ' ';
  std::fprintf(stderr, "ktile-emulation-violation\ncheck: %s\nblock: %u %u %u\nwave: %d\nlane: %d\nmessage: %s\n",
               check, where.block[0], where.block[1], where.block[2], where.wave, where.lane, message);
  std::fprintf(stderr, "base: %p\n", detail::load_base());
  detail::print_frames("frames", stack_frames::here());
  if (issued != nullptr) detail::print_frames("issued", *issued);
  std::fprintf(stderr, "ktile-emulation-end\n");
  std::fflush(stderr);
  _exit(violation_exit);
}

// An internal inconsistency of the emulator itself (not of the kernel): a plain message and exit 70.
[[noreturn]] inline void emulator_bug(const char* what) {
  std::fprintf(stderr, "ktile-emulation-internal: %s\n", what);
  std::fflush(stderr);
  _exit(70);
}

}  // namespace kt::emulation

// ktile wave emulation: one 16x16xK matrix instruction (WMMA, MFMA) of a wave, from the lanes'
// registers by the instruction's exact lane maps.
//
// D (16x16) += A (16xK) · B (Kx16), the operands and accumulator placed by lane_maps.hpp.
//
// Checked: replicated operands hold the same bits in every replica (`mma-replicas`): the
// hardware reads one of them, and which is not specified. The products are exact (bf16, fp16 and
// fp8 products fit a float); each sum runs in k order from the accumulator, in float (int32
// wrapping for int8), where the hardware's internal order and precision are its own.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstring>

#include "ktile/emulation/lane_maps.hpp"
#include "ktile/emulation/machine.hpp"
#include "ktile/emulation/numbers.hpp"

namespace kt::emulation {

namespace detail {

template <class S, int E, class ACC, int ED>
struct mma_registers {
  isa::vec<S, E> a, b;
  isa::vec<ACC, ED> d;
};

template <class S, int E>
uint32_t element_bits(const isa::vec<S, E>& v, int e) {
  const S x = v[e];
  uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof(S));
  return bits;
}

[[noreturn]] inline void replica_report(const block_lanes& lanes, int lane, const char* format, ...) {
  va_list args;
  va_start(args, format);
  report_violation("mma-replicas", lanes.position_of(lanes.wave() * lanes.wave_size() + lane), nullptr, format, args);
}

// Every replica lane holds its original's bits, for both operands.
template <int K, class S, int E, class ACC, int ED>
void check_replicas(const char* instruction, const mma_registers<S, E, ACC, ED>* in, const block_lanes& lanes) {
  const int originals = operand_originals(K, E);
  for (int l = originals; l < lanes.wave_size(); ++l) {
    const int o = l % originals;
    for (int operand = 0; operand < 2; ++operand)
      for (int e = 0; e < E; ++e) {
        const uint32_t mine = element_bits(operand ? in[l].b : in[l].a, e), theirs = element_bits(operand ? in[o].b : in[o].a, e);
        if (mine == theirs) continue;
        replica_report(lanes, l, "%s: lanes %d and %d hold different %s operands (element %d: 0x%x in lane %d, 0x%x in "
                       "lane %d); the instruction reads each operand replicated across the half-waves, so lanes l "
                       "and l + %d must hold the same registers", instruction, o, l, operand ? "src1 (B)" : "src0 (A)",
                       e, theirs, o, mine, l, originals);
      }
  }
}

}  // namespace detail

// d += a·b for the wave, as `instruction` (its name, for reports) with the ORDER accumulator.
template <acc_order ORDER, int K, class S, int E, class ACC, int ED>
void multiply(const char* instruction, isa::vec<ACC, ED>& d, const isa::vec<S, E>& a, const isa::vec<S, E>& b) {
  using regs = detail::mma_registers<S, E, ACC, ED>;
  using value = decltype(operand_value(S{}));
  block_lanes& lanes = kt::emulation::lanes();
  d = lanes.meet<isa::vec<ACC, ED>>(instruction, regs{a, b, d}, [&](const regs* in, isa::vec<ACC, ED>* out) {
    detail::check_replicas<K>(instruction, in, lanes);
    value A[16][K], B[K][16];
    for (int l = 0; l < operand_originals(K, E); ++l)
      for (int e = 0; e < E; ++e) {
        const matrix_element at = operand_element(K, E, l, e);
        A[at.row][at.col] = operand_value(in[l].a[e]);
        B[at.col][at.row] = operand_value(in[l].b[e]);
      }
    for (int l = 0; l < lanes.wave_size(); ++l)
      for (int e = 0; e < ED; ++e) {
        const matrix_element at = accumulator_element(ORDER, lanes.wave_size(), ED, l, e);
        ACC sum = in[l].d[e];
        for (int k = 0; k < K; ++k) sum = accumulate(sum, A[at.row][k], B[k][at.col]);
        out[l][e] = sum;
      }
  });
}

}  // namespace kt::emulation

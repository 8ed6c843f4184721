// ktile wave emulation: the lane maps of a 16x16xK matrix instruction (WMMA, MFMA) — which lane
// and register element holds which element of its operands and accumulator.
//
// Operands, every family: lane l holds row l % 16 of A (column l % 16 of B); its E elements are
// k = E·g + e for lane group g = l / 16 < G = K / E; lanes from 16·G on repeat the first 16·G
// (RDNA3's WMMA: G = 1, lanes l and l + 16). Accumulator: lane l holds column l % 16 of D; its
// ED elements are rows ED·g + e (blocked: CDNA, RDNA4) or (wave / 16)·e + g (interleaved:
// RDNA3). These are the target tables' FragmentMaps; tests/tier2/test_emulation_layer.py
// compares them.
#pragma once

namespace kt::emulation {

enum class acc_order { blocked, interleaved };

struct matrix_element {
  int row, col;
};

// Operand element e of `lane` (per_lane of k_total per row): its row of A (column of B), its k.
constexpr matrix_element operand_element(int k_total, int per_lane, int lane, int e) {
  const int groups = k_total / per_lane;
  return {lane % 16, per_lane * ((lane / 16) % groups) + e};
}

// The lanes that hold distinct operand elements; the rest are replicas of lane % originals.
constexpr int operand_originals(int k_total, int per_lane) { return 16 * (k_total / per_lane); }

// Accumulator element e of `lane` (per_lane elements, wave_size lanes): its row and column of D.
constexpr matrix_element accumulator_element(acc_order order, int wave_size, int per_lane, int lane, int e) {
  const int g = lane / 16;
  return {order == acc_order::blocked ? per_lane * g + e : (wave_size / 16) * e + g, lane % 16};
}

}  // namespace kt::emulation

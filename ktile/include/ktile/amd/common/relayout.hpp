// ktile / AMD: moving values from one register map to another — a tile to another lane layout
// or layout tag, a vector to another form. One engine for every case.
//
// For each destination register p, the element it must hold is known per lane; so is the lane
// and register holding that element in the source. The register is an index and must be a
// compile-time constant, but may differ between lanes: `sources_of` runs through every lane at
// compile time and lists the distinct source registers. Each one is read (from the holding lane
// with ds_bpermute, unless every lane holds its own element) and the lane keeps the one it
// wants (an integer blend, not a select: a select per element is a lane mask in scalar
// registers). A move between maps that put each element in the same lane and register compiles
// to nothing; a lane-local move to register copies; the rest cost one bpermute per destination
// register and distinct source register: the RDNA3 accumulator -> frag_none move 2 per element,
// a 16-bit accumulator -> operand move on CDNA4 2, a kt::row <-> kt::col change up to 8.
#pragma once

#include "ktile/amd/common/register_tile.hpp"

namespace kt::detail {

// The distinct source registers a destination register p reads, over all lanes, and whether
// every lane finds its element in its own registers.
struct source_registers {
  int count;
  int reg[isa::wave_size];
  bool local;
};

template <class Dst, class Src, int P>
constexpr source_registers sources_of() {
  source_registers s{0, {}, true};
  for (int lane = 0; lane < isa::wave_size; ++lane) {
    const element_at x = Dst::element(lane, P);
    const int r = Src::holder_reg(x);
    if (Src::holder_lane(x, lane) != lane) s.local = false;
    bool seen = false;
    for (int k = 0; k < s.count; ++k) seen = seen || s.reg[k] == r;
    if (!seen) s.reg[s.count++] = r;
  }
  return s;
}

// All ones when a == b, else zero, for small non-negative ints: integer arithmetic, where a
// compare would leave a lane mask in scalar registers per element.
__device__ __forceinline__ uint32_t equal_mask(int a, int b) { return static_cast<uint32_t>(((a ^ b) - 1) >> 31); }

// `v` as held by lane `src`, for an element of up to 4 bytes.
template <class T> __device__ __forceinline__ T read_lane(const T& v, int src) {
  return from_bits32<T>(isa::lane_read(bits32(v), src));
}

// dst (registers of map D::map) <- the same logical elements, as src (map S::map) holds them.
template <class D, class S>
__device__ __forceinline__ void move_elements(D& dst, const S& src) {
  using DM = typename D::map;
  using SM = typename S::map;
  using T = typename S::elem_type;
  static_assert(std::is_same<T, typename D::elem_type>::value, "kt: a register move keeps the element type");
  const int lane = isa::lane();
  static_for<DM::regs>([&](auto pc) {
    constexpr int P = decltype(pc)::value;
    constexpr source_registers from = sources_of<DM, SM, P>();
    const element_at x = DM::element(lane, P);
    const int want = from.count == 1 ? 0 : SM::holder_reg(x);
    const int holder = from.local ? lane : SM::holder_lane(x, lane);
    uint32_t value = 0;
    static_for<from.count>([&](auto kc) {
      constexpr int R = sources_of<DM, SM, P>().reg[decltype(kc)::value];
      T v = src.get(R);
      if constexpr (!from.local) v = read_lane(v, holder);
      if constexpr (decltype(kc)::value == 0) value = bits32(v);
      else value ^= (value ^ bits32(v)) & equal_mask(want, R);
    });
    dst.set(P, from_bits32<T>(value));
  });
}

// ---- tiles -----------------------------------------------------------------------------------------------
// The same tile in lane layout LL and layout tag L2 (the tile itself when nothing changes).
template <class LL, class L2, class X>
__device__ __forceinline__ tile_regs<typename X::elem_type, X::rows, X::cols, L2, LL> relaid(const X& x) {
  tile_regs<typename X::elem_type, X::rows, X::cols, L2, LL> out;
  if constexpr (std::is_same<decltype(out), tile_regs_of<X>>::value) out = static_cast<const tile_regs_of<X>&>(x);
  else move_elements(out, x);
  return out;
}

// Whether tiles X and Y hold each element in the same lane and register.
template <class X, class Y> constexpr bool same_map() { return std::is_same<typename X::map, typename Y::map>::value; }

// ---- vectors ---------------------------------------------------------------------------------------------
// The vector x in form F (a copy).
template <class F, class X>
__device__ __forceinline__ vec_regs<typename X::elem_type, F> in_form(const X& x) {
  vec_regs<typename X::elem_type, F> out;
  if constexpr (std::is_same<F, typename X::map>::value) out.data = x.data;
  else move_elements(out, x);
  return out;
}

// The register of vector form F holding the vector element that register p of a tile (map M)
// lies on, along rows (AlongRows) or columns: a constant, and in the reading lane itself when
// F is form_for_tile<M, AlongRows, L>.
template <class M, bool AlongRows> struct projected_map {
  __host__ __device__ static constexpr element_at element(int lane, int p) {
    const element_at t = M::element(lane, p);
    return element_at{0, AlongRows ? t.r : t.c};
  }
};
template <class M, bool AlongRows, class F, int P>
constexpr int vector_reg_at() {
  constexpr source_registers s = sources_of<projected_map<M, AlongRows>, F, P>();
  static_assert(s.count == 1 && s.local, "kt: a vector read at a tile's registers must be in the tile's form");
  return s.reg[0];
}

}  // namespace kt::detail

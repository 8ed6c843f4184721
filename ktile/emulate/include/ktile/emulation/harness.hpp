// ktile wave emulation: the host program around one generated kernel.
//
//   int main(int argc, char** argv) { return kt::emulation::run_kernel(add, add__grid, argc, argv); }
//
// A kernel taking runtime scalars after its globals runs as
//   kt::emulation::with_scalars<float, int32_t>::run_kernel(k, k__grid, argc, argv)
// (the launch carries their values after the tensors).
//
// `emulator LAUNCH RESULT`: reads the launch (ktile/emulate/launch.py writes it: the block
// shape, the LDS sizes, every tensor argument's bytes and each runtime scalar's), computes the grid with the kernel's
// own grid function, runs the blocks one after another (lanes.hpp), and writes the bytes of
// every argument the kernel writes to RESULT. Exit 0: done; `violation_exit`: a precondition
// broke (report.hpp); 2: the launch file is unusable.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ktile/emulation/machine.hpp"

namespace kt::emulation {

constexpr char launch_magic[8] = {'k', 't', 'e', 'm', 'u', '-', '1', '\0'};

struct tensor_launch {
  std::string name;
  int64_t element_bytes, extent[4], stride[4];
  bool written;
  unsigned char* data;
  uint64_t bytes;
};

struct launch {
  int64_t threads, wave_size, lds_dynamic, lds_limit;
  std::vector<tensor_launch> tensors;
  std::vector<uint64_t> scalars;   // each runtime scalar's bytes, in the low ones (little-endian)
};

namespace detail {

[[noreturn]] inline void unusable(const char* what) {
  std::fprintf(stderr, "ktile-emulation-harness: %s\n", what);
  std::exit(2);
}

inline void read_exactly(FILE* f, void* to, size_t bytes) {
  if (bytes != 0 && std::fread(to, 1, bytes, f) != bytes) unusable("the launch file ends early");
}
inline int64_t read_i64(FILE* f) {
  int64_t v;
  read_exactly(f, &v, 8);
  return v;
}

// One argument: its header, its bytes (placed as the caller's are, relative to a 256-byte
// boundary), and for a written one which of its bytes are elements.
inline tensor_launch read_tensor(FILE* f, global_memory& global) {
  tensor_launch t;
  t.name.resize(static_cast<size_t>(read_i64(f)));
  read_exactly(f, t.name.data(), t.name.size());
  t.element_bytes = read_i64(f);
  for (auto& e : t.extent) e = read_i64(f);
  for (auto& s : t.stride) s = read_i64(f);
  t.bytes = static_cast<uint64_t>(read_i64(f));
  t.written = read_i64(f) != 0;
  const int64_t offset = read_i64(f);   // the caller's data pointer modulo 256: kept
  if (offset < 0 || offset >= 256) unusable("bad data offset");
  auto* block = static_cast<unsigned char*>(std::aligned_alloc(256, (t.bytes + offset + 255) / 256 * 256));
  if (block == nullptr) unusable("cannot allocate a tensor argument");
  t.data = block + offset;
  read_exactly(f, t.data, t.bytes);
  tensor_bytes span{t.name, t.data, t.bytes, {}};
  if (t.written) {
    span.is_element.resize(t.bytes);
    read_exactly(f, span.is_element.data(), t.bytes);
  }
  global.add(std::move(span));
  return t;
}

inline launch read_launch(const char* path, global_memory& global) {
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr) unusable("cannot open the launch file");
  char magic[8];
  read_exactly(f, magic, 8);
  if (std::memcmp(magic, launch_magic, 8) != 0) unusable("the launch file is not a ktile emulation launch (version 1)");
  launch in;
  in.threads = read_i64(f), in.wave_size = read_i64(f);
  in.lds_dynamic = read_i64(f), in.lds_limit = read_i64(f);
  const int64_t count = read_i64(f);
  for (int64_t i = 0; i < count; ++i) in.tensors.push_back(read_tensor(f, global));
  const int64_t scalars = read_i64(f);
  if (scalars < 0 || scalars > 64) unusable("bad runtime scalar count");
  in.scalars.resize(static_cast<size_t>(scalars));
  for (auto& s : in.scalars) read_exactly(f, &s, 8);
  std::fclose(f);
  return in;
}

inline void write_results(const char* path, const launch& in) {
  FILE* f = std::fopen(path, "wb");
  if (f == nullptr) unusable("cannot write the result file");
  for (const tensor_launch& t : in.tensors)
    if (t.written && std::fwrite(t.data, 1, t.bytes, f) != t.bytes) unusable("cannot write the result file");
  std::fclose(f);
}

template <class T> kt::gl<T> global_of(const tensor_launch& t) {
  if (t.element_bytes != static_cast<int64_t>(sizeof(T))) unusable("an argument's element size is not the kernel's");
  kt::gl<T> g;
  g.data = reinterpret_cast<T*>(t.data);
  for (int i = 0; i < 4; ++i) g.extent[i] = t.extent[i], g.stride[i] = t.stride[i];
  return g;
}

template <class... T, size_t... I>
std::tuple<kt::gl<T>...> globals_of(const launch& in, std::index_sequence<I...>) {
  return std::tuple<kt::gl<T>...>(global_of<T>(in.tensors[I])...);
}

template <class S> S scalar_of(uint64_t bits) {
  static_assert(sizeof(S) <= 8, "a runtime scalar fits its 8 launch bytes");
  S value;
  std::memcpy(&value, &bits, sizeof(S));
  return value;
}

template <class... S, size_t... I>
std::tuple<S...> scalars_of(const launch& in, std::index_sequence<I...>) {
  return std::tuple<S...>(scalar_of<S>(in.scalars[I])...);
}

}  // namespace detail

// The kernel takes its globals, then runtime scalars of types S... (none: `run_kernel` below).
template <class... S> struct with_scalars {
template <class... T>
static int run_kernel(void (*kernel)(kt::gl<T>..., S...), kt::dim3 (*grid)(const kt::gl<T>&...), int argc, char** argv) {
  if (argc != 3) detail::unusable("usage: emulator LAUNCH RESULT");
  emulated_machine& m = machine();
  const launch in = detail::read_launch(argv[1], m.global);
  if (in.tensors.size() != sizeof...(T)) detail::unusable("the launch's argument count is not the kernel's");
  if (in.scalars.size() != sizeof...(S)) detail::unusable("the launch's runtime scalar count is not the kernel's");
  if (in.wave_size != kt::isa::wave_size) detail::unusable("the launch's wave size is not the target's");
  if (in.threads <= 0 || in.threads % in.wave_size != 0 || in.threads > 1024) detail::unusable("bad block size");
  auto globals = detail::globals_of<T...>(in, std::index_sequence_for<T...>{});
  auto args = std::tuple_cat(globals, detail::scalars_of<S...>(in, std::index_sequence_for<S...>{}));
  m.lanes = std::make_unique<block_lanes>(static_cast<int>(in.threads), static_cast<int>(in.wave_size));
  struct call {
    void (*kernel)(kt::gl<T>..., S...);
    decltype(args)* args;
  } body{kernel, &args};
  const kt::dim3 blocks = std::apply(grid, globals);
  for (kt::index_t z = 0; z < blocks.z; ++z)
    for (kt::index_t y = 0; y < blocks.y; ++y)
      for (kt::index_t x = 0; x < blocks.x; ++x) {
        const unsigned at[3] = {static_cast<unsigned>(x), static_cast<unsigned>(y), static_cast<unsigned>(z)};
        m.lds.start_block(static_cast<uint32_t>(in.lds_dynamic), static_cast<uint32_t>(in.lds_limit));
        m.lanes->run(at, [](void* p) {
          auto* c = static_cast<call*>(p);
          std::apply(c->kernel, *c->args);
        }, &body);
      }
  detail::write_results(argv[2], in);
  return 0;
}
};

template <class... T>
int run_kernel(void (*kernel)(kt::gl<T>...), kt::dim3 (*grid)(const kt::gl<T>&...), int argc, char** argv) {
  return with_scalars<>::run_kernel(kernel, grid, argc, argv);
}

}  // namespace kt::emulation

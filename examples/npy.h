//===- examples/npy.h -------------------------------------------------------------------------===//
//
// A minimal reader of little-endian f32 .npy files (C order) for the examples' main.cpp,
// the comparison they print, and the main of the graph examples.

#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace npy {

struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

inline Array load(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  char magic[10];
  if (!in.read(magic, 10) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  uint32_t len = static_cast<uint8_t>(magic[8]) | static_cast<uint8_t>(magic[9]) << 8;
  if (magic[6] != 1) { // versions 2 and 3 have a 4-byte header length
    char more[2];
    in.read(more, 2);
    len |= static_cast<uint32_t>(static_cast<uint8_t>(more[0])) << 16 |
           static_cast<uint32_t>(static_cast<uint8_t>(more[1])) << 24;
  }
  std::string header(len, '\0');
  in.read(&header[0], len);
  if (header.find("'<f4'") == std::string::npos || header.find("True") != std::string::npos) {
    std::fprintf(stderr, "%s: not a C-order float32 array\n", path.c_str());
    std::exit(2);
  }
  Array a;
  size_t p = header.find('(') + 1, end = header.find(')');
  int64_t count = 1;
  while (p < end) {
    size_t comma = header.find(',', p);
    std::string item = header.substr(p, std::min(comma, end) - p);
    if (item.find_first_of("0123456789") != std::string::npos) {
      a.shape.push_back(std::stoll(item));
      count *= a.shape.back();
    }
    p = std::min(comma, end) + 1;
  }
  a.data.resize(static_cast<size_t>(count));
  in.read(reinterpret_cast<char *>(a.data.data()), static_cast<std::streamsize>(count * 4));
  return a;
}

/// Prints the first row and MATCH/MISMATCH; returns the exit status.
inline int report(const char *name, const std::vector<float> &got, const Array &want) {
  double worst = 0;
  bool ok = got.size() == want.data.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    double d = std::fabs(double(got[i]) - want.data[i]);
    worst = std::fmax(worst, d);
    ok = d <= 1e-5 + 1e-4 * std::fabs(double(want.data[i]));
  }
  std::printf("%s[0] =", name);
  for (size_t i = 0; i < 10 && i < got.size(); ++i)
    std::printf(" %.5f", double(got[i]));
  std::printf("\n%s %s: max abs diff %g\n", ok ? "MATCH" : "MISMATCH", name, worst);
  return ok ? 0 : 1;
}

/// The main of the graph examples (cnn, mlp), `main DIR`: loads DIR/NAME.npy for each of
/// `inputs` and DIR/ref.npy, calls `entry(arrays, o, batch)` (the graph's raw entry on the arrays'
/// data; o has `width` floats a batch row), prints `graph: ` and `lastError()` (the module's
/// tdsl_last_error) when the call fails and else compares o with the reference (report).
/// Returns the exit status.
template <typename Entry>
int runGraph(int argc, char **argv, const char *graph, const std::vector<std::string> &inputs,
             int64_t width, const char *(*lastError)(void), Entry entry) {
  if (argc != 2)
    return std::fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
  std::string dir = argv[1];
  std::vector<Array> arrays;
  for (const std::string &name : inputs)
    arrays.push_back(load(dir + "/" + name + ".npy"));
  Array ref = load(dir + "/ref.npy");
  int64_t batch = arrays.at(0).shape[0];
  std::vector<float> o(static_cast<size_t>(batch * width));
  if (entry(arrays, o.data(), batch) != 0)
    return std::fprintf(stderr, "%s: %s\n", graph, lastError()), 1;
  return report("o", o, ref);
}

} // namespace npy

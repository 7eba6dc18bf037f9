//===- tools/tdsl-run/Values.cpp - tdsl-run's values from and to the command line ---------===//
#include "tools/tdsl-run/Values.h"

#include "support/Defines.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

namespace tdsl {

using runtime::Scalar;
using runtime::Tensor;

namespace {

bool parseDouble(const std::string &s, double &v) {
  if (s.empty())
    return false;
  size_t pos = 0;
  try {
    v = std::stod(s, &pos);
  } catch (...) {
    return false;
  }
  return pos == s.size();
}

} // namespace

std::optional<Scalar> parseScalar(ir::DType dtype, const std::string &text, std::string &error) {
  if (dtype.isBool()) {
    if (text == "true" || text == "1")
      return Scalar::ofBool(true);
    if (text == "false" || text == "0")
      return Scalar::ofBool(false);
    return std::nullopt;
  }
  if (dtype.isFloat()) {
    double v;
    if (!parseDouble(text, v))
      return std::nullopt;
    double largest = dtype == ir::DType::f64()    ? std::numeric_limits<double>::max()
                     : dtype == ir::DType::f32()  ? double(std::numeric_limits<float>::max())
                     : dtype == ir::DType::bf16() ? 3.3895313892515355e38
                                                  : 65504.0;
    if (std::isfinite(v) && std::fabs(v) > largest) {
      error = "'" + text + "' is out of range for " + dtype.name();
      return std::nullopt;
    }
    return Scalar::ofFloat(dtype, v);
  }
  int64_t v;
  if (!parseInteger(text, v))
    return std::nullopt;
  int bits = dtype.bits();
  bool fits = bits >= 64      ? (dtype.isInt() || v >= 0)
              : dtype.isInt() ? v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1))
                              : v >= 0 && v < (int64_t(1) << bits);
  if (!fits) {
    error = "'" + text + "' is out of range for " + dtype.name();
    return std::nullopt;
  }
  return Scalar::ofInt(dtype, v);
}

Scalar randomScalar(ir::DType dtype, std::mt19937_64 &gen) {
  uint64_t bits = gen();
  if (dtype.isBool())
    return Scalar::ofBool(bits & 1);
  if (dtype.isFloat())
    return Scalar::ofFloat(dtype, static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0);
  if (dtype.isUInt())
    return Scalar::ofInt(dtype, static_cast<int64_t>(bits % 9));
  return Scalar::ofInt(dtype, static_cast<int64_t>(bits % 17) - 8);
}

std::mt19937_64 generatorFor(uint64_t seed, size_t index) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(index)};
  return std::mt19937_64(seq);
}

std::string formatNumber(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void summarise(const std::string &name, const Tensor &t) {
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    double v = t.load(i).toDouble();
    lo = std::fmin(lo, v);
    hi = std::fmax(hi, v);
    sum += v;
  }
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : t.bytes)
    hash = (hash ^ b) * 0x100000001b3ull;
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(hash));
  std::cout << name << ": " << t.typeString();
  if (n > 0)
    std::cout << " min=" << formatNumber(lo) << " max=" << formatNumber(hi)
              << " mean=" << formatNumber(sum / static_cast<double>(n));
  std::cout << " checksum=" << hex << "\n";
}

} // namespace tdsl

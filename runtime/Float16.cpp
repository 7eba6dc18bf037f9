//===- runtime/Float16.cpp - f16 and bf16 bit-pattern conversions -------------------------===//
#include "runtime/Float16.h"

#include <bit>
#include <cmath>

namespace tdsl::runtime {

namespace {

/// A binary floating-point format of at most 16 bits.
struct Format {
  int expBits;
  int manBits;
};
constexpr Format kF16{5, 10};
constexpr Format kBF16{8, 7};

uint16_t signBit(const Format &f, bool negative) {
  return negative ? static_cast<uint16_t>(1u << (f.expBits + f.manBits)) : 0;
}
uint16_t infinityBits(const Format &f) {
  return static_cast<uint16_t>(((1u << f.expBits) - 1) << f.manBits);
}
uint16_t quietNaNBits(const Format &f) {
  return static_cast<uint16_t>(infinityBits(f) | (1u << (f.manBits - 1)));
}

/// Rounds `mag * 2^exp` (with its sign) to the format, to nearest with ties to even.
uint16_t encode(const Format &f, bool negative, uint64_t mag, int exp) {
  uint16_t sign = signBit(f, negative);
  if (mag == 0)
    return sign;
  const int bias = (1 << (f.expBits - 1)) - 1;
  const int emin = 1 - bias;
  // The exponent of the leading bit, and of the last place kept (fewer bits for subnormals).
  int lead = 63 - std::countl_zero(mag) + exp;
  int lsb = (lead < emin ? emin : lead) - f.manBits;
  int shift = lsb - exp; // `mag >> shift` is the significand in units of the last place
  uint64_t q;
  if (shift <= 0) {
    q = mag << -shift; // exact, and below 2^(manBits + 1)
  } else if (shift > 64) {
    q = 0; // below half of the last place
  } else if (shift == 64) {
    const uint64_t half = uint64_t(1) << 63;
    q = mag > half ? 1 : 0; // a tie rounds to the even 0
  } else {
    q = mag >> shift;
    uint64_t rem = mag & ((uint64_t(1) << shift) - 1);
    uint64_t half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  // Subnormal: the significand is the whole pattern (reaching 2^manBits gives the smallest
  // normal). Normal: the hidden bit carries into the exponent field, and a rounding carry
  // moves on to the next binade by itself.
  uint64_t bits = lead < emin ? q : (uint64_t(lead + bias - 1) << f.manBits) + q;
  if (bits >= infinityBits(f))
    return sign | infinityBits(f);
  return sign | static_cast<uint16_t>(bits);
}

uint16_t encodeDouble(const Format &f, double value) {
  uint64_t bits = std::bit_cast<uint64_t>(value);
  bool negative = bits >> 63;
  if (std::isnan(value))
    return signBit(f, negative) | quietNaNBits(f);
  if (std::isinf(value))
    return signBit(f, negative) | infinityBits(f);
  int field = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mantissa = bits & ((uint64_t(1) << 52) - 1);
  if (field == 0)
    return encode(f, negative, mantissa, -1074);
  return encode(f, negative, mantissa | (uint64_t(1) << 52), field - 1075);
}

uint16_t encodeInt(const Format &f, int64_t value) {
  uint64_t mag = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  return encode(f, value < 0, mag, 0);
}

} // namespace

uint16_t f16FromDouble(double value) { return encodeDouble(kF16, value); }
uint16_t bf16FromDouble(double value) { return encodeDouble(kBF16, value); }
uint16_t f16FromInt(int64_t value) { return encodeInt(kF16, value); }
uint16_t f16FromUInt(uint64_t value) { return encode(kF16, false, value, 0); }
uint16_t bf16FromInt(int64_t value) { return encodeInt(kBF16, value); }
uint16_t bf16FromUInt(uint64_t value) { return encode(kBF16, false, value, 0); }

double f16ToDouble(uint16_t bits) {
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int field = (bits >> 10) & 0x1f;
  int mantissa = bits & 0x3ff;
  if (field == 0)
    return sign * std::ldexp(mantissa, -24);
  if (field == 0x1f)
    return mantissa ? std::copysign(NAN, sign) : sign * INFINITY;
  return sign * std::ldexp(mantissa | 0x400, field - 25);
}

double bf16ToDouble(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

} // namespace tdsl::runtime

//===- runtime/Float16.h - f16 and bf16 bit-pattern conversions ---------------------------===//
//
// f16 (IEEE binary16) and bf16 (the upper half of a binary32) are storage types: values are
// kept as uint16_t bit patterns and computed on in a wider type. Every conversion to them
// rounds to nearest, ties to even, in a single rounding (no double rounding through f32);
// overflow gives infinity and NaN stays NaN (quiet, sign kept).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace tdsl::runtime {

uint16_t f16FromDouble(double value);
uint16_t bf16FromDouble(double value);
/// Exact conversions of integers (one rounding, unlike going through double).
uint16_t f16FromInt(int64_t value);
uint16_t f16FromUInt(uint64_t value);
uint16_t bf16FromInt(int64_t value);
uint16_t bf16FromUInt(uint64_t value);

/// Exact: every f16 and bf16 value is a double.
double f16ToDouble(uint16_t bits);
double bf16ToDouble(uint16_t bits);

inline uint16_t f16FromFloat(float value) { return f16FromDouble(value); }
inline uint16_t bf16FromFloat(float value) { return bf16FromDouble(value); }
inline float f16ToFloat(uint16_t bits) { return static_cast<float>(f16ToDouble(bits)); }
inline float bf16ToFloat(uint16_t bits) { return static_cast<float>(bf16ToDouble(bits)); }

} // namespace tdsl::runtime

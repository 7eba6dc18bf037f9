//===- ir/DType.h - Scalar and vector element types ---------------------------------------===//
//
// The dtypes of spec §2/§4: bool, signed and unsigned integers, and floats, each with a lane
// count (1 for scalars; more for the vector types produced by vectorization).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tdsl::ir {

class DType {
public:
  enum class Code : uint8_t {
#define TDSL_DTYPE(CODE, CTOR, NAME, BITS, STORAGE) CODE,
#include "ir/DType.def"
  };

  /// The default dtype is i64, the type of loop variables, axes and shape variables.
  constexpr DType() = default;
  constexpr explicit DType(Code code, uint16_t lanes = 1) : code_(code), lanes_(lanes) {}

  /// DType::boolean(), DType::i8(), …, DType::f64(): the scalar of each code.
#define TDSL_DTYPE(CODE, CTOR, NAME, BITS, STORAGE)                                                \
  static constexpr DType CTOR() { return DType(Code::CODE); }
#include "ir/DType.def"

  constexpr Code code() const { return code_; }
  constexpr uint16_t lanes() const { return lanes_; }
  constexpr bool isScalar() const { return lanes_ == 1; }
  constexpr bool isVector() const { return lanes_ > 1; }

  constexpr bool isBool() const { return code_ == Code::Bool; }
  /// Signed integer.
  constexpr bool isInt() const { return code_ >= Code::I8 && code_ <= Code::I64; }
  /// Unsigned integer.
  constexpr bool isUInt() const { return code_ >= Code::U8 && code_ <= Code::U64; }
  /// Signed or unsigned integer (not bool).
  constexpr bool isInteger() const { return isInt() || isUInt(); }
  constexpr bool isFloat() const { return code_ >= Code::F16; }

  /// Bits of one lane; bool counts as 1 bit (it is stored as one byte, see storageBytes()).
  int bits() const;
  /// Bytes one lane occupies in memory (bool: 1).
  int storageBytes() const;

  /// The same element type with `lanes` lanes.
  constexpr DType withLanes(uint16_t lanes) const { return DType(code_, lanes); }
  /// The scalar element type.
  constexpr DType element() const { return DType(code_); }

  /// Surface spelling: "f32", and "f32x4" for four lanes.
  std::string name() const;
  /// Parses what name() prints; nullopt for anything else.
  static std::optional<DType> parse(std::string_view text);

  friend constexpr bool operator==(DType a, DType b) {
    return a.code_ == b.code_ && a.lanes_ == b.lanes_;
  }

private:
  Code code_ = Code::I64;
  uint16_t lanes_ = 1;
};

/// Calls `f(T())` with T the C type one lane of `code` is stored as (the storage column of
/// ir/DType.def: uint8_t for bool, uint16_t for f16 and bf16).
template <typename F> void withStorageType(DType::Code code, F &&f) {
  switch (code) {
#define TDSL_DTYPE(CODE, CTOR, NAME, BITS, STORAGE)                                                \
  case DType::Code::CODE:                                                                          \
    return f(STORAGE());
#include "ir/DType.def"
  }
}

} // namespace tdsl::ir

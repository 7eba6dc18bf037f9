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
  enum class Code : uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64 };

  /// The default dtype is i64, the type of loop variables, axes and shape variables.
  constexpr DType() = default;
  constexpr explicit DType(Code code, uint16_t lanes = 1) : code_(code), lanes_(lanes) {}

  static constexpr DType boolean() { return DType(Code::Bool); }
  static constexpr DType i8() { return DType(Code::I8); }
  static constexpr DType i16() { return DType(Code::I16); }
  static constexpr DType i32() { return DType(Code::I32); }
  static constexpr DType i64() { return DType(Code::I64); }
  static constexpr DType u8() { return DType(Code::U8); }
  static constexpr DType u16() { return DType(Code::U16); }
  static constexpr DType u32() { return DType(Code::U32); }
  static constexpr DType u64() { return DType(Code::U64); }
  static constexpr DType f16() { return DType(Code::F16); }
  static constexpr DType bf16() { return DType(Code::BF16); }
  static constexpr DType f32() { return DType(Code::F32); }
  static constexpr DType f64() { return DType(Code::F64); }

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

} // namespace tdsl::ir

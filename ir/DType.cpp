//===- ir/DType.cpp - Scalar and vector element types -------------------------------------===//
#include "ir/DType.h"

#include <charconv>

namespace tdsl::ir {
namespace {

struct CodeInfo {
  DType::Code code;
  std::string_view name;
  int bits;
};

constexpr CodeInfo kCodes[] = {
#define TDSL_DTYPE(CODE, CTOR, NAME, BITS, STORAGE) {DType::Code::CODE, NAME, BITS},
#include "ir/DType.def"
};

const CodeInfo &info(DType::Code code) { return kCodes[static_cast<size_t>(code)]; }

} // namespace

int DType::bits() const { return info(code_).bits; }

int DType::storageBytes() const { return isBool() ? 1 : bits() / 8; }

std::string DType::name() const {
  std::string result(info(code_).name);
  if (lanes_ != 1)
    result += "x" + std::to_string(lanes_);
  return result;
}

std::optional<DType> DType::parse(std::string_view text) {
  for (const CodeInfo &candidate : kCodes) {
    if (text.substr(0, candidate.name.size()) != candidate.name)
      continue;
    std::string_view rest = text.substr(candidate.name.size());
    if (rest.empty())
      return DType(candidate.code);
    // A vector type: "f32x4". Lanes must be a plain decimal number above 1.
    if (rest[0] != 'x' || rest.size() < 2 || rest[1] == '0')
      continue;
    unsigned lanes = 0;
    auto [end, ec] = std::from_chars(rest.data() + 1, rest.data() + rest.size(), lanes);
    if (ec != std::errc() || end != rest.data() + rest.size() || lanes < 2 || lanes > 0xFFFF)
      continue;
    return DType(candidate.code, static_cast<uint16_t>(lanes));
  }
  return std::nullopt;
}

} // namespace tdsl::ir

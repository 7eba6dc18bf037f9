//===- runtime/Tensor.h - Host tensors and scalars ----------------------------------------===//
//
// The values the tools pass around: a Tensor is a dense row-major array owned by value, in
// the storage of spec §10 (bool as one byte 0/1, f16/bf16 as uint16_t bit patterns, host
// byte order). A Scalar is one value of a scalar dtype in a form that is easy to compute on.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tdsl::runtime {

/// One value of a scalar dtype. Integers and bool live in `i`, normalised to the dtype:
/// sign-extended for signed types, zero-extended for unsigned ones (u64 keeps its raw bits),
/// 0 or 1 for bool. Floats live in `f`, always a value the dtype can represent exactly.
struct Scalar {
  ir::DType dtype;
  int64_t i = 0;
  double f = 0;

  static Scalar ofInt(ir::DType dtype, int64_t value);
  static Scalar ofFloat(ir::DType dtype, double value);
  static Scalar ofBool(bool value) { return ofInt(ir::DType::boolean(), value); }
  /// The value as a double (integers converted, bool 0 or 1).
  double toDouble() const;
};

/// Two's complement truncation of `bits` to an integer or bool dtype, then the extension
/// Scalar::i expects.
int64_t normaliseInt(ir::DType dtype, uint64_t bits);
/// Rounds `value` to a float dtype (to nearest even; f64 unchanged).
double roundToFloat(ir::DType dtype, double value);

/// Number of elements of a shape (1 for rank 0).
int64_t numElements(const std::vector<int64_t> &shape);
/// "f32[2, 3]", "i64[]".
std::string typeString(ir::DType dtype, const std::vector<int64_t> &shape);

struct Tensor {
  ir::DType dtype;
  std::vector<int64_t> shape; ///< Empty for rank 0 (one element).
  std::vector<uint8_t> bytes; ///< numElements() * dtype.storageBytes() bytes.

  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(ir::DType dtype, std::vector<int64_t> shape);

  int64_t numElements() const { return runtime::numElements(shape); }
  std::string typeString() const { return runtime::typeString(dtype, shape); }

  /// Element `index` (row-major, unchecked) as a Scalar of the tensor's dtype.
  Scalar load(int64_t index) const;
  /// Stores `value`, which must have the tensor's dtype, at element `index` (unchecked).
  void store(int64_t index, const Scalar &value);
};

} // namespace tdsl::runtime

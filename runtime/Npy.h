//===- runtime/Npy.h - NumPy .npy files ---------------------------------------------------===//
//
// Reads and writes NumPy's `.npy` format (versions 1.0 to 3.0 read, 1.0 written) for the
// dtypes of spec §9: |b1 |i1 <i2 <i4 <i8 |u1 <u2 <u4 <u8 <f2 <f4 <f8, little-endian and C
// order only. bf16 has no NumPy dtype: it is written as <u2 bit patterns, and a <u2 file is
// read as u16 (the caller relabels it where a bf16 is expected).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "runtime/Tensor.h"

#include <optional>
#include <string>

namespace tdsl::runtime {

/// NumPy's descr for `dtype` ("<f4"); bf16 gives "<u2".
std::string npyDescr(ir::DType dtype);
/// The dtype of a descr ("<f4", "|b1", "=i8", "f8"); nullopt for anything else.
std::optional<ir::DType> dtypeFromNpyDescr(const std::string &descr);

/// Reads `path`; on failure returns nullopt and sets `error` (a lower-case sentence).
std::optional<Tensor> readNpy(const std::string &path, std::string &error);
/// Writes `tensor` to `path`; on failure returns false and sets `error`.
bool writeNpy(const std::string &path, const Tensor &tensor, std::string &error);

} // namespace tdsl::runtime

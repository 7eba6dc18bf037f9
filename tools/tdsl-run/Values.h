//===- tools/tdsl-run/Values.h - tdsl-run's values from and to the command line -----------===//
//
// Scalar literals of --input (range-checked for their dtype), the seeded random values of the
// inputs not given (one stream per parameter), and the one-line summary of an output not
// written to a file.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "runtime/Tensor.h"

#include <optional>
#include <random>
#include <string>

namespace tdsl {

/// A scalar of `dtype` from a command-line literal; nullopt if `text` is not one. A literal
/// the dtype cannot hold (`1e99` for f32, `300` for i8) sets `error`.
std::optional<runtime::Scalar> parseScalar(ir::DType dtype, const std::string &text,
                                           std::string &error);

/// A random value of `dtype`: uniform in [-1, 1) for floats, [-8, 8] for signed integers,
/// [0, 8] for unsigned ones, a fair coin for bool.
runtime::Scalar randomScalar(ir::DType dtype, std::mt19937_64 &gen);

/// Random values for parameter number `index`: a stream of its own, so that giving one input
/// from a file leaves the values of the others unchanged.
std::mt19937_64 generatorFor(uint64_t seed, size_t index);

/// `v` with 6 significant digits (%g).
std::string formatNumber(double v);

/// Prints `NAME: TYPE min=… max=… mean=… checksum=0x…` (FNV-1a of the bytes) on stdout.
void summarise(const std::string &name, const runtime::Tensor &t);

} // namespace tdsl

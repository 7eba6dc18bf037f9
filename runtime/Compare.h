//===- runtime/Compare.h - One comparison of an output with its reference -----------------===//
//
// What `tdsl-run --check` and tdsl-tune's check of each candidate accept as the same output: a
// compiled function's result against the unscheduled function's (or a graph as written), the
// reference. Floats agree within 1e-5 of the reference's largest magnitude (at least 1) plus
// 1e-4 of the element's — float sums reassociated by rfactor, reordered reductions and
// contracted multiply-adds (§9: on by default), and elements near zero that a long sum reaches
// by cancellation — or are both NaN; every other dtype is compared exactly.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "runtime/Tensor.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tdsl::runtime {

struct Comparison {
  /// Empty when the outputs agree; else why not ("output shape or type differs", or the first
  /// element that differs: "element 7: 1.5 scheduled, 1.25 unscheduled").
  std::string mismatch;
  /// The first element that differs (when mismatch names one).
  std::optional<int64_t> index;
  /// The largest absolute difference of two non-NaN floats compared.
  double maxAbsDiff = 0;
  bool same() const { return mismatch.empty(); }
};

/// `got` against `want` (see the file comment).
Comparison compareOutputs(const Tensor &got, const Tensor &want);

} // namespace tdsl::runtime

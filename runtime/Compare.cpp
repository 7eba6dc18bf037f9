//===- runtime/Compare.cpp - One comparison of an output with its reference ---------------===//
#include "runtime/Compare.h"

#include <cmath>
#include <cstdio>

namespace tdsl::runtime {

namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

} // namespace

Comparison compareOutputs(const Tensor &got, const Tensor &want) {
  Comparison c;
  if (got.shape != want.shape || got.dtype != want.dtype) {
    c.mismatch =
        "output shape or type differs (" + got.typeString() + " against " + want.typeString() + ")";
    return c;
  }
  bool isFloat = want.dtype.isFloat();
  double scale = 1;
  if (isFloat)
    for (int64_t i = 0; i < want.numElements(); ++i)
      if (double w = want.load(i).f; std::isfinite(w))
        scale = std::max(scale, std::fabs(w));
  for (int64_t i = 0; i < got.numElements(); ++i) {
    Scalar g = got.load(i), w = want.load(i);
    bool same;
    if (isFloat) {
      double d = std::fabs(g.f - w.f);
      same = (std::isnan(g.f) && std::isnan(w.f)) || g.f == w.f ||
             d <= 1e-5 * scale + 1e-4 * std::fabs(w.f);
      if (!std::isnan(d))
        c.maxAbsDiff = std::max(c.maxAbsDiff, d);
    } else {
      same = g.i == w.i;
    }
    if (!same && !c.index) {
      c.index = i;
      c.mismatch = "element " + std::to_string(i) + ": " + number(g.toDouble()) + " scheduled, " +
                   number(w.toDouble()) + " unscheduled";
      return c;
    }
  }
  return c;
}

} // namespace tdsl::runtime

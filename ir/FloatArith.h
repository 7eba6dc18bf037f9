//===- ir/FloatArith.h - Float arithmetic of the binary nodes, as every backend does it -------===//
//
// floatBinary(kind, x, y): Add, Sub, Mul, Div, Mod, Min and Max on float or double operands, with
// the semantics of spec §11 (Mod is floor modulo, Min and Max are fmin and fmax): what the
// interpreter computes and the graph passes fold.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cmath>

namespace tdsl::ir {

template <typename T> T floatBinary(ExprKind kind, T x, T y) {
  switch (kind) {
  case ExprKind::Add:
    return x + y;
  case ExprKind::Sub:
    return x - y;
  case ExprKind::Mul:
    return x * y;
  case ExprKind::Div:
    return x / y;
  case ExprKind::Mod:
    return x - std::floor(x / y) * y;
  case ExprKind::Min:
    return std::fmin(x, y);
  case ExprKind::Max:
    return std::fmax(x, y);
  default:
    TDSL_IR_CHECK(false, "not an arithmetic node");
  }
}

} // namespace tdsl::ir

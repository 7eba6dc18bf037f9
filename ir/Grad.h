//===- ir/Grad.h - The signature of a gradient graph (spec §13) -------------------------------===//
//
// `grad NAME = F wrt (P1, …, Pn);` defines a graph whose signature follows from F's alone, so the
// checker can check calls of NAME before the pipeline's grad step derives its body:
//
//   loss form (F has one result, of type f32[]):  F's parameters -> (F's result, grad_P1, …)
//   vector–Jacobian form (any other F):           F's parameters, then d_R for each float
//                                                  result R -> (F's results, grad_P1, …)
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <vector>

namespace tdsl::ir {

/// True when `f` takes the loss form: exactly one result, of type f32[].
bool isLossForm(const Func &f);

/// The graph `name` with the gradient signature of `f` with respect to its inputs number `wrt`
/// (tensors of a float dtype) and an empty body: fresh copies of f's constants, shape variables
/// and parameters, then the cotangents, and the results.
Func gradSignature(const std::string &name, const Func &f, const std::vector<size_t> &wrt,
                   SourceLoc loc);

} // namespace tdsl::ir

//===- passes/grad/Grad.h - Reverse-mode differentiation (spec §13) --------------------------===//
//
// The pipeline's `grad` step: each `grad NAME = F wrt (P1, …)` of the module (ir::GradItem, whose
// graph the checker made with the gradient signature, ir/Grad.h) gets its body:
//
//   1. F's calls, graphs inlined (graph.inline's inlineGraphCalls), a func F as one call;
//   2. the active calls: those on a path from some Pi to a result (an extern there is an error
//      at the grad item, with a note at the call);
//   3. in reverse order, for each active call of a func f, a call of f's adjoint
//      (deriveAdjoint, below), the cotangents of a value read several times summed, reshapes
//      reshaped back.
//
// The adjoint of a func is derived block by block in reverse (Halide's propagate_adjoints,
// TVM's te.gradient): a read `X[f(axes)]` of a block contributes `seed · ∂value/∂X` to the
// adjoint of X at f(axes) — as a gather (a block over X's indices, the axes f does not solve
// for as reduce axes) when f is affine and each index has an axis of its own to solve for,
// otherwise as an accumulation over the reading block's axes. Reductions by +, -, max and min
// are understood (max and min through the index of the first selected step); intermediates the
// adjoint reads are recomputed. docs/gradients.md has the rules.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tdsl::grad {

/// An error of the grad step: at `at`, with an optional note at `noteAt`.
struct GradError {
  SourceLoc at;
  std::string message;
  SourceLoc noteAt;
  std::string note;
};

/// The adjoint of a func, and how to call it. Its inputs are f's inputs, then the outputs of f
/// listed in `outputsRead` (their values), then the cotangents of the outputs listed in
/// `cotangents` (named `d_` + the output's name); its outputs are the gradients of the inputs
/// listed in `wrt` (named `grad_` + the input's name), in that order.
struct Adjoint {
  ir::Func func;
  std::vector<size_t> outputsRead;
  std::vector<size_t> cotangents;
  std::vector<size_t> wrt;
};

/// The adjoint of PrimFunc `f` (without generic constants) with respect to its tensor inputs
/// `wrt` (float dtypes), for cotangents on its outputs `cotangents` (float dtypes), named
/// `name`. nullopt with `error` set when f cannot be derived (a reduction that is not a sum,
/// max or min; a value read after a later block overwrote it, …).
std::optional<Adjoint> deriveAdjoint(const ir::PrimFunc &f, const std::string &name,
                                     const std::vector<size_t> &wrt,
                                     const std::vector<size_t> &cotangents, GradError &error);

/// `m` with every f32 value f64: buffers, scalars, graph constants, literals, casts and
/// intrinsics (f16 and bf16 stay; casts to them round). tdsl-run --check-grad's reference.
ir::Module promoteToF64(const ir::Module &m);

/// The grad step: derives every grad item of `m` not derived yet (the funcs it makes are added
/// before the first of the module's own graphs) and marks it derived. Errors go to `report`;
/// false after one.
bool expandGrads(ir::Module &m, const std::function<void(const GradError &)> &report);

} // namespace tdsl::grad

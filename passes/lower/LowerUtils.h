//===- passes/lower/LowerUtils.h - Helpers shared by the lowering steps -------------------===//
//
// Small analyses the lowering steps share: whether a statement touches a buffer, the constant
// coefficient of a variable in an affine index, the boxes a buffer's accesses touch, and a
// visitor of every buffer access. Substitution and the arithmetic are in ir/Utils.h and
// ir/Arith.h.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/Arith.h"
#include "ir/IR.h"
#include "ir/IRVisitor.h"
#include "ir/Utils.h" // substitute, withBody, ...: what the lowering steps use with these

#include <functional>
#include <optional>
#include <vector>

namespace tdsl::lower {

/// The statements in order (ir::seq); a no-op `Evaluate(0)` when there are none (what a loop
/// that runs no iteration becomes).
ir::Stmt seqOrNoOp(std::vector<ir::Stmt> stmts);

/// `body` with each loop of kind `kind` replaced, innermost first, by `rewrite(loop, loopStmt)`:
/// `loop` is the loop with its body already rewritten, `loopStmt` the same as a Stmt (return it
/// to keep the loop).
ir::Stmt rewriteLoops(const ir::Stmt &body, ir::ForKind kind,
                      const std::function<ir::Stmt(const ir::For *, const ir::Stmt &)> &rewrite);

/// Whether `s` (or `e`) loads or stores `buffer`.
bool usesBuffer(const ir::Stmt &s, const ir::Buffer &buffer);
bool usesBuffer(const ir::Expr &e, const ir::Buffer &buffer);

/// The constant c with e(v + 1) - e(v) == c for every v, when `e` (an i64 expression) is
/// affine in `v` with a constant coefficient (checked on v + 1 and v + 2); nullopt otherwise.
/// 0 when `e` does not depend on `v`.
std::optional<int64_t> coefficientOf(const ir::Expr &e, const ir::Var &v);

/// The box each access of `buffer` in `s` touches (one interval per dimension, inclusive),
/// when the loops inside `s` range over their bounds and every variable defined outside `s`
/// is fixed (`let` names inside `s` are replaced by their values). nullopt when an index
/// contains a load, or some bound is unknown; with `partial`, an unknown bound leaves that
/// dimension's interval undefined instead.
std::optional<std::vector<std::vector<ir::Interval>>>
accessBoxes(const ir::Stmt &s, const ir::Buffer &buffer, bool partial = false);

/// A visitor told of every buffer access: `record(buffer, indices)` for each load and store,
/// in visiting order (a store's indices before the loads of its value), before the access's
/// own operands are visited.
class AccessVisitor : public ir::IRVisitor {
protected:
  virtual void record(const ir::Buffer &buffer, const std::vector<ir::Expr> &indices) = 0;

  void visit(const ir::BufferLoad *op) override;
  void visit(const ir::BufferStore *op) override;
  using ir::IRVisitor::visit;
};

} // namespace tdsl::lower

//===- passes/lower/LowerUtils.h - Helpers shared by the lowering steps -------------------===//
//
// Small analyses the lowering steps share: substitution of variables (and of `let` values),
// whether a statement touches a buffer, the constant coefficient of a variable in an affine
// index, the boxes a buffer's accesses touch, and a visitor of every buffer access.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/IRVisitor.h"
#include "passes/schedule/Regions.h"

#include <optional>
#include <unordered_map>

namespace tdsl::lower {

/// `e` (or `s`) with every use of a key variable replaced by its expression.
ir::Expr substitute(const ir::Expr &e, const std::unordered_map<ir::Var, ir::Expr> &map);
ir::Stmt substitute(const ir::Stmt &s, const std::unordered_map<ir::Var, ir::Expr> &map);

/// The PrimFunc `func` with `body` (`func` itself when `body` is its body).
ir::Func withBody(const ir::Func &func, const ir::Stmt &body);

/// `e` with the `let` values of `lets` substituted until none is left (a value may refer to
/// earlier lets; lets are acyclic).
ir::Expr substituteLets(const ir::Expr &e, const std::unordered_map<ir::Var, ir::Expr> &lets);

/// Whether `s` (or `e`) loads or stores `buffer`.
bool usesBuffer(const ir::Stmt &s, const ir::Buffer &buffer);
bool usesBuffer(const ir::Expr &e, const ir::Buffer &buffer);

/// Whether `e` refers to `var`.
bool usesVar(const ir::Expr &e, const ir::Var &var);

/// The constant c with e(v + 1) - e(v) == c for every v, when `e` (an i64 expression) is
/// affine in `v` with a constant coefficient (checked on v + 1 and v + 2); nullopt otherwise.
/// 0 when `e` does not depend on `v`.
std::optional<int64_t> coefficientOf(const ir::Expr &e, const ir::Var &v);

/// The box each access of `buffer` in `s` touches (one interval per dimension, inclusive),
/// when the loops inside `s` range over their bounds and every variable defined outside `s`
/// is fixed (`let` names inside `s` are replaced by their values). nullopt when an index
/// contains a load, or some bound is unknown.
std::optional<std::vector<std::vector<schedule::Interval>>> accessBoxes(const ir::Stmt &s,
                                                                        const ir::Buffer &buffer);

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

//===- passes/schedule/State.h ----------------------------------------------------------------===//
//
// The schedule state: the function being scheduled, lookups of loops and blocks by
// handle, and the replace step every primitive ends with (TVM's ScheduleState, in small).

#pragma once

#include "ir/IR.h"
#include "ir/Utils.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tdsl::schedule {

/// A refused primitive: what rule failed, and the loop or block it concerns (for a note).
class ScheduleError : public std::runtime_error {
public:
  ScheduleError(std::string message, SourceLoc noteAt = {}, std::string note = {})
      : std::runtime_error(std::move(message)), noteAt(noteAt), note(std::move(note)) {}
  SourceLoc noteAt;
  std::string note;
};

/// The dependence test's refusal (Dependence.h): block `writer` writes an element that block
/// `other` also touches (writes when `otherWrites`) in another iteration.
class DependenceError : public ScheduleError {
public:
  DependenceError(std::string message, SourceLoc noteAt, std::string note, std::string writer,
                  std::string other, bool otherWrites)
      : ScheduleError(std::move(message), noteAt, std::move(note)), writer(std::move(writer)),
        other(std::move(other)), otherWrites(otherWrites) {}
  std::string writer, other;
  bool otherWrites;
};

/// Loops are named by their loop variable (which keeps its identity through rewrites), blocks
/// by their name (unique within a function).
class ScheduleState {
public:
  explicit ScheduleState(ir::Func func, std::string target);

  ir::Func func() const { return func_; }
  const ir::PrimFunc &prim() const { return *func_.as<ir::PrimFunc>(); }
  const std::string &target() const { return target_; }
  /// The module the function belongs to (its tensor intrinsics), when the caller gave it.
  const ir::Module *module() const { return module_; }
  void setModule(const ir::Module *module) { module_ = module; }

  /// The loop of `var`; throws if the loop no longer exists.
  const ir::For *loop(const ir::Var &var) const;
  /// The block named `name`; throws if there is none.
  const ir::Block *block(const std::string &name) const;
  /// Every block, in program order.
  std::vector<const ir::Block *> blocks() const;

  /// The statements enclosing `node`, outermost first, not including `node` itself.
  std::vector<const ir::StmtNode *> ancestors(const ir::StmtNode *node) const;
  /// The loops enclosing `node`, outermost first.
  std::vector<const ir::For *> loopsAbove(const ir::StmtNode *node) const;

  /// Replaces the statement `old` (found by identity) with `replacement`.
  void replace(const ir::StmtNode *old, ir::Stmt replacement);
  /// Replaces the function (for changes to its buffers).
  void setFunc(ir::Func func) { func_ = std::move(func); }
  void setBody(ir::Stmt body);

private:
  ir::Func func_;
  std::string target_;
  const ir::Module *module_ = nullptr;
};

// Helpers shared by the primitives.

/// Refuses `primitive` on a function where a block is nested in another block (what blockize
/// makes): the producer-consumer and buffer primitives do not handle such nests yet.
void requireNoNestedBlocks(const ScheduleState &s, const std::string &primitive);

/// `e` with each variable of a map or a list of pairs replaced (ir/Utils.h).
using ir::substitute;
/// Whether `e` mentions `v` (ir::usesVar).
inline bool uses(const ir::Expr &e, const ir::Var &v) { return ir::usesVar(e, v); }
/// The blocks inside `s`, in program order.
std::vector<const ir::Block *> blocksIn(const ir::Stmt &s);

/// An i64 expression as Σ coeff·var + constant.
struct Affine {
  std::vector<std::pair<ir::Var, int64_t>> terms;
  int64_t constant = 0;
  void add(const ir::Var &v, int64_t c);
  int64_t coeff(const ir::Var &v) const;
};
/// `e` in affine form (+, -, * by constants), or nullopt when it is not affine.
std::optional<Affine> affine(const ir::Expr &e);

/// A fresh loop variable named after `base`.
ir::Var freshVar(const std::string &name, SourceLoc loc = {});

} // namespace tdsl::schedule

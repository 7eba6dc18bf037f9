//===- passes/lower/BoundsCheck.cpp - Run-time bounds checks (--bounds-check) -------------===//
#include "passes/lower/BoundsCheck.h"

#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Utils.h"
#include "passes/lower/LowerUtils.h"

#include <algorithm>
#include <unordered_map>

namespace tdsl::lower {

using namespace ir;

namespace {

/// A source location in a message: `locationText`'s spelling ("f.tdsl:4:15"), or "line L,
/// column C" without one.
std::string spellLocation(const SourceLoc &loc,
                          const std::function<std::string(const SourceLoc &)> &locationText) {
  if (!loc.valid())
    return "an unknown location";
  if (locationText)
    return locationText(loc);
  return "line " + std::to_string(loc.line) + ", column " + std::to_string(loc.col);
}

/// One access of an expression or a store, with the select conditions that guard it.
struct Access {
  Buffer buffer;
  std::vector<Expr> indices;
  Expr guard; ///< Undefined: always evaluated.
  SourceLoc loc;
};

/// The loads of an expression, with their select guards.
class LoadCollector {
public:
  explicit LoadCollector(std::vector<Access> &out) : out_(out) {}

  void collect(const Expr &e, const Expr &guard) {
    if (!e.defined())
      return;
    if (const auto *op = e.as<Select>()) {
      collect(op->condition, guard);
      collect(op->trueValue, conj(guard, op->condition));
      collect(op->falseValue, conj(guard, logicalNot(op->condition)));
      return;
    }
    if (const auto *op = e.as<BufferLoad>()) {
      for (const Expr &i : op->indices)
        collect(i, guard);
      out_.push_back({op->buffer, op->indices, guard, op->loc});
      return;
    }
    // Every other node evaluates all its operands.
    forEachChild(e, [&](const Expr &child) { collect(child, guard); });
  }

private:
  static Expr conj(const Expr &a, const Expr &b) { return a.defined() ? logicalAnd(a, b) : b; }

  template <typename F> static void forEachChild(const Expr &e, F f) {
    switch (e.kind()) {
    case ExprKind::Cast:
      return f(e.as<Cast>()->value);
    case ExprKind::Neg:
      return f(e.as<Neg>()->a);
    case ExprKind::Not:
      return f(e.as<Not>()->a);
#define TDSL_BINARY_CHILDREN(NAME)                                                                 \
  case ExprKind::NAME:                                                                             \
    f(e.as<NAME>()->a);                                                                            \
    return f(e.as<NAME>()->b);
      TDSL_FOR_EACH_BINARY_NODE(TDSL_BINARY_CHILDREN)
#undef TDSL_BINARY_CHILDREN
    case ExprKind::Call:
      for (const Expr &a : e.as<Call>()->args)
        f(a);
      return;
    case ExprKind::Ramp:
      f(e.as<Ramp>()->base);
      return f(e.as<Ramp>()->stride);
    case ExprKind::Broadcast:
      return f(e.as<Broadcast>()->value);
    default:
      return;
    }
  }

  std::vector<Access> &out_;
};

class Checker : public IRMutator {
public:
  Checker(std::string funcName, const std::function<std::string(const SourceLoc &)> &locText,
          bool dataOnly, std::vector<Var> scalars)
      : funcName_(std::move(funcName)), locText_(locText), dataOnly_(dataOnly),
        scalars_(std::move(scalars)) {}

protected:
  Stmt visit(const For *op) override {
    std::vector<Access> accesses;
    LoadCollector(accesses).collect(op->min, Expr());
    LoadCollector(accesses).collect(op->extent, Expr());
    dom_.push_back({op->loopVar, Interval::ofRange(subst(op->min), subst(op->extent))});
    Stmt body = mutate(op->body);
    dom_.pop_back();
    return wrap(withBody(op, body), accesses, op->loc);
  }
  Stmt visit(const LetStmt *op) override {
    std::vector<Access> accesses;
    LoadCollector(accesses).collect(op->value, Expr());
    lets_[op->var] = subst(op->value);
    Stmt body = mutate(op->body);
    Stmt let = body.sameAs(op->body) ? Stmt(op) : LetStmt::make(op->var, op->value, body, op->loc);
    return wrap(let, accesses, op->loc);
  }
  Stmt visit(const IfThenElse *op) override {
    std::vector<Access> accesses;
    LoadCollector(accesses).collect(op->condition, Expr());
    Stmt s = IRMutator::visit(op);
    return wrap(s, accesses, op->loc);
  }
  Stmt visit(const BufferStore *op) override {
    std::vector<Access> accesses;
    for (const Expr &i : op->indices)
      LoadCollector(accesses).collect(i, Expr());
    LoadCollector(accesses).collect(op->value, Expr());
    accesses.push_back({op->buffer, op->indices, Expr(), op->loc});
    return wrap(op, accesses, op->loc);
  }
  Stmt visit(const Evaluate *op) override {
    std::vector<Access> accesses;
    LoadCollector(accesses).collect(op->value, Expr());
    return wrap(op, accesses, op->loc);
  }

private:
  Expr subst(const Expr &e) { return substituteLets(e, lets_); }

  bool provenInBounds(const Expr &index, const Expr &extent) {
    Expr i = subst(index);
    return proveLE(intImm(0), i, dom_) && proveLE(i, extent - intImm(1), dom_);
  }

  /// Whether `index` reads a buffer or a scalar input (through its `let` names too).
  bool dataDependent(const Expr &index) {
    Expr i = subst(index);
    if (contains<BufferLoad>(i))
      return true;
    return std::any_of(scalars_.begin(), scalars_.end(),
                       [&](const Var &v) { return usesVar(i, v); });
  }

  std::string where(const SourceLoc &loc) { return spellLocation(loc, locText_); }

  Stmt wrap(Stmt s, const std::vector<Access> &accesses, const SourceLoc &stmtLoc) {
    // Innermost first, so the checks run in evaluation order from the outside in.
    for (auto it = accesses.rbegin(); it != accesses.rend(); ++it) {
      const Access &a = *it;
      for (size_t d = a.indices.size(); d-- > 0;) {
        Expr index =
            a.indices[d].dtype() == DType::i64() ? a.indices[d] : cast(DType::i64(), a.indices[d]);
        const Expr &extent = a.buffer.shape()[d];
        if ((dataOnly_ && !dataDependent(index)) || provenInBounds(index, extent))
          continue;
        Expr ok = logicalAnd(le(intImm(0), index), lt(index, extent));
        if (a.guard.defined())
          ok = logicalOr(logicalNot(a.guard), ok);
        std::string message = funcName_ + ": out-of-bounds access to '" + a.buffer.name() +
                              "': index {} of dimension " + std::to_string(d) +
                              " is outside [0, {}) at " + where(a.loc.valid() ? a.loc : stmtLoc);
        s = AssertStmt::make(ok, message, {index, extent}, s, a.loc);
      }
    }
    return s;
  }

  std::string funcName_;
  const std::function<std::string(const SourceLoc &)> &locText_;
  bool dataOnly_;
  std::vector<Var> scalars_;
  Domain dom_;
  std::unordered_map<Var, Expr> lets_;
};

} // namespace

Func insertBoundsChecks(const Func &func,
                        const std::function<std::string(const SourceLoc &)> &locationText,
                        bool dataOnly) {
  std::vector<Var> scalars;
  if (const auto *p = func.as<PrimFunc>())
    for (const FuncParam &in : p->inputs)
      if (!in.isTensor())
        scalars.push_back(in.scalar);
  Checker checker(func.name(), locationText, dataOnly, std::move(scalars));
  return mapBody(func, "insertBoundsChecks takes a PrimFunc",
                 [&](const Stmt &body) { return checker.mutate(body); });
}

Func insertShapeChecks(const Func &func, const std::vector<ShapeBound> &checks,
                       const std::vector<ExtentCheck> &extents,
                       const std::function<std::string(const SourceLoc &)> &locationText) {
  if (checks.empty() && extents.empty())
    return func;
  auto where = [&](const SourceLoc &loc) { return spellLocation(loc, locationText); };
  return mapBody(func, "insertShapeChecks takes a PrimFunc", [&](const Stmt &body) {
    Stmt s = body;
    for (auto it = checks.rbegin(); it != checks.rend(); ++it)
      s = AssertStmt::make(it->inBounds,
                           func.name() + ": out-of-bounds access to '" + it->buffer.name() +
                               "': index {} of dimension " + std::to_string(it->dim) +
                               " is outside [0, {}) at " + where(it->loc),
                           {it->extreme, it->extent}, s, it->loc);
    for (auto it = extents.rbegin(); it != extents.rend(); ++it) {
      std::string type = it->buffer.dtype().name() + "[";
      for (size_t d = 0; d < it->buffer.rank(); ++d)
        type += (d ? ", " : "") + toString(it->buffer.shape()[d]);
      s = AssertStmt::make(it->fits,
                           func.name() + ": the size of '" + it->buffer.name() + "' (" + type +
                               "]) overflows 64-bit integers, or an extent is negative",
                           {}, s, it->buffer->loc);
    }
    return s;
  });
}

} // namespace tdsl::lower

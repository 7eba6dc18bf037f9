//===- tools/tdsl-run/FlopCount.cpp - Floating-point operations of a lowered function -----===//
#include "tools/tdsl-run/FlopCount.h"

#include "ir/IRVisitor.h"

#include <optional>

namespace tdsl {

using namespace ir;

namespace {

/// The floating-point operations of an expression: +, -, ×, ÷ one each, an FMA two, per lane.
class FlopVisitor : public IRVisitor {
public:
  double n = 0;

  void visit(const Add *op) override { arith(op); }
  void visit(const Sub *op) override { arith(op); }
  void visit(const Mul *op) override { arith(op); }
  void visit(const Div *op) override { arith(op); }
  void visit(const Call *op) override {
    if (op->op == Intrinsic::Fma)
      count(op, 2);
    IRVisitor::visit(op);
  }

private:
  void count(const ExprNode *op, double k) {
    if (op->type.isFloat())
      n += k * op->type.lanes();
  }
  template <typename Op> void arith(const Op *op) {
    count(op, 1);
    IRVisitor::visit(op);
  }
};

class Counter {
public:
  Counter(std::unordered_map<Var, int64_t> env, const std::map<std::string, Func> &callees)
      : env_(std::move(env)), callees_(callees) {}

  double stmt(const Stmt &s) {
    if (!s.defined())
      return 0;
    switch (s.kind()) {
    case StmtKind::For: {
      const auto *op = s.as<For>();
      std::optional<int64_t> min = eval(op->min), extent = eval(op->extent);
      env_[op->loopVar] = min.value_or(0);
      double trips = extent ? static_cast<double>(std::max<int64_t>(*extent, 0)) : 1.0;
      return trips * stmt(op->body);
    }
    case StmtKind::BufferStore:
      return expr(s.as<BufferStore>()->value);
    case StmtKind::LetStmt: {
      const auto *op = s.as<LetStmt>();
      if (std::optional<int64_t> v = eval(op->value))
        env_[op->var] = *v;
      return expr(op->value) + stmt(op->body);
    }
    case StmtKind::IfThenElse:
      return stmt(s.as<IfThenElse>()->thenCase) + stmt(s.as<IfThenElse>()->elseCase);
    case StmtKind::SeqStmt: {
      double total = 0;
      for (const Stmt &child : s.as<SeqStmt>()->seq)
        total += stmt(child);
      return total;
    }
    case StmtKind::Evaluate:
      return expr(s.as<Evaluate>()->value);
    case StmtKind::Allocate:
      return stmt(s.as<Allocate>()->body);
    case StmtKind::BufferView:
      return stmt(s.as<BufferView>()->body);
    case StmtKind::FuncCall:
      return call(s.as<FuncCall>());
    case StmtKind::AssertStmt: // a run-time check: the work is its body's
      return stmt(s.as<AssertStmt>()->body);
    case StmtKind::ProfileRegion:
      return stmt(s.as<ProfileRegion>()->body);
    default: // blocks (not lowered)
      return 0;
    }
    return 0;
  }

private:
  /// The callee's count with its shape variables (the last arguments of the raw entry).
  double call(const FuncCall *op) {
    auto it = callees_.find(op->callee);
    const auto *f = it == callees_.end() ? nullptr : it->second.as<PrimFunc>();
    if (!f || f->shapeVars.size() > op->args.size())
      return 0;
    std::unordered_map<Var, int64_t> env;
    size_t first = op->args.size() - f->shapeVars.size();
    for (size_t k = 0; k < f->shapeVars.size(); ++k)
      if (const auto *e = std::get_if<Expr>(&op->args[first + k]))
        if (std::optional<int64_t> v = eval(*e))
          env[f->shapeVars[k]] = *v;
    return Counter(std::move(env), callees_).stmt(f->body);
  }

  static double expr(const Expr &e) {
    FlopVisitor ops;
    ops.visitExpr(e);
    return ops.n;
  }

  /// An i64 value, when the expression is integer arithmetic on known variables.
  std::optional<int64_t> eval(const Expr &e) {
    if (auto v = asConstInt(e))
      return v;
    if (const auto *op = e.as<VarRef>()) {
      auto it = env_.find(op->var);
      return it == env_.end() ? std::nullopt : std::optional<int64_t>(it->second);
    }
    if (const auto *op = e.as<Cast>())
      return op->type.isInteger() && op->value.dtype().isInteger() ? eval(op->value) : std::nullopt;
    auto both = [&](const Expr &a, const Expr &b, auto f) -> std::optional<int64_t> {
      std::optional<int64_t> x = eval(a), y = eval(b);
      if (!x || !y)
        return std::nullopt;
      return f(*x, *y);
    };
    if (const auto *op = e.as<Add>())
      return both(op->a, op->b, [](int64_t x, int64_t y) { return x + y; });
    if (const auto *op = e.as<Sub>())
      return both(op->a, op->b, [](int64_t x, int64_t y) { return x - y; });
    if (const auto *op = e.as<Mul>())
      return both(op->a, op->b, [](int64_t x, int64_t y) { return x * y; });
    if (const auto *op = e.as<Min>())
      return both(op->a, op->b, [](int64_t x, int64_t y) { return std::min(x, y); });
    if (const auto *op = e.as<Max>())
      return both(op->a, op->b, [](int64_t x, int64_t y) { return std::max(x, y); });
    if (const auto *op = e.as<Div>())
      return both(op->a, op->b, [](int64_t x, int64_t y) -> int64_t {
        if (y == 0)
          return 0;
        int64_t q = x / y;
        return (x % y != 0 && ((x % y < 0) != (y < 0))) ? q - 1 : q;
      });
    if (const auto *op = e.as<Mod>())
      return both(op->a, op->b, [](int64_t x, int64_t y) -> int64_t {
        if (y == 0)
          return x;
        int64_t r = x % y;
        return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
      });
    return std::nullopt;
  }

  std::unordered_map<Var, int64_t> env_;
  const std::map<std::string, Func> &callees_;
};

} // namespace

double countFlops(const Func &lowered, const std::unordered_map<Var, int64_t> &shapeVars,
                  const std::map<std::string, Func> &callees) {
  const auto *f = lowered.as<PrimFunc>();
  if (!f)
    return 0;
  return Counter(shapeVars, callees).stmt(f->body);
}

double countFlops(const Stmt &stmt, const std::unordered_map<Var, int64_t> &shapeVars,
                  const std::map<std::string, Func> &callees) {
  return Counter(shapeVars, callees).stmt(stmt);
}

} // namespace tdsl

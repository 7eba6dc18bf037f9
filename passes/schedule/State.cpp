//===- passes/schedule/State.cpp --------------------------------------------------------------===//
//
// Implementation of passes/schedule/State.h.

#include "passes/schedule/State.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"

namespace tdsl::schedule {

using namespace ir;

ScheduleState::ScheduleState(Func func, std::string target)
    : func_(std::move(func)), target_(std::move(target)) {}

namespace {

/// Finds statements by predicate while tracking the enclosing path.
struct PathFinder : IRVisitor {
  const StmtNode *target = nullptr;
  std::vector<const StmtNode *> stack, found;
  bool done = false;

  void visit(const For *op) override {
    descend(op, [&] { IRVisitor::visit(op); });
  }
  void visit(const Block *op) override {
    descend(op, [&] { IRVisitor::visit(op); });
  }
  void visit(const SeqStmt *op) override {
    descend(op, [&] { IRVisitor::visit(op); });
  }
  void visit(const IfThenElse *op) override {
    descend(op, [&] { IRVisitor::visit(op); });
  }
  void visit(const LetStmt *op) override {
    descend(op, [&] { IRVisitor::visit(op); });
  }

  template <typename F> void descend(const StmtNode *op, F &&inner) {
    if (done)
      return;
    if (op == target) {
      found = stack;
      done = true;
      return;
    }
    stack.push_back(op);
    inner();
    stack.pop_back();
  }
};

struct Collector : IRVisitor {
  std::vector<const Block *> blocks;
  std::vector<const For *> loops;
  void visit(const Block *op) override {
    blocks.push_back(op);
    IRVisitor::visit(op);
  }
  void visit(const For *op) override {
    loops.push_back(op);
    IRVisitor::visit(op);
  }
};

struct Replacer : IRMutator {
  const StmtNode *old;
  Stmt replacement;
  Stmt mutateAny(const Stmt &s) { return s.get() == old ? replacement : mutate(s); }

protected:
  Stmt visit(const For *op) override { return op == old ? replacement : IRMutator::visit(op); }
  Stmt visit(const Block *op) override { return op == old ? replacement : IRMutator::visit(op); }
  Stmt visit(const SeqStmt *op) override { return op == old ? replacement : IRMutator::visit(op); }
  Stmt visit(const IfThenElse *op) override {
    return op == old ? replacement : IRMutator::visit(op);
  }
  Stmt visit(const BufferStore *op) override {
    return op == old ? replacement : IRMutator::visit(op);
  }
};

} // namespace

const For *ScheduleState::loop(const Var &var) const {
  Collector c;
  c.visitStmt(prim().body);
  for (const For *f : c.loops)
    if (f->loopVar == var)
      return f;
  throw ScheduleError("loop '" + var.name() + "' no longer exists in '" + prim().name + "'",
                      var->loc, "loop declared here");
}

const Block *ScheduleState::block(const std::string &name) const {
  for (const Block *b : blocks())
    if (b->name == name)
      return b;
  throw ScheduleError("no block named '" + name + "' in '" + prim().name + "'");
}

std::vector<const Block *> ScheduleState::blocks() const { return blocksIn(prim().body); }

std::vector<const StmtNode *> ScheduleState::ancestors(const StmtNode *node) const {
  PathFinder p;
  p.target = node;
  p.visitStmt(prim().body);
  return p.found;
}

std::vector<const For *> ScheduleState::loopsAbove(const StmtNode *node) const {
  std::vector<const For *> out;
  for (const StmtNode *s : ancestors(node))
    if (s->kind == StmtKind::For)
      out.push_back(static_cast<const For *>(s));
  return out;
}

void ScheduleState::setBody(Stmt body) {
  const PrimFunc &p = prim();
  func_ = PrimFunc::make(p.name, p.constVars, p.inputs, p.outputs, p.shapeVars, p.allocBuffers,
                         std::move(body), p.loc);
}

void ScheduleState::replace(const StmtNode *old, Stmt replacement) {
  Replacer r;
  r.old = old;
  r.replacement = std::move(replacement);
  setBody(r.mutateAny(prim().body));
}

void requireNoNestedBlocks(const ScheduleState &s, const std::string &primitive) {
  for (const Block *b : s.blocks())
    for (const StmtNode *a : s.ancestors(b))
      if (a->kind == StmtKind::Block) {
        const Block *outer = static_cast<const Block *>(a);
        throw ScheduleError(primitive + " does not support blocks nested in blocks yet (block '" +
                                b->name + "' is inside block '" + outer->name + "')",
                            outer->loc, "block '" + outer->name + "' is here");
      }
}

std::vector<const Block *> blocksIn(const Stmt &s) {
  Collector c;
  c.visitStmt(s);
  return c.blocks;
}

void Affine::add(const Var &v, int64_t c) {
  for (auto &[var, coeff] : terms)
    if (var == v) {
      coeff += c;
      return;
    }
  terms.emplace_back(v, c);
}

int64_t Affine::coeff(const Var &v) const {
  for (const auto &[var, c] : terms)
    if (var == v)
      return c;
  return 0;
}

std::optional<Affine> affine(const Expr &e) {
  if (auto c = asConstInt(e))
    return Affine{{}, *c};
  if (auto *v = e.as<VarRef>())
    return Affine{{{v->var, 1}}, 0};
  auto combine = [](std::optional<Affine> a, std::optional<Affine> b,
                    int64_t sign) -> std::optional<Affine> {
    if (!a || !b)
      return std::nullopt;
    for (auto &[v, c] : b->terms)
      a->add(v, sign * c);
    a->constant += sign * b->constant;
    return a;
  };
  if (auto *a = e.as<Add>())
    return combine(affine(a->a), affine(a->b), 1);
  if (auto *s = e.as<Sub>())
    return combine(affine(s->a), affine(s->b), -1);
  if (auto *m = e.as<Mul>()) {
    std::optional<Affine> x = affine(m->a), y = affine(m->b);
    if (!x || !y)
      return std::nullopt;
    if (y->terms.empty())
      std::swap(x, y);
    if (!x->terms.empty())
      return std::nullopt; // var * var
    for (auto &[v, c] : y->terms)
      c *= x->constant;
    y->constant *= x->constant;
    return y;
  }
  return std::nullopt;
}

Var freshVar(const std::string &name, SourceLoc loc) { return Var(name, DType::i64(), loc); }

} // namespace tdsl::schedule

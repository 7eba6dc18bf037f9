//===- passes/lower/LowerBlocks.cpp - Blocks to plain loops -------------------------------===//
#include "passes/lower/LowerBlocks.h"

#include "ir/IRMutator.h"
#include "ir/Utils.h"

#include <unordered_map>

namespace tdsl::lower {

using namespace ir;

namespace {

class BlockLowerer : public IRMutator {
protected:
  Stmt visit(const Block *op) override {
    // Inner blocks first: their bindings may refer to this block's iter vars, which the
    // substitution below then replaces.
    Stmt body = mutate(op->body);
    Stmt init = mutate(op->init);

    bool bound = !op->iterVars.empty() && op->iterVars.front().binding.defined();
    std::unordered_map<Var, Expr> map;
    if (bound)
      for (const IterVar &iv : op->iterVars)
        map.emplace(iv.var, iv.binding);
    auto subst = [&](const auto &node) { return bound ? substitute(node, map) : node; };

    std::vector<Stmt> stmts;
    if (init.defined()) {
      Expr first;
      for (const IterVar &iv : op->iterVars) {
        if (iv.kind != IterKind::Reduce)
          continue;
        Expr isZero = eq(bound ? iv.binding : Expr(iv.var), intImm(0));
        first = first.defined() ? logicalAnd(first, isZero) : isZero;
      }
      Stmt initStmt = subst(init);
      stmts.push_back(first.defined() ? IfThenElse::make(first, initStmt, Stmt(), op->loc)
                                      : initStmt);
    }
    stmts.push_back(subst(body));
    Stmt result = seq(std::move(stmts));
    for (auto it = op->allocBuffers.rbegin(); it != op->allocBuffers.rend(); ++it)
      result = Allocate::make(*it, result, op->loc);
    if (op->predicate.defined() && !isConstInt(op->predicate, 1))
      result = IfThenElse::make(subst(op->predicate), result, Stmt(), op->loc);
    if (!bound)
      for (auto it = op->iterVars.rbegin(); it != op->iterVars.rend(); ++it)
        result = For::make(it->var, intImm(0), it->extent, ForKind::Serial, result, {}, op->loc);
    return result;
  }
};

} // namespace

Func lowerBlocks(const Func &func) {
  const auto *op = func.as<PrimFunc>();
  TDSL_IR_CHECK(op, "lowerBlocks takes a PrimFunc");
  Stmt body = BlockLowerer().mutate(op->body);
  for (auto it = op->allocBuffers.rbegin(); it != op->allocBuffers.rend(); ++it)
    body = Allocate::make(*it, body, (*it)->loc);
  return withAllocs(withBody(func, body), {});
}

} // namespace tdsl::lower

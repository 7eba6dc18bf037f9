//===- passes/lower/Profile.cpp - Timed regions for --profile -----------------------------===//
#include "passes/lower/Profile.h"

#include "ir/IRVisitor.h"
#include "ir/Utils.h"

namespace tdsl::lower {

using namespace ir;

namespace {

/// The name of the outermost block of `s` (pre-order: the first one met).
std::string outermostBlock(const Stmt &s) {
  struct First : IRVisitor {
    std::string name;
    void visit(const Block *op) override {
      if (name.empty())
        name = op->name;
    }
  } first;
  first.visitStmt(s);
  return first.name.empty() ? "loop" : first.name;
}

/// The top-level statements of `body`, each passed to `wrap`: through allocations and lets
/// (they stay around the regions), then a sequence's items.
Stmt wrapTopLevel(const Stmt &body, const std::function<Stmt(const Stmt &)> &wrap) {
  if (const auto *op = body.as<Allocate>())
    return Allocate::make(op->buffer, wrapTopLevel(op->body, wrap), op->loc);
  if (const auto *op = body.as<LetStmt>())
    return LetStmt::make(op->var, op->value, wrapTopLevel(op->body, wrap), op->loc);
  if (const auto *op = body.as<BufferView>())
    return BufferView::make(op->buffer, op->source, op->byteOffset, wrapTopLevel(op->body, wrap),
                            op->loc);
  if (const auto *op = body.as<SeqStmt>()) {
    std::vector<Stmt> items;
    for (const Stmt &s : op->seq)
      items.push_back(wrapTopLevel(s, wrap));
    return SeqStmt::make(std::move(items), op->loc);
  }
  return wrap(body);
}

} // namespace

Func profileLoopNests(const Func &func) {
  const auto *f = func.as<PrimFunc>();
  TDSL_IR_CHECK(f, "profileLoopNests takes a PrimFunc");
  int32_t next = 0;
  Stmt body = wrapTopLevel(f->body, [&](const Stmt &s) {
    return ProfileRegion::make(next++, outermostBlock(s), s, s->loc);
  });
  return withBody(func, body);
}

Func profileCalls(const Func &lowered) {
  const auto *f = lowered.as<PrimFunc>();
  TDSL_IR_CHECK(f, "profileCalls takes a lowered graph");
  int32_t next = 0;
  // A call's zero fills (LowerGraph: byte views of its outputs, stored zeros) come right
  // before it and belong to its region.
  auto fillsOutputOf = [](const Stmt &s, const FuncCall *call) {
    const auto *view = s.as<BufferView>();
    if (!view)
      return false;
    for (const auto &arg : call->args)
      if (const auto *b = std::get_if<Buffer>(&arg); b && b->sameAs(view->source))
        return true;
    return false;
  };
  std::function<Stmt(const Stmt &)> walk = [&](const Stmt &s) -> Stmt {
    // The spine: the arena, the views of the values, then the calls in order.
    if (const auto *op = s.as<Allocate>())
      return Allocate::make(op->buffer, walk(op->body), op->loc);
    if (const auto *op = s.as<BufferView>(); op && !op->body.as<For>())
      return BufferView::make(op->buffer, op->source, op->byteOffset, walk(op->body), op->loc);
    if (const auto *call = s.as<FuncCall>())
      return ProfileRegion::make(next++, call->callee, s, s->loc);
    const auto *sequence = s.as<SeqStmt>();
    if (!sequence)
      return s;
    std::vector<Stmt> items, pending;
    for (const Stmt &item : sequence->seq) {
      const auto *call = item.as<FuncCall>();
      if (!call) {
        pending.push_back(item); // a zero fill if its call follows; else a result copy
        continue;
      }
      size_t fills = 0;
      while (fills < pending.size() && fillsOutputOf(pending[pending.size() - 1 - fills], call))
        ++fills;
      auto split = pending.end() - static_cast<std::ptrdiff_t>(fills);
      items.insert(items.end(), pending.begin(), split);
      std::vector<Stmt> region(split, pending.end());
      region.push_back(item);
      pending.clear();
      items.push_back(ProfileRegion::make(next++, call->callee, seq(region), item->loc));
    }
    items.insert(items.end(), pending.begin(), pending.end());
    return SeqStmt::make(std::move(items), sequence->loc);
  };
  return withBody(lowered, walk(f->body));
}

} // namespace tdsl::lower

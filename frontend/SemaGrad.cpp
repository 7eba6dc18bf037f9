//===- frontend/SemaGrad.cpp - Graphs calling graphs (§8) and `grad` items (§13) -------------===//
//
// A graph may call another graph of its module (not itself, directly or through others), so
// graphs are built callees first; a `grad` item is built after the F it differentiates. A grad
// item's graph gets its signature here (ir/Grad.h), so that graphs calling it are checked like
// any other call; the pipeline's grad step derives its body (passes/grad/Grad.h).

#include "frontend/SemaInternal.h"
#include "ir/Grad.h"
#include "ir/Utils.h"
#include "support/Diagnostics.h"

#include <functional>
#include <map>

namespace tdsl::sema {

namespace {

/// A call of a graph or grad item of the same module: the callee and where the call names it.
struct GraphEdge {
  const ast::Item *callee;
  SourceRange at;
};

void collectCalls(const std::vector<ast::GraphStmtPtr> &body, const ast::Module &m,
                  std::vector<GraphEdge> &out) {
  auto isLocal = [&](const ast::Item *item) {
    if (!item || (item->kind != ast::ItemKind::Graph && item->kind != ast::ItemKind::Grad))
      return false;
    for (const ast::ItemPtr &i : m.items)
      if (i.get() == item)
        return true;
    return false;
  };
  for (const ast::GraphStmtPtr &s : body) {
    const ast::CallValue *call = nullptr;
    if (auto *d = s->as<ast::DataflowStmt>())
      collectCalls(d->body, m, out);
    else if (auto *b = s->as<ast::BindStmt>())
      call = &b->call;
    else if (auto *c = s->as<ast::CallStmt>())
      call = &c->call;
    if (call && isLocal(call->resolved))
      out.push_back({call->resolved, call->callee.range});
  }
}

std::vector<GraphEdge> dependencies(const ast::Item &item, const ast::Module &m) {
  std::vector<GraphEdge> out;
  if (auto *g = item.as<ast::GraphDecl>())
    collectCalls(g->body, m, out);
  else if (auto *d = item.as<ast::GradDecl>(); d && d->resolved) {
    for (const ast::ItemPtr &i : m.items)
      if (i.get() == d->resolved && d->resolved->kind != ast::ItemKind::Func)
        out.push_back({d->resolved, d->func.range});
  }
  return out;
}

} // namespace

std::vector<const ast::Item *> graphOrder(const ast::Module &m, DiagnosticEngine &diags) {
  enum State { Unseen, Open, Done, Failed };
  std::map<const ast::Item *, State> state;
  std::vector<const ast::Item *> order, stack;
  std::function<bool(const ast::Item *)> visit = [&](const ast::Item *item) -> bool {
    State &st = state[item];
    if (st == Done)
      return true;
    if (st == Failed)
      return false;
    st = Open;
    stack.push_back(item);
    bool ok = true;
    for (const GraphEdge &e : dependencies(*item, m)) {
      if (state[e.callee] == Open) {
        std::string path;
        auto from = std::find(stack.begin(), stack.end(), e.callee);
        for (auto it = from; it != stack.end(); ++it)
          path += "'" + ast::declaredName(**it) + "' -> ";
        path += "'" + ast::declaredName(*e.callee) + "'";
        diags.error(e.at, "this call makes a cycle of graph calls: " + path +
                              "; a graph cannot call itself, directly or through others");
        ok = false;
        continue;
      }
      ok &= visit(e.callee);
    }
    stack.pop_back();
    state[item] = ok ? Done : Failed;
    if (ok)
      order.push_back(item);
    return ok;
  };
  for (const ast::ItemPtr &item : m.items)
    if (item->kind == ast::ItemKind::Graph || item->kind == ast::ItemKind::Grad)
      visit(item.get());
  return order;
}

ir::Func buildGradSignature(const ast::GradDecl &d, const std::string &prefix,
                            const FuncTable &funcs, ir::Module &out, DiagnosticEngine &diags) {
  if (!d.resolved)
    return {}; // reported by name resolution
  auto fit = funcs.find(d.resolved);
  if (fit == funcs.end())
    return {}; // F had errors
  const ir::Func &f = fit->second;
  std::string fname = std::string(ast::noun(d.resolved->kind)) + " '" + d.func.str() + "'";
  const std::vector<ir::FuncParam> &params = ir::calleeInputs(f);
  std::vector<size_t> wrt;
  std::map<std::string, SourceRange> seen;
  bool ok = true;
  for (const ast::Ident &p : d.wrt) {
    auto [prev, inserted] = seen.emplace(p.name, p.range);
    if (!inserted) {
      diags.error(p.range, "'" + p.name + "' is listed twice after 'wrt'")
          .note(prev->second, "first listed here");
      ok = false;
      continue;
    }
    size_t i = 0;
    while (i < params.size() && params[i].name() != p.name)
      ++i;
    if (i == params.size()) {
      diags.error(p.range, "'" + p.name + "' is not a parameter of " + fname)
          .note(SourceRange(f->loc), fname + " is declared here");
      ok = false;
      continue;
    }
    const ir::FuncParam &param = params[i];
    ir::DType t = param.isTensor() ? param.buffer.dtype() : param.scalar.dtype();
    if (!param.isTensor() || (t != ir::DType::f32() && t != ir::DType::f64())) {
      SourceLoc at = param.isTensor() ? param.buffer->loc : param.scalar->loc;
      diags
          .error(p.range,
                 "cannot differentiate with respect to '" + p.name + "': it is " +
                     (param.isTensor() ? "a tensor of dtype " + t.name() : "a scalar " + t.name()) +
                     "; grad takes tensors of dtype f32 or f64")
          .note(SourceRange(at), "'" + p.name + "' declared here");
      ok = false;
      continue;
    }
    wrt.push_back(i);
  }
  if (!ok)
    return {};
  ir::GradItem item;
  item.name = prefix + d.name.name;
  item.func = f.name();
  for (size_t i : wrt) {
    item.wrt.push_back(params[i].name());
    item.wrtLocs.push_back(d.wrt[item.wrtLocs.size()].range.begin);
  }
  item.loc = locOf(d);
  item.nameLoc = d.name.range.begin;
  out.grads.push_back(item);
  return ir::gradSignature(item.name, f, wrt, locOf(d));
}

} // namespace tdsl::sema

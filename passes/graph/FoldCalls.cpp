//===- passes/graph/FoldCalls.cpp - graph.fold-calls: calls on constants run at compile time -===//
//
// A call of a func (pure by definition) in one of the module's own graphs whose tensor arguments
// are all graph constants (at least one) and whose scalar and generic arguments are literals is
// evaluated by the evaluator the tools give (the reference interpreter) and replaced by graph
// constants holding its results. Calls are visited in execution order, so a call on a folded
// value folds too. Externs are never folded (their library is not loaded at compile time).

#include "passes/graph/Graph.h"

#include "passes/graph/GraphUtils.h"

#include <algorithm>
#include <set>

namespace tdsl::graph {

using namespace ir;

namespace {

/// `hint`, or `hint_1`, `hint_2`...: the first name that no function nor constant of `m` has and
/// that is not in `taken`.
std::string freshConstantName(const Module &m, const std::string &hint,
                              const std::set<std::string> &taken) {
  auto used = [&](const std::string &n) {
    return m.lookup(n).defined() || m.lookupConstant(n) || taken.count(n) != 0;
  };
  std::string name = hint;
  for (int k = 1; used(name); ++k)
    name = hint + "_" + std::to_string(k);
  return name;
}

bool staticShape(const Buffer &b) {
  return std::all_of(b.shape().begin(), b.shape().end(),
                     [](const Expr &d) { return d.as<IntImm>() != nullptr; });
}

} // namespace

void foldConstantCalls(Module &module, const CallEvaluator &evaluate,
                       const std::function<void(const SourceLoc &, const std::string &)> &warn) {
  if (!evaluate)
    return;
  std::set<std::string> taken;
  for (const Func &f : std::vector<Func>(module.functions())) {
    const auto *g = f.as<GraphFunc>();
    if (!g || !isOwnName(g->name))
      continue;
    std::map<const BufferNode *, Buffer> folded; // call target → its constant
    auto current = [&](const Buffer &b) {
      auto it = folded.find(b.get());
      return it == folded.end() ? b : it->second;
    };
    Func rewritten = detail::rewriteBindings(*g, [&](const GraphBinding &binding) {
      std::vector<GraphBinding> keep{binding};
      const auto *call = std::get_if<CallBinding>(&binding);
      if (!call || call->targets.empty())
        return keep;
      Func callee = module.lookup(call->callee);
      if (!callee.as<PrimFunc>())
        return keep;
      CallBinding site = *call;
      bool anyTensor = false;
      for (GraphArg &a : site.args) {
        if (auto *b = std::get_if<Buffer>(&a)) {
          *b = current(*b);
          if (b->role() != BufferRole::Constant)
            return keep;
          anyTensor = true;
        } else {
          const Expr &e = std::get<Expr>(a);
          if (!e.as<IntImm>() && !e.as<FloatImm>())
            return keep;
        }
      }
      for (const Expr &c : site.constArgs)
        if (!c.as<IntImm>())
          return keep;
      if (!anyTensor)
        return keep;
      for (const Buffer &t : site.targets)
        if (!staticShape(t))
          return keep;
      std::string error;
      std::optional<std::vector<std::vector<uint8_t>>> outputs = evaluate(module, site, error);
      if (!outputs || outputs->size() != site.targets.size()) {
        if (warn)
          warn(call->loc, "call of '" + call->callee + "' on constants left to run time: " +
                              (error.empty() ? "it cannot be evaluated" : error));
        return keep;
      }
      for (size_t k = 0; k < site.targets.size(); ++k) {
        const Buffer &t = site.targets[k];
        int64_t elements = 1;
        for (const Expr &d : t.shape())
          elements *= d.as<IntImm>()->value;
        if ((*outputs)[k].size() != static_cast<size_t>(elements * t.dtype().storageBytes())) {
          if (warn)
            warn(call->loc, "call of '" + call->callee +
                                "' on constants left to run time: its result has the wrong size");
          return keep;
        }
      }
      for (size_t k = 0; k < site.targets.size(); ++k) {
        const Buffer &t = site.targets[k];
        Constant c;
        c.name = freshConstantName(module, t.name(), taken);
        taken.insert(c.name);
        c.buffer = Buffer(c.name, t.dtype(), t.shape(), BufferRole::Constant, MemScope::Global, {},
                          t->loc);
        c.data = std::make_shared<const std::vector<uint8_t>>(std::move((*outputs)[k]));
        c.loc = call->loc;
        folded[t.get()] = c.buffer;
        module.constants.push_back(std::move(c));
      }
      return std::vector<GraphBinding>{};
    });
    if (folded.empty())
      continue;
    rewritten = detail::renameBuffers(*rewritten.as<GraphFunc>(), folded);
    // A folded value is a module constant now: no `output` exports it any more.
    std::vector<GraphItem> body = rewritten.as<GraphFunc>()->body;
    for (GraphItem &item : body)
      if (auto *df = std::get_if<DataflowBlock>(&item))
        df->outputs.erase(
            std::remove_if(df->outputs.begin(), df->outputs.end(),
                           [](const Buffer &b) { return b.role() == BufferRole::Constant; }),
            df->outputs.end());
    module.replace(detail::withBody(*rewritten.as<GraphFunc>(), std::move(body)));
  }
}

} // namespace tdsl::graph

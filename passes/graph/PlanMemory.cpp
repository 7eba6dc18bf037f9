//===- passes/graph/PlanMemory.cpp ------------------------------------------------------------===//
//
// graph.plan-memory: every intermediate of a graph gets an offset in one arena;
// values whose lifetimes do not overlap share bytes (first fit over slots, symbolic sizes kept
// conservative), results are computed in place in the caller's outputs.

#include "passes/graph/Graph.h"

#include "ir/Arith.h"
#include "ir/Simplify.h"
#include "passes/graph/GraphUtils.h"

#include <map>
#include <set>

namespace tdsl::graph {

using namespace ir;

namespace {

constexpr int64_t kAlign = 64;

/// `bytes` rounded up to the arena alignment.
Expr aligned(const Expr &bytes) {
  if (auto v = asConstInt(bytes))
    return intImm((*v + kAlign - 1) / kAlign * kAlign);
  return simplify((bytes + intImm(kAlign - 1)) / intImm(kAlign) * intImm(kAlign));
}

/// Whether `a - b` is provably >= 0: a constant >= 0, or affine in the shape variables (which
/// are >= 0) with no negative coefficient or constant (`256 * B` covers `128 * B`).
bool covers(const Expr &a, const Expr &b) {
  Expr d = simplify(a - b);
  if (auto v = asConstInt(d))
    return *v >= 0;
  std::optional<AffineForm> affine = affineForm(d);
  if (!affine || affine->constant < 0)
    return false;
  for (const auto &term : affine->terms)
    if (term.second < 0)
      return false;
  return true;
}

/// An affine sum in a canonical order (`512 * B + 16384`); other expressions as they are.
Expr affineSum(const Expr &e) {
  std::optional<AffineForm> affine = affineForm(e);
  if (!affine)
    return e;
  Expr out;
  for (const auto &[var, coeff] : affine->terms) {
    if (coeff == 0)
      continue;
    Expr term = coeff == 1 ? Expr(var) : intImm(coeff) * Expr(var);
    out = out.defined() ? out + term : term;
  }
  if (!out.defined())
    return intImm(affine->constant);
  return affine->constant ? out + intImm(affine->constant) : out;
}

struct Slot {
  Expr size;
  size_t freeAfter = 0; ///< The last use of the values in it.
  std::vector<size_t> values;
};

} // namespace

MemoryPlan planGraph(const GraphFunc &g, const Module &module) {
  (void)module;
  std::vector<detail::PlacedBinding> all = detail::bindingsInOrder(g);
  // The storage root of each value (reshapes are views), and each root's last use.
  std::map<const BufferNode *, Buffer> root;
  std::map<const BufferNode *, size_t> lastUse, definedAt;
  auto rootOf = [&](const Buffer &b) {
    auto it = root.find(b.get());
    return it == root.end() ? b : it->second;
  };
  for (size_t i = 0; i < all.size(); ++i) {
    for (const Buffer &r : detail::readsOf(all[i].binding))
      lastUse[rootOf(r).get()] = i;
    if (const auto *reshape = std::get_if<ReshapeBinding>(&all[i].binding))
      root[reshape->target.get()] = rootOf(reshape->source);
    for (const Buffer &d : detail::definesOf(all[i].binding)) {
      definedAt[d.get()] = i;
      lastUse.try_emplace(rootOf(d).get(), i);
    }
  }
  std::set<const BufferNode *> inputs;
  for (const FuncParam &p : g.inputs)
    if (p.isTensor())
      inputs.insert(p.buffer.get());
  // Results defined by a call (possibly through reshapes) are computed in the output.
  std::map<const BufferNode *, size_t> inResult;
  for (size_t k = 0; k < g.results.size(); ++k) {
    Buffer r = rootOf(g.results[k]);
    if (inputs.count(r.get()) || inResult.count(r.get()) || !definedAt.count(r.get()) ||
        r.dtype() != g.results[k].dtype())
      continue;
    inResult[r.get()] = k;
  }
  for (const Buffer &r : g.results)
    lastUse[rootOf(r).get()] = all.size();

  MemoryPlan plan;
  std::vector<Slot> slots;
  for (size_t i = 0; i < all.size(); ++i) {
    for (const Buffer &d : detail::definesOf(all[i].binding)) {
      PlannedValue v;
      v.value = d;
      if (const auto *reshape = std::get_if<ReshapeBinding>(&all[i].binding)) {
        v.kind = PlannedValue::Kind::View;
        v.viewOf = reshape->source;
        plan.values.push_back(v);
        continue;
      }
      if (auto it = inResult.find(d.get()); it != inResult.end()) {
        v.kind = PlannedValue::Kind::Result;
        v.result = it->second;
        plan.values.push_back(v);
        continue;
      }
      v.kind = PlannedValue::Kind::Arena;
      v.bytes = detail::byteSize(d);
      v.firstUse = i;
      v.lastUse = lastUse[d.get()];
      Expr size = detail::constantFactor(d) % kAlign == 0 ? v.bytes : aligned(v.bytes);
      // First fit: a free slot that holds the value, else one that can grow to it.
      std::optional<size_t> chosen;
      for (size_t s = 0; s < slots.size() && !chosen; ++s)
        if (slots[s].freeAfter < i && covers(slots[s].size, size))
          chosen = s;
      for (size_t s = 0; s < slots.size() && !chosen; ++s)
        if (slots[s].freeAfter < i && covers(size, slots[s].size)) {
          slots[s].size = size;
          chosen = s;
        }
      if (!chosen) {
        slots.push_back(Slot{size, 0, {}});
        chosen = slots.size() - 1;
      }
      slots[*chosen].freeAfter = v.lastUse;
      slots[*chosen].values.push_back(plan.values.size());
      plan.values.push_back(v);
    }
  }
  // Offsets: the slots one after another.
  Expr offset = intImm(0);
  for (const Slot &s : slots) {
    for (size_t v : s.values)
      plan.values[v].offset = offset;
    offset = affineSum(simplify(offset + s.size));
  }
  plan.arenaBytes = offset;
  return plan;
}

void planMemory(Module &module) {
  for (const Func &f : std::vector<Func>(module.functions()))
    if (const auto *g = f.as<GraphFunc>())
      module.replace(GraphFunc::make(g->name, g->constVars, g->inputs, g->shapeVars, g->body,
                                     g->results, g->loc, planGraph(*g, module)));
}

} // namespace tdsl::graph

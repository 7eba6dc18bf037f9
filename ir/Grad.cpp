//===- ir/Grad.cpp - The signature of a gradient graph (spec §13) -----------------------------===//

#include "ir/Grad.h"

#include "ir/Utils.h"

#include <unordered_map>

namespace tdsl::ir {

bool isLossForm(const Func &f) {
  const std::vector<Buffer> &results = calleeOutputs(f);
  return results.size() == 1 && results[0].dtype() == DType::f32() && results[0].rank() == 0;
}

Func gradSignature(const std::string &name, const Func &f, const std::vector<size_t> &wrt,
                   SourceLoc loc) {
  std::unordered_map<Var, Expr> fresh;
  auto renew = [&](const Var &v) {
    Var n(v.name(), v.dtype(), v->loc);
    fresh[v] = n;
    return n;
  };
  std::vector<Var> consts, shapeVars;
  if (auto *p = f.as<PrimFunc>()) {
    for (const Var &c : p->constVars)
      consts.push_back(renew(c));
    for (const Var &s : p->shapeVars)
      shapeVars.push_back(renew(s));
  } else if (auto *g = f.as<GraphFunc>()) {
    for (const Var &c : g->constVars)
      consts.push_back(renew(c));
    for (const Var &s : g->shapeVars)
      shapeVars.push_back(renew(s));
  }
  auto copy = [&](const Buffer &b, const std::string &nameHint, BufferRole role) {
    std::vector<Expr> shape;
    for (const Expr &d : b.shape())
      shape.push_back(substitute(d, fresh));
    return Buffer(nameHint, b.dtype(), shape, role, MemScope::Global, {}, b->loc);
  };
  std::vector<FuncParam> inputs;
  for (const FuncParam &p : calleeInputs(f)) {
    if (p.isTensor())
      inputs.push_back(FuncParam::tensor(copy(p.buffer, p.buffer.name(), BufferRole::Input)));
    else
      inputs.push_back(FuncParam::scalarVar(renew(p.scalar)));
  }
  const std::vector<Buffer> &fResults = calleeOutputs(f);
  bool loss = isLossForm(f);
  if (!loss)
    for (const Buffer &r : fResults)
      if (r.dtype().isFloat())
        inputs.push_back(FuncParam::tensor(copy(r, "d_" + r.name(), BufferRole::Input)));
  std::vector<Buffer> results;
  for (const Buffer &r : fResults)
    results.push_back(copy(r, r.name(), BufferRole::Alloc));
  for (size_t i : wrt) {
    const Buffer &p = calleeInputs(f)[i].buffer;
    results.push_back(copy(p, "grad_" + p.name(), BufferRole::Alloc));
  }
  return GraphFunc::make(name, consts, inputs, shapeVars, {}, results, loc);
}

} // namespace tdsl::ir

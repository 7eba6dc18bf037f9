//===- passes/graph/Specialize.cpp - graph.specialize: callees at the graph's static shapes -===//
//
// A call whose callee has shape variables that the graph's static shapes at that call fix
// (`nn.linear` on f32[1, 512] and f32[1000, 512]) calls a copy of the callee with those values
// in place of the variables (`nn_linear_1x512x1000`): its loops have constant extents, which a
// tuner's generated design space needs (spec §12: a graph's functions are tuned at the shapes
// it calls them with). One copy per distinct (callee, values). The copy is scheduled like the
// callee: an instance by its generic function's script, a fused function by its producer's.
//
// graph.bind-shapes does the same after scheduling, in place and without tuning records: a
// function only graphs call, at one static shape, becomes the scheduled function at that shape.

#include "passes/graph/Graph.h"

#include "ir/Instantiate.h"
#include "passes/graph/GraphUtils.h"

#include <map>

namespace tdsl::graph {

using namespace ir;

namespace {

/// The values the shapes of `call`'s tensor arguments and targets give `callee`'s shape
/// variables, in their order; nullopt unless every one is fixed, consistently, by a constant.
std::optional<std::vector<int64_t>> shapeValues(const PrimFunc &callee, const CallBinding &call) {
  std::map<const VarNode *, int64_t> found;
  bool consistent = true;
  auto unify = [&](const Buffer &param, const Buffer &value) {
    if (param.shape().size() != value.shape().size())
      return;
    for (size_t d = 0; d < param.shape().size(); ++d) {
      const auto *ref = param.shape()[d].as<VarRef>();
      std::optional<int64_t> v = asConstInt(value.shape()[d]);
      if (!ref || !v)
        continue;
      auto [it, added] = found.emplace(ref->var.get(), *v);
      consistent &= added || it->second == *v;
    }
  };
  for (size_t i = 0; i < callee.inputs.size() && i < call.args.size(); ++i)
    if (const auto *b = std::get_if<Buffer>(&call.args[i]); b && callee.inputs[i].isTensor())
      unify(callee.inputs[i].buffer, *b);
  for (size_t i = 0; i < callee.outputs.size() && i < call.targets.size(); ++i)
    unify(callee.outputs[i], call.targets[i]);
  std::vector<int64_t> values;
  for (const Var &v : callee.shapeVars) {
    auto it = found.find(v.get());
    if (!consistent || it == found.end())
      return std::nullopt;
    values.push_back(it->second);
  }
  return values;
}

/// `nn.linear` at (1, 512, 1000) → `nn_linear_1x512x1000`.
std::string specializedName(const std::string &callee, const std::vector<int64_t> &values) {
  std::string name;
  for (char c : callee)
    name += c == '.' ? '_' : c;
  for (size_t i = 0; i < values.size(); ++i)
    name += (i ? "x" : "_") + std::to_string(values[i]);
  return name;
}

} // namespace

std::vector<DerivedFunc> specializeCallees(Module &module, std::vector<DerivedFunc> &instances,
                                           std::vector<DerivedFunc> &fused) {
  std::vector<DerivedFunc> made;
  std::map<std::pair<std::string, std::vector<int64_t>>, std::string> copies;
  detail::rewriteCalls(module, [&](const CallBinding &call) -> std::optional<CallBinding> {
    const PrimFunc *callee = module.lookup(call.callee).as<PrimFunc>();
    if (!callee || !callee->constVars.empty() || callee->shapeVars.empty() ||
        !callee->body.defined())
      return std::nullopt;
    std::optional<std::vector<int64_t>> values = shapeValues(*callee, call);
    if (!values)
      return std::nullopt;
    auto key = std::make_pair(call.callee, *values);
    auto it = copies.find(key);
    if (it == copies.end()) {
      std::string name = detail::freshFuncName(module, specializedName(call.callee, *values));
      std::map<const VarNode *, int64_t> map;
      for (size_t i = 0; i < values->size(); ++i)
        map[callee->shapeVars[i].get()] = (*values)[i];
      Func copy = specializeShapes(module.lookup(call.callee), map);
      const PrimFunc *s = copy.as<PrimFunc>();
      module.add(PrimFunc::make(name, {}, s->inputs, s->outputs, s->shapeVars, s->allocBuffers,
                                s->body, s->loc));
      // Scheduled as the callee is: a fused function's placing of its consumers comes along.
      DerivedFunc d{name, call.callee, "", {}, {}};
      for (const DerivedFunc &x : fused)
        if (x.name == call.callee)
          d = {name, x.scheduleFrom, x.producerBlock, x.consumerBlocks, {}};
      (d.producerBlock.empty() && d.consumerBlocks.empty() ? instances : fused).push_back(d);
      made.push_back(d);
      it = copies.emplace(key, name).first;
    }
    CallBinding c = call;
    c.callee = it->second;
    return c;
  });
  return made;
}

void bindStaticShapes(Module &module, const std::function<bool(const std::string &)> &exported) {
  // Per callee: the values its calls give its shape variables, while every call agrees.
  std::map<std::string, std::optional<std::vector<int64_t>>> agreed;
  for (const Func &f : module.functions()) {
    const auto *g = f.as<GraphFunc>();
    if (!g)
      continue;
    for (const detail::PlacedBinding &pb : detail::bindingsInOrder(*g)) {
      const auto *call = std::get_if<CallBinding>(&pb.binding);
      if (!call)
        continue;
      const PrimFunc *callee = module.lookup(call->callee).as<PrimFunc>();
      if (!callee || !callee->constVars.empty() || callee->shapeVars.empty() ||
          !callee->body.defined() || exported(call->callee))
        continue;
      std::optional<std::vector<int64_t>> values = shapeValues(*callee, *call);
      auto [it, first] = agreed.emplace(call->callee, values);
      if (!first && it->second != values)
        it->second = std::nullopt;
    }
  }
  for (const auto &[name, values] : agreed) {
    if (!values)
      continue;
    // The scheduled function, and the function as written (whose shape checks lowering emits).
    auto bind = [&](const Func &f) {
      const auto *p = f.as<PrimFunc>();
      std::map<const VarNode *, int64_t> map;
      for (size_t i = 0; i < values->size() && i < p->shapeVars.size(); ++i)
        map[p->shapeVars[i].get()] = (*values)[i];
      return specializeShapes(f, map);
    };
    module.replace(bind(module.lookup(name)));
    auto it = module.unscheduled.find(name);
    if (it != module.unscheduled.end() && it->second.as<PrimFunc>() &&
        it->second.as<PrimFunc>()->shapeVars.size() == values->size())
      it->second = bind(it->second);
  }
}

} // namespace tdsl::graph

//===- passes/graph/Instantiate.cpp -----------------------------------------------------------===//
//
// graph.instantiate: calls of generic callees with constants (`nn.conv2d<1, 1>`)
// become calls of concrete instances (`nn_conv2d_1_1`), one per distinct constant tuple.

#include "passes/graph/Graph.h"

#include "ir/Instantiate.h"
#include "passes/graph/GraphUtils.h"

#include <algorithm>
#include <map>

namespace tdsl::graph {

using namespace ir;

namespace {

/// `nn.conv2d` with (1, -2) → `nn_conv2d_1_m2`.
std::string instanceBase(const std::string &callee, const std::vector<int64_t> &values) {
  std::string name;
  for (char c : callee)
    name += c == '.' ? '_' : c;
  for (int64_t v : values)
    name += "_" + (v < 0 ? "m" + std::to_string(0 - static_cast<uint64_t>(v)) : std::to_string(v));
  return name;
}

} // namespace

std::vector<DerivedFunc> instantiateCallees(Module &module,
                                            const std::map<std::string, Func> &generics) {
  std::vector<DerivedFunc> made;
  std::map<std::pair<std::string, std::vector<int64_t>>, std::string> instances;
  detail::rewriteCalls(module, [&](const CallBinding &call) -> std::optional<CallBinding> {
    if (call.constArgs.empty())
      return std::nullopt;
    std::vector<int64_t> values;
    for (const Expr &c : call.constArgs) {
      std::optional<int64_t> v = asConstInt(c);
      if (!v) // a constant of the graph itself: left for -D instantiation of the graph
        return std::nullopt;
      values.push_back(*v);
    }
    auto known = generics.find(call.callee);
    Func generic = known != generics.end() ? known->second : module.lookup(call.callee);
    if (!generic.as<PrimFunc>() || generic.as<PrimFunc>()->constVars.size() != values.size())
      return std::nullopt;
    auto key = std::make_pair(call.callee, values);
    auto it = instances.find(key);
    if (it == instances.end()) {
      std::string name = detail::freshFuncName(module, instanceBase(call.callee, values));
      Func instance = instantiate(generic, values);
      const PrimFunc *inst = instance.as<PrimFunc>();
      module.add(PrimFunc::make(name, {}, inst->inputs, inst->outputs, inst->shapeVars,
                                inst->allocBuffers, inst->body, inst->loc));
      DerivedFunc d{name, call.callee, "", {}, {}};
      const PrimFunc *g = generic.as<PrimFunc>();
      for (size_t i = 0; i < values.size(); ++i)
        d.constants[g->constVars[i].name()] = values[i];
      made.push_back(d);
      it = instances.emplace(key, name).first;
    }
    CallBinding c = call;
    c.callee = it->second;
    c.constArgs.clear();
    return c;
  });
  return made;
}

void addInstanceScripts(std::vector<ScheduleScript> &scripts,
                        const std::vector<DerivedFunc> &instances) {
  for (const DerivedFunc &d : instances) {
    // A script of its own (a --schedule file's, for a specialized copy) replaces the copy.
    if (std::any_of(scripts.begin(), scripts.end(),
                    [&](const ScheduleScript &s) { return s.func == d.name; }))
      continue;
    for (size_t i = 0, n = scripts.size(); i < n; ++i)
      if (scripts[i].func == d.scheduleFrom) {
        ScheduleScript copy = scripts[i];
        copy.func = d.name;
        takeConstants(copy, d);
        scripts.push_back(copy);
      }
  }
}

} // namespace tdsl::graph

//===- passes/graph/Fuse.cpp ------------------------------------------------------------------===//
//
// graph.fuse: an element-wise callee consuming the single-use output of its producer
// call in the same dataflow block is fused with it into one new PrimFunc (`fused_linear_relu`):
// the producer's blocks, then the consumer's, the intermediate an internal buffer.

#include "passes/graph/Graph.h"

#include "ir/FreshVarCopier.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"
#include "passes/graph/GraphUtils.h"
#include "passes/schedule/Primitives.h"

#include <map>
#include <set>

namespace tdsl::graph {

using namespace ir;

namespace {

/// A deep copy of a function's body with fresh Vars and Buffers (so that the producer and the
/// consumer, possibly the same function, share nothing), some of them given in advance.
class Copier : public FreshVarCopier {
public:
  std::map<const VarNode *, Expr> vars;
  std::map<const BufferNode *, Buffer> buffers;
  std::map<std::string, std::string> blockNames;

  Buffer mutateBuffer(const Buffer &b) override {
    auto it = buffers.find(b.get());
    if (it != buffers.end())
      return it->second;
    std::vector<Expr> shape;
    for (const Expr &d : b.shape())
      shape.push_back(mutate(d));
    Buffer copy(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc);
    buffers[b.get()] = copy;
    return copy;
  }

protected:
  void bindFresh(const Var &v, const Var &fresh) override { vars[v.get()] = VarRef::make(fresh); }

  Expr visit(const VarRef *op) override {
    auto it = vars.find(op->var.get());
    return it == vars.end() ? Expr(op) : it->second;
  }
  Stmt visit(const Block *op) override {
    std::vector<IterVar> ivs;
    for (const IterVar &iv : op->iterVars)
      ivs.push_back(renewIterVar(iv));
    bool changed = false;
    std::vector<Buffer> allocs = mutateBuffers(op->allocBuffers, changed);
    std::vector<BufferRegion> reads = mutateRegions(op->reads, changed);
    std::vector<BufferRegion> writes = mutateRegions(op->writes, changed);
    auto it = blockNames.find(op->name);
    std::string name = it == blockNames.end() ? op->name : it->second;
    return Block::make(name, ivs, mutate(op->predicate), mutate(op->init), mutate(op->body), reads,
                       writes, allocs, op->loc);
  }
};

/// The name of the last block of `f` that stores into `buffer`.
std::string writerBlock(const Stmt &body, const Buffer &buffer) {
  std::string name;
  for (const Block *b : detail::blocksOf(body)) {
    struct Stores : IRVisitor {
      const Buffer *buffer;
      bool found = false;
      void visit(const BufferStore *op) override {
        found |= op->buffer.sameAs(*buffer);
        IRVisitor::visit(op);
      }
    } s;
    s.buffer = &buffer;
    s.visitStmt(b->body);
    if (b->init.defined())
      s.visitStmt(b->init);
    if (s.found)
      name = b->name;
  }
  return name;
}

std::string shortName(const std::string &name, const std::map<std::string, DerivedFunc> &fused) {
  if (fused.count(name) && name.rfind("fused_", 0) == 0)
    return name.substr(6);
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

struct Fusion {
  Func func;
  DerivedFunc derived;
};

/// Fuses `producer` (one output) and `consumer`, whose input `k` is the producer's output.
/// nullopt when the signatures do not allow it.
std::optional<Fusion> fusePair(const Module &m, const PrimFunc &producer, const PrimFunc &consumer,
                               size_t k, const std::map<std::string, DerivedFunc> &derived) {
  Copier pc;
  std::vector<Var> shapeVars;
  for (const Var &v : producer.shapeVars)
    shapeVars.push_back(pc.renew(v));
  std::vector<FuncParam> inputs;
  for (const FuncParam &p : producer.inputs)
    inputs.push_back(p.isTensor() ? FuncParam::tensor(pc.mutateBuffer(p.buffer))
                                  : FuncParam::scalarVar(pc.renew(p.scalar)));
  const Buffer &out = producer.outputs.front();
  std::vector<Expr> outShape;
  for (const Expr &d : out.shape())
    outShape.push_back(pc.mutate(d));
  Buffer intermediate(out.name(), out.dtype(), outShape, BufferRole::Alloc, MemScope::Global, {},
                      out->loc);
  pc.buffers[out.get()] = intermediate;
  std::vector<Buffer> allocs;
  for (const Buffer &a : producer.allocBuffers)
    allocs.push_back(pc.mutateBuffer(a));
  allocs.push_back(intermediate);
  Stmt producerBody = pc.mutate(producer.body);

  // The consumer's shape variables: from the intermediate where it has them as a whole
  // dimension, otherwise new shape variables of the fused function (which must then appear as
  // a whole dimension of another input).
  Copier cc;
  const Buffer &param = consumer.inputs[k].buffer;
  if (param.rank() != intermediate.rank())
    return std::nullopt;
  for (size_t d = 0; d < param.rank(); ++d)
    if (const auto *ref = param.shape()[d].as<VarRef>(); ref && !cc.vars.count(ref->var.get()))
      cc.vars[ref->var.get()] = intermediate.shape()[d];
  for (const Var &v : consumer.shapeVars) {
    if (cc.vars.count(v.get()))
      continue;
    bool whole = false;
    for (size_t i = 0; i < consumer.inputs.size(); ++i)
      if (i != k && consumer.inputs[i].isTensor())
        for (const Expr &d : consumer.inputs[i].buffer.shape())
          if (const auto *ref = d.as<VarRef>(); ref && ref->var == v)
            whole = true;
    if (!whole)
      return std::nullopt;
    shapeVars.push_back(cc.renew(v));
  }
  cc.buffers[param.get()] = intermediate;
  std::set<std::string> taken;
  for (const Block *b : detail::blocksOf(producerBody))
    taken.insert(b->name);
  std::vector<std::string> consumerBlocks;
  for (const Block *b : detail::blocksOf(consumer.body)) {
    std::string name = b->name;
    for (int i = 2; taken.count(name); ++i)
      name = b->name + "_" + std::to_string(i);
    taken.insert(name);
    cc.blockNames[b->name] = name;
    consumerBlocks.push_back(name);
  }
  for (size_t i = 0; i < consumer.inputs.size(); ++i) {
    if (i == k)
      continue;
    const FuncParam &p = consumer.inputs[i];
    inputs.push_back(p.isTensor() ? FuncParam::tensor(cc.mutateBuffer(p.buffer))
                                  : FuncParam::scalarVar(cc.renew(p.scalar)));
  }
  std::vector<Buffer> outputs;
  for (const Buffer &o : consumer.outputs)
    outputs.push_back(cc.mutateBuffer(o));
  Stmt consumerBody = cc.mutate(consumer.body);

  // Names of parameters stay unique: the printer would rename, but -Wshadow-free C and the
  // round trip are simpler with distinct names already.
  DerivedFunc d;
  auto from = derived.find(producer.name);
  if (from != derived.end() && !from->second.producerBlock.empty()) {
    d = from->second;
  } else {
    d.scheduleFrom = from != derived.end() ? from->second.scheduleFrom : producer.name;
    if (from != derived.end()) // an instance's constants come along with its generic's script
      d.constants = from->second.constants;
    d.producerBlock = writerBlock(producerBody, intermediate);
    d.consumerBlocks.clear();
  }
  for (const std::string &b : consumerBlocks)
    d.consumerBlocks.push_back(b);
  d.name = detail::freshFuncName(m, "fused_" + shortName(producer.name, derived) + "_" +
                                        shortName(consumer.name, derived));
  Func f = PrimFunc::make(d.name, {}, inputs, outputs, shapeVars, allocs,
                          seq({producerBody, consumerBody}), producer.loc);
  return Fusion{f, d};
}

/// Finds and performs one fusion in `g`; nullopt when there is none.
std::optional<std::pair<Func, Fusion>> fuseOnce(const Module &m, const GraphFunc &g,
                                                const std::map<std::string, DerivedFunc> &derived) {
  std::vector<detail::PlacedBinding> all = detail::bindingsInOrder(g);
  std::map<const BufferNode *, int> uses;
  std::map<const BufferNode *, size_t> definedAt;
  for (size_t i = 0; i < all.size(); ++i) {
    for (const Buffer &r : detail::readsOf(all[i].binding))
      ++uses[r.get()];
    for (const Buffer &d : detail::definesOf(all[i].binding))
      definedAt[d.get()] = i;
  }
  for (const Buffer &b : detail::exportedValues(g))
    ++uses[b.get()];

  for (size_t j = 0; j < all.size(); ++j) {
    const auto *call = std::get_if<CallBinding>(&all[j].binding);
    if (!call || all[j].dataflow < 0)
      continue;
    const auto *consumer = m.lookup(call->callee).as<PrimFunc>();
    if (!consumer)
      continue;
    for (size_t k = 0; k < call->args.size(); ++k) {
      const auto *value = std::get_if<Buffer>(&call->args[k]);
      if (!value || uses[value->get()] != 1 || !definedAt.count(value->get()))
        continue;
      size_t i = definedAt[value->get()];
      const auto *pcall = std::get_if<CallBinding>(&all[i].binding);
      if (!pcall || all[i].dataflow != all[j].dataflow || pcall->targets.size() != 1)
        continue;
      const auto *producer = m.lookup(pcall->callee).as<PrimFunc>();
      if (!producer || !producer->constVars.empty() || producer->outputs.size() != 1 ||
          !detail::isElementwise(*consumer, k))
        continue;
      // A producer reading its output before writing it starts from the zeros the graph gives
      // it (lower/LowerGraph); inside a fused function that output would be an uninitialised
      // intermediate.
      if (readsInitialContents(m.lookup(pcall->callee), producer->outputs[0]))
        continue;
      std::optional<Fusion> fusion = fusePair(m, *producer, *consumer, k, derived);
      if (!fusion)
        continue;
      CallBinding fused = *call;
      fused.callee = fusion->derived.name;
      fused.constArgs.clear();
      fused.args = pcall->args;
      for (size_t a = 0; a < call->args.size(); ++a)
        if (a != k)
          fused.args.push_back(call->args[a]);
      fused.loc = pcall->loc;
      size_t index = 0;
      Func out =
          detail::rewriteBindings(g, [&](const GraphBinding &b) -> std::vector<GraphBinding> {
            size_t at = index++;
            if (at == i)
              return {};
            if (at == j)
              return {fused};
            return {b};
          });
      return std::make_pair(out, *fusion);
    }
  }
  return std::nullopt;
}

} // namespace

std::vector<DerivedFunc> fuseElementwise(Module &module, const std::vector<DerivedFunc> &known) {
  std::map<std::string, DerivedFunc> derived;
  for (const DerivedFunc &d : known)
    derived[d.name] = d;
  std::vector<DerivedFunc> made;
  for (const Func &f : std::vector<Func>(module.functions())) {
    if (!f.as<GraphFunc>())
      continue;
    Func g = f;
    while (auto step = fuseOnce(module, *g.as<GraphFunc>(), derived)) {
      g = step->first;
      module.add(step->second.func);
      derived[step->second.derived.name] = step->second.derived;
      made.push_back(step->second.derived);
      module.replace(g);
    }
  }
  return made;
}

Func placeFusedConsumers(const Func &f, const DerivedFunc &fused, const std::string &target) {
  schedule::ScheduleState s(f, target);
  for (const std::string &consumer : fused.consumerBlocks) {
    Func saved = s.func();
    try {
      schedule::reverseComputeInline(s, consumer);
      continue;
    } catch (const schedule::ScheduleError &) {
      s.setFunc(saved);
    }
    std::vector<Var> loops;
    try {
      loops = schedule::getLoops(s, fused.producerBlock);
    } catch (const schedule::ScheduleError &) {
      continue;
    }
    for (size_t l = loops.size(); l-- > 0;) {
      try {
        schedule::reverseComputeAt(s, consumer, loops[l]);
        break;
      } catch (const schedule::ScheduleError &) {
        s.setFunc(saved);
      }
    }
  }
  return s.func();
}

} // namespace tdsl::graph

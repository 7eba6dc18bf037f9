//===- passes/graph/Fuse.cpp ------------------------------------------------------------------===//
//
// graph.fuse: an element-wise callee consuming the single-use output of its producer
// call in the same dataflow block is fused with it into one new PrimFunc (`fused_linear_relu`):
// the producer's blocks, then the consumer's, the intermediate an internal buffer. The
// consumer may read the output through a reshape that only merges dimensions (what the
// importer writes between a convolution and its bias, `[1, K, H, W]` as `[1, K, H * W]`):
// the intermediate then has the view's shape and the producer stores into it at the merged
// indices (`[n, k, h * W + w]`), the same elements in the same order.

#include "passes/graph/Graph.h"

#include "ir/Arith.h"
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

/// How a reshape from `source` to `view` merges dimensions: view dimension g is the product of
/// source dimensions [starts[g], starts[g + 1]) (an empty range for a dimension of 1 that
/// merges nothing). nullopt unless every view dimension is such a product: the reshape then
/// keeps the elements' row-major order and maps indices one to one.
std::optional<std::vector<size_t>> mergedDims(const std::vector<Expr> &source,
                                              const std::vector<Expr> &view) {
  std::vector<size_t> starts;
  size_t j = 0;
  for (const Expr &v : view) {
    starts.push_back(j);
    Expr product = intImm(1);
    if (constDiff(v, intImm(1)) == 0) { // a source dimension of 1 maps to it, else none
      if (j < source.size() && isConstInt(simplify(source[j]), 1))
        ++j;
      continue;
    }
    while (constDiff(product, v) != 0) {
      if (j == source.size())
        return std::nullopt;
      product = product * source[j++];
    }
  }
  for (; j < source.size(); ++j) // trailing dimensions of 1 join the last group
    if (!isConstInt(simplify(source[j]), 1) || view.empty())
      return std::nullopt;
  starts.push_back(source.size());
  return starts;
}

/// Rewrites every access of `from` into `to`, a merged view of it (its
/// dimensions grouped by `starts`, as mergedDims returns): index g of `to` is the row-major
/// number of `from`'s indices in group g.
class MergeIndices : public IRMutator {
public:
  MergeIndices(Buffer from, Buffer to, std::vector<size_t> starts)
      : from_(std::move(from)), to_(std::move(to)), starts_(std::move(starts)) {}

protected:
  std::vector<Expr> merged(const std::vector<Expr> &indices) {
    std::vector<Expr> out;
    for (size_t g = 0; g + 1 < starts_.size(); ++g) {
      Expr index = intImm(0);
      size_t end = g + 2 == starts_.size() ? indices.size() : starts_[g + 1];
      for (size_t d = starts_[g]; d < end; ++d)
        index = index * from_.shape()[d] + indices[d];
      out.push_back(simplify(index));
    }
    return out;
  }
  Expr visit(const BufferLoad *op) override {
    Expr e = IRMutator::visit(op);
    const auto *load = e.as<BufferLoad>();
    if (!load || !load->buffer.sameAs(from_))
      return e;
    return BufferLoad::make(to_, merged(load->indices), load->loc);
  }
  Stmt visit(const BufferStore *op) override {
    Stmt st = IRMutator::visit(op);
    const auto *store = st.as<BufferStore>();
    if (!store || !store->buffer.sameAs(from_))
      return st;
    return BufferStore::make(to_, store->value, merged(store->indices), store->loc);
  }

private:
  Buffer from_, to_;
  std::vector<size_t> starts_;
};

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
/// `merge`: the consumer reads the output through a reshape that merges its dimensions (as
/// mergedDims returns); the intermediate then has the reshape's shape, and the producer's
/// shape variables whose values at the call (`shapeArgs`) are constants take them, so that
/// the merged indices have constant radices (`h * 56 + w`), which the schedule's dependence
/// tests see through as they do the producer's own indices.
std::optional<Fusion> fusePair(const Module &m, const PrimFunc &producer, const PrimFunc &consumer,
                               size_t k, const std::map<std::string, DerivedFunc> &derived,
                               const std::optional<std::vector<size_t>> &merge,
                               const std::vector<Expr> &shapeArgs) {
  DeepCopier pc;
  std::vector<Var> shapeVars;
  for (size_t i = 0; i < producer.shapeVars.size(); ++i) {
    const Var &v = producer.shapeVars[i];
    if (merge && i < shapeArgs.size() && asConstInt(shapeArgs[i]))
      pc.vars[v.get()] = shapeArgs[i];
    else
      shapeVars.push_back(pc.renew(v));
  }
  std::vector<FuncParam> inputs;
  for (const FuncParam &p : producer.inputs)
    inputs.push_back(p.isTensor() ? FuncParam::tensor(pc.mutateBuffer(p.buffer))
                                  : FuncParam::scalarVar(pc.renew(p.scalar)));
  const Buffer &out = producer.outputs.front();
  std::vector<Expr> outShape;
  for (const Expr &d : out.shape())
    outShape.push_back(pc.mutate(d));
  Buffer asWritten(out.name(), out.dtype(), outShape, BufferRole::Alloc, MemScope::Global, {},
                   out->loc);
  Buffer intermediate = asWritten;
  if (merge) {
    std::vector<Expr> viewShape;
    for (size_t g = 0; g + 1 < merge->size(); ++g) {
      Expr extent = intImm(1);
      size_t end = g + 2 == merge->size() ? outShape.size() : (*merge)[g + 1];
      for (size_t d = (*merge)[g]; d < end; ++d)
        extent = extent * outShape[d];
      viewShape.push_back(simplify(extent));
    }
    intermediate = Buffer(out.name(), out.dtype(), viewShape, BufferRole::Alloc, MemScope::Global,
                          {}, out->loc);
  }
  pc.buffers[out.get()] = asWritten;
  std::vector<Buffer> allocs;
  for (const Buffer &a : producer.allocBuffers)
    allocs.push_back(pc.mutateBuffer(a));
  allocs.push_back(intermediate);
  Stmt producerBody = pc.mutate(producer.body);
  if (merge)
    producerBody = MergeIndices(asWritten, intermediate, *merge).mutate(producerBody);

  // The consumer's shape variables: from the intermediate where it has them as a whole
  // dimension, otherwise new shape variables of the fused function (which must then appear as
  // a whole dimension of another input).
  DeepCopier cc;
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
      // Through a reshape that merges dimensions of the producer's output, used only there.
      std::optional<size_t> view;
      std::optional<std::vector<size_t>> merge;
      if (const auto *rb = std::get_if<ReshapeBinding>(&all[i].binding)) {
        const Buffer &source = rb->source;
        if (all[i].dataflow != all[j].dataflow || uses[source.get()] != 1 ||
            !definedAt.count(source.get()))
          continue;
        merge = mergedDims(source.shape(), rb->target.shape());
        if (!merge)
          continue;
        view = i;
        i = definedAt[source.get()];
      }
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
      std::optional<Fusion> fusion = fusePair(
          m, *producer, *consumer, k, derived, merge,
          merge ? detail::calleeShapeArgs(m.lookup(pcall->callee), *pcall) : std::vector<Expr>{});
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
            if (at == i || (view && at == *view))
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

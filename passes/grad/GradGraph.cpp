//===- passes/grad/GradGraph.cpp - The graph of a `grad` item ---------------------------------===//
//
// expandGrads (passes/grad/Grad.h): the forward calls of F, then in reverse the adjoint calls of
// the active ones, the cotangents of a value summed (`grad_add_<rank>d`, an element-wise func the
// step adds once), a value no path reaches given zeros (`grad_zero_<rank>d`).
//
//===------------------------------------------------------------------------------------------===//

#include "passes/grad/Grad.h"

#include "ir/Grad.h"
#include "ir/Instantiate.h"
#include "ir/Utils.h"
#include "passes/graph/Graph.h"
#include "passes/graph/GraphUtils.h"

#include <cstring>
#include <map>
#include <set>

namespace tdsl::grad {

using namespace ir;

namespace {

/// `base`, or `base_1`, `base_2`, …: the first name no function of `m` has (spec §13).
std::string freshName(const Module &m, const std::string &base) {
  std::string name = base;
  for (int k = 1; m.lookup(name).defined(); ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

std::string flatName(const std::string &qualified) {
  std::string out;
  for (char c : qualified)
    out += c == '.' ? '_' : c;
  return out;
}

class GraphDeriver {
public:
  GraphDeriver(Module &m, std::vector<Func> &made, const GradItem &item)
      : m_(m), made_(made), item_(item) {}

  std::optional<Func> run(GradError &error) {
    try {
      return derive();
    } catch (const GradError &e) {
      error = e;
      return std::nullopt;
    }
  }

private:
  [[noreturn]] void fail(SourceLoc at, std::string message, SourceLoc noteAt = {},
                         std::string note = {}) {
    throw GradError{at, std::move(message), noteAt, std::move(note)};
  }

  /// A value of the graph: a fresh buffer of `b`'s type.
  static Buffer like(const Buffer &b, const std::string &name) {
    return Buffer(name, b.dtype(), b.shape(), BufferRole::Alloc, MemScope::Global, {}, b->loc);
  }

  /// The element-wise func `grad_<kind>_<rank>d` (add: a + b; zero: 0 shaped like its input),
  /// made once per module.
  std::string helper(const std::string &kind, const Buffer &like, bool add) {
    std::string base =
        "grad_" + kind + "_" + std::to_string(like.rank()) + "d_" + like.dtype().name();
    auto it = helpers_.find(base);
    if (it != helpers_.end())
      return it->second;
    std::vector<Var> dims;
    std::vector<Expr> shape;
    for (size_t i = 0; i < like.rank(); ++i) {
      dims.push_back(Var("D" + std::to_string(i)));
      shape.push_back(VarRef::make(dims.back()));
    }
    DType t = like.dtype();
    Buffer a("a", t, shape, BufferRole::Input), c(add ? "c" : "z", t, shape, BufferRole::Output);
    Buffer b = add ? Buffer("b", t, shape, BufferRole::Input) : Buffer();
    std::vector<IterVar> axes;
    std::vector<Expr> idx;
    for (size_t i = 0; i < like.rank(); ++i) {
      IterVar iv;
      iv.var = Var("i" + std::to_string(i));
      iv.extent = shape[i];
      axes.push_back(iv);
      idx.push_back(VarRef::make(iv.var));
    }
    Expr value = add ? BufferLoad::make(a, idx) + BufferLoad::make(b, idx) : constant(t, 0.0);
    Stmt body = explicitForm(
        Block::make(add ? "c" : "z", axes, Expr(), Stmt(), BufferStore::make(c, value, idx)));
    std::vector<FuncParam> inputs = {FuncParam::tensor(a)};
    if (add)
      inputs.push_back(FuncParam::tensor(b));
    std::string name = freshName(m_, base);
    Func f = PrimFunc::make(name, {}, inputs, {c}, dims, {}, body);
    m_.add(f);
    made_.push_back(f);
    helpers_[base] = name;
    return name;
  }

  void bind(CallBinding c) {
    c.loc = item_.loc;
    bindings_.push_back(c);
  }

  /// The sum of the cotangents `v` received (nothing: undefined).
  Buffer cotangent(const Buffer &v) {
    auto it = cotangents_.find(v.get());
    if (it == cotangents_.end() || it->second.empty())
      return Buffer();
    std::vector<Buffer> &terms = it->second;
    while (terms.size() > 1) {
      Buffer sum = like(terms[0], "d_" + v.name());
      bind({{sum}, helper("add", terms[0], true), {}, {terms[0], terms[1]}, false, {}});
      terms.erase(terms.begin(), terms.begin() + 2);
      terms.insert(terms.begin(), sum);
    }
    return terms[0];
  }

  Func derive() {
    Func stubF = m_.lookup(item_.name);
    const GraphFunc &stub = *stubF.as<GraphFunc>();
    Func f = m_.lookup(item_.func);
    bool loss = isLossForm(f);
    size_t nParams = calleeInputs(f).size();
    size_t nResults = calleeOutputs(f).size();
    // The forward: F called on the parameters, inlined (a graph) into the results.
    CallBinding forward;
    forward.callee = item_.func;
    for (const Var &c : stub.constVars)
      forward.constArgs.push_back(VarRef::make(c));
    for (size_t i = 0; i < nParams; ++i) {
      const FuncParam &p = stub.inputs[i];
      forward.args.push_back(p.isTensor() ? GraphArg(p.buffer)
                                          : GraphArg(Expr(VarRef::make(p.scalar))));
    }
    for (size_t i = 0; i < nResults; ++i)
      forward.targets.push_back(stub.results[i]);
    forward.loc = item_.loc;
    Func wrapper = GraphFunc::make(stub.name, stub.constVars, stub.inputs, stub.shapeVars,
                                   {forward}, {}, stub.loc);
    Func flat = graph::inlineGraphCalls(m_, *wrapper.as<GraphFunc>());
    for (const graph::detail::PlacedBinding &pb :
         graph::detail::bindingsInOrder(*flat.as<GraphFunc>()))
      forwardBindings_.push_back(pb.binding);
    // Activity: values that depend on some Pi and reach a result with a cotangent.
    std::set<const BufferNode *> varied, useful;
    std::vector<Buffer> wrtInputs;
    for (const std::string &w : item_.wrt)
      for (size_t i = 0; i < nParams; ++i)
        if (stub.inputs[i].isTensor() && stub.inputs[i].buffer.name() == w) {
          wrtInputs.push_back(stub.inputs[i].buffer);
          varied.insert(stub.inputs[i].buffer.get());
        }
    std::vector<size_t> seeded;
    for (size_t i = 0; i < nResults; ++i)
      if (stub.results[i].dtype().isFloat() && (!loss || i == 0)) {
        seeded.push_back(i);
        useful.insert(stub.results[i].get());
      }
    for (const GraphBinding &b : forwardBindings_)
      for (const Buffer &r : graph::detail::readsOf(b))
        if (varied.count(r.get()))
          for (const Buffer &t : graph::detail::definesOf(b))
            if (t.dtype().isFloat())
              varied.insert(t.get());
    for (size_t k = forwardBindings_.size(); k-- > 0;) {
      const GraphBinding &b = forwardBindings_[k];
      bool reaches = false;
      for (const Buffer &t : graph::detail::definesOf(b))
        reaches |= useful.count(t.get()) > 0;
      if (reaches)
        for (const Buffer &r : graph::detail::readsOf(b))
          if (r.dtype().isFloat())
            useful.insert(r.get());
    }
    auto active = [&](const Buffer &b) { return varied.count(b.get()) && useful.count(b.get()); };
    // Seeds: 1 for the loss, else the cotangent inputs.
    if (loss) {
      Constant one;
      one.name = flatName(item_.name) + "_seed";
      while (m_.lookupConstant(one.name) || m_.lookup(one.name))
        one.name += "_";
      one.buffer = Buffer(one.name, DType::f32(), {}, BufferRole::Constant);
      float v = 1.0f;
      auto bytes = std::make_shared<std::vector<uint8_t>>(sizeof v);
      std::memcpy(bytes->data(), &v, sizeof v);
      one.data = bytes;
      one.loc = item_.loc;
      m_.constants.push_back(one);
      cotangents_[stub.results[0].get()].push_back(one.buffer);
    } else {
      size_t next = nParams;
      for (size_t i : seeded)
        cotangents_[stub.results[i].get()].push_back(stub.inputs[next++].buffer);
    }
    // The reverse pass.
    for (size_t k = forwardBindings_.size(); k-- > 0;) {
      const GraphBinding &b = forwardBindings_[k];
      if (const auto *r = std::get_if<ReshapeBinding>(&b)) {
        if (!active(r->target) || !active(r->source))
          continue;
        Buffer ct = cotangent(r->target);
        if (!ct.defined())
          continue;
        Buffer back = like(r->source, "d_" + r->source.name());
        bindings_.push_back(ReshapeBinding{back, ct, item_.loc});
        cotangents_[r->source.get()].push_back(back);
        continue;
      }
      reverseCall(std::get<CallBinding>(b), active);
    }
    // The results: F's, then each gradient (zeros where nothing reaches).
    std::vector<GraphBinding> all = forwardBindings_;
    for (size_t k = 0; k < wrtInputs.size(); ++k) {
      const Buffer &result = stub.results[nResults + k];
      Buffer g = cotangent(wrtInputs[k]);
      if (!g.defined()) {
        bind({{result}, helper("zero", wrtInputs[k], false), {}, {wrtInputs[k]}, false, {}});
        continue;
      }
      // The last binding defining g defines the result instead; an input is viewed.
      bool renamed = false;
      for (GraphBinding &bb : bindings_) {
        if (auto *c = std::get_if<CallBinding>(&bb))
          for (Buffer &t : c->targets)
            if (t.sameAs(g)) {
              t = result;
              renamed = true;
            }
        if (auto *r = std::get_if<ReshapeBinding>(&bb); r && r->target.sameAs(g)) {
          r->target = result;
          renamed = true;
        }
      }
      if (renamed)
        for (GraphBinding &bb : bindings_) {
          if (auto *c = std::get_if<CallBinding>(&bb))
            for (GraphArg &a : c->args)
              if (auto *buf = std::get_if<Buffer>(&a); buf && buf->sameAs(g))
                a = result;
          if (auto *r = std::get_if<ReshapeBinding>(&bb); r && r->source.sameAs(g))
            r->source = result;
        }
      if (!renamed)
        bindings_.push_back(ReshapeBinding{result, g, item_.loc});
    }
    all.insert(all.end(), bindings_.begin(), bindings_.end());
    // One dataflow block when every call is pure (so the graph passes fuse inside it).
    bool pure = true;
    for (const GraphBinding &b : all)
      if (auto *c = std::get_if<CallBinding>(&b))
        if (auto *e = m_.lookup(c->callee).as<ExternFunc>(); e && !e->pure)
          pure = false;
    std::vector<GraphItem> body;
    if (pure) {
      DataflowBlock df;
      df.bindings = all;
      std::set<const BufferNode *> seen;
      for (const Buffer &r : stub.results)
        if (seen.insert(r.get()).second && r.role() != BufferRole::Input)
          df.outputs.push_back(r);
      df.loc = item_.loc;
      body.push_back(df);
    } else {
      for (const GraphBinding &b : all) {
        if (auto *c = std::get_if<CallBinding>(&b))
          body.push_back(*c);
        else
          body.push_back(std::get<ReshapeBinding>(b));
      }
    }
    return GraphFunc::make(stub.name, stub.constVars, stub.inputs, stub.shapeVars, body,
                           stub.results, stub.loc);
  }

  template <typename Active> void reverseCall(const CallBinding &call, Active &&active) {
    bool any = false;
    for (const Buffer &t : call.targets)
      any |= active(t);
    if (!any)
      return;
    Func callee = m_.lookup(call.callee);
    if (callee.as<ExternFunc>())
      fail(item_.nameLoc,
           "cannot differentiate '" + item_.func + "': extern '" + call.callee +
               "' is on a path from a parameter to a result, and no derivative is known for it",
           call.loc, "the call of '" + call.callee + "' is here");
    const PrimFunc *p = callee.as<PrimFunc>();
    std::vector<size_t> wrt, cots;
    for (size_t i = 0; i < call.args.size(); ++i)
      if (auto *b = std::get_if<Buffer>(&call.args[i]); b && active(*b))
        wrt.push_back(i);
    std::vector<Buffer> seeds;
    for (size_t j = 0; j < call.targets.size(); ++j)
      if (active(call.targets[j]))
        if (Buffer ct = cotangent(call.targets[j]); ct.defined()) {
          cots.push_back(j);
          seeds.push_back(ct);
        }
    if (wrt.empty() || cots.empty())
      return;
    // The adjoint of the instance the call runs (spec §13: `nn_conv2d_1_1_adjoint`).
    Func instance = callee;
    std::string base = flatName(call.callee);
    if (!p->constVars.empty()) {
      std::vector<int64_t> values;
      for (const Expr &c : call.constArgs) {
        std::optional<int64_t> v = asConstInt(c);
        if (!v)
          fail(item_.nameLoc,
               "cannot differentiate the call of generic func '" + call.callee +
                   "' with constants that are not numbers",
               call.loc, "the call is here");
        values.push_back(*v);
        base += "_" + (*v < 0 ? "m" + std::to_string(-*v) : std::to_string(*v));
      }
      instance = instantiate(callee, values);
    }
    std::string key = base + "|";
    for (size_t i : wrt)
      key += std::to_string(i) + ",";
    key += "|";
    for (size_t j : cots)
      key += std::to_string(j) + ",";
    auto it = adjoints_.find(key);
    if (it == adjoints_.end()) {
      GradError e;
      std::optional<Adjoint> a =
          deriveAdjoint(*instance.as<PrimFunc>(), freshName(m_, base + "_adjoint"), wrt, cots, e);
      if (!a)
        fail(item_.nameLoc, "cannot differentiate '" + item_.func + "': " + e.message, e.at,
             "in func '" + call.callee + "' here");
      m_.add(a->func);
      made_.push_back(a->func);
      it = adjoints_.emplace(key, *a).first;
    }
    const Adjoint &adj = it->second;
    CallBinding c;
    c.callee = adj.func.name();
    c.args = call.args;
    for (size_t o : adj.outputsRead)
      c.args.push_back(call.targets[o]);
    for (const Buffer &s : seeds)
      c.args.push_back(s);
    for (size_t i : adj.wrt) {
      const Buffer &x = std::get<Buffer>(call.args[i]);
      Buffer g = like(x, "d_" + x.name());
      c.targets.push_back(g);
      cotangents_[x.get()].push_back(g);
    }
    bind(c);
  }

  Module &m_;
  std::vector<Func> &made_;
  const GradItem &item_;
  std::vector<GraphBinding> forwardBindings_, bindings_;
  std::map<const BufferNode *, std::vector<Buffer>> cotangents_;
  std::map<std::string, Adjoint> adjoints_;
  std::map<std::string, std::string> helpers_;
};

} // namespace

bool expandGrads(Module &m, const std::function<void(const GradError &)> &report) {
  std::vector<Func> made;
  bool ok = true;
  std::vector<GradItem> items = m.grads;
  for (const GradItem &item : items) {
    if (item.derived)
      continue;
    GradError error;
    std::optional<Func> g = GraphDeriver(m, made, item).run(error);
    if (!g) {
      report(error);
      ok = false;
      continue;
    }
    m.replace(*g);
  }
  for (GradItem &item : m.grads)
    item.derived = true;
  if (!ok)
    return false;
  std::set<std::string> names;
  std::vector<Func> current;
  for (const Func &f : made) {
    names.insert(f.name());
    current.push_back(m.lookup(f.name()));
  }
  graph::placeDerived(m, names, current);
  return true;
}

} // namespace tdsl::grad

//===- passes/schedule/Sample.cpp - sample_* decisions and generated design spaces ------------===//
//
// Implementation of passes/schedule/Sample.h.

#include "passes/schedule/Sample.h"

#include "ir/Contains.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Utils.h"
#include "passes/schedule/Primitives.h"
#include "passes/schedule/Regions.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace tdsl::schedule {

using namespace ir;

uint64_t nextRandom(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t siteSeed(uint64_t seed, const std::string &func, size_t index) {
  uint64_t h = 1469598103934665603ull; // FNV-1a of the name
  for (unsigned char c : func)
    h = (h ^ c) * 1099511628211ull;
  uint64_t state = seed ^ h ^ (uint64_t(index) * 0xd1b54a32d192ed03ull);
  nextRandom(state);
  return state;
}

namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d * d <= n; ++d)
    if (n % d == 0) {
      out.push_back(d);
      if (d != n / d)
        out.push_back(n / d);
    }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> primeFactors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t p = 2; p * p <= n; ++p)
    while (n % p == 0) {
      out.push_back(p);
      n /= p;
    }
  if (n > 1)
    out.push_back(n);
  return out;
}

} // namespace

Decision drawDecision(const SampleSite &site, uint64_t &state) {
  if (site.kind == SampleSite::Kind::Categorical) {
    double u = double(nextRandom(state) >> 11) * (1.0 / 9007199254740992.0);
    double acc = 0;
    for (size_t i = 0; i < site.values.size(); ++i) {
      acc += site.probs[i];
      if (u < acc)
        return {site.values[i]};
    }
    for (size_t i = site.values.size(); i-- > 0;) // rounding: the last value of weight > 0
      if (site.probs[i] > 0)
        return {site.values[i]};
    return {site.values.back()};
  }
  Decision d(site.n, 1);
  std::vector<int64_t> inner;
  for (int64_t x : divisors(site.extent))
    if (site.maxInnermost <= 0 || x <= site.maxInnermost)
      inner.push_back(x);
  int64_t innermost = site.n == 1 ? site.extent : inner[nextRandom(state) % inner.size()];
  d.back() = innermost;
  for (int64_t p : primeFactors(site.extent / innermost))
    d[nextRandom(state) % (site.n - 1)] *= p;
  return d;
}

bool fitsSite(const SampleSite &site, const Decision &d) {
  if (site.kind == SampleSite::Kind::Categorical) {
    if (d.size() != 1)
      return false;
    for (size_t i = 0; i < site.values.size(); ++i)
      if (site.values[i] == d[0] && site.probs[i] > 0)
        return true;
    return false;
  }
  if (int64_t(d.size()) != site.n)
    return false;
  int64_t product = 1;
  for (int64_t f : d) {
    if (f < 1 || product > site.extent)
      return false;
    product *= f;
  }
  return product == site.extent && (site.maxInnermost <= 0 || d.back() <= site.maxInnermost);
}

std::optional<std::vector<Decision>> reshapeTiles(const std::vector<SampleSite> &sites,
                                                  const std::vector<Decision> &decisions,
                                                  uint64_t &state) {
  std::vector<size_t> tilings;
  for (size_t i = 0; i < sites.size() && i < decisions.size(); ++i)
    if (sites[i].kind == SampleSite::Kind::PerfectTile && sites[i].maxInnermost > 0 &&
        decisions[i].size() > 1)
      tilings.push_back(i);
  if (tilings.size() < 2)
    return std::nullopt;
  for (int tries = 0; tries < 8; ++tries) {
    size_t a = tilings[nextRandom(state) % tilings.size()];
    size_t b = tilings[nextRandom(state) % tilings.size()];
    if (a == b)
      continue;
    std::vector<Decision> d = decisions;
    Decision &da = d[a], &db = d[b];
    std::vector<int64_t> qs; // the factors of a's innermost tile
    for (int64_t q = 2; q <= da.back(); ++q)
      if (da.back() % q == 0)
        qs.push_back(q);
    if (qs.empty())
      continue;
    int64_t q = qs[nextRandom(state) % qs.size()];
    std::vector<size_t> givers; // the levels of b, other than the innermost, that q divides
    for (size_t l = 0; l + 1 < db.size(); ++l)
      if (db[l] % q == 0)
        givers.push_back(l);
    if (givers.empty())
      continue;
    size_t give = givers[nextRandom(state) % givers.size()];
    size_t take = nextRandom(state) % (da.size() - 1);
    da.back() /= q;
    da[take] *= q;
    db[give] /= q;
    db.back() *= q;
    if (fitsSite(sites[a], da) && fitsSite(sites[b], db))
      return d;
  }
  return std::nullopt;
}

namespace {

std::string argText(const ScheduleArg &a, const std::map<std::string, int64_t> &decided) {
  switch (a.kind) {
  case ScheduleArg::Kind::Name: {
    auto it = decided.find(a.name);
    return it != decided.end() ? std::to_string(it->second) : a.name;
  }
  case ScheduleArg::Kind::Int:
    return std::to_string(a.value);
  case ScheduleArg::Kind::Float: {
    std::ostringstream os;
    os.precision(17);
    os << a.real;
    std::string s = os.str();
    return s.find_first_of(".eEn") == std::string::npos ? s + ".0" : s;
  }
  case ScheduleArg::Kind::Placeholder:
    return "_";
  case ScheduleArg::Kind::String:
    return quoteString(a.name);
  case ScheduleArg::Kind::List: {
    std::string out = "[";
    for (size_t i = 0; i < a.items.size(); ++i)
      out += (i ? ", " : "") + argText(a.items[i], decided);
    return out + "]";
  }
  case ScheduleArg::Kind::Lambda: {
    std::string out = "(";
    for (size_t i = 0; i < a.lambdaParams.size(); ++i)
      out += (i ? ", " : "") + a.lambdaParams[i]->name;
    out += ") => (";
    // Decided integers the map uses are written in.
    std::unordered_map<Var, Expr> ints;
    for (const Var &v : a.lambdaInts)
      if (auto it = decided.find(v->name); it != decided.end())
        ints.emplace(v, IntImm::make(DType::i64(), it->second, a.loc));
    for (size_t i = 0; i < a.lambdaResults.size(); ++i)
      out += (i ? ", " : "") +
             toString(ints.empty() ? a.lambdaResults[i] : substitute(a.lambdaResults[i], ints));
    return out + ")";
  }
  }
  return "?";
}

bool isSample(const std::string &primitive) {
  return primitive == "sample_perfect_tile" || primitive == "sample_categorical";
}

} // namespace

std::string plainScheduleText(const ScheduleScript &script,
                              const std::vector<Decision> &decisions) {
  std::map<std::string, int64_t> decided;
  std::ostringstream os;
  os << "schedule " << script.func << (script.target.empty() ? "" : " for " + script.target)
     << " {\n";
  size_t next = 0;
  for (const ScheduleCall &call : script.calls) {
    if (isSample(call.primitive)) {
      const Decision *d = next < decisions.size() ? &decisions[next] : nullptr;
      ++next;
      for (size_t i = 0; i < call.results.size(); ++i)
        if (call.results[i] != "_" && d && i < d->size())
          decided[call.results[i]] = (*d)[i];
      continue;
    }
    os << "  ";
    if (!call.results.empty()) {
      for (size_t i = 0; i < call.results.size(); ++i)
        os << (i ? ", " : "") << call.results[i];
      os << " = ";
    }
    os << call.primitive << "(";
    for (size_t i = 0; i < call.args.size(); ++i)
      os << (i ? ", " : "") << argText(call.args[i], decided);
    os << ");\n";
  }
  os << "}\n";
  return os.str();
}

namespace {

/// Builds the calls of a generated script.
struct ScriptWriter {
  ScheduleScript script;

  static ScheduleArg arg(ScheduleArg::Kind kind, const std::string &text, int64_t value = 0) {
    ScheduleArg a;
    a.kind = kind;
    a.name = text;
    a.value = value;
    return a;
  }
  static ScheduleArg name(const std::string &n) { return arg(ScheduleArg::Kind::Name, n); }
  static ScheduleArg integer(int64_t v) { return arg(ScheduleArg::Kind::Int, "", v); }
  static ScheduleArg string(const std::string &s) { return arg(ScheduleArg::Kind::String, s); }
  static ScheduleArg list(const std::vector<std::string> &names) {
    ScheduleArg a;
    a.kind = ScheduleArg::Kind::List;
    for (const std::string &n : names)
      a.items.push_back(name(n));
    return a;
  }
  void call(std::vector<std::string> results, const std::string &primitive,
            std::vector<ScheduleArg> args) {
    ScheduleCall c;
    c.results = std::move(results);
    c.resultLocs.resize(c.results.size());
    c.primitive = primitive;
    c.args = std::move(args);
    script.calls.push_back(std::move(c));
  }
};

bool hasReduce(const Block *b) { return firstReduceAxis(b) != nullptr; }

/// The buffers `b` stores to (its write regions, or the stores of its body).
std::vector<Buffer> written(const Block *b) {
  std::vector<Buffer> out;
  for (const BufferRegion &w : b->writes)
    out.push_back(w.buffer);
  if (out.empty()) {
    struct Stores : IRVisitor {
      std::vector<Buffer> *out;
      void visit(const BufferStore *op) override {
        bool seen = false;
        for (const Buffer &x : *out)
          seen |= x.get() == op->buffer.get();
        if (!seen)
          out->push_back(op->buffer);
        IRVisitor::visit(op);
      }
    } v;
    v.out = &out;
    v.visitStmt(b->body);
  }
  return out;
}

bool writesOutput(const PrimFunc &f, const Block *b) {
  for (const Buffer &w : written(b))
    for (const Buffer &o : f.outputs)
      if (w.get() == o.get())
        return true;
  return false;
}

/// The input that a multi-level tile re-reads most: a 2-D input of the function loaded by
/// `b` as [a reduce axis, the axis `inner` binds] (B of a matmul, C[i, j] += A[i, k] * B[k, j]),
/// so that every row tile streams its columns with a stride of a whole row. Null when none.
Buffer panelOperand(const PrimFunc &f, const Block *b, const Var &inner) {
  auto axis = [&](const Expr &e, bool reduce) -> bool {
    const auto *ref = e.as<VarRef>();
    if (!ref)
      return false;
    for (const IterVar &iv : b->iterVars)
      if (iv.var.get() == ref->var.get()) {
        if (reduce)
          return iv.kind == IterKind::Reduce;
        const auto *bound = iv.binding.as<VarRef>();
        return iv.kind == IterKind::Spatial && bound && bound->var.get() == inner.get();
      }
    return false;
  };
  Buffer found;
  bool unique = true;
  forEach<BufferLoad>(b->body, [&](const BufferLoad *op) {
    bool input = false;
    for (const FuncParam &p : f.inputs)
      input |= p.isTensor() && p.buffer.get() == op->buffer.get();
    if (!input || op->indices.size() != 2 || !axis(op->indices[0], true) ||
        !axis(op->indices[1], false))
      return;
    if (found.defined() && found.get() != op->buffer.get())
      unique = false;
    found = op->buffer;
  });
  return unique ? found : Buffer();
}

} // namespace

std::optional<ScheduleScript> designSpace(const Func &func, int level) {
  auto *prim = func.as<PrimFunc>();
  if (!prim || !prim->body.defined())
    return std::nullopt;
  ScheduleState state(func, "cpu");
  std::vector<const Block *> blocks = state.blocks();
  if (blocks.empty())
    return std::nullopt;
  std::set<std::string> names;
  for (const Block *b : blocks)
    if (!names.insert(b->name).second)
      return std::nullopt; // blocks are named by name in a script
  ScriptWriter w;
  w.script.func = func.name();
  // The block tiled: the last one with reduce axes, else the last one.
  const Block *main = blocks.back();
  for (const Block *b : blocks)
    if (hasReduce(b))
      main = b;
  // Element-wise producers that do not write an output are inlined into their consumers.
  if (level < 2)
    for (const Block *b : blocks)
      if (b != main && !hasReduce(b) && !writesOutput(*prim, b) && written(b).size() == 1)
        w.call({}, "compute_inline", {ScriptWriter::name(b->name)});
  // The main block's loops, classified by the iteration variable they bind.
  std::vector<Var> loopVars;
  try {
    loopVars = getLoops(state, main->name);
  } catch (const ScheduleError &) {
    return std::nullopt;
  }
  if (loopVars.empty())
    return std::nullopt;
  std::vector<bool> reduce;
  for (const Var &v : loopVars) {
    const For *loop = state.loop(v);
    if (!loop->extent.as<IntImm>())
      return std::nullopt;
    bool r = false;
    for (const IterVar &iv : main->iterVars)
      if (iv.kind == IterKind::Reduce && usesVar(iv.binding, v))
        r = true;
    reduce.push_back(r);
  }
  std::vector<Buffer> mainWrites = written(main);
  bool cache = level == 0 && hasReduce(main) && mainWrites.size() == 1 && writesOutput(*prim, main);
  std::string copyBack;
  if (cache) {
    copyBack = main->name + "_wb";
    w.call({copyBack}, "cache_write",
           {ScriptWriter::name(main->name), ScriptWriter::name(mainWrites[0]->name),
            ScriptWriter::string("local")});
  }
  std::vector<std::string> loopNames;
  for (size_t i = 0; i < loopVars.size(); ++i)
    loopNames.push_back("l" + std::to_string(i));
  w.call(loopNames, "loops", {ScriptWriter::name(main->name)});
  // SSRSRS: spatial loops in four tiles, reduce loops in two.
  std::vector<std::vector<std::string>> tiles(loopVars.size());
  size_t lastSpatial = loopVars.size();
  for (size_t i = 0; i < loopVars.size(); ++i)
    if (!reduce[i])
      lastSpatial = i;
  for (size_t i = 0; i < loopVars.size(); ++i) {
    size_t n = reduce[i] ? 2 : 4;
    std::vector<std::string> factors, parts;
    for (size_t k = 0; k < n; ++k) {
      factors.push_back(loopNames[i] + "_f" + std::to_string(k));
      parts.push_back(loopNames[i] + "_" + std::to_string(k));
    }
    // The innermost spatial tile of the last spatial loop is vectorized: at most 64 lanes; the
    // innermost of the others is unrolled: at most 16.
    int64_t maxInner = reduce[i] ? 0 : (i == lastSpatial ? 64 : 16);
    std::vector<ScheduleArg> args = {ScriptWriter::name(loopNames[i]),
                                     ScriptWriter::integer(int64_t(n))};
    if (maxInner > 0)
      args.push_back(ScriptWriter::integer(maxInner));
    w.call(factors, "sample_perfect_tile", args);
    ScheduleArg f;
    f.kind = ScheduleArg::Kind::List;
    for (const std::string &x : factors)
      f.items.push_back(ScriptWriter::name(x));
    w.call(parts, "split", {ScriptWriter::name(loopNames[i]), f});
    tiles[i] = parts;
  }
  // Order: S0 S1 R0 S2 R1 S3.
  std::vector<std::string> order;
  auto level_ = [&](bool red, size_t k) {
    for (size_t i = 0; i < loopVars.size(); ++i)
      if (reduce[i] == red)
        order.push_back(tiles[i][k]);
  };
  level_(false, 0);
  level_(false, 1);
  level_(true, 0);
  level_(false, 2);
  level_(true, 1);
  level_(false, 3);
  std::vector<ScheduleArg> reorderArgs;
  for (const std::string &n : order)
    reorderArgs.push_back(ScriptWriter::name(n));
  if (order.size() > 1)
    w.call({}, "reorder", reorderArgs);
  std::vector<std::string> s0, s1;
  for (size_t i = 0; i < loopVars.size(); ++i)
    if (!reduce[i]) {
      s0.push_back(tiles[i][0]);
      s1.push_back(tiles[i][1]);
    }
  if (cache && !s1.empty())
    w.call({}, "reverse_compute_at", {ScriptWriter::name(copyBack), ScriptWriter::name(s1.back())});
  // The reduction's init goes above the outer reduce tiles (TVM's post-processing does this).
  std::vector<std::string> r0;
  for (size_t i = 0; i < loopVars.size(); ++i)
    if (reduce[i])
      r0.push_back(tiles[i][0]);
  if (level < 2 && !r0.empty())
    w.call({}, "decompose_reduction", {ScriptWriter::name(main->name), ScriptWriter::name(r0[0])});
  if (!s0.empty()) {
    std::string outer = s0[0];
    if (s0.size() > 1) {
      std::vector<ScheduleArg> fuseArgs;
      for (const std::string &n : s0)
        fuseArgs.push_back(ScriptWriter::name(n));
      outer = "outer";
      w.call({outer}, "fuse", fuseArgs);
    }
    w.call({}, "parallel", {ScriptWriter::name(outer)});
  }
  if (lastSpatial < loopVars.size()) {
    w.call({}, "vectorize", {ScriptWriter::name(tiles[lastSpatial][3])});
    if (level < 2)
      for (size_t i = 0; i < loopVars.size(); ++i)
        if (!reduce[i] && i != lastSpatial)
          w.call({}, "unroll", {ScriptWriter::name(tiles[i][3])});
    // Packing (the hand schedule of bench/matmul.tdsl; MetaSchedule's layout rewrite): the
    // panel operand is copied into panels as wide as the vectorized tile, each contiguous
    // (P[j / NR, k, j % NR]), so that a tile's k loop reads one vector after another; the copy
    // runs before the tiles, vectorized along a panel row, parallel over k.
    if (level == 0)
      if (Buffer panel = panelOperand(*prim, main, loopVars[lastSpatial]); panel.defined()) {
        const std::string nr = loopNames[lastSpatial] + "_f3", copy = panel->name + "_pack";
        w.call({copy}, "cache_read",
               {ScriptWriter::name(main->name), ScriptWriter::name(panel->name),
                ScriptWriter::string("global")});
        ScheduleArg map;
        map.kind = ScheduleArg::Kind::Lambda;
        Var a("p0", DType::i64()), b("p1", DType::i64()), width(nr, DType::i64());
        map.lambdaParams = {a, b};
        Expr vb = VarRef::make(b), vw = VarRef::make(width);
        map.lambdaResults = {Div::make(vb, vw), VarRef::make(a), Mod::make(vb, vw)};
        map.lambdaInts = {width};
        w.call({}, "transform_layout",
               {ScriptWriter::name(copy), ScriptWriter::name(panel->name + "_global"), map});
        w.call({copy + "_k", copy + "_j"}, "loops", {ScriptWriter::name(copy)});
        ScheduleArg factors;
        factors.kind = ScheduleArg::Kind::List;
        factors.items = {ScriptWriter::arg(ScheduleArg::Kind::Placeholder, "_"),
                         ScriptWriter::name(nr)};
        w.call({copy + "_j0", copy + "_j1"}, "split", {ScriptWriter::name(copy + "_j"), factors});
        w.call({}, "vectorize", {ScriptWriter::name(copy + "_j1")});
        w.call({}, "parallel", {ScriptWriter::name(copy + "_k")});
      }
  }
  return w.script;
}

std::vector<ScheduleScript> defaultScripts(const Func &func) {
  std::vector<ScheduleScript> out;
  auto *prim = func.as<PrimFunc>();
  if (!prim || !prim->body.defined())
    return out;
  ScheduleState state(func, "cpu");
  std::vector<const Block *> blocks = state.blocks();
  std::map<std::string, int> count;
  for (const Block *b : blocks)
    ++count[b->name];
  for (const Block *b : blocks) {
    if (count[b->name] != 1)
      continue; // blocks are named by name in a script
    std::vector<Var> loopVars;
    try {
      loopVars = getLoops(state, b->name);
    } catch (const ScheduleError &) {
      continue;
    }
    if (loopVars.empty() || loopVars.size() != b->iterVars.size())
      continue;
    // Each loop binds one axis of its own (the explicit form the grad step derives).
    std::vector<const IterVar *> axisOf;
    for (const Var &v : loopVars) {
      const IterVar *axis = nullptr;
      for (const IterVar &iv : b->iterVars)
        if (const auto *ref = iv.binding.as<VarRef>(); ref && ref->var.get() == v.get())
          axis = &iv;
      axisOf.push_back(axis);
    }
    if (std::find(axisOf.begin(), axisOf.end(), nullptr) != axisOf.end())
      continue;
    // Every store writes the element its spatial axes name, each axis once: distinct
    // iterations of the spatial axes write distinct elements, so the outer spatial loop can run
    // in parallel and the inner one in vector lanes (an accumulation block, which scatters
    // into the element a read named, stays serial).
    bool injective = true;
    std::set<const VarNode *> lastIndex;
    auto check = [&](const BufferStore *op) {
      std::set<const VarNode *> seen;
      for (const Expr &e : op->indices) {
        const auto *ref = e.as<VarRef>();
        const IterVar *axis = nullptr;
        for (const IterVar &iv : b->iterVars)
          if (ref && iv.var.get() == ref->var.get())
            axis = &iv;
        if (!axis || axis->kind != IterKind::Spatial || !seen.insert(ref->var.get()).second)
          injective = false;
      }
      size_t spatial = 0;
      for (const IterVar &iv : b->iterVars)
        spatial += iv.kind == IterKind::Spatial;
      if (seen.size() != spatial)
        injective = false;
      const VarRef *last = op->indices.empty() ? nullptr : op->indices.back().as<VarRef>();
      lastIndex.insert(last ? last->var.get() : nullptr);
    };
    forEach<BufferStore>(b->body, check);
    if (b->init.defined())
      forEach<BufferStore>(b->init, check);
    if (!injective || axisOf[0]->kind != IterKind::Spatial)
      continue;
    // Names of their own per step: the steps that apply are joined into one script.
    std::vector<std::string> names, vnames;
    for (size_t i = 0; i < loopVars.size(); ++i) {
      names.push_back("p" + std::to_string(out.size()) + "_l" + std::to_string(i));
      vnames.push_back("v" + std::to_string(out.size()) + "_l" + std::to_string(i));
    }
    ScriptWriter par;
    par.script.func = func.name();
    par.call(names, "loops", {ScriptWriter::name(b->name)});
    par.call({}, "parallel", {ScriptWriter::name(names[0])});
    out.push_back(par.script);
    // The innermost loop in vector lanes where it is the spatial axis every store's last
    // index is (contiguous stores) and the block has no reduce axis.
    const IterVar *inner = axisOf.back();
    if (loopVars.size() > 1 && !hasReduce(b) && lastIndex.size() == 1 &&
        *lastIndex.begin() == inner->var.get()) {
      ScriptWriter vec;
      vec.script.func = func.name();
      vec.call(vnames, "loops", {ScriptWriter::name(b->name)});
      vec.call({}, "vectorize", {ScriptWriter::name(vnames.back())});
      out.push_back(vec.script);
    }
  }
  return out;
}

} // namespace tdsl::schedule

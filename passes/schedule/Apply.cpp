//===- passes/schedule/Apply.cpp --------------------------------------------------------------===//
//
// Implementation of passes/schedule/Apply.h.

#include "passes/schedule/Apply.h"

#include "ir/IRPrinter.h"
#include "ir/Utils.h"
#include "passes/schedule/Primitives.h"
#include "passes/schedule/Sample.h"
#include "support/Diagnostics.h"

#include <cmath>
#include <map>
#include <sstream>
#include <variant>

namespace tdsl {

using namespace ir;
using schedule::ScheduleError;
using schedule::ScheduleState;

namespace {

/// A handle bound by the script: a loop (its variable), a block (its name), or an integer a
/// sample_* call decided.
using Handle = std::variant<Var, std::string, int64_t>;

/// How the sample_* calls of the script being run are decided.
struct Sampling {
  schedule::SampleContext *context = nullptr;
  std::string func;
  std::optional<schedule::TunedDecisions> recorded;
  schedule::SampleTrace *trace = nullptr;
  size_t next = 0;

  /// The decision of the next site: the recorded one when it fits, else a seeded draw.
  schedule::Decision decide(const schedule::SampleSite &site) {
    size_t index = next++;
    schedule::Decision d;
    bool fromRecord = recorded && index < recorded->decisions.size() &&
                      schedule::fitsSite(site, recorded->decisions[index]);
    if (fromRecord) {
      d = recorded->decisions[index];
    } else {
      uint64_t state = schedule::siteSeed(context ? context->seed : 0, func, index);
      d = schedule::drawDecision(site, state);
    }
    if (trace) {
      if (!fromRecord)
        trace->fromRecord = false;
      trace->sites.push_back(site);
      trace->decisions.push_back(d);
    }
    return d;
  }
};

/// An argument that cannot be used where it stands; reported at the argument.
struct ArgError {
  SourceLoc at;
  std::string message;
};

class CallContext {
public:
  CallContext(const ScheduleCall &call, ScheduleState &state,
              std::map<std::string, Handle> &handles, Sampling &sampling)
      : call_(call), state_(state), handles_(handles), sampling_(sampling) {}

  Sampling &sampling() const { return sampling_; }
  const ScheduleCall &call() const { return call_; }

  void arity(size_t n) const {
    if (call_.args.size() != n)
      throw ArgError{call_.loc, "'" + call_.primitive + "' takes " + std::to_string(n) +
                                    " argument" + (n == 1 ? "" : "s") + ", got " +
                                    std::to_string(call_.args.size())};
  }
  const ScheduleArg &arg(size_t i) const { return call_.args.at(i); }

  Var loop(const ScheduleArg &a) const {
    if (a.kind == ScheduleArg::Kind::Name) {
      if (const Var *v = handle<Var>(a, "a loop"))
        return *v;
      throw ArgError{a.loc, "unknown loop handle '" + a.name +
                                "'; bind loops first, e.g. i, j = loops(BLOCK)"};
    }
    throw ArgError{a.loc, "'" + call_.primitive + "' expects a loop handle here"};
  }

  std::string block(const ScheduleArg &a) const {
    if (a.kind != ScheduleArg::Kind::Name)
      throw ArgError{a.loc, "'" + call_.primitive + "' expects a block here"};
    if (const std::string *b = handle<std::string>(a, "a block"))
      return *b;
    for (const Block *b : state_.blocks())
      if (b->name == a.name)
        return a.name;
    throw ArgError{a.loc, "no block named '" + a.name + "' in '" + state_.prim().name + "'"};
  }

  /// The value of the handle `a` names, when it is a T (`what`: "a loop"); nullptr when no
  /// handle has that name; an error when it holds something else.
  template <typename T> const T *handle(const ScheduleArg &a, const char *what) const {
    auto it = handles_.find(a.name);
    if (it == handles_.end())
      return nullptr;
    if (const T *v = std::get_if<T>(&it->second))
      return v;
    throw ArgError{a.loc, "'" + a.name + "' is a " + handleKind(it->second) + "; '" +
                              call_.primitive + "' expects " + what + " here"};
  }

  static std::string handleKind(const Handle &h) {
    if (std::holds_alternative<Var>(h))
      return "loop handle";
    if (std::holds_alternative<std::string>(h))
      return "block handle";
    return "sampled integer";
  }

  /// An integer: a literal or parameter, or a name bound by a sample_* call.
  int64_t integer(const ScheduleArg &a) const {
    if (a.kind == ScheduleArg::Kind::Name) {
      if (const int64_t *v = handle<int64_t>(a, "an integer"))
        return *v;
      throw ArgError{a.loc, "'" + a.name + "' is not a schedule parameter or a sampled integer; '" +
                                call_.primitive + "' expects an integer here"};
    }
    if (a.kind != ScheduleArg::Kind::Int)
      throw ArgError{a.loc, "'" + call_.primitive + "' expects an integer here"};
    return a.value;
  }

  std::string string(const ScheduleArg &a) const {
    if (a.kind != ScheduleArg::Kind::String)
      throw ArgError{a.loc, "'" + call_.primitive + "' expects a string here"};
    return a.name;
  }

  /// A buffer of the function, by name: an input, an output or an allocation (at the root or in
  /// a block).
  Buffer buffer(const ScheduleArg &a) const {
    if (a.kind != ScheduleArg::Kind::Name)
      throw ArgError{a.loc, "'" + call_.primitive + "' expects a buffer name here"};
    const PrimFunc &f = state_.prim();
    for (const FuncParam &p : f.inputs)
      if (p.isTensor() && p.buffer.name() == a.name)
        return p.buffer;
    for (const Buffer &b : f.outputs)
      if (b.name() == a.name)
        return b;
    for (const Buffer &b : f.allocBuffers)
      if (b.name() == a.name)
        return b;
    for (const Block *blk : state_.blocks())
      for (const Buffer &b : blk->allocBuffers)
        if (b.name() == a.name)
          return b;
    throw ArgError{a.loc, "no buffer named '" + a.name + "' in '" + f.name + "'"};
  }

  /// "global" and "local" on every target, "shared" on cuda only.
  MemScope scope(const ScheduleArg &a) const {
    std::string name = string(a);
    std::optional<MemScope> sc = parseScope(name);
    if (!sc)
      throw ArgError{a.loc, "unknown memory scope \"" + name +
                                "\"; expected \"global\", \"shared\" or \"local\""};
    if (*sc == MemScope::Shared && state_.target() != "cuda")
      throw ArgError{a.loc, "scope \"shared\" exists on the cuda target only"};
    return *sc;
  }

  std::vector<std::optional<int64_t>> factors(const ScheduleArg &a) const {
    if (a.kind != ScheduleArg::Kind::List)
      throw ArgError{a.loc, "'" + call_.primitive + "' expects a list of factors, e.g. [_, 4]"};
    std::vector<std::optional<int64_t>> out;
    for (const ScheduleArg &item : a.items) {
      if (item.kind == ScheduleArg::Kind::Placeholder)
        out.push_back(std::nullopt);
      else
        out.push_back(integer(item));
    }
    return out;
  }

  std::vector<Var> loops(size_t from) const {
    std::vector<Var> out;
    for (size_t i = from; i < call_.args.size(); ++i)
      out.push_back(loop(call_.args[i]));
    return out;
  }

  /// Binds the returned handles to the names on the left of `=`.
  void bind(const std::vector<Handle> &results) const {
    if (call_.results.empty())
      return;
    if (call_.results.size() != results.size())
      throw ArgError{call_.loc,
                     "'" + call_.primitive + "' returns " + std::to_string(results.size()) +
                         " handle" + (results.size() == 1 ? "" : "s") + ", but " +
                         std::to_string(call_.results.size()) +
                         (call_.results.size() == 1 ? " name is" : " names are") + " bound"};
    for (size_t i = 0; i < results.size(); ++i)
      if (call_.results[i] != "_")
        handles_[call_.results[i]] = results[i];
  }

private:
  const ScheduleCall &call_;
  ScheduleState &state_;
  std::map<std::string, Handle> &handles_;
  Sampling &sampling_;
};

std::vector<Handle> loopsToHandles(const std::vector<Var> &vars) {
  return {vars.begin(), vars.end()};
}

using Primitive = std::function<void(CallContext &, ScheduleState &)>;

// The shapes most primitives share: no result, on a loop, a block, or a block and a loop.
Primitive onLoop(void (*fn)(ScheduleState &, const Var &)) {
  return [fn](CallContext &c, ScheduleState &s) {
    c.arity(1);
    fn(s, c.loop(c.arg(0)));
    c.bind({});
  };
}
Primitive onBlock(void (*fn)(ScheduleState &, const std::string &)) {
  return [fn](CallContext &c, ScheduleState &s) {
    c.arity(1);
    fn(s, c.block(c.arg(0)));
    c.bind({});
  };
}
/// compute_at and reverse_compute_at: (block, loop[, "preserve_unit_loops"]).
Primitive onBlockAtLoop(void (*fn)(ScheduleState &, const std::string &, const Var &, bool)) {
  return [fn](CallContext &c, ScheduleState &s) {
    size_t n = c.call().args.size();
    if (n != 2 && n != 3)
      throw ArgError{c.call().loc, "'" + c.call().primitive + "' takes 2 or 3 arguments, got " +
                                       std::to_string(n)};
    bool preserve = false;
    if (n == 3) {
      std::string flag = c.string(c.arg(2));
      if (flag != "preserve_unit_loops")
        throw ArgError{c.arg(2).loc, "unknown flag \"" + flag + "\" of '" + c.call().primitive +
                                         "'; expected \"preserve_unit_loops\""};
      preserve = true;
    }
    fn(s, c.block(c.arg(0)), c.loop(c.arg(1)), preserve);
    c.bind({});
  };
}
/// cache_read and cache_write: (block, buffer, scope), binding the new block.
Primitive cache(std::string (*fn)(ScheduleState &, const std::string &, const Buffer &, MemScope)) {
  return [fn](CallContext &c, ScheduleState &s) {
    c.arity(3);
    std::string block = c.block(c.arg(0));
    c.bind({fn(s, block, c.buffer(c.arg(1)), c.scope(c.arg(2)))});
  };
}

const std::vector<std::pair<std::string, Primitive>> &primitives() {
  static const std::vector<std::pair<std::string, Primitive>> table = {
      {"loops",
       [](CallContext &c, ScheduleState &s) {
         c.arity(1);
         c.bind(loopsToHandles(schedule::getLoops(s, c.block(c.arg(0)))));
       }},
      {"split",
       [](CallContext &c, ScheduleState &s) {
         c.arity(2);
         c.bind(loopsToHandles(schedule::split(s, c.loop(c.arg(0)), c.factors(c.arg(1)))));
       }},
      {"fuse", [](CallContext &c, ScheduleState &s) { c.bind({schedule::fuse(s, c.loops(0))}); }},
      {"reorder",
       [](CallContext &c, ScheduleState &s) {
         schedule::reorder(s, c.loops(0));
         c.bind({});
       }},
      {"tile",
       [](CallContext &c, ScheduleState &s) {
         c.arity(3);
         std::vector<std::optional<int64_t>> f = c.factors(c.arg(2));
         if (f.size() != 2 || !f[0] || !f[1])
           throw ArgError{c.arg(2).loc, "'tile' expects two integer factors, e.g. [32, 32]"};
         c.bind(
             loopsToHandles(schedule::tile(s, c.loop(c.arg(0)), c.loop(c.arg(1)), *f[0], *f[1])));
       }},
      {"parallel", onLoop(schedule::parallel)},
      {"vectorize", onLoop(schedule::vectorize)},
      {"unroll", onLoop(schedule::unroll)},
      {"bind",
       [](CallContext &c, ScheduleState &s) {
         c.arity(2);
         schedule::bind(s, c.loop(c.arg(0)), c.string(c.arg(1)));
         c.bind({});
       }},
      {"compute_at", onBlockAtLoop(schedule::computeAt)},
      {"reverse_compute_at", onBlockAtLoop(schedule::reverseComputeAt)},
      {"compute_inline", onBlock(schedule::computeInline)},
      {"reverse_compute_inline", onBlock(schedule::reverseComputeInline)},
      {"cache_read", cache(schedule::cacheRead)},
      {"cache_write", cache(schedule::cacheWrite)},
      {"decompose_reduction",
       [](CallContext &c, ScheduleState &s) {
         c.arity(2);
         c.bind({schedule::decomposeReduction(s, c.block(c.arg(0)), c.loop(c.arg(1)))});
       }},
      {"rfactor",
       [](CallContext &c, ScheduleState &s) {
         c.arity(2);
         c.bind({schedule::rfactor(s, c.loop(c.arg(0)), c.integer(c.arg(1)))});
       }},
      {"set_scope",
       [](CallContext &c, ScheduleState &s) {
         c.arity(3);
         schedule::setScope(s, c.block(c.arg(0)), c.buffer(c.arg(1)), c.scope(c.arg(2)));
         c.bind({});
       }},
      {"storage_align",
       [](CallContext &c, ScheduleState &s) {
         c.arity(5);
         schedule::storageAlign(s, c.block(c.arg(0)), c.buffer(c.arg(1)), c.integer(c.arg(2)),
                                c.integer(c.arg(3)), c.integer(c.arg(4)));
         c.bind({});
       }},
      {"transform_layout",
       [](CallContext &c, ScheduleState &s) {
         c.arity(3);
         const ScheduleArg &map = c.arg(2);
         if (map.kind != ScheduleArg::Kind::Lambda)
           throw ArgError{
               map.loc,
               "'transform_layout' expects a layout map, e.g. (i, j) => (i / 16, j, i % 16)"};
         // Integers the script bound (sample_* results) take their values now.
         std::unordered_map<Var, Expr> ints;
         for (const Var &v : map.lambdaInts) {
           ScheduleArg name;
           name.kind = ScheduleArg::Kind::Name;
           name.name = v->name;
           name.loc = map.loc;
           ints.emplace(v, IntImm::make(DType::i64(), c.integer(name), map.loc));
         }
         std::vector<Expr> results;
         for (const Expr &e : map.lambdaResults)
           results.push_back(ints.empty() ? e : substitute(e, ints));
         schedule::transformLayout(s, c.block(c.arg(0)), c.buffer(c.arg(1)), map.lambdaParams,
                                   results);
         c.bind({});
       }},
      {"blockize",
       [](CallContext &c, ScheduleState &s) {
         c.arity(1);
         c.bind({schedule::blockize(s, c.loop(c.arg(0)))});
       }},
      {"tensorize",
       [](CallContext &c, ScheduleState &s) {
         c.arity(2);
         schedule::tensorize(s, c.loop(c.arg(0)), c.string(c.arg(1)));
         c.bind({});
       }},
      {"sample_perfect_tile",
       [](CallContext &c, ScheduleState &s) {
         size_t nargs = c.call().args.size();
         if (nargs != 2 && nargs != 3)
           throw ArgError{c.call().loc, "'sample_perfect_tile' takes 2 or 3 arguments (loop, n[, "
                                        "max_innermost]), got " +
                                            std::to_string(nargs)};
         Var v = c.loop(c.arg(0));
         const For *loop = s.loop(v);
         auto *extent = loop->extent.as<IntImm>();
         if (!extent)
           throw ArgError{c.arg(0).loc, "'sample_perfect_tile' needs a loop of constant extent; '" +
                                            v->name + "' has extent " + toString(loop->extent)};
         schedule::SampleSite site;
         site.kind = schedule::SampleSite::Kind::PerfectTile;
         site.extent = extent->value;
         site.n = c.integer(c.arg(1));
         if (site.n < 1)
           throw ArgError{c.arg(1).loc, "'sample_perfect_tile' needs n >= 1 factors, got " +
                                            std::to_string(site.n)};
         if (site.n > 16)
           throw ArgError{c.arg(1).loc, "'sample_perfect_tile' takes at most 16 factors, got " +
                                            std::to_string(site.n)};
         if (nargs == 3) {
           site.maxInnermost = c.integer(c.arg(2));
           if (site.maxInnermost < 1)
             throw ArgError{c.arg(2).loc, "max_innermost must be at least 1, got " +
                                              std::to_string(site.maxInnermost)};
           if (site.n == 1 && site.extent > site.maxInnermost)
             throw ArgError{c.arg(2).loc, "one factor must be the extent " +
                                              std::to_string(site.extent) + " of '" + v->name +
                                              "', which exceeds max_innermost " +
                                              std::to_string(site.maxInnermost)};
         }
         if (site.extent < 1)
           throw ArgError{c.arg(0).loc, "'sample_perfect_tile' needs a loop of extent >= 1; '" +
                                            v->name + "' has extent " +
                                            std::to_string(site.extent)};
         schedule::Decision d = c.sampling().decide(site);
         c.bind(std::vector<Handle>(d.begin(), d.end()));
       }},
      {"sample_categorical",
       [](CallContext &c, ScheduleState &) {
         c.arity(2);
         const ScheduleArg &vs = c.arg(0), &ps = c.arg(1);
         if (vs.kind != ScheduleArg::Kind::List)
           throw ArgError{vs.loc, "'sample_categorical' expects a list of integer values, e.g. "
                                  "[1, 2, 4]"};
         if (ps.kind != ScheduleArg::Kind::List)
           throw ArgError{ps.loc, "'sample_categorical' expects a list of probabilities, e.g. "
                                  "[0.5, 0.25, 0.25]"};
         if (vs.items.empty())
           throw ArgError{vs.loc, "'sample_categorical' needs at least one value"};
         if (vs.items.size() != ps.items.size())
           throw ArgError{ps.loc, "'sample_categorical' has " + std::to_string(vs.items.size()) +
                                      " value" + (vs.items.size() == 1 ? "" : "s") + " but " +
                                      std::to_string(ps.items.size()) + " probabilit" +
                                      (ps.items.size() == 1 ? "y" : "ies")};
         schedule::SampleSite site;
         site.kind = schedule::SampleSite::Kind::Categorical;
         double sum = 0;
         for (size_t i = 0; i < vs.items.size(); ++i) {
           site.values.push_back(c.integer(vs.items[i]));
           const ScheduleArg &p = ps.items[i];
           double prob;
           if (p.kind == ScheduleArg::Kind::Float)
             prob = p.real;
           else if (p.kind == ScheduleArg::Kind::Int)
             prob = double(p.value);
           else
             throw ArgError{p.loc, "a probability must be a number"};
           if (!(prob >= 0) || !(prob <= 1))
             throw ArgError{p.loc, "a probability must be between 0 and 1"};
           site.probs.push_back(prob);
           sum += prob;
         }
         if (std::fabs(sum - 1.0) > 1e-6) {
           std::ostringstream os;
           os << sum;
           throw ArgError{ps.loc, "the probabilities of 'sample_categorical' sum to " + os.str() +
                                      ", not 1"};
         }
         schedule::Decision d = c.sampling().decide(site);
         c.bind({Handle(d[0])});
       }},
  };
  return table;
}

/// `a` with each name of `constants` replaced by its value (recursively in lists).
ScheduleArg resolveConstants(const ScheduleArg &a,
                             const std::map<std::string, int64_t> &constants) {
  ScheduleArg out = a;
  if (a.kind == ScheduleArg::Kind::Name)
    if (auto it = constants.find(a.name); it != constants.end()) {
      out.kind = ScheduleArg::Kind::Int;
      out.value = it->second;
      out.name.clear();
    }
  for (ScheduleArg &item : out.items)
    item = resolveConstants(item, constants);
  return out;
}

/// The script with its per-instance parameters (ScheduleScript::constants) replaced by their
/// values: what runs, and what a tuning trace records and prints.
ScheduleScript withConstants(const ScheduleScript &script) {
  ScheduleScript out = script;
  if (script.constants.empty())
    return out;
  for (ScheduleCall &call : out.calls)
    for (ScheduleArg &a : call.args)
      a = resolveConstants(a, script.constants);
  out.constants.clear();
  return out;
}

} // namespace

const std::vector<std::string> &schedulePrimitiveNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto &[name, fn] : primitives())
      out.push_back(name);
    return out;
  }();
  return names;
}

bool applySchedules(Module &module, const std::vector<ScheduleScript> &scripts,
                    const std::string &target, DiagnosticEngine &diags,
                    const ScheduleStepCallback &onStep, schedule::SampleContext *sampling) {
  bool ok = true;
  for (const ScheduleScript &given : scripts) {
    const ScheduleScript script = withConstants(given);
    Func f = module.lookup(script.func);
    if (!f.defined() || !f.as<PrimFunc>())
      continue; // reported by name resolution
    ScheduleState state(f, target);
    state.setModule(&module);
    std::map<std::string, Handle> handles;
    Sampling samples;
    samples.context = sampling;
    samples.func = script.func;
    bool samplesAny = false;
    for (const ScheduleCall &call : script.calls)
      samplesAny |= call.primitive.rfind("sample_", 0) == 0;
    if (sampling && samplesAny) {
      if (sampling->lookup)
        samples.recorded = sampling->lookup(f);
      schedule::SampleTrace &trace = sampling->traces[script.func];
      trace = schedule::SampleTrace();
      trace.script = script;
      trace.fromRecord = samples.recorded.has_value();
      trace.generated = samples.recorded ? samples.recorded->generated : -1;
      samples.trace = &trace;
    }
    bool scriptOk = true;
    for (const ScheduleCall &call : script.calls) {
      const Primitive *prim = nullptr;
      for (auto &[name, fn] : primitives())
        if (name == call.primitive)
          prim = &fn;
      if (!prim) {
        diags.error(SourceRange(call.loc), "unknown schedule primitive '" + call.primitive + "'");
        scriptOk = false;
        break;
      }
      try {
        CallContext c(call, state, handles, samples);
        (*prim)(c, state);
      } catch (const ScheduleError &e) {
        Diagnostic &d = diags.error(SourceRange(call.loc),
                                    "cannot apply '" + call.primitive + "': " + e.what());
        if (e.noteAt.valid() && !e.note.empty())
          d.note(SourceRange(e.noteAt), e.note);
        scriptOk = false;
        break;
      } catch (const ArgError &e) {
        diags.error(SourceRange(e.at.valid() ? e.at : call.loc), e.message);
        scriptOk = false;
        break;
      }
      if (onStep)
        onStep("schedule." + call.primitive, state.func());
    }
    if (!scriptOk) {
      ok = false;
      continue;
    }
    module.replace(state.func());
  }
  return ok;
}

} // namespace tdsl

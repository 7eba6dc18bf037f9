//===- frontend/SemaGraph.cpp -----------------------------------------------------------------===//
//
// Checks externs and graphs (spec §8): call arity, dtypes, shape unification
// across calls, purity inside `dataflow`, `output`/`return` defined; builds GraphFunc IR.

#include "frontend/SemaInternal.h"

#include "ir/Arith.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/Utils.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace tdsl::sema {

using namespace ir;

namespace {

/// Replaces variables by expressions and folds integer constants, so that shapes of a callee
/// instantiated with a call's arguments can be compared. Folding is exact (evalConstant): a
/// division by zero or an i64 overflow is left unfolded and recorded in `problem`.
class FoldingSubstituter : public IRMutator {
public:
  explicit FoldingSubstituter(const std::map<const VarNode *, Expr> &map) : map_(map) {}
  std::string problem; // "divides by zero" or "overflows i64", for the first one met

protected:
  Expr visit(const VarRef *op) override {
    auto it = map_.find(op->var.get());
    return it == map_.end() ? Expr(op) : it->second;
  }
#define TDSL_FOLD(NODE)                                                                            \
  Expr visit(const NODE *op) override { return fold(IRMutator::visit(op)); }
  TDSL_FOLD(Add)
  TDSL_FOLD(Sub)
  TDSL_FOLD(Mul)
  TDSL_FOLD(Div)
  TDSL_FOLD(Mod)
  TDSL_FOLD(Min)
  TDSL_FOLD(Max)
  TDSL_FOLD(Neg)
#undef TDSL_FOLD

private:
  Expr fold(const Expr &e) {
    if (!e.dtype().isInteger())
      return e;
    ConstResult r = evalConstant(e);
    if (r.kind == ConstResult::Value)
      return IntImm::make(e.dtype(), r.value, e->loc);
    if (r.kind != ConstResult::NotConstant && problem.empty())
      problem = r.kind == ConstResult::DivByZero ? "divides by zero" : "overflows i64";
    return e;
  }
  const std::map<const VarNode *, Expr> &map_;
};

Expr substituteAndFold(const Expr &e, const std::map<const VarNode *, Expr> &map,
                       std::string *problem = nullptr) {
  FoldingSubstituter s(map);
  Expr out = s.mutate(e);
  if (problem && problem->empty())
    *problem = s.problem;
  return out;
}

bool sameDim(const Expr &a, const Expr &b) {
  auto ca = asConstInt(a), cb = asConstInt(b);
  if (ca && cb)
    return *ca == *cb;
  return toString(a) == toString(b);
}

/// The product of a shape, as written: `B * 784` (the shapes have been checked: constant
/// products fit in i64).
std::string elementCount(const std::vector<Expr> &shape) {
  int64_t n = 1;
  std::string symbolic;
  for (const Expr &d : shape) {
    if (auto c = asConstInt(d))
      n = checkedMul(n, *c).value_or(0);
    else
      symbolic += (symbolic.empty() ? "" : " * ") + toString(d);
  }
  if (symbolic.empty())
    return std::to_string(n);
  return n == 1 ? symbolic : symbolic + " * " + std::to_string(n);
}

/// A polynomial over the shape variables with integer coefficients: a monomial (the sorted
/// names of its factors) to its coefficient. A dimension that is not a sum, difference or
/// product (`H / 2`, `min(…)`) is one opaque factor, named by its printed form.
using Monomial = std::vector<std::string>;
using Poly = std::map<Monomial, int64_t>;

std::optional<Poly> polyAdd(const Poly &a, const Poly &b, int64_t sign) {
  Poly out = a;
  for (const auto &[m, c] : b) {
    std::optional<int64_t> term = checkedMul(c, sign);
    std::optional<int64_t> sum = term ? checkedAdd(out[m], *term) : std::nullopt;
    if (!sum)
      return std::nullopt;
    if (*sum == 0)
      out.erase(m);
    else
      out[m] = *sum;
  }
  return out;
}

/// At most this many terms: a product of sums grows as the product of their sizes, and a
/// dimension list written to blow it up must not hang the checker (nullopt: not proven equal).
constexpr size_t kMaxTerms = 4096;

std::optional<Poly> polyMul(const Poly &a, const Poly &b) {
  if (a.size() * b.size() > kMaxTerms)
    return std::nullopt;
  Poly out;
  for (const auto &[ma, ca] : a)
    for (const auto &[mb, cb] : b) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      std::optional<int64_t> c = checkedMul(ca, cb);
      std::optional<int64_t> sum = c ? checkedAdd(out[m], *c) : std::nullopt;
      if (!sum)
        return std::nullopt;
      out[m] = *sum;
    }
  std::erase_if(out, [](const auto &term) { return term.second == 0; });
  return out;
}

/// `e` as a polynomial; nullopt when a coefficient overflows i64.
std::optional<Poly> polyOf(const Expr &e) {
  if (auto c = asConstInt(e))
    return *c == 0 ? Poly{} : Poly{{Monomial{}, *c}};
  if (auto *v = e.as<VarRef>())
    return Poly{{Monomial{v->var.name()}, 1}};
  if (auto *n = e.as<Neg>()) {
    std::optional<Poly> a = polyOf(n->a);
    return a ? polyAdd(Poly{}, *a, -1) : std::nullopt;
  }
  auto both = [&](const Expr &x, const Expr &y) -> std::optional<std::pair<Poly, Poly>> {
    std::optional<Poly> a = polyOf(x), b = polyOf(y);
    if (!a || !b)
      return std::nullopt;
    return std::make_pair(std::move(*a), std::move(*b));
  };
  if (auto *x = e.as<Add>()) {
    auto ab = both(x->a, x->b);
    return ab ? polyAdd(ab->first, ab->second, 1) : std::nullopt;
  }
  if (auto *x = e.as<Sub>()) {
    auto ab = both(x->a, x->b);
    return ab ? polyAdd(ab->first, ab->second, -1) : std::nullopt;
  }
  if (auto *x = e.as<Mul>()) {
    auto ab = both(x->a, x->b);
    return ab ? polyMul(ab->first, ab->second) : std::nullopt;
  }
  // `/`, `%`, min and max of constants (`8 / 2`) are constants.
  auto constant = [](const Poly &p) -> std::optional<int64_t> {
    if (p.empty())
      return 0;
    if (p.size() == 1 && p.begin()->first.empty())
      return p.begin()->second;
    return std::nullopt;
  };
  auto folded = [&](const Expr &x, const Expr &y, auto op) -> std::optional<Poly> {
    auto ab = both(x, y);
    std::optional<int64_t> a = ab ? constant(ab->first) : std::nullopt;
    std::optional<int64_t> b = ab ? constant(ab->second) : std::nullopt;
    if (!a || !b)
      return std::nullopt;
    std::optional<int64_t> v = op(*a, *b);
    if (!v)
      return std::nullopt;
    return *v == 0 ? Poly{} : Poly{{Monomial{}, *v}};
  };
  std::optional<Poly> c;
  if (auto *x = e.as<Div>())
    c = folded(x->a, x->b, [](int64_t a, int64_t b) {
      return b == 0 || (a == INT64_MIN && b == -1) ? std::nullopt
                                                   : std::optional<int64_t>(floorDiv(a, b));
    });
  else if (auto *x = e.as<Mod>())
    c = folded(x->a, x->b, [](int64_t a, int64_t b) {
      return b == 0 || b == -1 ? std::nullopt : std::optional<int64_t>(floorMod(a, b));
    });
  else if (auto *x = e.as<Min>())
    c = folded(x->a, x->b,
               [](int64_t a, int64_t b) { return std::optional<int64_t>(std::min(a, b)); });
  else if (auto *x = e.as<Max>())
    c = folded(x->a, x->b,
               [](int64_t a, int64_t b) { return std::optional<int64_t>(std::max(a, b)); });
  if (c)
    return c;
  return Poly{{Monomial{"(" + toString(e) + ")"}, 1}};
}

/// The element count of `shape` as a polynomial; nullopt on overflow.
std::optional<Poly> elementPoly(const std::vector<Expr> &shape) {
  Poly n{{Monomial{}, 1}};
  for (const Expr &d : shape) {
    std::optional<Poly> pd = polyOf(d);
    std::optional<Poly> p = pd ? polyMul(n, *pd) : std::nullopt;
    if (!p)
      return std::nullopt;
    n = std::move(*p);
  }
  return n;
}

/// True when two shapes have the same element count for every value of their shape variables:
/// their element counts are the same polynomial (`[B, 6]` and `[B * 2, 3]`, not `[B * 1, 3]`).
bool sameElementCount(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  std::optional<Poly> pa = elementPoly(a), pb = elementPoly(b);
  return pa && pb && *pa == *pb;
}

/// True when every dimension of `shape` is a constant.
bool isConstantShape(const std::vector<Expr> &shape) {
  return std::all_of(shape.begin(), shape.end(),
                     [](const Expr &d) { return asConstInt(d).has_value(); });
}

std::string typeString(DType t, const std::vector<Expr> &shape) {
  std::string s = t.name() + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + toString(shape[i]);
  return s + "]";
}

struct Value {
  Buffer buffer; // a tensor value
  Var scalar;    // a scalar input
  SourceRange range;
  bool dataflowLocal = false;
};

class GraphBuilder {
public:
  GraphBuilder(const ast::GraphDecl &g, std::string name, const FuncTable &funcs,
               DiagnosticEngine &diags, const ConstTable *constants)
      : g_(g), name_(std::move(name)), funcs_(funcs), diags_(diags) {
    // Graph constants are values of every graph of their module; a parameter or a bound value
    // of the same name hides one from its definition on.
    if (constants)
      for (const auto &[name, c] : *constants)
        constants_[name] = Value{c.buffer, Var(), c.range, false};
  }

  Func build() {
    SignatureChecker checker{scopes_, diags_};
    CheckedSignature sig;
    bool ok = checker.signature(g_.generics, g_.inputs, {}, sig);
    for (const ast::Param &p : g_.inputs) {
      const Symbol *s = scopes_.lookup(p.name.name);
      if (!s)
        continue;
      values_[p.name.name] = Value{s->buffer, s->var, p.name.range, false};
    }
    for (const ast::Type &t : g_.results) {
      std::optional<DType> dt = checker.dtype(t.dtype);
      std::vector<Var> noVars;
      std::optional<std::vector<Expr>> dims =
          t.isTensor ? checker.shape(t, false, noVars)
                     : std::optional<std::vector<Expr>>(std::vector<Expr>{});
      if (!t.isTensor) {
        diags_.error(t.range, "graph results must be tensors");
        ok = false;
      }
      if (!dt || !dims) {
        ok = false;
        continue;
      }
      resultTypes_.push_back({*dt, *dims});
    }
    if (!ok)
      return {};
    std::vector<GraphItem> body;
    bool returned = false;
    for (const ast::GraphStmtPtr &s : g_.body) {
      if (returned) {
        diags_.error(s->range, "statement after 'return'");
        failed_ = true;
        break;
      }
      if (auto *df = s->as<ast::DataflowStmt>()) {
        body.push_back(dataflow(*df));
      } else if (auto *r = s->as<ast::ReturnStmt>()) {
        returnStmt(*r);
        returned = true;
      } else if (auto *o = s->as<ast::OutputStmt>()) {
        diags_.error(o->range, "'output' is only allowed inside a dataflow block");
        failed_ = true;
      } else if (auto b = binding(*s, /*inDataflow=*/false)) {
        std::visit([&](auto &&x) { body.push_back(x); }, *b);
      }
    }
    if (!returned) {
      SourceLoc brace = g_.range.end; // one past the closing '}'
      if (brace.col > 1)
        --brace.col;
      diags_.error(SourceRange(brace), "graph '" + g_.name.name + "' does not return a value")
          .note(g_.name.range, "graph declared here");
      failed_ = true;
    }
    if (failed_)
      return {};
    return GraphFunc::make(name_, sig.consts, sig.inputs, sig.shapeVars, body, results_, locOf(g_));
  }

private:
  DataflowBlock dataflow(const ast::DataflowStmt &df) {
    DataflowBlock block;
    block.loc = locOf(df);
    std::vector<std::string> locals;
    std::set<std::string> exported;
    for (const ast::GraphStmtPtr &s : df.body) {
      if (auto *o = s->as<ast::OutputStmt>()) {
        for (const ast::Ident &id : o->names) {
          auto it = values_.find(id.name);
          if (it == values_.end() && invalid_.count(id.name))
            continue;
          if (it == values_.end() && constants_.count(id.name)) {
            diags_.error(id.range, "'output' of graph constant '" + id.name +
                                       "'; constants are visible everywhere without it");
            failed_ = true;
            continue;
          }
          if (it == values_.end() || !it->second.dataflowLocal) {
            diags_.error(id.range, it == values_.end()
                                       ? "'output' of undefined value '" + id.name + "'"
                                       : "'output' of '" + id.name +
                                             "', which is not defined in this dataflow block");
            failed_ = true;
            continue;
          }
          exported.insert(id.name);
          block.outputs.push_back(it->second.buffer);
        }
        continue;
      }
      if (s->kind == ast::GraphStmtKind::Dataflow || s->kind == ast::GraphStmtKind::Return) {
        diags_.error(s->range, s->kind == ast::GraphStmtKind::Return
                                   ? "'return' inside a dataflow block"
                                   : "nested dataflow block");
        failed_ = true;
        continue;
      }
      size_t before = values_.size();
      std::vector<std::string> names = boundNames(*s);
      if (auto b = binding(*s, /*inDataflow=*/true)) {
        std::visit([&](auto &&x) { block.bindings.push_back(x); }, *b);
        for (const std::string &n : names)
          if (values_.count(n)) {
            values_[n].dataflowLocal = true;
            locals.push_back(n);
          }
      }
      (void)before;
    }
    // Names not exported go out of scope; a later use gets a pointed error.
    for (const std::string &n : locals) {
      if (exported.count(n)) {
        values_[n].dataflowLocal = false;
        continue;
      }
      hidden_[n] = values_[n].range;
      values_.erase(n);
    }
    return block;
  }

  static std::vector<std::string> boundNames(const ast::GraphStmt &s) {
    std::vector<std::string> out;
    if (auto *b = s.as<ast::BindStmt>())
      for (const ast::Ident &t : b->targets)
        out.push_back(t.name);
    if (auto *r = s.as<ast::ReshapeStmt>())
      out.push_back(r->target.name);
    return out;
  }

  /// The value `id` names; an error if there is none, unless its definition had errors.
  const Value *use(const ast::Ident &id) {
    auto it = values_.find(id.name);
    if (it != values_.end())
      return &it->second;
    if (auto c = constants_.find(id.name); c != constants_.end())
      return &c->second;
    failed_ = true;
    if (invalid_.count(id.name))
      return nullptr;
    auto h = hidden_.find(id.name);
    if (h != hidden_.end())
      diags_
          .error(id.range, "'" + id.name +
                               "' is local to a dataflow block; export it with 'output " + id.name +
                               ";'")
          .note(h->second, "defined here");
    else
      diags_.error(id.range, "use of undefined value '" + id.name + "'");
    return nullptr;
  }

  bool define(const ast::Ident &id, Value v) {
    if (values_.count(id.name) || scopes_.lookup(id.name)) {
      SourceRange prev =
          values_.count(id.name) ? values_[id.name].range : scopes_.lookup(id.name)->range;
      diags_.error(id.range, "redefinition of '" + id.name + "'")
          .note(prev, "previous definition is here");
      failed_ = true;
      return false;
    }
    v.range = id.range;
    values_[id.name] = v;
    return true;
  }

  std::optional<GraphBinding> binding(const ast::GraphStmt &s, bool inDataflow) {
    if (auto *r = s.as<ast::ReshapeStmt>()) {
      std::optional<GraphBinding> b = reshape(*r);
      if (!b)
        invalid_.insert(r->target.name);
      return b;
    }
    const ast::CallValue *cv = nullptr;
    const std::vector<ast::Ident> *targets = nullptr;
    static const std::vector<ast::Ident> kNone;
    if (auto *b = s.as<ast::BindStmt>()) {
      cv = &b->call;
      targets = &b->targets;
    } else if (auto *c = s.as<ast::CallStmt>()) {
      cv = &c->call;
      targets = &kNone;
    } else {
      return std::nullopt;
    }
    std::optional<CallBinding> call = callBinding(*cv, *targets, inDataflow, s);
    if (!call) {
      failed_ = true;
      for (const ast::Ident &t : *targets)
        invalid_.insert(t.name);
      return std::nullopt;
    }
    return GraphBinding(*call);
  }

  std::optional<CallBinding> callBinding(const ast::CallValue &cv,
                                         const std::vector<ast::Ident> &targets, bool inDataflow,
                                         const ast::GraphStmt &stmt) {
    if (!cv.resolved)
      return std::nullopt; // reported by name resolution
    auto fit = funcs_.find(cv.resolved);
    if (fit == funcs_.end())
      return std::nullopt;     // the callee itself had errors
    Func callee = fit->second; // a func, an extern, or a graph (graphOrder refused cycles)
    const std::vector<FuncParam> &params = calleeInputs(callee);
    const std::vector<Buffer> &outs = calleeOutputs(callee);
    std::string cname = "'" + cv.callee.str() + "'";
    // Purity (spec §8): inside dataflow only funcs and pure externs.
    if (auto *ext = callee.as<ExternFunc>(); ext && !ext->pure && inDataflow) {
      diags_
          .error(cv.callee.range, "call of impure extern " + cname +
                                      " inside a dataflow block; only pure calls are allowed there")
          .note(cv.resolved->range, "declared without 'pure' here");
      return std::nullopt;
    }
    // A graph callee is pure when its own calls are (spec §8).
    if (const ast::Item *impure = impureCallIn(callee); impure && inDataflow) {
      diags_
          .error(cv.callee.range, "call of graph " + cname + " inside a dataflow block; it calls " +
                                      "impure extern '" + ast::declaredName(*impure) +
                                      "', and only pure calls are allowed there")
          .note(cv.resolved->range, "graph declared here");
      return std::nullopt;
    }
    if (targets.size() != outs.size()) {
      if (targets.empty())
        diags_.error(stmt.range, "result of " + cname + " is discarded; bind it: v = call ...");
      else
        diags_.error(stmt.range, cname + " returns " + std::to_string(outs.size()) + " value" +
                                     (outs.size() == 1 ? "" : "s") + " but " +
                                     std::to_string(targets.size()) +
                                     (targets.size() == 1 ? " name is" : " names are") + " bound");
      return std::nullopt;
    }
    std::map<const VarNode *, Expr> subst;
    std::map<const VarNode *, Origin> origins;
    // Generic constants.
    const std::vector<Var> *constVars = nullptr;
    if (auto *p = callee.as<PrimFunc>())
      constVars = &p->constVars;
    if (auto *gf = callee.as<GraphFunc>())
      constVars = &gf->constVars;
    size_t nConsts = constVars ? constVars->size() : 0;
    if (cv.constArgs.size() != nConsts) {
      diags_.error(cv.callee.range, cname + " takes " + std::to_string(nConsts) +
                                        " constant argument" + (nConsts == 1 ? "" : "s") +
                                        ", got " + std::to_string(cv.constArgs.size()));
      return std::nullopt;
    }
    CallBinding out;
    out.callee = callee.name();
    out.loc = locOf(stmt);
    out.annotated = cv.declaredType.has_value();
    for (size_t i = 0; i < nConsts; ++i) {
      ExprChecker ec{scopes_, diags_};
      Expr c = ec.check(*cv.constArgs[i], DType::i64());
      if (!c.defined())
        return std::nullopt;
      std::string problem;
      c = substituteAndFold(c, {}, &problem); // folds `2 * 1` to 2, so that shapes compare
      if (!problem.empty()) {
        diags_.error(cv.constArgs[i]->range,
                     "constant argument " + std::to_string(i + 1) + " of " + cname + " " + problem);
        return std::nullopt;
      }
      subst[(*constVars)[i].get()] = c;
      out.constArgs.push_back(c);
    }
    if (cv.args.size() != params.size()) {
      diags_
          .error(cv.range, cname + " takes " + std::to_string(params.size()) + " argument" +
                               (params.size() == 1 ? "" : "s") + ", got " +
                               std::to_string(cv.args.size()))
          .note(cv.resolved->range, "declared here");
      return std::nullopt;
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const ast::Expr &arg = *cv.args[i];
      const FuncParam &p = params[i];
      if (!p.isTensor()) {
        // A tensor value where the callee takes a scalar (`nn.leaky_relu(x, x)`).
        if (auto *n = arg.as<ast::NameExpr>()) {
          const Symbol *sym = scopes_.lookup(n->name);
          if (sym && sym->kind == SymbolKind::Buffer) {
            diags_.error(arg.range, "argument " + std::to_string(i + 1) + " of " + cname + " ('" +
                                        p.name() + "') is a scalar " + p.scalar.dtype().name() +
                                        ", but '" + n->name + "' is a tensor " +
                                        typeString(sym->buffer.dtype(), sym->buffer.shape()));
            return std::nullopt;
          }
        }
        ExprChecker ec{scopes_, diags_};
        Expr v = ec.check(arg, p.scalar.dtype());
        if (!v.defined())
          return std::nullopt;
        if (v.dtype() != p.scalar.dtype()) {
          diags_.error(arg.range, "argument " + std::to_string(i + 1) + " of " + cname + " ('" +
                                      p.name() + "') is " + p.scalar.dtype().name() + ", got " +
                                      v.dtype().name());
          return std::nullopt;
        }
        out.args.push_back(v);
        continue;
      }
      auto *n = arg.as<ast::NameExpr>();
      if (!n) {
        diags_.error(arg.range, "argument " + std::to_string(i + 1) + " of " + cname + " ('" +
                                    p.name() + "') must name a tensor value");
        return std::nullopt;
      }
      ast::Ident id;
      id.name = n->name;
      id.range = n->range;
      const Value *v = use(id);
      if (!v)
        return std::nullopt;
      if (!v->buffer.defined()) {
        diags_.error(arg.range, "argument " + std::to_string(i + 1) + " of " + cname + " ('" +
                                    p.name() + "') must be a tensor, but '" + n->name +
                                    "' is a scalar");
        return std::nullopt;
      }
      if (!unifyTensor(v->buffer, p.buffer, subst, origins, arg, cname))
        return std::nullopt;
      out.args.push_back(v->buffer);
    }
    // Outputs: the callee's output types under the substitution.
    for (size_t i = 0; i < outs.size(); ++i) {
      std::vector<Expr> shape;
      for (const Expr &d : outs[i].shape()) {
        // The callee's output shape under this call's constants and shapes (spec §4: a
        // dimension that divides by zero or is negative is an error, here at the call).
        std::string problem;
        shape.push_back(substituteAndFold(d, subst, &problem));
        auto c = asConstInt(shape.back());
        if (problem.empty() && c && *c < 0)
          problem = "is negative (" + std::to_string(*c) + ")";
        if (!problem.empty()) {
          diags_
              .error(cv.callee.range, "in this call of " + cname + ", dimension " +
                                          std::to_string(shape.size() - 1) + " (" + toString(d) +
                                          ") of its output '" + outs[i].name() + "' " + problem)
              .note(SourceRange(outs[i]->loc), "'" + outs[i].name() + "' declared here");
          return std::nullopt;
        }
      }
      if (!checkElementCount(outs[i].dtype(), shape, cv.callee.range,
                             "in this call of " + cname + ", its output '" + outs[i].name() + "'",
                             diags_))
        return std::nullopt;
      if (i == 0 && cv.declaredType) {
        SignatureChecker sig{scopes_, diags_};
        std::optional<DType> dt = sig.dtype(cv.declaredType->dtype);
        std::vector<Var> noVars;
        std::optional<std::vector<Expr>> dims = sig.shape(*cv.declaredType, false, noVars);
        if (!dt || !dims)
          return std::nullopt;
        bool same = *dt == outs[i].dtype() && dims->size() == shape.size();
        for (size_t d = 0; same && d < shape.size(); ++d)
          same = sameDim((*dims)[d], shape[d]);
        if (!same) {
          diags_.error(cv.declaredType->range,
                       "declared type " + typeString(*dt, *dims) + " does not match " +
                           typeString(outs[i].dtype(), shape) + " returned by " + cname);
          return std::nullopt;
        }
      }
      Buffer b(targets[i].name, outs[i].dtype(), shape, BufferRole::Alloc, MemScope::Global, {},
               locOf(targets[i]));
      if (!define(targets[i], Value{b, Var(), targets[i].range, false}))
        return std::nullopt;
      out.targets.push_back(b);
    }
    return out;
  }

  /// The item of an impure extern that graph `callee` calls outside its dataflow blocks,
  /// directly or through the graphs it calls; null for a func, an extern or a pure graph.
  const ast::Item *impureCallIn(const Func &callee) const {
    auto *g = callee.as<GraphFunc>();
    if (!g)
      return nullptr;
    for (const GraphItem &item : g->body) {
      auto *c = std::get_if<CallBinding>(&item);
      if (!c)
        continue;
      for (const auto &[item, fn] : funcs_) {
        if (fn.name() != c->callee)
          continue;
        if (auto *e = fn.as<ExternFunc>(); e && !e->pure)
          return item;
        if (const ast::Item *inner = impureCallIn(fn))
          return inner;
      }
    }
    return nullptr;
  }

  /// Where a callee's shape variable got its value: the argument and the dimension.
  struct Origin {
    SourceRange at;
    std::string what;
  };

  /// Unifies an argument's type with a parameter's: binds the callee's shape variables on first
  /// sight, then checks every dimension against what is bound.
  bool unifyTensor(const Buffer &arg, const Buffer &param, std::map<const VarNode *, Expr> &subst,
                   std::map<const VarNode *, Origin> &origins, const ast::Expr &at,
                   const std::string &cname) {
    if (arg.dtype() != param.dtype() || arg.rank() != param.rank()) {
      diags_.error(at.range, "type mismatch for parameter '" + param.name() + "' of " + cname +
                                 ": expected " + typeString(param.dtype(), param.shape()) +
                                 ", got '" + arg.name() + "' of type " +
                                 typeString(arg.dtype(), arg.shape()));
      return false;
    }
    for (size_t d = 0; d < arg.rank(); ++d) {
      const Expr &pd = param.shape()[d];
      if (auto *ref = pd.as<VarRef>(); ref && !subst.count(ref->var.get())) {
        subst[ref->var.get()] = arg.shape()[d];
        origins[ref->var.get()] = {at.range,
                                   "dimension " + std::to_string(d) + " of '" + arg.name() + "'"};
        continue;
      }
      std::string problem;
      Expr want = substituteAndFold(pd, subst, &problem);
      if (!problem.empty()) {
        diags_
            .error(at.range, "in this call of " + cname + ", dimension " + std::to_string(d) +
                                 " (" + toString(pd) + ") of parameter '" + param.name() + "' " +
                                 problem)
            .note(SourceRange(param->loc), "'" + param.name() + "' declared here");
        return false;
      }
      if (sameDim(want, arg.shape()[d]))
        continue;
      std::string expected =
          toString(pd) == toString(want) ? toString(want) : toString(pd) + " = " + toString(want);
      Diagnostic &err =
          diags_.error(at.range, "shape mismatch for parameter '" + param.name() + "' of " + cname +
                                     ": dimension " + std::to_string(d) + " of '" + arg.name() +
                                     "' is " + toString(arg.shape()[d]) + ", expected " + expected);
      for (const Var &v : usedVars(pd))
        if (auto it = origins.find(v.get()); it != origins.end())
          err.note(it->second.at, "'" + v.name() + "' is " + toString(subst[v.get()]) + " from " +
                                      it->second.what);
      return false;
    }
    return true;
  }

  std::optional<GraphBinding> reshape(const ast::ReshapeStmt &r) {
    const Value *src = use(r.source);
    if (!src)
      return std::nullopt;
    if (!src->buffer.defined()) {
      diags_.error(r.source.range, "reshape of scalar '" + r.source.name + "'");
      failed_ = true;
      return std::nullopt;
    }
    std::vector<Expr> dims;
    for (const ast::ExprPtr &d : r.shape) {
      SignatureChecker sig{scopes_, diags_};
      Expr e = sig.dimension(*d, "dimension " + std::to_string(dims.size()) + " of the reshape");
      if (!e.defined()) {
        failed_ = true;
        return std::nullopt;
      }
      dims.push_back(e);
    }
    if (!checkElementCount(src->buffer.dtype(), dims, r.range, "the reshape", diags_)) {
      failed_ = true;
      return std::nullopt;
    }
    if (!sameElementCount(src->buffer.shape(), dims)) {
      bool constant = isConstantShape(src->buffer.shape()) && isConstantShape(dims);
      diags_.error(r.range, std::string("reshape changes the element count") +
                                (constant ? "" : " for some values of the shape variables") +
                                ": '" + r.source.name + "' of type " +
                                typeString(src->buffer.dtype(), src->buffer.shape()) + " has " +
                                elementCount(src->buffer.shape()) + " elements, the new shape " +
                                elementCount(dims));
      failed_ = true;
      return std::nullopt;
    }
    Buffer target(r.target.name, src->buffer.dtype(), dims, BufferRole::Alloc, MemScope::Global, {},
                  locOf(r.target));
    if (!define(r.target, Value{target, Var(), r.target.range, false}))
      return std::nullopt;
    return GraphBinding(ReshapeBinding{target, src->buffer, locOf(r)});
  }

  void returnStmt(const ast::ReturnStmt &r) {
    if (r.names.size() != resultTypes_.size()) {
      diags_.error(r.range, "graph '" + g_.name.name + "' returns " +
                                std::to_string(resultTypes_.size()) + " value" +
                                (resultTypes_.size() == 1 ? "" : "s") + ", but 'return' lists " +
                                std::to_string(r.names.size()));
      failed_ = true;
      return;
    }
    for (size_t i = 0; i < r.names.size(); ++i) {
      const Value *v = use(r.names[i]);
      if (!v)
        continue;
      if (!v->buffer.defined()) {
        diags_.error(r.names[i].range,
                     "graph results must be tensors; '" + r.names[i].name + "' is a scalar");
        failed_ = true;
        continue;
      }
      auto &[dt, shape] = resultTypes_[i];
      bool same = dt == v->buffer.dtype() && shape.size() == v->buffer.rank();
      for (size_t d = 0; same && d < shape.size(); ++d)
        same = sameDim(shape[d], v->buffer.shape()[d]);
      if (!same) {
        diags_
            .error(r.names[i].range, "returned '" + r.names[i].name + "' has type " +
                                         typeString(v->buffer.dtype(), v->buffer.shape()) +
                                         " but the graph declares " + typeString(dt, shape))
            .note(g_.results[i].range, "result type declared here");
        failed_ = true;
        continue;
      }
      results_.push_back(v->buffer);
    }
  }

  const ast::GraphDecl &g_;
  std::string name_;
  const FuncTable &funcs_;
  DiagnosticEngine &diags_;
  Scopes scopes_;
  std::map<std::string, Value> values_;
  std::map<std::string, Value> constants_; // the module's graph constants
  std::map<std::string, SourceRange> hidden_;
  std::set<std::string> invalid_; // names whose definition had errors
  std::vector<std::pair<DType, std::vector<Expr>>> resultTypes_;
  std::vector<Buffer> results_;
  bool failed_ = false;
};

} // namespace

Func buildExtern(const ast::ExternDecl &e, const std::string &name, DiagnosticEngine &diags) {
  Scopes scopes;
  CheckedSignature sig;
  if (!SignatureChecker{scopes, diags}.signature({}, e.inputs, e.outputs, sig))
    return {};
  // The symbol is called from C and C++ (spec §8, §10): it must be an identifier there.
  bool identifier = !e.symbol.empty() && !std::isdigit(static_cast<unsigned char>(e.symbol[0]));
  for (char ch : e.symbol)
    identifier &= (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') &&
                  static_cast<unsigned char>(ch) < 0x80;
  if (!identifier && !e.symbol.empty()) {
    std::string shown;
    for (char ch : e.symbol) {
      unsigned char u = static_cast<unsigned char>(ch);
      if (ch == '"' || ch == '\\')
        shown += std::string("\\") + ch;
      else if (ch == '\n')
        shown += "\\n";
      else if (u < 0x20 || u >= 0x7f)
        shown += "\\x" + std::string(1, "0123456789abcdef"[u >> 4]) + "0123456789abcdef"[u & 15];
      else
        shown += ch;
    }
    diags.error(e.symbolRange, "extern symbol \"" + shown +
                                   "\" is not a C identifier (letters, digits and '_', not "
                                   "starting with a digit)");
    return {};
  }
  if (e.pure && sig.outputs.empty()) {
    diags.error(e.name.range,
                "pure extern '" + e.name.name + "' has no outputs; it would compute nothing");
    return {};
  }
  return ExternFunc::make(name, e.pure, sig.inputs, sig.outputs, sig.shapeVars, e.symbol, locOf(e));
}

Func buildGraph(const ast::GraphDecl &g, const std::string &name, const FuncTable &funcs,
                DiagnosticEngine &diags, const ConstTable *constants) {
  unsigned before = diags.errorCount();
  Func f = GraphBuilder(g, name, funcs, diags, constants).build();
  return diags.errorCount() == before ? f : Func();
}

} // namespace tdsl::sema

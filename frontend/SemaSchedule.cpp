//===- frontend/SemaSchedule.cpp --------------------------------------------------------------===//
//
// Turns `schedule` items into ir::ScheduleScript values (spec §7): picks
// the schedules that apply to the target (a --schedule file replaces the source's schedule of
// the same function and target), evaluates parameters with -D overrides, and checks the shape
// of each statement. Whether a primitive is legal is decided when the script runs.

#include "frontend/Sema.h"

#include "frontend/SemaInternal.h"
#include "ir/Utils.h"
#include "support/Diagnostics.h"

#include <map>
#include <set>

namespace tdsl {
namespace sema {
namespace {

using namespace ir;

/// Evaluates an integer constant expression over literals and schedule parameters.
std::optional<int64_t> constEval(const ast::Expr &e, const std::map<std::string, int64_t> &params,
                                 DiagnosticEngine &diags,
                                 const std::map<std::string, int64_t> *perInstance) {
  switch (e.kind) {
  case ast::ExprKind::Int:
    if (static_cast<const ast::IntLit &>(e).value > uint64_t(INT64_MAX)) {
      diags.error(e.range, "integer literal '" + static_cast<const ast::IntLit &>(e).text +
                               "' does not fit in i64");
      return std::nullopt;
    }
    return static_cast<int64_t>(static_cast<const ast::IntLit &>(e).value);
  case ast::ExprKind::Name: {
    auto &n = static_cast<const ast::NameExpr &>(e);
    auto it = params.find(n.name);
    if (it != params.end())
      return it->second;
    if (perInstance && perInstance->count(n.name)) {
      diags.error(n.range, "schedule parameter '" + n.name +
                               "' is named like a generic constant of the function and takes "
                               "each instance's value: it may only stand alone as an argument");
      return std::nullopt;
    }
    diags.error(n.range, "'" + n.name + "' is not a schedule parameter; expected an integer");
    return std::nullopt;
  }
  case ast::ExprKind::Unary: {
    auto &u = static_cast<const ast::UnaryExpr &>(e);
    if (u.op != ast::UnaryOp::Neg)
      break;
    if (auto *lit = u.operand->as<ast::IntLit>(); lit && lit->value == uint64_t(INT64_MAX) + 1)
      return INT64_MIN; // -9223372036854775808
    auto v = constEval(*u.operand, params, diags, perInstance);
    if (!v)
      return std::nullopt;
    if (std::optional<int64_t> r = checkedSub(0, *v))
      return r;
    diags.error(e.range, "integer overflow in a schedule argument");
    return std::nullopt;
  }
  case ast::ExprKind::Binary: {
    auto &b = static_cast<const ast::BinaryExpr &>(e);
    auto l = constEval(*b.lhs, params, diags, perInstance),
         r = constEval(*b.rhs, params, diags, perInstance);
    if (!l || !r)
      return std::nullopt;
    std::optional<int64_t> v;
    switch (b.op) {
    case ast::BinaryOp::Add:
      v = checkedAdd(*l, *r);
      break;
    case ast::BinaryOp::Sub:
      v = checkedSub(*l, *r);
      break;
    case ast::BinaryOp::Mul:
      v = checkedMul(*l, *r);
      break;
    case ast::BinaryOp::Div:
    case ast::BinaryOp::Mod:
      if (*r == 0) {
        diags.error(b.range, "division by zero in a schedule argument");
        return std::nullopt;
      }
      v = b.op == ast::BinaryOp::Div ? checkedFloorDiv(*l, *r) : checkedFloorMod(*l, *r);
      break;
    default:
      diags.error(e.range, "expected an integer constant expression");
      return std::nullopt;
    }
    if (!v)
      diags.error(b.range, "integer overflow in a schedule argument");
    return v;
  }
  default:
    break;
  }
  diags.error(e.range, "expected an integer constant expression");
  return std::nullopt;
}

class ScriptBuilder {
public:
  ScriptBuilder(const std::map<std::string, int64_t> &params,
                const std::map<std::string, int64_t> &perInstance, DiagnosticEngine &diags)
      : params_(params), perInstance_(perInstance), diags_(diags) {}

  std::optional<ScheduleArg> arg(const ast::SchedArg &a) {
    ScheduleArg out;
    out.loc = locOf(a);
    switch (a.kind) {
    case ast::SchedArgKind::String:
      out.kind = ScheduleArg::Kind::String;
      out.name = a.str;
      return out;
    case ast::SchedArgKind::List:
      out.kind = ScheduleArg::Kind::List;
      for (const ast::SchedArg &item : a.list) {
        std::optional<ScheduleArg> x = arg(item);
        if (!x)
          return std::nullopt;
        out.items.push_back(*x);
      }
      return out;
    case ast::SchedArgKind::Lambda:
      return lambda(a);
    case ast::SchedArgKind::Expr:
      break;
    }
    if (auto *n = a.expr->as<ast::NameExpr>(); n && !params_.count(n->name)) {
      out.kind = n->name == "_" ? ScheduleArg::Kind::Placeholder : ScheduleArg::Kind::Name;
      out.name = n->name;
      return out;
    }
    // A real literal, possibly negated: a probability of sample_categorical (checked there).
    const ast::Expr *lit = a.expr.get();
    bool negative = false;
    if (auto *u = lit->as<ast::UnaryExpr>(); u && u->op == ast::UnaryOp::Neg) {
      lit = u->operand.get();
      negative = true;
    }
    if (auto *f = lit->as<ast::FloatLit>()) {
      out.kind = ScheduleArg::Kind::Float;
      out.real = negative ? -f->value : f->value;
      return out;
    }
    // A name an earlier statement bound (a sampled integer, a loop) inside an expression: its
    // value exists only when the script runs, where arguments are not evaluated.
    if (const ast::NameExpr *n = boundNameIn(*a.expr)) {
      diags_.error(n->range, "'" + n->name +
                                 "' is bound by an earlier statement of the schedule; such a "
                                 "name may stand alone as an argument, not inside an expression "
                                 "(give the value you need its own sample_categorical)");
      return std::nullopt;
    }
    std::optional<int64_t> v = constEval(*a.expr, params_, diags_, &perInstance_);
    if (!v)
      return std::nullopt;
    out.kind = ScheduleArg::Kind::Int;
    out.value = *v;
    return out;
  }

private:
  /// The first name of `e` that an earlier statement bound and no parameter hides.
  const ast::NameExpr *boundNameIn(const ast::Expr &e) const {
    if (auto *n = e.as<ast::NameExpr>())
      return bound_.count(n->name) && !params_.count(n->name) ? n : nullptr;
    if (auto *u = e.as<ast::UnaryExpr>())
      return boundNameIn(*u->operand);
    if (auto *b = e.as<ast::BinaryExpr>()) {
      if (const ast::NameExpr *l = boundNameIn(*b->lhs))
        return l;
      return boundNameIn(*b->rhs);
    }
    return nullptr;
  }

  std::optional<ScheduleArg> lambda(const ast::SchedArg &a) {
    ScheduleArg out;
    out.kind = ScheduleArg::Kind::Lambda;
    out.loc = locOf(a);
    Scopes scopes;
    for (const ast::Ident &p : a.lambdaParams) {
      Var v(p.name, DType::i64(), locOf(p));
      if (!scopes.declare(p.name, Symbol{SymbolKind::Axis, v, Buffer(), p.range, IterKind::Spatial},
                          diags_))
        return std::nullopt;
      out.lambdaParams.push_back(v);
    }
    // The schedule's parameters may appear in the map (`(k, j) => (j / NR, k, j % NR)`): each
    // is a constant of the map, replaced by its value once checked. A map parameter of the
    // same name hides it.
    std::unordered_map<Var, Expr> values;
    for (const auto &[name, value] : params_) {
      if (scopes.lookup(name))
        continue;
      Var c(name, DType::i64(), out.loc);
      scopes.declare(name, Symbol{SymbolKind::Const, c, Buffer(), SourceRange(), IterKind::Spatial},
                     diags_);
      values.emplace(c, IntImm::make(DType::i64(), value, out.loc));
    }
    // Names bound by earlier statements may appear too (spec §7: a sampled integer may be used
    // wherever a parameter may): each stays a variable of the map, replaced by its value when
    // the script runs (a name bound to a loop or a block is refused then).
    std::vector<Var> ints;
    for (const std::string &name : bound_) {
      if (scopes.lookup(name))
        continue;
      Var c(name, DType::i64(), out.loc);
      scopes.declare(name, Symbol{SymbolKind::Const, c, Buffer(), SourceRange(), IterKind::Spatial},
                     diags_);
      ints.push_back(c);
    }
    ExprChecker ec{scopes, diags_};
    for (const ast::SchedArg &r : a.list) {
      Expr e = ec.check(*r.expr, DType::i64());
      if (!e.defined())
        return std::nullopt;
      e = substitute(e, values);
      if (e.dtype() != DType::i64()) {
        diags_.error(r.range, "layout map results must be i64 index expressions");
        return std::nullopt;
      }
      out.lambdaResults.push_back(e);
    }
    for (const Var &v : ints)
      for (const Expr &e : out.lambdaResults)
        if (usesVar(e, v)) {
          out.lambdaInts.push_back(v);
          break;
        }
    return out;
  }

public:
  /// Records the handles a statement binds (after its arguments were built).
  void bind(const std::string &name) {
    if (name != "_")
      bound_.insert(name);
  }

private:
  std::set<std::string> bound_;
  const std::map<std::string, int64_t> &params_;
  const std::map<std::string, int64_t> &perInstance_;
  DiagnosticEngine &diags_;
};

/// `alloc … scope(shared)` in the body of `f`, outside cuda compilations: an error at the alloc
/// (spec §5, §7: shared memory exists on the cuda target only).
void sharedAllocs(const std::vector<ast::StmtPtr> &body, DiagnosticEngine &diags) {
  for (const ast::StmtPtr &s : body) {
    if (auto *a = s->as<ast::AllocStmt>()) {
      if (a->scope == ast::Scope::Shared)
        diags.error(a->range, "'" + a->name.name +
                                  "' is allocated in scope(shared), which exists on the cuda "
                                  "target only; this function is compiled for the cpu");
    } else if (auto *f = s->as<ast::ForStmt>()) {
      sharedAllocs(f->body, diags);
    } else if (auto *b = s->as<ast::BlockStmt>()) {
      sharedAllocs(b->body, diags);
    }
  }
}

} // namespace
} // namespace sema

const char *const kSimdLanes = "simd_lanes";

std::vector<ir::ScheduleScript>
buildSchedules(const std::vector<ast::Module *> &modules,
               const std::vector<ast::Module *> &scheduleFiles, Target targetKind,
               const Defines &defines, std::set<std::string> &usedDefines, DiagnosticEngine &diags,
               const std::function<bool(const std::string &)> &takesDefines, int64_t simdLanes) {
  const std::string target = targetName(targetKind);
  // A function compiled for another target than cuda cannot have shared buffers.
  if (targetKind != Target::CUDA)
    for (size_t i = 0; i < modules.size(); ++i)
      for (const ast::ItemPtr &item : modules[i]->items)
        if (auto *f = item->as<ast::FuncDecl>()) {
          std::string fn = (i == 0 ? "" : modules[i]->name + ".") + f->name.name;
          if (!takesDefines || takesDefines(fn))
            sema::sharedAllocs(f->body, diags);
        }
  // (function, target) → the schedule that applies; later sources replace earlier ones.
  struct Chosen {
    const ast::ScheduleDecl *decl = nullptr;
    std::string fn;
    bool imported = false;
  };
  std::map<std::pair<std::string, std::string>, Chosen> chosen;
  std::vector<std::pair<std::string, std::string>> order;
  auto consider = [&](const ast::Module &m, const std::string &prefix, bool imported) {
    for (const ast::ItemPtr &item : m.items) {
      auto *s = item->as<ast::ScheduleDecl>();
      if (!s || (!s->resolved && !s->deferred))
        continue;
      std::string t = s->target ? s->target->name : "";
      if (!t.empty() && t != target)
        continue;
      std::string fn = s->func.parts.size() == 1 ? prefix + s->func.parts[0] : s->func.str();
      auto key = std::make_pair(fn, t);
      if (!chosen.count(key))
        order.push_back(key);
      chosen[key] = {s, fn, imported};
    }
  };
  for (size_t i = modules.size(); i-- > 1;)
    consider(*modules[i], modules[i]->name + ".", true);
  if (!modules.empty())
    consider(*modules[0], "", false);
  for (const ast::Module *f : scheduleFiles)
    consider(*f, "", false);

  std::vector<ir::ScheduleScript> out;
  for (const auto &key : order) {
    // The targeted schedule wins over the untargeted one for its target.
    if (key.second.empty() && chosen.count({key.first, target}))
      continue;
    auto [decl, fn, imported] = chosen[key];
    // The built-in `simd_lanes` (32-bit lanes of the target's vector registers) is in scope in
    // parameter defaults and statements; a parameter of that name hides it, -D sets it.
    std::map<std::string, int64_t> params;
    params[kSimdLanes] = simdLanes;
    if (!takesDefines || takesDefines(fn))
      if (std::optional<int64_t> v =
              defines.lookup(kSimdLanes, {decl->func.str(), fn}, &usedDefines))
        params[kSimdLanes] = *v;
    // A parameter named like a generic constant of the function takes each instance's value
    // (graph.instantiate gives it; its default is for the generic function itself): statements
    // name it, and its value replaces it when the script runs (ir::ScheduleScript::constants).
    std::set<std::string> generics;
    if (decl->resolved)
      for (const ast::GenericParam &g : decl->resolved->generics)
        generics.insert(g.name.name);
    std::map<std::string, int64_t> constants;
    bool ok = true;
    for (const ast::SchedParam &p : decl->params) {
      std::optional<int64_t> v = sema::constEval(*p.value, params, diags, &constants);
      if (!v) {
        ok = false;
        continue;
      }
      // -D NAME=V and -D FUNC.NAME=V override the default; the qualified one wins.
      if (!takesDefines || takesDefines(fn))
        if (std::optional<int64_t> d =
                defines.lookup(p.name.name, {decl->func.str(), fn}, &usedDefines))
          v = d;
      if (generics.count(p.name.name)) {
        params.erase(p.name.name); // hides a built-in of that name (simd_lanes)
        constants[p.name.name] = *v;
      } else {
        params[p.name.name] = *v;
      }
    }
    if (!ok)
      continue;
    ir::ScheduleScript script;
    script.func = fn;
    script.target = key.second;
    script.loc = decl->deferred ? decl->func.range.begin : sema::locOf(*decl);
    script.deferred = decl->deferred;
    script.imported = imported;
    script.constants = constants;
    sema::ScriptBuilder b(params, constants, diags);
    for (const ast::SchedStmt &st : decl->body) {
      ir::ScheduleCall call;
      call.primitive = st.primitive.name;
      call.loc = sema::locOf(st);
      for (const ast::Ident &t : st.targets) {
        if (params.count(t.name) || constants.count(t.name)) {
          diags.error(t.range, "handle '" + t.name + "' has the name of a schedule parameter");
          ok = false;
        }
        call.results.push_back(t.name);
        call.resultLocs.push_back(sema::locOf(t));
      }
      for (const ast::SchedArg &a : st.args) {
        std::optional<ir::ScheduleArg> arg = b.arg(a);
        if (!arg) {
          ok = false;
          continue;
        }
        call.args.push_back(*arg);
      }
      for (const std::string &r : call.results)
        b.bind(r);
      script.calls.push_back(std::move(call));
    }
    if (ok)
      out.push_back(std::move(script));
  }
  return out;
}

} // namespace tdsl

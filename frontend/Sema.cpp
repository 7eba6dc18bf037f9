//===- frontend/Sema.cpp ----------------------------------------------------------------------===//
//
// Type checking and name resolution of funcs, and IR construction (spec §4–§6).
// Graphs are checked in SemaGraph.cpp; the access rules 6 and 7 run on the built IR
// (CheckAccesses.cpp).

#include "frontend/Sema.h"

#include "frontend/SemaInternal.h"
#include "support/Diagnostics.h"

#include <cmath>
#include <map>
#include <set>

namespace tdsl {
namespace sema {

using namespace ir;

SourceLoc locOf(const ast::Node &n) { return n.range.begin; }

std::optional<DType> parseDType(const std::string &name) {
  static const std::map<std::string, DType> kTypes = {
      {"bool", DType::boolean()}, {"i8", DType::i8()},     {"i16", DType::i16()},
      {"i32", DType::i32()},      {"i64", DType::i64()},   {"u8", DType::u8()},
      {"u16", DType::u16()},      {"u32", DType::u32()},   {"u64", DType::u64()},
      {"f16", DType::f16()},      {"bf16", DType::bf16()}, {"f32", DType::f32()},
      {"f64", DType::f64()}};
  auto it = kTypes.find(name);
  if (it == kTypes.end())
    return std::nullopt;
  return it->second;
}

bool isStorageOnly(DType t) {
  return t.code() == DType::Code::F16 || t.code() == DType::Code::BF16;
}

// ---------------------------------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------------------------------

const Symbol *Scopes::lookup(const std::string &name) const {
  for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

bool Scopes::declare(const std::string &name, Symbol sym, DiagnosticEngine &diags) {
  if (const Symbol *prev = lookup(name); prev && stack_.back().count(name)) {
    diags.error(sym.range, "redefinition of '" + name + "'")
        .note(prev->range, "previous definition is here");
    return false;
  }
  stack_.back()[name] = std::move(sym);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

bool ExprChecker::isLiteralLike(const ast::Expr &e) {
  switch (e.kind) {
  case ast::ExprKind::Int:
  case ast::ExprKind::Float:
  case ast::ExprKind::Inf:
    return true;
  case ast::ExprKind::Unary: {
    auto &u = static_cast<const ast::UnaryExpr &>(e);
    return u.op == ast::UnaryOp::Neg && isLiteralLike(*u.operand);
  }
  case ast::ExprKind::Binary: {
    auto &b = static_cast<const ast::BinaryExpr &>(e);
    bool arith = b.op == ast::BinaryOp::Add || b.op == ast::BinaryOp::Sub ||
                 b.op == ast::BinaryOp::Mul || b.op == ast::BinaryOp::Div ||
                 b.op == ast::BinaryOp::Mod;
    return arith && isLiteralLike(*b.lhs) && isLiteralLike(*b.rhs);
  }
  default:
    return false;
  }
}

static bool fitsIn(uint64_t v, DType t, bool negative) {
  if (t.isFloat())
    return true;
  int bits = t.bits();
  if (t.isUInt())
    return !negative && (bits == 64 || v < (uint64_t(1) << bits));
  uint64_t limit = uint64_t(1) << (bits - 1); // |min|
  return negative ? v <= limit : v < limit;
}

Expr ExprChecker::literal(const ast::Expr &e, std::optional<DType> expected,
                          const ast::Expr *negation) {
  bool negative = negation != nullptr;
  const ast::Expr &at = negative ? *negation : e; // errors cover the sign
  SourceLoc loc = locOf(at);
  if (auto *i = e.as<ast::IntLit>()) {
    DType t = expected.value_or(DType::i64());
    if (t.isBool()) {
      error(at, "integer literal '" + i->text + "' where a bool is required");
      return {};
    }
    if (isStorageOnly(t))
      return storageError(at, t);
    if (!fitsIn(i->value, t, negative)) {
      error(at, "integer literal '" + std::string(negative ? "-" : "") + i->text +
                    "' does not fit in " + t.name());
      return {};
    }
    if (t.isFloat())
      return FloatImm::make(t, negative ? -double(i->value) : double(i->value), loc);
    int64_t v = negative ? int64_t(0 - i->value) : int64_t(i->value);
    return IntImm::make(t, v, loc);
  }
  // Float literal or inf.
  DType t = expected.value_or(DType::f32());
  std::string text =
      (negative ? "-" : "") + (e.as<ast::FloatLit>() ? e.as<ast::FloatLit>()->text : "inf");
  if (!t.isFloat()) {
    error(at, "float literal '" + text + "' where " +
                  (t.isBool() ? std::string("a bool") : "an integer (" + t.name() + ")") +
                  " is required");
    return {};
  }
  if (isStorageOnly(t))
    return storageError(at, t);
  double v = e.as<ast::FloatLit>() ? e.as<ast::FloatLit>()->value : HUGE_VAL;
  return FloatImm::make(t, negative ? -v : v, loc);
}

Expr ExprChecker::storageError(const ast::Expr &e, DType t) {
  error(e, t.name() + " is a storage type: compute in f32 and convert the result with " + t.name() +
               "(...)");
  return {};
}

void ExprChecker::error(const ast::Node &n, std::string msg) {
  diags.error(n.range, std::move(msg));
}

Expr ExprChecker::check(const ast::Expr &e, std::optional<DType> expected, bool allowStorage) {
  Expr r = checkImpl(e, expected);
  if (!r.defined() || allowStorage || !isStorageOnly(r.dtype()) || e.as<ast::CallExpr>())
    return r;
  if (auto *l = e.as<ast::LoadExpr>()) {
    error(e, "'" + l->buffer.name + "' has storage type " + r.dtype().name() +
                 "; read it through a cast, e.g. f32(" + l->buffer.name + "[...])");
    return {};
  }
  return storageError(e, r.dtype());
}

Expr ExprChecker::checkImpl(const ast::Expr &e, std::optional<DType> expected) {
  SourceLoc loc = locOf(e);
  switch (e.kind) {
  case ast::ExprKind::Int:
  case ast::ExprKind::Float:
  case ast::ExprKind::Inf:
    return literal(e, expected);
  case ast::ExprKind::Bool:
    return IntImm::make(DType::boolean(), e.as<ast::BoolLit>()->value, loc);
  case ast::ExprKind::Name:
    return name(static_cast<const ast::NameExpr &>(e));
  case ast::ExprKind::Load:
    return load(static_cast<const ast::LoadExpr &>(e));
  case ast::ExprKind::Call:
    return call(static_cast<const ast::CallExpr &>(e), expected);
  case ast::ExprKind::Unary: {
    auto &u = static_cast<const ast::UnaryExpr &>(e);
    if (u.op == ast::UnaryOp::Neg) {
      const ast::Expr &inner = *u.operand;
      if (inner.kind == ast::ExprKind::Int || inner.kind == ast::ExprKind::Float ||
          inner.kind == ast::ExprKind::Inf)
        return literal(inner, expected, &e);
      Expr a = check(inner, expected);
      if (!a.defined())
        return {};
      if (a.dtype().isBool()) {
        error(e, "unary '-' needs a number, got bool");
        return {};
      }
      return Neg::make(a, loc);
    }
    Expr a = check(*u.operand, DType::boolean());
    if (!a.defined())
      return {};
    if (!a.dtype().isBool()) {
      error(*u.operand, "'!' needs a bool operand, got " + a.dtype().name());
      return {};
    }
    return Not::make(a, loc);
  }
  case ast::ExprKind::Binary:
    return binary(static_cast<const ast::BinaryExpr &>(e), expected);
  }
  return {};
}

bool Scopes::reportConstantUse(const std::string &name, SourceRange at,
                               DiagnosticEngine &diags) const {
  if (!moduleConstants)
    return false;
  auto it = moduleConstants->find(name);
  if (it == moduleConstants->end())
    return false;
  diags
      .error(at, "graph constant '" + name +
                     "' cannot be used in a func; pass it to the func as a tensor parameter")
      .note(it->second.range, "constant declared here");
  return true;
}

Expr ExprChecker::name(const ast::NameExpr &n) {
  const Symbol *sym = scopes.lookup(n.name);
  if (!sym) {
    if (scopes.reportConstantUse(n.name, n.range, diags))
      return {};
    if (parseDType(n.name))
      error(n, "dtype '" + n.name + "' used as a value; a cast is written " + n.name + "(x)");
    else
      error(n, "use of undeclared name '" + n.name + "'");
    return {};
  }
  switch (sym->kind) {
  case SymbolKind::Invalid:
    return {};
  case SymbolKind::Buffer:
    error(n, "buffer '" + n.name + "' used as a scalar; index it: " + n.name + "[...]");
    return {};
  case SymbolKind::LoopVar:
    if (!loopVarsVisible) {
      diags
          .error(n.range, "loop variable '" + n.name +
                              "' is not visible in a block body; bind it to a block axis")
          .note(sym->range, "loop declared here");
      return {};
    }
    break;
  case SymbolKind::Axis:
    if (!axesVisible) {
      diags.error(n.range, "block axis '" + n.name + "' is not visible here")
          .note(sym->range, "axis declared here");
      return {};
    }
    break;
  default:
    break;
  }
  return VarRef::make(sym->var, locOf(n));
}

Expr ExprChecker::index(const ast::Expr &e) {
  Expr idx = check(e, DType::i64());
  if (!idx.defined())
    return {};
  if (!idx.dtype().isInteger()) {
    error(e, "index must be an integer, got " + idx.dtype().name());
    return {};
  }
  if (idx.dtype() != DType::i64())
    idx = Cast::make(DType::i64(), idx, idx->loc);
  return idx;
}

Expr ExprChecker::load(const ast::LoadExpr &l) {
  const Symbol *sym = scopes.lookup(l.buffer.name);
  if (!sym) {
    if (!scopes.reportConstantUse(l.buffer.name, l.buffer.range, diags))
      error(l.buffer, "use of undeclared buffer '" + l.buffer.name + "'");
    return {};
  }
  if (sym->kind == SymbolKind::Invalid)
    return {};
  if (sym->kind != SymbolKind::Buffer) {
    diags
        .error(l.buffer.range,
               "'" + l.buffer.name + "' is a scalar, not a buffer; it cannot be indexed")
        .note(sym->range, "declared here");
    return {};
  }
  Buffer buf = sym->buffer;
  if (l.indices.size() != buf.rank()) {
    diags
        .error(l.range, "buffer '" + l.buffer.name + "' has rank " + std::to_string(buf.rank()) +
                            " but is indexed with " + std::to_string(l.indices.size()) +
                            (l.indices.size() == 1 ? " index" : " indices"))
        .note(sym->range, "declared here");
    return {};
  }
  std::vector<Expr> idx;
  bool ok = true;
  for (const ast::ExprPtr &i : l.indices) {
    idx.push_back(index(*i));
    ok &= idx.back().defined();
  }
  if (!ok)
    return {};
  return BufferLoad::make(buf, std::move(idx), locOf(l));
}

static const std::map<std::string, Intrinsic> &floatIntrinsics() {
  static const std::map<std::string, Intrinsic> m = {
      {"exp", Intrinsic::Exp},   {"exp2", Intrinsic::Exp2},       {"log", Intrinsic::Log},
      {"log2", Intrinsic::Log2}, {"sqrt", Intrinsic::Sqrt},       {"rsqrt", Intrinsic::Rsqrt},
      {"tanh", Intrinsic::Tanh}, {"sigmoid", Intrinsic::Sigmoid}, {"erf", Intrinsic::Erf},
      {"sin", Intrinsic::Sin},   {"cos", Intrinsic::Cos},         {"floor", Intrinsic::Floor},
      {"ceil", Intrinsic::Ceil}, {"round", Intrinsic::Round},     {"trunc", Intrinsic::Trunc},
      {"pow", Intrinsic::Pow},   {"fma", Intrinsic::Fma}};
  return m;
}

bool ExprChecker::arity(const ast::CallExpr &c, size_t n) {
  if (c.args.size() == n)
    return true;
  error(c, "'" + c.callee.name + "' takes " + std::to_string(n) + " argument" +
               (n == 1 ? "" : "s") + ", got " + std::to_string(c.args.size()));
  return false;
}

/// Checks operands that must share one dtype; literals take the dtype of the others.
std::vector<Expr> ExprChecker::unify(const std::vector<const ast::Expr *> &operands,
                                     std::optional<DType> expected, const ast::Node &at,
                                     const std::string &what) {
  std::vector<Expr> out(operands.size());
  std::optional<DType> common;
  bool ok = true;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (isLiteralLike(*operands[i]))
      continue;
    out[i] = check(*operands[i], expected);
    if (!out[i].defined()) {
      ok = false;
      continue;
    }
    if (!common)
      common = out[i].dtype();
    else if (*common != out[i].dtype()) {
      error(at, "mismatched dtypes " + common->name() + " and " + out[i].dtype().name() + " in " +
                    what + "; convert one side explicitly, e.g. " + common->name() + "(...)");
      return {};
    }
  }
  if (!ok)
    return {};
  if (!common)
    common = expected;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (out[i].defined())
      continue;
    out[i] = check(*operands[i], common);
    if (!out[i].defined())
      return {};
    if (!common)
      common = out[i].dtype();
    else if (*common != out[i].dtype()) {
      error(at, "mismatched dtypes " + common->name() + " and " + out[i].dtype().name() + " in " +
                    what);
      return {};
    }
  }
  return out;
}

Expr ExprChecker::call(const ast::CallExpr &c, std::optional<DType> expected) {
  const std::string &fn = c.callee.name;
  SourceLoc loc = locOf(c);
  // A cast: `f32(x)`.
  if (std::optional<DType> to = parseDType(fn)) {
    if (!arity(c, 1))
      return {};
    Expr v = check(*c.args[0], std::nullopt, /*allowStorage=*/true);
    if (!v.defined())
      return {};
    if (isStorageOnly(v.dtype()) && isStorageOnly(*to) && v.dtype() != *to) {
      error(c, "cannot convert " + v.dtype().name() + " to " + to->name() +
                   " directly; go through f32");
      return {};
    }
    return Cast::make(*to, v, loc);
  }
  if (fn == "min" || fn == "max") {
    if (!arity(c, 2))
      return {};
    std::vector<Expr> ops = unify({c.args[0].get(), c.args[1].get()}, expected, c, "'" + fn + "'");
    if (ops.empty())
      return {};
    if (ops[0].dtype().isBool()) {
      error(c, "'" + fn + "' needs numbers, got bool");
      return {};
    }
    return fn == "min" ? Min::make(ops[0], ops[1], loc) : Max::make(ops[0], ops[1], loc);
  }
  if (fn == "select") {
    if (!arity(c, 3))
      return {};
    Expr cond = check(*c.args[0], DType::boolean());
    if (!cond.defined())
      return {};
    if (!cond.dtype().isBool()) {
      error(*c.args[0], "condition of 'select' must be bool, got " + cond.dtype().name());
      return {};
    }
    std::vector<Expr> ops = unify({c.args[1].get(), c.args[2].get()}, expected, c, "'select'");
    if (ops.empty())
      return {};
    return Select::make(cond, ops[0], ops[1], loc);
  }
  if (fn == "min_value" || fn == "max_value") {
    if (!arity(c, 1))
      return {};
    auto *n = c.args[0]->as<ast::NameExpr>();
    std::optional<DType> t = n ? parseDType(n->name) : std::nullopt;
    if (!t || t->isBool()) {
      error(*c.args[0], "'" + fn + "' takes a numeric dtype name, e.g. " + fn + "(f32)");
      return {};
    }
    if (isStorageOnly(*t))
      return storageError(*c.args[0], *t);
    return Call::make(*t, fn == "min_value" ? Intrinsic::MinValue : Intrinsic::MaxValue, {}, loc);
  }
  if (fn == "abs") {
    if (!arity(c, 1))
      return {};
    Expr v = check(*c.args[0], expected);
    if (!v.defined())
      return {};
    if (v.dtype().isBool()) {
      error(c, "'abs' needs a number, got bool");
      return {};
    }
    return Call::make(v.dtype(), Intrinsic::Abs, {v}, loc);
  }
  auto it = floatIntrinsics().find(fn);
  if (it == floatIntrinsics().end()) {
    error(c.callee, "unknown function '" + fn + "' in an expression");
    return {};
  }
  size_t n = it->second == Intrinsic::Pow ? 2 : it->second == Intrinsic::Fma ? 3 : 1;
  if (!arity(c, n))
    return {};
  std::vector<const ast::Expr *> args;
  for (const ast::ExprPtr &a : c.args)
    args.push_back(a.get());
  std::optional<DType> want = expected && expected->isFloat() ? expected : std::nullopt;
  std::vector<Expr> ops = unify(args, want, c, "'" + fn + "'");
  if (ops.empty())
    return {};
  if (!ops[0].dtype().isFloat()) {
    error(c, "'" + fn + "' needs a float argument, got " + ops[0].dtype().name() +
                 "; convert it, e.g. f32(...)");
    return {};
  }
  DType type = ops[0].dtype();
  return Call::make(type, it->second, std::move(ops), loc);
}

/// The IR node of `op` on checked operands: each ast::BinaryOp has the IR node of its name.
static Expr makeBinary(ast::BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  switch (op) {
#define TDSL_AST_BINARY_OP(NAME, SPELLING)                                                         \
  case ast::BinaryOp::NAME:                                                                        \
    return NAME::make(std::move(a), std::move(b), loc);
#include "frontend/AST.def"
  }
  return {};
}

Expr ExprChecker::binary(const ast::BinaryExpr &b, std::optional<DType> expected) {
  SourceLoc loc = locOf(b);
  std::string what = std::string("'") + spelling(b.op) + "'";
  if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or) {
    Expr l = check(*b.lhs, DType::boolean()), r = check(*b.rhs, DType::boolean());
    if (!l.defined() || !r.defined())
      return {};
    for (auto [e, side] : {std::pair{l, b.lhs.get()}, std::pair{r, b.rhs.get()}})
      if (!e.dtype().isBool()) {
        error(*side, "operands of " + what + " must be bool, got " + e.dtype().name());
        return {};
      }
    return makeBinary(b.op, l, r, loc);
  }
  // ==, !=, <, <=, >, >= (consecutive in frontend/AST.def) take any type and give bool.
  bool comparison = b.op >= ast::BinaryOp::EQ && b.op <= ast::BinaryOp::GE;
  std::vector<Expr> ops =
      unify({b.lhs.get(), b.rhs.get()}, comparison ? std::optional<DType>() : expected, b, what);
  if (ops.empty())
    return {};
  if (!comparison && ops[0].dtype().isBool()) {
    error(b, "arithmetic " + what + " on bool operands; use && or ||");
    return {};
  }
  return makeBinary(b.op, ops[0], ops[1], loc);
}

// ---------------------------------------------------------------------------------------------
// Signatures
// ---------------------------------------------------------------------------------------------

std::optional<DType> SignatureChecker::dtype(const ast::Ident &id) {
  std::optional<DType> t = parseDType(id.name);
  if (!t)
    diags.error(
        id.range,
        "unknown dtype '" + id.name +
            "'; expected bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32 or f64");
  return t;
}

void SignatureChecker::generics(const std::vector<ast::GenericParam> &gs, std::vector<Var> &out) {
  for (const ast::GenericParam &g : gs) {
    std::optional<DType> t = dtype(g.dtype);
    if (t && *t != DType::i64())
      diags.error(g.dtype.range, "generic constants must be i64");
    Var v(g.name.name, DType::i64(), locOf(g));
    Symbol sym{SymbolKind::Const, v, Buffer(), g.name.range, IterKind::Spatial};
    if (scopes.declare(g.name.name, sym, diags))
      out.push_back(v);
  }
}

bool SignatureChecker::signature(const std::vector<ast::GenericParam> &gs,
                                 const std::vector<ast::Param> &ins,
                                 const std::vector<ast::Param> &outs, CheckedSignature &out) {
  generics(gs, out.consts);
  bool ok = params(ins, BufferRole::Input, out.inputs, out.outputs, out.shapeVars, true);
  ok &= params(outs, BufferRole::Output, out.inputs, out.outputs, out.shapeVars, false);
  return ok;
}

namespace {

/// The names an expression mentions.
void namesIn(const ast::Expr &e, std::vector<const ast::NameExpr *> &out) {
  switch (e.kind) {
  case ast::ExprKind::Name:
    out.push_back(static_cast<const ast::NameExpr *>(&e));
    return;
  case ast::ExprKind::Load:
    for (auto &i : static_cast<const ast::LoadExpr &>(e).indices)
      namesIn(*i, out);
    return;
  case ast::ExprKind::Call:
    for (auto &a : static_cast<const ast::CallExpr &>(e).args)
      namesIn(*a, out);
    return;
  case ast::ExprKind::Unary:
    namesIn(*static_cast<const ast::UnaryExpr &>(e).operand, out);
    return;
  case ast::ExprKind::Binary: {
    auto &b = static_cast<const ast::BinaryExpr &>(e);
    namesIn(*b.lhs, out);
    namesIn(*b.rhs, out);
    return;
  }
  default:
    return;
  }
}

} // namespace

Expr SignatureChecker::dimension(const ast::Expr &d, const std::string &what) {
  // Only literals, shape variables and generic constants make a dimension (spec §4): a scalar
  // input's value is not known where buffers are allocated and shapes are checked.
  bool badName = false;
  std::vector<const ast::NameExpr *> names;
  namesIn(d, names);
  for (const ast::NameExpr *n : names) {
    const Symbol *sym = scopes.lookup(n->name);
    if (!sym || sym->kind == SymbolKind::ShapeVar || sym->kind == SymbolKind::Const ||
        sym->kind == SymbolKind::Invalid || sym->kind == SymbolKind::Buffer)
      continue;
    const char *kind = sym->kind == SymbolKind::Scalar    ? "scalar input"
                       : sym->kind == SymbolKind::LoopVar ? "loop variable"
                       : sym->kind == SymbolKind::Axis    ? "block axis"
                                                          : "local";
    diags
        .error(n->range, std::string(kind) + " '" + n->name + "' used in " + what +
                             "; a dimension is built from literals, shape variables and generic "
                             "constants")
        .note(sym->range, "'" + n->name + "' is declared here");
    badName = true;
  }
  if (badName)
    return {};
  ExprChecker ec{scopes, diags};
  ec.loopVarsVisible = false;
  Expr e = ec.check(d, DType::i64());
  if (!e.defined())
    return {};
  if (e.dtype() != DType::i64()) {
    diags.error(d.range, "a dimension must be an i64 expression, got " + e.dtype().name());
    return {};
  }
  if (!checkExtent(e, d.range, what, diags))
    return {};
  return e;
}

std::optional<std::vector<Expr>> SignatureChecker::shape(const ast::Type &t, bool introduce,
                                                         std::vector<Var> &shapeVars,
                                                         const std::string &owner) {
  std::vector<Expr> dims;
  bool ok = true;
  for (size_t index = 0; index < t.dims.size(); ++index) {
    const ast::ExprPtr &d = t.dims[index];
    if (auto *n = d->as<ast::NameExpr>(); n && introduce && !scopes.lookup(n->name)) {
      Var v(n->name, DType::i64(), locOf(*n));
      scopes.declare(n->name,
                     Symbol{SymbolKind::ShapeVar, v, Buffer(), n->range, IterKind::Spatial}, diags);
      shapeVars.push_back(v);
      dims.push_back(VarRef::make(v, locOf(*n)));
      continue;
    }
    if (auto *n = d->as<ast::NameExpr>(); n && !scopes.lookup(n->name)) {
      diags.error(n->range, "shape variable '" + n->name +
                                "' must first appear as a whole dimension of an input");
      ok = false;
      continue;
    }
    Expr e = dimension(*d, "dimension " + std::to_string(index) +
                               (owner.empty() ? std::string() : " of '" + owner + "'"));
    if (!e.defined()) {
      ok = false;
      continue;
    }
    dims.push_back(e);
  }
  if (!ok)
    return std::nullopt;
  if (!checkElementCount(parseDType(t.dtype.name).value_or(DType::u8()), dims, t.range,
                         owner.empty() ? "tensor" : "'" + owner + "'", diags))
    return std::nullopt;
  return dims;
}

bool SignatureChecker::params(const std::vector<ast::Param> &ps, BufferRole role,
                              std::vector<FuncParam> &inputs, std::vector<Buffer> &outputs,
                              std::vector<Var> &shapeVars, bool allowScalars) {
  bool ok = true;
  for (const ast::Param &p : ps) {
    std::optional<DType> t = dtype(p.type.dtype);
    if (!t) {
      ok = false;
      continue;
    }
    if (!p.type.isTensor) {
      if (!allowScalars) {
        diags.error(p.type.range, "outputs must be tensors; write " + p.type.dtype.name +
                                      "[] for a rank-0 tensor");
        ok = false;
        continue;
      }
      if (isStorageOnly(*t)) {
        diags.error(p.type.range,
                    t->name() + " is a storage type; a scalar parameter cannot have it");
        ok = false;
        continue;
      }
      Var v(p.name.name, *t, locOf(p));
      ok &= scopes.declare(p.name.name,
                           Symbol{SymbolKind::Scalar, v, Buffer(), p.name.range, IterKind::Spatial},
                           diags);
      inputs.push_back(FuncParam::scalarVar(v));
      continue;
    }
    std::optional<std::vector<Expr>> dims =
        shape(p.type, role == BufferRole::Input, shapeVars, p.name.name);
    if (!dims) {
      ok = false;
      continue;
    }
    Buffer b(p.name.name, *t, *dims, role, MemScope::Global, {}, locOf(p));
    ok &= scopes.declare(
        p.name.name, Symbol{SymbolKind::Buffer, Var(), b, p.name.range, IterKind::Spatial}, diags);
    if (role == BufferRole::Input)
      inputs.push_back(FuncParam::tensor(b));
    else
      outputs.push_back(b);
  }
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Function bodies
// ---------------------------------------------------------------------------------------------

namespace {

/// The buffers a statement list stores to, each with its first store (rule 4).
using Writes = std::map<const BufferNode *, SourceRange>;

/// Collects the reduce axes an expression mentions (rule 3).
void reduceAxesIn(const ast::Expr &e, const Scopes &scopes,
                  std::vector<const ast::NameExpr *> &out) {
  switch (e.kind) {
  case ast::ExprKind::Name: {
    auto &n = static_cast<const ast::NameExpr &>(e);
    const Symbol *s = scopes.lookup(n.name);
    if (s && s->kind == SymbolKind::Axis && s->axisKind == IterKind::Reduce)
      out.push_back(&n);
    return;
  }
  case ast::ExprKind::Load:
    for (auto &i : static_cast<const ast::LoadExpr &>(e).indices)
      reduceAxesIn(*i, scopes, out);
    return;
  case ast::ExprKind::Call:
    for (auto &a : static_cast<const ast::CallExpr &>(e).args)
      reduceAxesIn(*a, scopes, out);
    return;
  case ast::ExprKind::Unary:
    reduceAxesIn(*static_cast<const ast::UnaryExpr &>(e).operand, scopes, out);
    return;
  case ast::ExprKind::Binary: {
    auto &b = static_cast<const ast::BinaryExpr &>(e);
    reduceAxesIn(*b.lhs, scopes, out);
    reduceAxesIn(*b.rhs, scopes, out);
    return;
  }
  default:
    return;
  }
}

class FuncBuilder {
public:
  FuncBuilder(const ast::FuncDecl &f, std::string name, DiagnosticEngine &diags,
              const ConstTable *constants)
      : f_(f), name_(std::move(name)), diags_(diags) {
    scopes_.moduleConstants = constants;
  }

  Func build() {
    CheckedSignature sig;
    if (!SignatureChecker{scopes_, diags_}.signature(f_.generics, f_.inputs, f_.outputs, sig))
      return {};
    scopes_.push();
    std::vector<Stmt> body = items(f_.body, /*inLoop=*/false);
    scopes_.pop();
    if (failed_)
      return {};
    return PrimFunc::make(name_, sig.consts, sig.inputs, sig.outputs, sig.shapeVars, rootAllocs_,
                          seq(body), locOf(f_));
  }

private:
  std::vector<Stmt> items(const std::vector<ast::StmtPtr> &list, bool inLoop) {
    std::vector<const ast::Stmt *> ptrs;
    for (const ast::StmtPtr &s : list)
      ptrs.push_back(s.get());
    return items(ptrs, inLoop);
  }

  std::vector<Stmt> items(const std::vector<const ast::Stmt *> &list, bool inLoop) {
    std::vector<Stmt> out;
    for (const ast::Stmt *s : list) {
      switch (s->kind) {
      case ast::StmtKind::Alloc: {
        auto &a = static_cast<const ast::AllocStmt &>(*s);
        if (inLoop) {
          diags_.error(a.range, "alloc inside a loop: declare the buffer at function level or "
                                "at the start of a block");
          failed_ = true;
          continue;
        }
        if (Buffer b = alloc(a); b.defined())
          rootAllocs_.push_back(b);
        break;
      }
      case ast::StmtKind::For:
        if (Stmt st = forLoop(static_cast<const ast::ForStmt &>(*s)); st.defined())
          out.push_back(st);
        break;
      case ast::StmtKind::Block:
        if (Stmt st = block(static_cast<const ast::BlockStmt &>(*s), inLoop); st.defined())
          out.push_back(st);
        break;
      default:
        diags_.error(s->range, "statement outside a block: computations go inside 'block'");
        failed_ = true;
      }
    }
    return out;
  }

  Buffer alloc(const ast::AllocStmt &a) {
    SignatureChecker sig{scopes_, diags_};
    std::optional<DType> t = sig.dtype(a.type.dtype);
    std::vector<Var> none;
    if (!a.type.isTensor) {
      diags_.error(a.type.range,
                   "alloc needs a tensor type; write " + a.type.dtype.name + "[] for rank 0");
      failed_ = true;
      return {};
    }
    std::optional<std::vector<Expr>> dims = sig.shape(a.type, false, none, a.name.name);
    if (!t || !dims) {
      failed_ = true;
      return {};
    }
    MemScope scope = a.scope == ast::Scope::Shared  ? MemScope::Shared
                     : a.scope == ast::Scope::Local ? MemScope::Local
                                                    : MemScope::Global;
    std::vector<StorageAlign> align;
    if (!allocAlign(a, dims->size(), align)) {
      failed_ = true;
      return {};
    }
    Buffer b(a.name.name, *t, *dims, BufferRole::Alloc, scope, align, locOf(a));
    if (!scopes_.declare(a.name.name,
                         Symbol{SymbolKind::Buffer, Var(), b, a.name.range, IterKind::Spatial},
                         diags_))
      failed_ = true;
    return b;
  }

  /// `@align(axis, factor, offset)` clauses: integer literals, axis in [0, rank), factor > 0,
  /// 0 <= offset < factor, one clause per axis.
  bool allocAlign(const ast::AllocStmt &a, size_t rank, std::vector<StorageAlign> &out) {
    if (a.aligns.empty())
      return true;
    out.assign(rank, StorageAlign{});
    for (const ast::AllocStmt::Align &al : a.aligns) {
      auto lit = [&](const ast::Expr &e) -> std::optional<int64_t> {
        if (auto *i = e.as<ast::IntLit>(); i && i->value <= uint64_t(INT64_MAX))
          return static_cast<int64_t>(i->value);
        diags_.error(e.range,
                     e.as<ast::IntLit>()
                         ? "@align argument '" + e.as<ast::IntLit>()->text + "' does not fit in i64"
                         : std::string("@align arguments must be integer literals"));
        return std::nullopt;
      };
      auto axis = lit(*al.axis), factor = lit(*al.factor), offset = lit(*al.offset);
      if (!axis || !factor || !offset)
        return false;
      if (*axis >= static_cast<int64_t>(rank)) {
        diags_.error(al.axis->range, "@align axis " + std::to_string(*axis) +
                                         " is out of range for '" + a.name.name + "' of rank " +
                                         std::to_string(rank));
        return false;
      }
      if (*factor <= 0 || *offset >= *factor) {
        diags_.error(al.range, "@align needs factor > 0 and 0 <= offset < factor");
        return false;
      }
      if (out[*axis].factor != 0) {
        diags_.error(al.range, "axis " + std::to_string(*axis) + " of '" + a.name.name +
                                   "' is aligned twice");
        return false;
      }
      out[*axis] = StorageAlign{*factor, *offset};
    }
    return true;
  }

  Expr loopExpr(const ast::Expr &e) {
    ExprChecker ec{scopes_, diags_};
    // Inside a block (the form blockize produces), loops and bindings see its axes.
    ec.axesVisible = blockDepth_ > 0;
    Expr r = ec.check(e, DType::i64());
    if (r.defined() && r.dtype() != DType::i64()) {
      diags_.error(e.range, "loop bounds must be i64, got " + r.dtype().name());
      return {};
    }
    return r;
  }

  Stmt forLoop(const ast::ForStmt &f) {
    Expr lo = loopExpr(*f.lo), hi = loopExpr(*f.hi);
    if (!lo.defined() || !hi.defined()) {
      failed_ = true;
      return {};
    }
    // Bounds may be negative (an empty loop), but not divide by zero or overflow.
    bool boundsOk = true;
    for (auto [e, at] : {std::pair{lo, f.lo.get()}, std::pair{hi, f.hi.get()}}) {
      ConstResult r = evalConstant(e);
      if (r.kind == ConstResult::DivByZero || r.kind == ConstResult::Overflow) {
        diags_.error(r.at.valid() ? SourceRange(r.at) : at->range,
                     "bound of loop '" + f.var.name + "' " +
                         (r.kind == ConstResult::DivByZero ? "divides by zero" : "overflows i64"));
        boundsOk = false;
      }
    }
    if (!boundsOk) {
      failed_ = true;
      return {};
    }
    Expr extent = hi - lo;
    if (auto l = asConstInt(lo), h = asConstInt(hi); l && h) {
      std::optional<int64_t> n = checkedSub(*h, *l);
      if (!n) {
        diags_.error(SourceRange(f.lo->range.begin, f.hi->range.end),
                     "the extent of loop '" + f.var.name + "' overflows i64");
        failed_ = true;
        return {};
      }
      extent = intImm(*n);
    } else if (isConstInt(lo, 0)) {
      extent = hi;
    }
    Var v(f.var.name, DType::i64(), locOf(f.var));
    scopes_.push();
    scopes_.declare(f.var.name,
                    Symbol{SymbolKind::LoopVar, v, Buffer(), f.var.range, IterKind::Spatial},
                    diags_);
    ++loopDepth_;
    std::vector<Stmt> body = items(f.body, true);
    --loopDepth_;
    scopes_.pop();
    ForKind kind = ForKind::Serial;
    switch (f.loopKind) {
    case ast::LoopKind::Parallel:
      kind = ForKind::Parallel;
      break;
    case ast::LoopKind::Vectorized:
      kind = ForKind::Vectorized;
      break;
    case ast::LoopKind::Unrolled:
      kind = ForKind::Unrolled;
      break;
    case ast::LoopKind::Thread:
      kind = ForKind::ThreadBinding;
      break;
    default:
      break;
    }
    return For::make(v, lo, extent, kind, seq(body), f.threadTag, locOf(f));
  }

  /// A block; errors in its header do not stop the checks of its body.
  Stmt block(const ast::BlockStmt &b, bool inLoop) {
    bool anyBound = false, allBound = true, ok = true;
    // Schedules name blocks, so a block name is declared once per function.
    if (auto [prev, fresh] = blockNames_.emplace(b.name.name, b.name.range); !fresh) {
      diags_.error(b.name.range, "redefinition of block '" + b.name.name + "'")
          .note(prev->second, "previous definition is here");
      ok = false;
    }
    for (const ast::Axis &a : b.axes) {
      anyBound |= a.binding != nullptr;
      allBound &= a.binding != nullptr;
    }
    if (anyBound && !allBound) {
      for (const ast::Axis &a : b.axes)
        if (!a.binding) {
          diags_.error(a.range, "block '" + b.name.name + "' binds some axes but not '" +
                                    a.name.name + "'; a block binds all its axes or none");
          break;
        }
      ok = false;
    }
    if (inLoop && !anyBound && !b.axes.empty()) {
      diags_.error(
          b.name.range,
          "block '" + b.name.name +
              "' inside a loop must bind its axes to loop variables (axis: kind EXTENT = EXPR)");
      ok = false;
    }
    // Axes: extents and bindings see shape variables, constants and loop variables.
    std::vector<IterVar> iters;
    for (const ast::Axis &a : b.axes) {
      IterVar iv;
      iv.kind = a.kind == ast::AxisKind::Reduce ? IterKind::Reduce : IterKind::Spatial;
      iv.extent = loopExpr(*a.extent);
      if (iv.extent.defined() &&
          !checkExtent(iv.extent, a.extent->range, "extent of axis '" + a.name.name + "'", diags_))
        iv.extent = Expr();
      if (a.binding)
        iv.binding = loopExpr(*a.binding);
      iv.loc = locOf(a);
      if (!iv.extent.defined() || (a.binding && !iv.binding.defined()))
        ok = false;
      // Short form: the axis is named as written; its loop gets the same name and the axis a
      // `v` prefix, as TensorIR prints it (`for i … block Y(vi: spatial 128 = i)`).
      iv.var = Var(anyBound ? a.name.name : "v" + a.name.name, DType::i64(), locOf(a));
      iters.push_back(iv);
    }
    // The axes are in scope from here on; `where` sees loop variables but not the axes.
    scopes_.push();
    for (size_t i = 0; i < b.axes.size(); ++i)
      ok &= scopes_.declare(
          b.axes[i].name.name,
          Symbol{SymbolKind::Axis, iters[i].var, Buffer(), b.axes[i].name.range, iters[i].kind},
          diags_);
    Expr predicate;
    if (b.where) {
      ExprChecker ec{scopes_, diags_};
      ec.axesVisible = blockDepth_ > 0;
      predicate = ec.check(*b.where, DType::boolean());
      if (predicate.defined() && !predicate.dtype().isBool()) {
        diags_.error(b.where->range,
                     "'where' condition must be bool, got " + predicate.dtype().name());
        predicate = Expr();
      }
      if (!predicate.defined())
        ok = false;
    }
    BlockBody body = blockBody(b);
    scopes_.pop();
    if (!ok || !body.ok) {
      failed_ = true;
      return {};
    }
    Stmt blockStmt;
    if (anyBound || b.axes.empty()) {
      blockStmt = Block::make(b.name.name, iters, predicate, body.init, body.body, {}, {},
                              body.allocs, locOf(b));
      return blockStmt;
    }
    // Short form: one loop per axis, outermost first.
    std::vector<Var> loops;
    for (size_t i = 0; i < iters.size(); ++i) {
      loops.emplace_back(b.axes[i].name.name, DType::i64(), locOf(b.axes[i]));
      iters[i].binding = VarRef::make(loops.back());
    }
    Stmt s = Block::make(b.name.name, iters, predicate, body.init, body.body, {}, {}, body.allocs,
                         locOf(b));
    for (size_t i = iters.size(); i-- > 0;)
      s = For::make(loops[i], intImm(0), iters[i].extent, ForKind::Serial, s, {}, locOf(b.axes[i]));
    return s;
  }

  struct BlockBody {
    Stmt init, body;
    std::vector<Buffer> allocs;
    bool ok = true;
  };

  BlockBody blockBody(const ast::BlockStmt &b) {
    BlockBody out;
    bool hasReduce = false;
    for (const ast::Axis &a : b.axes)
      hasReduce |= a.kind == ast::AxisKind::Reduce;
    const ast::InitStmt *init = nullptr;
    std::vector<const ast::Stmt *> stmts, nested;
    for (const ast::StmtPtr &s : b.body) {
      if (auto *i = s->as<ast::InitStmt>()) {
        if (init) {
          diags_.error(i->range, "block '" + b.name.name + "' has more than one init")
              .note(init->range, "first init is here");
          out.ok = false;
        } else if (!hasReduce) {
          diags_.error(i->range, "init in block '" + b.name.name + "', which has no reduce axis");
          out.ok = false;
        }
        init = i;
      } else if (auto *a = s->as<ast::AllocStmt>()) {
        if (Buffer buf = alloc(*a); buf.defined())
          out.allocs.push_back(buf);
        else
          out.ok = false;
      } else if (s->kind == ast::StmtKind::For || s->kind == ast::StmtKind::Block) {
        nested.push_back(s.get());
      } else {
        stmts.push_back(s.get());
      }
    }
    // A block whose body is loops and blocks (what blockize makes): the inner blocks compute,
    // the outer one only groups them.
    if (!nested.empty()) {
      if (!stmts.empty()) {
        diags_.error(stmts.front()->range,
                     "block '" + b.name.name +
                         "' holds nested loops or blocks, so its body cannot also hold statements");
        out.ok = false;
      }
      if (init) {
        diags_.error(init->range, "block '" + b.name.name +
                                      "' holds nested blocks; put init in the inner block");
        out.ok = false;
      }
      ++blockDepth_;
      bool failedBefore = failed_;
      out.body = seq(items(nested, /*inLoop=*/true));
      out.ok &= failed_ == failedBefore;
      --blockDepth_;
      return out;
    }
    // Init runs first; its statements get a scope of their own. The body's statements share
    // the scope of the axes, so a `let` may not redeclare an axis.
    if (init) {
      std::vector<const ast::Stmt *> initStmts;
      for (const ast::StmtPtr &s : init->body)
        initStmts.push_back(s.get());
      Writes initWritten;
      scopes_.push();
      out.init = stmtList(initStmts, 0, initWritten, out.ok);
      scopes_.pop();
      // Rule 4: init writes only what the block writes.
      std::set<const BufferNode *> bodyWrites;
      for (const ast::Stmt *s : stmts)
        storedBuffers(*s, bodyWrites);
      for (auto [buf, at] : initWritten)
        if (!bodyWrites.count(buf)) {
          diags_.error(at, "init of block '" + b.name.name + "' writes '" + buf->name +
                               "', which the block body does not write");
          out.ok = false;
        }
    }
    Writes written;
    out.body = stmtList(stmts, 0, written, out.ok);
    if (!out.body.defined())
      out.body = seq({});
    return out;
  }

  /// The buffers `s` stores to, looked up in the current scope (a `let` cannot name a buffer).
  void storedBuffers(const ast::Stmt &s, std::set<const BufferNode *> &out) const {
    if (auto *st = s.as<ast::StoreStmt>()) {
      const Symbol *sym = scopes_.lookup(st->buffer.name);
      if (sym && sym->kind == SymbolKind::Buffer)
        out.insert(sym->buffer.get());
    } else if (auto *is = s.as<ast::IfStmt>()) {
      for (const ast::StmtPtr &t : is->thenBody)
        storedBuffers(*t, out);
      for (const ast::StmtPtr &e : is->elseBody)
        storedBuffers(*e, out);
    }
  }

  /// Statements from `i` on, in the innermost scope (the caller pushes it); a `let` is declared
  /// there and scopes over the statements after it.
  Stmt stmtList(const std::vector<const ast::Stmt *> &list, size_t i, Writes &written, bool &ok) {
    std::vector<Stmt> out;
    for (; i < list.size(); ++i) {
      const ast::Stmt &s = *list[i];
      if (auto *let = s.as<ast::LetStmt>()) {
        ExprChecker ec{scopes_, diags_};
        ec.loopVarsVisible = false;
        Expr v = ec.check(*let->value, std::nullopt);
        if (!v.defined()) {
          // Later uses of the name fail quietly instead of as undeclared.
          scopes_.declare(let->name.name,
                          Symbol{SymbolKind::Invalid, Var(), Buffer(), let->name.range}, diags_);
          ok = false;
          continue;
        }
        Var var(let->name.name, v.dtype(), locOf(*let));
        if (!scopes_.declare(let->name.name,
                             Symbol{SymbolKind::Let, var, Buffer(), let->name.range}, diags_))
          ok = false;
        Stmt rest = stmtList(list, i + 1, written, ok);
        out.push_back(LetStmt::make(var, v, rest.defined() ? rest : seq({}), locOf(*let)));
        return seq(out);
      }
      if (Stmt st = stmt(s, written, ok); st.defined())
        out.push_back(st);
    }
    return seq(out);
  }

  Stmt stmt(const ast::Stmt &s, Writes &written, bool &ok) {
    if (auto *st = s.as<ast::StoreStmt>())
      return store(*st, written, ok);
    if (auto *is = s.as<ast::IfStmt>()) {
      ExprChecker ec{scopes_, diags_};
      ec.loopVarsVisible = false;
      Expr cond = ec.check(*is->cond, DType::boolean());
      if (cond.defined() && !cond.dtype().isBool()) {
        diags_.error(is->cond->range, "'if' condition must be bool, got " + cond.dtype().name());
        cond = Expr();
      }
      std::vector<const ast::Stmt *> thenList, elseList;
      for (auto &t : is->thenBody)
        thenList.push_back(t.get());
      for (auto &e : is->elseBody)
        elseList.push_back(e.get());
      scopes_.push();
      Stmt thenS = stmtList(thenList, 0, written, ok);
      scopes_.pop();
      scopes_.push();
      Stmt elseS = is->hasElse ? stmtList(elseList, 0, written, ok) : Stmt();
      scopes_.pop();
      if (!cond.defined()) {
        ok = false;
        return {};
      }
      return IfThenElse::make(cond, thenS, elseS, locOf(*is));
    }
    if (s.kind == ast::StmtKind::Init) {
      diags_.error(s.range, "init must be a direct statement of its block");
      ok = false;
    }
    return {};
  }

  /// A store; `+=`, `-=` and `*=` become `BUF[..] = BUF[..] op EXPR`. Reports every error of
  /// the statement and clears `ok` on one.
  Stmt store(const ast::StoreStmt &st, Writes &written, bool &ok) {
    const Symbol *sym = scopes_.lookup(st.buffer.name);
    if (!sym) {
      if (!scopes_.reportConstantUse(st.buffer.name, st.buffer.range, diags_))
        diags_.error(st.buffer.range, "use of undeclared buffer '" + st.buffer.name + "'");
      ok = false;
      return {};
    }
    if (sym->kind == SymbolKind::Invalid) {
      ok = false;
      return {};
    }
    if (sym->kind != SymbolKind::Buffer) {
      diags_
          .error(st.buffer.range,
                 "'" + st.buffer.name + "' is not a buffer; only buffers can be stored to")
          .note(sym->range, "declared here");
      ok = false;
      return {};
    }
    Buffer buf = sym->buffer;
    // The block writes `buf` even if this statement has errors: rule 4 must not cascade.
    written.emplace(buf.get(), st.buffer.range);
    // Rule 5: inputs are read-only.
    if (buf.role() == BufferRole::Input) {
      diags_
          .error(st.buffer.range,
                 "cannot write to input '" + st.buffer.name + "'; inputs are read-only")
          .note(sym->range, "declared as an input here");
      ok = false;
      return {};
    }
    if (st.indices.size() != buf.rank()) {
      diags_
          .error(st.range, "buffer '" + st.buffer.name + "' has rank " +
                               std::to_string(buf.rank()) + " but is indexed with " +
                               std::to_string(st.indices.size()) +
                               (st.indices.size() == 1 ? " index" : " indices"))
          .note(sym->range, "declared here");
      ok = false;
      return {};
    }
    bool good = true;
    // Rule 3: a written buffer is indexed by spatial axes only.
    std::vector<const ast::NameExpr *> reduceRefs;
    for (const ast::ExprPtr &i : st.indices)
      reduceAxesIn(*i, scopes_, reduceRefs);
    for (const ast::NameExpr *r : reduceRefs) {
      diags_
          .error(r->range, "written buffer '" + st.buffer.name + "' is indexed by reduce axis '" +
                               r->name + "'; only spatial axes may index what a block writes")
          .note(scopes_.lookup(r->name)->range, "'" + r->name + "' is declared reduce here");
      good = false;
    }
    ExprChecker ec{scopes_, diags_};
    ec.loopVarsVisible = false;
    // The load of the target for `+=` and friends shares the index expressions.
    std::vector<Expr> idx;
    if (reduceRefs.empty())
      for (const ast::ExprPtr &i : st.indices) {
        idx.push_back(ec.index(*i));
        good &= idx.back().defined();
      }
    Expr value = ec.check(*st.value, buf.dtype(), /*allowStorage=*/true);
    if (value.defined() && value.dtype() != buf.dtype()) {
      diags_.error(st.value->range, "cannot store " + value.dtype().name() + " into '" +
                                        st.buffer.name + "' of dtype " + buf.dtype().name() +
                                        "; convert it with " + buf.dtype().name() + "(...)");
      value = Expr();
    }
    if (value.defined() && st.op != ast::AssignOp::Set &&
        (isStorageOnly(buf.dtype()) || buf.dtype().isBool())) {
      diags_.error(st.range, std::string("'") + spelling(st.op) + "' on a " + buf.dtype().name() +
                                 " buffer; write the update explicitly");
      value = Expr();
    }
    if (!good || !value.defined()) {
      ok = false;
      return {};
    }
    if (st.op != ast::AssignOp::Set) {
      Expr old = BufferLoad::make(buf, idx, locOf(st));
      value = st.op == ast::AssignOp::Add   ? Add::make(old, value, locOf(st))
              : st.op == ast::AssignOp::Sub ? Sub::make(old, value, locOf(st))
                                            : Mul::make(old, value, locOf(st));
    }
    return BufferStore::make(buf, value, idx, locOf(st));
  }

  const ast::FuncDecl &f_;
  std::string name_;
  DiagnosticEngine &diags_;
  Scopes scopes_;
  std::vector<Buffer> rootAllocs_;
  std::map<std::string, SourceRange> blockNames_; // a separate name space from buffers
  int loopDepth_ = 0;
  int blockDepth_ = 0; // blocks enclosing the statement being checked
  bool failed_ = false;
};

} // namespace

Func buildFunc(const ast::FuncDecl &f, const std::string &name, DiagnosticEngine &diags,
               const ConstTable *constants) {
  unsigned before = diags.errorCount();
  Func fn = FuncBuilder(f, name, diags, constants).build();
  if (diags.errorCount() != before)
    return {};
  return fn;
}

} // namespace sema

std::optional<ir::Module> buildIR(const std::vector<ast::Module *> &modules,
                                  DiagnosticEngine &diags) {
  ir::Module out;
  if (modules.empty())
    return std::nullopt;
  const ast::Module &main = *modules.front();
  for (const ast::ImportDecl *imp : main.imports())
    out.imports.push_back(imp->path);
  unsigned before = diags.errorCount();
  sema::FuncTable table;
  // Imported modules first (qualified names), so that the main module's graphs find them.
  for (size_t m = modules.size(); m-- > 0;) {
    const ast::Module &mod = *modules[m];
    std::string prefix = m == 0 ? "" : mod.name + ".";
    // Graph constants (spec §8): visible to the graphs of their module.
    sema::ConstTable constants = sema::buildConstants(mod, prefix, out, diags);
    for (const ast::ItemPtr &item : mod.items) {
      ir::Func fn;
      if (auto *f = item->as<ast::FuncDecl>())
        fn = sema::buildFunc(*f, prefix + f->name.name, diags, &constants);
      else if (auto *e = item->as<ast::ExternDecl>())
        fn = sema::buildExtern(*e, prefix + e->name.name, diags);
      else
        continue;
      if (!fn.defined() || out.lookup(fn.name()).defined())
        continue;
      table[item.get()] = fn;
      out.add(fn);
    }
    // Graphs and grad items, each after the graphs it calls and the F it differentiates.
    for (const ast::Item *item : sema::graphOrder(mod, diags)) {
      ir::Func fn;
      if (auto *g = item->as<ast::GraphDecl>())
        fn = sema::buildGraph(*g, prefix + g->name.name, table, diags, &constants);
      else if (auto *d = item->as<ast::GradDecl>())
        fn = sema::buildGradSignature(*d, prefix, table, out, diags);
      if (!fn.defined() || out.lookup(fn.name()).defined())
        continue;
      table[item] = fn;
      out.add(fn);
    }
    sema::buildIntrinsics(mod, prefix, table, out, diags);
  }
  sema::checkAccesses(out, diags);
  if (diags.errorCount() != before)
    return std::nullopt;
  return out;
}

} // namespace tdsl

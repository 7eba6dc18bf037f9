//===- frontend/AST.cpp -----------------------------------------------------------------------===//
//
// Implementation of frontend/AST.h.

#include "frontend/AST.h"

#include <type_traits>

namespace tdsl::ast {

std::string QualifiedName::str() const {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? "." : "") + parts[i];
  return out;
}

const char *spelling(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "!"; }

namespace {

/// The text frontend/AST.def gives the enumerator `e` of one of its enums.
template <typename E> const char *spellingOf(E e) {
#define TDSL_AST_ENUMERATOR(ENUM, NAME, TEXT)                                                      \
  if constexpr (std::is_same_v<E, ENUM>)                                                           \
    if (e == ENUM::NAME)                                                                           \
      return TEXT;
#include "frontend/AST.def"
  return "?";
}

} // namespace

const char *spelling(BinaryOp op) { return spellingOf(op); }
const char *spelling(AssignOp op) { return spellingOf(op); }
const char *spelling(LoopKind kind) { return spellingOf(kind); }
const char *spelling(Scope s) { return spellingOf(s); }
const char *spelling(ItemKind kind) { return spellingOf(kind); }

const char *noun(ItemKind kind) {
  switch (kind) {
#define TDSL_AST_ITEM_KIND(NAME, KEYWORD, NOUN)                                                    \
  case ItemKind::NAME:                                                                             \
    return NOUN;
#include "frontend/AST.def"
  }
  return "item";
}

std::vector<const ImportDecl *> Module::imports() const {
  std::vector<const ImportDecl *> out;
  for (const ItemPtr &item : items)
    if (auto *imp = item->as<ImportDecl>())
      out.push_back(imp);
  return out;
}

const std::string &declaredName(const Item &item) {
  static const std::string empty;
  if (auto *f = item.as<FuncDecl>())
    return f->name.name;
  if (auto *g = item.as<GraphDecl>())
    return g->name.name;
  if (auto *e = item.as<ExternDecl>())
    return e->name.name;
  if (auto *c = item.as<ConstDecl>())
    return c->name.name;
  if (auto *d = item.as<GradDecl>())
    return d->name.name;
  return empty;
}

const Item *Module::findCallable(const std::string &name) const {
  for (const ItemPtr &item : items)
    if (item->kind != ItemKind::Const && !declaredName(*item).empty() &&
        declaredName(*item) == name)
      return item.get();
  return nullptr;
}

const ConstDecl *Module::findConst(const std::string &name) const {
  for (const ItemPtr &item : items)
    if (const auto *c = item->as<ConstDecl>(); c && c->name.name == name)
      return c;
  return nullptr;
}

namespace {

/// `copy` of each element of `xs`, in order.
template <typename T, typename Copy>
std::vector<std::invoke_result_t<Copy, const T &>> each(const std::vector<T> &xs, Copy copy) {
  std::vector<std::invoke_result_t<Copy, const T &>> out;
  for (const T &x : xs)
    out.push_back(copy(x));
  return out;
}

/// Copies nodes, moving every valid location into one file.
class Cloner {
public:
  explicit Cloner(uint32_t file) : file_(file) {}

  SourceRange range(SourceRange r) const { return SourceRange(loc(r.begin), loc(r.end)); }

  Ident ident(const Ident &i) const {
    Ident c = i;
    c.range = range(i.range);
    return c;
  }
  std::vector<Ident> idents(const std::vector<Ident> &is) const {
    return each(is, [&](const Ident &i) { return ident(i); });
  }
  QualifiedName qualified(const QualifiedName &q) const {
    QualifiedName c = q;
    c.range = range(q.range);
    return c;
  }

  ExprPtr expr(const ExprPtr &e) const {
    if (!e)
      return nullptr;
    switch (e->kind) {
    case ExprKind::Int:
      return leaf(*static_cast<const IntLit *>(e.get()));
    case ExprKind::Float:
      return leaf(*static_cast<const FloatLit *>(e.get()));
    case ExprKind::Bool:
      return leaf(*static_cast<const BoolLit *>(e.get()));
    case ExprKind::Inf:
      return leaf(*static_cast<const InfLit *>(e.get()));
    case ExprKind::Name:
      return leaf(*static_cast<const NameExpr *>(e.get()));
    case ExprKind::Load: {
      const auto &from = *static_cast<const LoadExpr *>(e.get());
      auto c = fresh(from);
      c->buffer = ident(from.buffer);
      c->indices = exprs(from.indices);
      return c;
    }
    case ExprKind::Call: {
      const auto &from = *static_cast<const CallExpr *>(e.get());
      auto c = fresh(from);
      c->callee = ident(from.callee);
      c->args = exprs(from.args);
      return c;
    }
    case ExprKind::Unary: {
      const auto &from = *static_cast<const UnaryExpr *>(e.get());
      auto c = fresh(from);
      c->op = from.op;
      c->operand = expr(from.operand);
      return c;
    }
    case ExprKind::Binary: {
      const auto &from = *static_cast<const BinaryExpr *>(e.get());
      auto c = fresh(from);
      c->op = from.op;
      c->lhs = expr(from.lhs);
      c->rhs = expr(from.rhs);
      return c;
    }
    }
    return nullptr;
  }
  std::vector<ExprPtr> exprs(const std::vector<ExprPtr> &es) const {
    return each(es, [&](const ExprPtr &e) { return expr(e); });
  }

  Type type(const Type &t) const {
    Type c;
    c.range = range(t.range);
    c.dtype = ident(t.dtype);
    c.isTensor = t.isTensor;
    c.dims = exprs(t.dims);
    return c;
  }
  std::vector<Param> params(const std::vector<Param> &ps) const {
    std::vector<Param> out;
    for (const Param &p : ps) {
      Param c;
      c.range = range(p.range);
      c.name = ident(p.name);
      c.type = type(p.type);
      out.push_back(std::move(c));
    }
    return out;
  }
  std::vector<GenericParam> generics(const std::vector<GenericParam> &gs) const {
    std::vector<GenericParam> out;
    for (const GenericParam &g : gs) {
      GenericParam c;
      c.range = range(g.range);
      c.name = ident(g.name);
      c.dtype = ident(g.dtype);
      out.push_back(std::move(c));
    }
    return out;
  }

  StmtPtr stmt(const StmtPtr &s) const {
    switch (s->kind) {
    case StmtKind::Store: {
      const auto &from = *static_cast<const StoreStmt *>(s.get());
      auto c = fresh(from);
      c->buffer = ident(from.buffer);
      c->indices = exprs(from.indices);
      c->op = from.op;
      c->value = expr(from.value);
      return c;
    }
    case StmtKind::Let: {
      const auto &from = *static_cast<const LetStmt *>(s.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->value = expr(from.value);
      return c;
    }
    case StmtKind::If: {
      const auto &from = *static_cast<const IfStmt *>(s.get());
      auto c = fresh(from);
      c->cond = expr(from.cond);
      c->thenBody = stmts(from.thenBody);
      c->elseBody = stmts(from.elseBody);
      c->hasElse = from.hasElse;
      return c;
    }
    case StmtKind::Init: {
      const auto &from = *static_cast<const InitStmt *>(s.get());
      auto c = fresh(from);
      c->body = stmts(from.body);
      return c;
    }
    case StmtKind::Alloc: {
      const auto &from = *static_cast<const AllocStmt *>(s.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->type = type(from.type);
      c->scope = from.scope;
      c->scopeWritten = from.scopeWritten;
      for (const AllocStmt::Align &a : from.aligns) {
        AllocStmt::Align ca;
        ca.range = range(a.range);
        ca.axis = expr(a.axis);
        ca.factor = expr(a.factor);
        ca.offset = expr(a.offset);
        c->aligns.push_back(std::move(ca));
      }
      return c;
    }
    case StmtKind::For: {
      const auto &from = *static_cast<const ForStmt *>(s.get());
      auto c = fresh(from);
      c->var = ident(from.var);
      c->lo = expr(from.lo);
      c->hi = expr(from.hi);
      c->loopKind = from.loopKind;
      c->kindWritten = from.kindWritten;
      c->threadTag = from.threadTag;
      c->body = stmts(from.body);
      return c;
    }
    case StmtKind::Block: {
      const auto &from = *static_cast<const BlockStmt *>(s.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      for (const Axis &a : from.axes) {
        Axis ca;
        ca.range = range(a.range);
        ca.name = ident(a.name);
        ca.kind = a.kind;
        ca.extent = expr(a.extent);
        ca.binding = expr(a.binding);
        c->axes.push_back(std::move(ca));
      }
      c->where = expr(from.where);
      c->body = stmts(from.body);
      return c;
    }
    }
    return nullptr;
  }
  std::vector<StmtPtr> stmts(const std::vector<StmtPtr> &ss) const {
    return each(ss, [&](const StmtPtr &s) { return stmt(s); });
  }

  CallValue call(const CallValue &v) const {
    CallValue c;
    c.range = range(v.range);
    c.callee = qualified(v.callee);
    c.constArgs = exprs(v.constArgs);
    c.args = exprs(v.args);
    if (v.declaredType)
      c.declaredType = type(*v.declaredType);
    return c;
  }

  GraphStmtPtr graphStmt(const GraphStmtPtr &s) const {
    switch (s->kind) {
    case GraphStmtKind::Dataflow: {
      const auto &from = *static_cast<const DataflowStmt *>(s.get());
      auto c = fresh(from);
      for (const GraphStmtPtr &b : from.body)
        c->body.push_back(graphStmt(b));
      return c;
    }
    case GraphStmtKind::Output: {
      const auto &from = *static_cast<const OutputStmt *>(s.get());
      auto c = fresh(from);
      c->names = idents(from.names);
      return c;
    }
    case GraphStmtKind::Return: {
      const auto &from = *static_cast<const ReturnStmt *>(s.get());
      auto c = fresh(from);
      c->names = idents(from.names);
      return c;
    }
    case GraphStmtKind::Bind: {
      const auto &from = *static_cast<const BindStmt *>(s.get());
      auto c = fresh(from);
      c->targets = idents(from.targets);
      c->call = call(from.call);
      return c;
    }
    case GraphStmtKind::Call: {
      const auto &from = *static_cast<const CallStmt *>(s.get());
      auto c = fresh(from);
      c->call = call(from.call);
      return c;
    }
    case GraphStmtKind::Reshape: {
      const auto &from = *static_cast<const ReshapeStmt *>(s.get());
      auto c = fresh(from);
      c->target = ident(from.target);
      c->source = ident(from.source);
      c->shape = exprs(from.shape);
      return c;
    }
    }
    return nullptr;
  }

  SchedArg schedArg(const SchedArg &a) const {
    SchedArg c;
    c.range = range(a.range);
    c.kind = a.kind;
    c.expr = expr(a.expr);
    c.str = a.str;
    for (const SchedArg &e : a.list)
      c.list.push_back(schedArg(e));
    c.lambdaParams = idents(a.lambdaParams);
    return c;
  }

  ItemPtr item(const ItemPtr &i) const {
    switch (i->kind) {
    case ItemKind::Import: {
      const auto &from = *static_cast<const ImportDecl *>(i.get());
      auto c = fresh(from);
      c->path = from.path;
      c->pathRange = range(from.pathRange);
      c->prefix = from.prefix;
      return c;
    }
    case ItemKind::Const: {
      const auto &from = *static_cast<const ConstDecl *>(i.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->type = type(from.type);
      c->source = from.source;
      c->text = from.text;
      c->textRange = range(from.textRange);
      return c;
    }
    case ItemKind::Func: {
      const auto &from = *static_cast<const FuncDecl *>(i.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->generics = generics(from.generics);
      c->inputs = params(from.inputs);
      c->outputs = params(from.outputs);
      c->body = stmts(from.body);
      return c;
    }
    case ItemKind::Extern: {
      const auto &from = *static_cast<const ExternDecl *>(i.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->pure = from.pure;
      c->inputs = params(from.inputs);
      c->outputs = params(from.outputs);
      c->symbol = from.symbol;
      c->symbolRange = range(from.symbolRange);
      return c;
    }
    case ItemKind::Graph: {
      const auto &from = *static_cast<const GraphDecl *>(i.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->generics = generics(from.generics);
      c->inputs = params(from.inputs);
      for (const Type &t : from.results)
        c->results.push_back(type(t));
      c->tupleResult = from.tupleResult;
      for (const GraphStmtPtr &s : from.body)
        c->body.push_back(graphStmt(s));
      return c;
    }
    case ItemKind::Schedule: {
      const auto &from = *static_cast<const ScheduleDecl *>(i.get());
      auto c = fresh(from);
      c->func = qualified(from.func);
      if (from.target)
        c->target = ident(*from.target);
      for (const SchedParam &p : from.params) {
        SchedParam cp;
        cp.range = range(p.range);
        cp.name = ident(p.name);
        cp.value = expr(p.value);
        c->params.push_back(std::move(cp));
      }
      for (const SchedStmt &st : from.body) {
        SchedStmt cs;
        cs.range = range(st.range);
        cs.targets = idents(st.targets);
        cs.primitive = ident(st.primitive);
        for (const SchedArg &a : st.args)
          cs.args.push_back(schedArg(a));
        c->body.push_back(std::move(cs));
      }
      c->deferred = from.deferred;
      return c;
    }
    case ItemKind::Grad: {
      const auto &from = *static_cast<const GradDecl *>(i.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->func = qualified(from.func);
      c->wrt = idents(from.wrt);
      return c;
    }
    case ItemKind::Intrinsic: {
      const auto &from = *static_cast<const IntrinsicDecl *>(i.get());
      auto c = fresh(from);
      c->name = ident(from.name);
      c->desc = ident(from.desc);
      c->impl = ident(from.impl);
      return c;
    }
    }
    return nullptr;
  }

private:
  SourceLoc loc(SourceLoc l) const {
    if (l.valid())
      l.file = file_;
    return l;
  }
  /// A node of `from`'s type with its range; the caller copies the fields.
  template <typename T> std::unique_ptr<T> fresh(const T &from) const {
    auto c = std::make_unique<T>();
    c->range = range(from.range);
    return c;
  }
  /// A copy of a node without children.
  template <typename T> std::unique_ptr<T> leaf(const T &from) const {
    auto c = std::make_unique<T>(from);
    c->range = range(from.range);
    return c;
  }

  uint32_t file_;
};

} // namespace

std::unique_ptr<Module> cloneModule(const Module &m, uint32_t fileId) {
  Cloner cloner(fileId);
  auto c = std::make_unique<Module>();
  c->path = m.path;
  c->name = m.name;
  c->fileId = fileId;
  for (const ItemPtr &item : m.items)
    c->items.push_back(cloner.item(item));
  return c;
}

} // namespace tdsl::ast

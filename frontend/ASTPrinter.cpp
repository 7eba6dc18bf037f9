//===- frontend/ASTPrinter.cpp ----------------------------------------------------------------===//
//
// Implementation of frontend/ASTPrinter.h.

#include "frontend/ASTPrinter.h"

#include "ir/IRPrinter.h"

#include <ostream>

namespace tdsl {
namespace {

std::string joinExprs(const std::vector<ast::ExprPtr> &list) {
  std::string out;
  for (size_t i = 0; i < list.size(); ++i)
    out += (i ? ", " : "") + exprToString(*list[i]);
  return out;
}

std::string typeToString(const ast::Type &t) {
  if (!t.isTensor)
    return t.dtype.name;
  return t.dtype.name + "[" + joinExprs(t.dims) + "]";
}

std::string quoted(const std::string &s) { return ir::quoteString(s); }

std::string schedArgToString(const ast::SchedArg &a) {
  switch (a.kind) {
  case ast::SchedArgKind::Expr:
    return exprToString(*a.expr);
  case ast::SchedArgKind::String:
    return quoted(a.str);
  case ast::SchedArgKind::List:
  case ast::SchedArgKind::Lambda: {
    std::string out;
    if (a.kind == ast::SchedArgKind::Lambda) {
      out = "(";
      for (size_t i = 0; i < a.lambdaParams.size(); ++i)
        out += (i ? ", " : "") + a.lambdaParams[i].name;
      out += ") => (";
    } else {
      out = "[";
    }
    for (size_t i = 0; i < a.list.size(); ++i)
      out += (i ? ", " : "") + schedArgToString(a.list[i]);
    return out + (a.kind == ast::SchedArgKind::Lambda ? ")" : "]");
  }
  }
  return "?";
}

class Dumper {
public:
  explicit Dumper(std::ostream &os) : os_(os) {}

  void module(const ast::Module &m, const std::string &only) {
    os_ << "Module " << m.name << "\n";
    for (const ast::ItemPtr &item : m.items) {
      if (!only.empty() && item->kind != ast::ItemKind::Import && declaredName(*item) != only) {
        auto *s = item->as<ast::ScheduleDecl>();
        if (!s || s->func.str() != only)
          continue;
      }
      this->item(*item, 1);
    }
  }

private:
  using Node = ast::Node;
  std::ostream &line(unsigned depth) { return os_ << std::string(depth * 2, ' '); }
  static std::string loc(const Node &n) {
    return " <" + std::to_string(n.range.begin.line) + ":" + std::to_string(n.range.begin.col) +
           ">";
  }

  void params(const char *label, const std::vector<ast::Param> &ps, unsigned depth) {
    for (const ast::Param &p : ps)
      line(depth) << label << " " << p.name.name << ": " << typeToString(p.type) << loc(p) << "\n";
  }
  void generics(const std::vector<ast::GenericParam> &gs, unsigned depth) {
    for (const ast::GenericParam &g : gs)
      line(depth) << "Generic " << g.name.name << ": " << g.dtype.name << loc(g) << "\n";
  }

  void item(const ast::Item &item, unsigned d) {
    if (auto *i = item.as<ast::ImportDecl>()) {
      line(d) << "Import " << quoted(i->path) << " as " << (i->prefix.empty() ? "?" : i->prefix)
              << loc(*i) << "\n";
    } else if (auto *c = item.as<ast::ConstDecl>()) {
      line(d) << "Const " << c->name.name << ": " << typeToString(c->type) << " = ";
      if (c->source == ast::ConstDecl::Source::Load)
        os_ << "load(" << quoted(c->text) << ")"
            << (c->resolvedPath.empty() ? "" : " [" + c->resolvedPath + "]");
      else
        os_ << "hex(" << c->text.size() / 2 << " bytes)";
      os_ << loc(*c) << "\n";
    } else if (auto *f = item.as<ast::FuncDecl>()) {
      line(d) << "Func " << f->name.name << loc(*f) << "\n";
      generics(f->generics, d + 1);
      params("Input", f->inputs, d + 1);
      params("Output", f->outputs, d + 1);
      for (const ast::StmtPtr &s : f->body)
        stmt(*s, d + 1);
    } else if (auto *g = item.as<ast::GradDecl>()) {
      line(d) << "Grad " << g->name.name << " = " << g->func.str() << " wrt (";
      for (size_t i = 0; i < g->wrt.size(); ++i)
        os_ << (i ? ", " : "") << g->wrt[i].name;
      os_ << ")" << loc(*g) << "\n";
    } else if (auto *t = item.as<ast::IntrinsicDecl>()) {
      line(d) << "Intrinsic " << t->name.name << "(desc " << t->desc.name << ", impl "
              << t->impl.name << ")" << loc(*t) << "\n";
    } else if (auto *e = item.as<ast::ExternDecl>()) {
      line(d) << "Extern " << (e->pure ? "pure " : "") << e->name.name << " = " << quoted(e->symbol)
              << loc(*e) << "\n";
      params("Input", e->inputs, d + 1);
      params("Output", e->outputs, d + 1);
    } else if (auto *g = item.as<ast::GraphDecl>()) {
      line(d) << "Graph " << g->name.name << loc(*g) << "\n";
      generics(g->generics, d + 1);
      params("Input", g->inputs, d + 1);
      for (const ast::Type &t : g->results)
        line(d + 1) << "Result " << typeToString(t) << loc(t) << "\n";
      for (const ast::GraphStmtPtr &s : g->body)
        graphStmt(*s, d + 1);
    } else if (auto *s = item.as<ast::ScheduleDecl>()) {
      line(d) << "Schedule " << s->func.str();
      if (s->target)
        os_ << " for " << s->target->name;
      os_ << (s->resolved ? " [func " + s->resolved->name.name + "]" : "") << loc(*s) << "\n";
      for (const ast::SchedParam &p : s->params)
        line(d + 1) << "Param " << p.name.name << " = " << exprToString(*p.value) << loc(p) << "\n";
      for (const ast::SchedStmt &st : s->body) {
        line(d + 1) << "Apply ";
        for (size_t i = 0; i < st.targets.size(); ++i)
          os_ << (i ? ", " : "") << st.targets[i].name;
        if (!st.targets.empty())
          os_ << " = ";
        os_ << st.primitive.name << "(";
        for (size_t i = 0; i < st.args.size(); ++i)
          os_ << (i ? ", " : "") << schedArgToString(st.args[i]);
        os_ << ")" << loc(st) << "\n";
      }
    }
  }

  void stmts(const std::vector<ast::StmtPtr> &list, unsigned d) {
    for (const ast::StmtPtr &s : list)
      stmt(*s, d);
  }

  void stmt(const ast::Stmt &s, unsigned d) {
    switch (s.kind) {
    case ast::StmtKind::Store: {
      auto &st = static_cast<const ast::StoreStmt &>(s);
      line(d) << "Store " << st.buffer.name << "[" << joinExprs(st.indices) << "] "
              << spelling(st.op) << " " << exprToString(*st.value) << loc(s) << "\n";
      return;
    }
    case ast::StmtKind::Let: {
      auto &st = static_cast<const ast::LetStmt &>(s);
      line(d) << "Let " << st.name.name << " = " << exprToString(*st.value) << loc(s) << "\n";
      return;
    }
    case ast::StmtKind::If: {
      auto &st = static_cast<const ast::IfStmt &>(s);
      line(d) << "If " << exprToString(*st.cond) << loc(s) << "\n";
      stmts(st.thenBody, d + 1);
      if (st.hasElse) {
        line(d) << "Else\n";
        stmts(st.elseBody, d + 1);
      }
      return;
    }
    case ast::StmtKind::Init: {
      line(d) << "Init" << loc(s) << "\n";
      stmts(static_cast<const ast::InitStmt &>(s).body, d + 1);
      return;
    }
    case ast::StmtKind::Alloc: {
      auto &st = static_cast<const ast::AllocStmt &>(s);
      line(d) << "Alloc " << st.name.name << ": " << typeToString(st.type) << " scope("
              << spelling(st.scope) << ")";
      for (const ast::AllocStmt::Align &a : st.aligns)
        os_ << " @align(" << exprToString(*a.axis) << ", " << exprToString(*a.factor) << ", "
            << exprToString(*a.offset) << ")";
      os_ << loc(s) << "\n";
      return;
    }
    case ast::StmtKind::For: {
      auto &st = static_cast<const ast::ForStmt &>(s);
      line(d) << "For " << st.var.name << " in " << exprToString(*st.lo) << ".."
              << exprToString(*st.hi) << " " << spelling(st.loopKind);
      if (st.loopKind == ast::LoopKind::Thread)
        os_ << "(" << quoted(st.threadTag) << ")";
      os_ << loc(s) << "\n";
      stmts(st.body, d + 1);
      return;
    }
    case ast::StmtKind::Block: {
      auto &st = static_cast<const ast::BlockStmt &>(s);
      line(d) << "Block " << st.name.name << loc(s) << "\n";
      for (const ast::Axis &a : st.axes) {
        line(d + 1) << "Axis " << a.name.name << ": "
                    << (a.kind == ast::AxisKind::Spatial ? "spatial " : "reduce ")
                    << exprToString(*a.extent);
        if (a.binding)
          os_ << " = " << exprToString(*a.binding);
        os_ << loc(a) << "\n";
      }
      if (st.where)
        line(d + 1) << "Where " << exprToString(*st.where) << "\n";
      stmts(st.body, d + 1);
      return;
    }
    }
  }

  void call(const ast::CallValue &c) {
    os_ << "call " << c.callee.str();
    if (!c.constArgs.empty())
      os_ << "<" << joinExprs(c.constArgs) << ">";
    os_ << "(" << joinExprs(c.args) << ")";
    if (c.declaredType)
      os_ << " -> " << typeToString(*c.declaredType);
    if (c.resolved)
      os_ << " [" << ast::spelling(c.resolved->kind) << " " << declaredName(*c.resolved) << "]";
  }

  void idents(const std::vector<ast::Ident> &ids) {
    for (size_t i = 0; i < ids.size(); ++i)
      os_ << (i ? ", " : "") << ids[i].name;
  }

  void graphStmt(const ast::GraphStmt &s, unsigned d) {
    if (auto *df = s.as<ast::DataflowStmt>()) {
      line(d) << "Dataflow" << loc(s) << "\n";
      for (const ast::GraphStmtPtr &inner : df->body)
        graphStmt(*inner, d + 1);
      return;
    }
    if (auto *r = s.as<ast::ReshapeStmt>()) {
      line(d) << "Reshape " << r->target.name << " = reshape(" << r->source.name << ", ["
              << joinExprs(r->shape) << "])" << loc(s) << "\n";
      return;
    }
    // Output, Return, Bind and Call: the keyword, the names, the call, then the location.
    if (auto *o = s.as<ast::OutputStmt>()) {
      line(d) << "Output ";
      idents(o->names);
    } else if (auto *r = s.as<ast::ReturnStmt>()) {
      line(d) << "Return ";
      idents(r->names);
    } else if (auto *b = s.as<ast::BindStmt>()) {
      line(d) << "Bind ";
      idents(b->targets);
      os_ << " = ";
      call(b->call);
    } else if (auto *c = s.as<ast::CallStmt>()) {
      line(d) << "Call ";
      call(c->call);
    }
    os_ << loc(s) << "\n";
  }

  std::ostream &os_;
};

} // namespace

std::string exprToString(const ast::Expr &e) {
  switch (e.kind) {
  case ast::ExprKind::Int:
    return static_cast<const ast::IntLit &>(e).text;
  case ast::ExprKind::Float:
    return static_cast<const ast::FloatLit &>(e).text;
  case ast::ExprKind::Bool:
    return static_cast<const ast::BoolLit &>(e).value ? "true" : "false";
  case ast::ExprKind::Inf:
    return "inf";
  case ast::ExprKind::Name:
    return static_cast<const ast::NameExpr &>(e).name;
  case ast::ExprKind::Load: {
    auto &l = static_cast<const ast::LoadExpr &>(e);
    return l.buffer.name + "[" + joinExprs(l.indices) + "]";
  }
  case ast::ExprKind::Call: {
    auto &c = static_cast<const ast::CallExpr &>(e);
    return c.callee.name + "(" + joinExprs(c.args) + ")";
  }
  case ast::ExprKind::Unary: {
    auto &u = static_cast<const ast::UnaryExpr &>(e);
    return std::string(spelling(u.op)) + exprToString(*u.operand);
  }
  case ast::ExprKind::Binary: {
    auto &b = static_cast<const ast::BinaryExpr &>(e);
    return "(" + exprToString(*b.lhs) + " " + spelling(b.op) + " " + exprToString(*b.rhs) + ")";
  }
  }
  return "?";
}

void dumpAST(const ast::Module &m, std::ostream &os, const std::string &only) {
  Dumper(os).module(m, only);
}

} // namespace tdsl

//===- frontend/AST.cpp -----------------------------------------------------------------------===//
//
// Implementation of frontend/AST.h.

#include "frontend/AST.h"

namespace tdsl::ast {

std::string QualifiedName::str() const {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? "." : "") + parts[i];
  return out;
}

const char *spelling(UnaryOp op) { return op == UnaryOp::Neg ? "-" : "!"; }

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Mod:
    return "%";
  case BinaryOp::EQ:
    return "==";
  case BinaryOp::NE:
    return "!=";
  case BinaryOp::LT:
    return "<";
  case BinaryOp::LE:
    return "<=";
  case BinaryOp::GT:
    return ">";
  case BinaryOp::GE:
    return ">=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  return "?";
}

const char *spelling(AssignOp op) {
  switch (op) {
  case AssignOp::Set:
    return "=";
  case AssignOp::Add:
    return "+=";
  case AssignOp::Sub:
    return "-=";
  case AssignOp::Mul:
    return "*=";
  }
  return "?";
}

const char *spelling(LoopKind kind) {
  switch (kind) {
  case LoopKind::Serial:
    return "serial";
  case LoopKind::Parallel:
    return "parallel";
  case LoopKind::Vectorized:
    return "vectorized";
  case LoopKind::Unrolled:
    return "unrolled";
  case LoopKind::Thread:
    return "thread";
  }
  return "?";
}

const char *spelling(Scope s) {
  switch (s) {
  case Scope::Global:
    return "global";
  case Scope::Shared:
    return "shared";
  case Scope::Local:
    return "local";
  }
  return "?";
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

} // namespace tdsl::ast

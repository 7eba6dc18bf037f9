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

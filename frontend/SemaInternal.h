//===- frontend/SemaInternal.h ----------------------------------------------------------------===//
//
// Pieces of the semantic checker shared by its files (not a public header).

#pragma once

#include "frontend/AST.h"
#include "ir/IR.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tdsl {
class DiagnosticEngine;

namespace sema {

SourceLoc locOf(const ast::Node &n);
std::optional<ir::DType> parseDType(const std::string &name);
/// f16 and bf16: read through a cast, stored through one (spec §4).
bool isStorageOnly(ir::DType t);

/// `Invalid`: a declaration that had errors; uses of it fail without a second error.
enum class SymbolKind { Buffer, Scalar, ShapeVar, Const, LoopVar, Axis, Let, Invalid };

struct Symbol {
  SymbolKind kind;
  ir::Var var;       // every kind but Buffer
  ir::Buffer buffer; // Buffer
  SourceRange range; // the declaration
  ir::IterKind axisKind = ir::IterKind::Spatial;
};

/// Nested lexical scopes; buffers and scalars share one name space (block names do not).
class Scopes {
public:
  Scopes() { push(); }
  void push() { stack_.emplace_back(); }
  void pop() { stack_.pop_back(); }
  const Symbol *lookup(const std::string &name) const;
  /// Declares `name` in the innermost scope; a redefinition there is an error with a note.
  bool declare(const std::string &name, Symbol sym, DiagnosticEngine &diags);

private:
  std::vector<std::map<std::string, Symbol>> stack_;
};

/// Type checks expressions and builds their IR. Literals take the dtype of the other operand
/// or of the context (`expected`); with none, integers are i64 and floats f32 (spec §4).
/// Returns an undefined Expr after reporting an error.
struct ExprChecker {
  Scopes &scopes;
  DiagnosticEngine &diags;
  bool loopVarsVisible = true; // bindings and `where` see loop variables; block bodies do not
  bool axesVisible = true;

  ir::Expr check(const ast::Expr &e, std::optional<ir::DType> expected, bool allowStorage = false);
  /// An index: any integer expression, converted to i64.
  ir::Expr index(const ast::Expr &e);
  static bool isLiteralLike(const ast::Expr &e);

private:
  ir::Expr checkImpl(const ast::Expr &e, std::optional<ir::DType> expected);
  /// A literal `e`, negated when `negation` (the enclosing unary '-') is given.
  ir::Expr literal(const ast::Expr &e, std::optional<ir::DType> expected,
                   const ast::Expr *negation = nullptr);
  ir::Expr name(const ast::NameExpr &n);
  ir::Expr load(const ast::LoadExpr &l);
  ir::Expr call(const ast::CallExpr &c, std::optional<ir::DType> expected);
  ir::Expr binary(const ast::BinaryExpr &b, std::optional<ir::DType> expected);
  std::vector<ir::Expr> unify(const std::vector<const ast::Expr *> &operands,
                              std::optional<ir::DType> expected, const ast::Node &at,
                              const std::string &what);
  bool arity(const ast::CallExpr &c, size_t n);
  ir::Expr storageError(const ast::Expr &e, ir::DType t);
  void error(const ast::Node &n, std::string msg);
};

/// Signatures: dtypes, generic constants, shape variables (introduced by an input's whole
/// dimension), tensor and scalar parameters.
struct SignatureChecker {
  Scopes &scopes;
  DiagnosticEngine &diags;

  std::optional<ir::DType> dtype(const ast::Ident &id);
  void generics(const std::vector<ast::GenericParam> &gs, std::vector<ir::Var> &out);
  std::optional<std::vector<ir::Expr>> shape(const ast::Type &t, bool introduce,
                                             std::vector<ir::Var> &shapeVars);
  bool params(const std::vector<ast::Param> &ps, ir::BufferRole role,
              std::vector<ir::FuncParam> &inputs, std::vector<ir::Buffer> &outputs,
              std::vector<ir::Var> &shapeVars, bool allowScalars);
};

/// Callables built so far, by their AST item (graph calls resolve through this).
using FuncTable = std::map<const ast::Item *, ir::Func>;

ir::Func buildFunc(const ast::FuncDecl &f, const std::string &name, DiagnosticEngine &diags);
ir::Func buildExtern(const ast::ExternDecl &e, const std::string &name, DiagnosticEngine &diags);
ir::Func buildGraph(const ast::GraphDecl &g, const std::string &name, const FuncTable &funcs,
                    DiagnosticEngine &diags);

/// Rules 6 and 7 of spec §5 on the built IR: provably out-of-bounds accesses (constant shapes,
/// guards from `where`, `if` and `select` counted), alloc buffers read before any block writes
/// them, outputs never written (a warning).
void checkAccesses(const ir::Module &m, DiagnosticEngine &diags);

} // namespace sema
} // namespace tdsl

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

/// A graph constant as the graphs of its module see it (by its unqualified name).
struct ModuleConstant {
  ir::Buffer buffer;
  SourceRange range; // the declaration's name
};
using ConstTable = std::map<std::string, ModuleConstant>;

/// Nested lexical scopes; buffers and scalars share one name space (block names do not).
class Scopes {
public:
  Scopes() { push(); }
  void push() { stack_.emplace_back(); }
  void pop() { stack_.pop_back(); }
  const Symbol *lookup(const std::string &name) const;
  /// Declares `name` in the innermost scope; a redefinition there is an error with a note.
  bool declare(const std::string &name, Symbol sym, DiagnosticEngine &diags);
  /// The module's graph constants, for the error of a func body that names one (null: none).
  const ConstTable *moduleConstants = nullptr;
  /// Reports `name`, used at `at` in a func body, if it is a graph constant; returns whether.
  bool reportConstantUse(const std::string &name, SourceRange at, DiagnosticEngine &diags) const;

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
/// A signature after checking: generic constants, inputs, outputs, and the shape variables the
/// inputs introduce.
struct CheckedSignature {
  std::vector<ir::Var> consts, shapeVars;
  std::vector<ir::FuncParam> inputs;
  std::vector<ir::Buffer> outputs;
};

struct SignatureChecker {
  Scopes &scopes;
  DiagnosticEngine &diags;

  std::optional<ir::DType> dtype(const ast::Ident &id);
  void generics(const std::vector<ast::GenericParam> &gs, std::vector<ir::Var> &out);
  /// One dimension (`what` names it in messages): built from literals, shape variables and
  /// generic constants, i64, checked by checkExtent. Undefined after an error.
  ir::Expr dimension(const ast::Expr &d, const std::string &what);
  /// The dimensions of tensor type `t` (of the buffer `owner`, named in messages when given):
  /// literals, shape variables and generic constants; checked by checkExtent and
  /// checkElementCount. `introduce`: a whole-dimension name not yet declared is a new shape
  /// variable (inputs).
  std::optional<std::vector<ir::Expr>> shape(const ast::Type &t, bool introduce,
                                             std::vector<ir::Var> &shapeVars,
                                             const std::string &owner = "");
  bool params(const std::vector<ast::Param> &ps, ir::BufferRole role,
              std::vector<ir::FuncParam> &inputs, std::vector<ir::Buffer> &outputs,
              std::vector<ir::Var> &shapeVars, bool allowScalars);
  /// Generics, then inputs (scalars allowed), then outputs (tensors only), declared in that
  /// order into `out`; every part is checked. False after an error.
  bool signature(const std::vector<ast::GenericParam> &gs, const std::vector<ast::Param> &ins,
                 const std::vector<ast::Param> &outs, CheckedSignature &out);
};

/// The exact value of an integer expression over constants (spec §4 dimensions and extents):
/// i64 arithmetic is checked, narrower types wrap, `/` and `%` are floor division and modulo.
/// A division by a constant zero is found even when the dividend is symbolic (`N / 0`).
struct ConstResult {
  enum Kind { NotConstant, Value, DivByZero, Overflow } kind = NotConstant;
  int64_t value = 0;
  SourceLoc at; // the operation that divides by zero or overflows
};
ConstResult evalConstant(const ir::Expr &e);

/// i64 arithmetic without undefined behaviour: std::nullopt on overflow (or division by zero).
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);
std::optional<int64_t> checkedSub(int64_t a, int64_t b);
std::optional<int64_t> checkedMul(int64_t a, int64_t b);
std::optional<int64_t> checkedFloorDiv(int64_t a, int64_t b);
std::optional<int64_t> checkedFloorMod(int64_t a, int64_t b);

/// A dimension or extent `e`: an error when it divides by zero or overflows i64 (at the
/// operation) or is a negative constant (at `at`). `what` names it ("dimension 0 of 'C'").
bool checkExtent(const ir::Expr &e, SourceRange at, const std::string &what,
                 DiagnosticEngine &diags, const std::string &tail = "");
/// A constant shape whose element count, or size in bytes, does not fit in i64 is an error at
/// `at` (spec §4; byte offsets are i64 in compiled code). Symbolic shapes pass. `tail` ends the
/// messages of both.
bool checkElementCount(ir::DType t, const std::vector<ir::Expr> &shape, SourceRange at,
                       const std::string &what, DiagnosticEngine &diags,
                       const std::string &tail = "");

/// Callables built so far, by their AST item (graph calls resolve through this).
using FuncTable = std::map<const ast::Item *, ir::Func>;

/// The graph constants of module `m` (spec §8), checked against their files, added to `out`
/// under `prefix` + their name; returned by their unqualified name.
ConstTable buildConstants(const ast::Module &m, const std::string &prefix, ir::Module &out,
                          DiagnosticEngine &diags);

ir::Func buildFunc(const ast::FuncDecl &f, const std::string &name, DiagnosticEngine &diags,
                   const ConstTable *constants = nullptr);
ir::Func buildExtern(const ast::ExternDecl &e, const std::string &name, DiagnosticEngine &diags);
ir::Func buildGraph(const ast::GraphDecl &g, const std::string &name, const FuncTable &funcs,
                    DiagnosticEngine &diags, const ConstTable *constants = nullptr);

/// The graphs and grad items of module `m` in an order where each comes after the graphs and
/// grad items of `m` it calls or differentiates. A cycle of calls is an error at the call that
/// closes it; the items on it are left out.
std::vector<const ast::Item *> graphOrder(const ast::Module &m, DiagnosticEngine &diags);

/// `grad NAME = F wrt (…)` (spec §13): checks the parameters named against F (built into
/// `funcs`), adds the item to `out.grads` and returns NAME's graph with the gradient signature
/// and an empty body (ir/Grad.h); undefined after an error.
ir::Func buildGradSignature(const ast::GradDecl &d, const std::string &prefix,
                            const FuncTable &funcs, ir::Module &out, DiagnosticEngine &diags);

/// The `intrinsic` declarations of module `m` (docs/schedules.md, "tensorize"), checked against
/// the funcs they name (built into `funcs`), added to `out` under `prefix` + their name.
void buildIntrinsics(const ast::Module &m, const std::string &prefix, const FuncTable &funcs,
                     ir::Module &out, DiagnosticEngine &diags);

/// Rules 6 and 7 of spec §5 on the built IR: provably out-of-bounds accesses (constant shapes,
/// guards from `where`, `if` and `select` counted), alloc buffers read before any block writes
/// them, outputs never written (a warning).
void checkAccesses(const ir::Module &m, DiagnosticEngine &diags);

} // namespace sema
} // namespace tdsl

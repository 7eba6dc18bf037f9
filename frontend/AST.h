//===- frontend/AST.h - The syntax tree of one .tdsl module, as written (spec §2–§8) ----------===//
//
// Every node carries the source range it was parsed from. Names are strings here; the
// semantic checker resolves them. Nothing in this header depends on ANTLR.

#pragma once

#include "support/SourceLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tdsl::ast {

struct Item;
struct FuncDecl;

struct Node {
  SourceRange range;
};

/// The base of a family of nodes told apart by a kind (Expr, Stmt, GraphStmt, Item): the kind
/// and a checked downcast.
template <typename Kind> struct KindedNode : Node {
  explicit KindedNode(Kind k) : kind(k) {}
  virtual ~KindedNode() = default;
  const Kind kind;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
};

/// Gives a node of the family `Base` its static kKind (what as<T>() checks) and sets the kind on
/// construction.
template <typename Base, auto K> struct NodeOf : Base {
  static constexpr decltype(K) kKind = K;
  NodeOf() : Base(K) {}
};

/// A possibly dotted name (`nn.linear`) with its range.
struct QualifiedName : Node {
  std::vector<std::string> parts;
  std::string str() const;
};

/// A plain identifier with its range.
struct Ident : Node {
  std::string name;
};

// ------------------------------------------------------------------------------------------
// Expressions
// ------------------------------------------------------------------------------------------

enum class ExprKind { Int, Float, Bool, Inf, Name, Load, Call, Unary, Binary };

enum class UnaryOp { Neg, Not };
enum class BinaryOp {
#define TDSL_AST_BINARY_OP(NAME, SPELLING) NAME,
#include "frontend/AST.def"
};

const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);

using Expr = KindedNode<ExprKind>;
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : NodeOf<Expr, ExprKind::Int> {
  uint64_t value = 0; // literals are non-negative; `-` is a unary operator
  std::string text;
};

struct FloatLit : NodeOf<Expr, ExprKind::Float> {
  double value = 0;
  std::string text;
};

struct BoolLit : NodeOf<Expr, ExprKind::Bool> {
  bool value = false;
};

/// `inf`: positive infinity of the float dtype the context gives it.
struct InfLit : NodeOf<Expr, ExprKind::Inf> {};

/// A name: a loop variable, axis, `let`, scalar input, shape variable, constant, or a dtype
/// name used as a value (`min_value(f32)`).
struct NameExpr : NodeOf<Expr, ExprKind::Name> {
  std::string name;
};

/// `A[i, k]`; `D[]` for rank 0.
struct LoadExpr : NodeOf<Expr, ExprKind::Load> {
  Ident buffer;
  std::vector<ExprPtr> indices;
};

/// `f(args)`: an intrinsic (`exp`, `max`, `select`, …) or a cast (`f32(x)`).
struct CallExpr : NodeOf<Expr, ExprKind::Call> {
  Ident callee;
  std::vector<ExprPtr> args;
};

struct UnaryExpr : NodeOf<Expr, ExprKind::Unary> {
  UnaryOp op = UnaryOp::Neg;
  ExprPtr operand;
};

struct BinaryExpr : NodeOf<Expr, ExprKind::Binary> {
  BinaryOp op = BinaryOp::Add;
  ExprPtr lhs, rhs;
};

// ------------------------------------------------------------------------------------------
// Types and parameters
// ------------------------------------------------------------------------------------------

/// `f32` (scalar) or `f32[M, K]` / `f32[]` (tensor).
struct Type : Node {
  Ident dtype;
  bool isTensor = false;
  std::vector<ExprPtr> dims;
};

struct Param : Node {
  Ident name;
  Type type;
};

/// `<S: i64>` — a compile-time constant of a generic func or graph.
struct GenericParam : Node {
  Ident name;
  Ident dtype;
};

// ------------------------------------------------------------------------------------------
// Statements of functions and blocks
// ------------------------------------------------------------------------------------------

enum class StmtKind { Store, Let, If, Init, Alloc, For, Block };
enum class AssignOp {
#define TDSL_AST_ASSIGN_OP(NAME, SPELLING) NAME,
#include "frontend/AST.def"
};
enum class LoopKind {
#define TDSL_AST_LOOP_KIND(NAME, KEYWORD) NAME,
#include "frontend/AST.def"
};
enum class AxisKind { Spatial, Reduce };

const char *spelling(AssignOp op);
const char *spelling(LoopKind kind);

using Stmt = KindedNode<StmtKind>;
using StmtPtr = std::unique_ptr<Stmt>;

struct StoreStmt : NodeOf<Stmt, StmtKind::Store> {
  Ident buffer;
  std::vector<ExprPtr> indices;
  AssignOp op = AssignOp::Set;
  ExprPtr value;
};

struct LetStmt : NodeOf<Stmt, StmtKind::Let> {
  Ident name;
  ExprPtr value;
};

/// `if c { … } else { … }`; `else if` nests an IfStmt as the only else statement.
struct IfStmt : NodeOf<Stmt, StmtKind::If> {
  ExprPtr cond;
  std::vector<StmtPtr> thenBody, elseBody;
  bool hasElse = false;
};

struct InitStmt : NodeOf<Stmt, StmtKind::Init> {
  std::vector<StmtPtr> body;
};

enum class Scope {
#define TDSL_AST_SCOPE(NAME, KEYWORD) NAME,
#include "frontend/AST.def"
};
const char *spelling(Scope s);

struct AllocStmt : NodeOf<Stmt, StmtKind::Alloc> {
  Ident name;
  Type type;
  Scope scope = Scope::Global;
  bool scopeWritten = false;
  /// `@align(axis, factor, offset)` clauses (storage_align), in source order.
  struct Align : Node {
    ExprPtr axis, factor, offset;
  };
  std::vector<Align> aligns;
};

struct ForStmt : NodeOf<Stmt, StmtKind::For> {
  Ident var;
  ExprPtr lo, hi; // half-open: lo <= var < hi
  LoopKind loopKind = LoopKind::Serial;
  bool kindWritten = false; // `serial` written explicitly
  std::string threadTag;    // for LoopKind::Thread
  std::vector<StmtPtr> body;
};

struct Axis : Node {
  Ident name;
  AxisKind kind = AxisKind::Spatial;
  ExprPtr extent;
  ExprPtr binding; // null in the short form
};

struct BlockStmt : NodeOf<Stmt, StmtKind::Block> {
  Ident name;
  std::vector<Axis> axes;
  ExprPtr where; // null when absent
  std::vector<StmtPtr> body;
};

// ------------------------------------------------------------------------------------------
// Graph statements
// ------------------------------------------------------------------------------------------

/// `call F<c…>(args) -> TYPE`
struct CallValue : Node {
  QualifiedName callee;
  std::vector<ExprPtr> constArgs;
  std::vector<ExprPtr> args;
  std::optional<Type> declaredType;
  const Item *resolved = nullptr; // the callee, set by name resolution
};

enum class GraphStmtKind { Dataflow, Output, Return, Bind, Call, Reshape };

using GraphStmt = KindedNode<GraphStmtKind>;
using GraphStmtPtr = std::unique_ptr<GraphStmt>;

struct DataflowStmt : NodeOf<GraphStmt, GraphStmtKind::Dataflow> {
  std::vector<GraphStmtPtr> body;
};

struct OutputStmt : NodeOf<GraphStmt, GraphStmtKind::Output> {
  std::vector<Ident> names;
};

struct ReturnStmt : NodeOf<GraphStmt, GraphStmtKind::Return> {
  std::vector<Ident> names;
};

/// `a, b = call F(…);`
struct BindStmt : NodeOf<GraphStmt, GraphStmtKind::Bind> {
  std::vector<Ident> targets;
  CallValue call;
};

/// `call log_tensor(h);` — an impure extern called for its effect.
struct CallStmt : NodeOf<GraphStmt, GraphStmtKind::Call> {
  CallValue call;
};

/// `v = reshape(x, [d0, …]);`
struct ReshapeStmt : NodeOf<GraphStmt, GraphStmtKind::Reshape> {
  Ident target, source;
  std::vector<ExprPtr> shape;
};

// ------------------------------------------------------------------------------------------
// Schedules
// ------------------------------------------------------------------------------------------

enum class SchedArgKind { Expr, String, List, Lambda };

struct SchedArg : Node {
  SchedArgKind kind = SchedArgKind::Expr;
  ExprPtr expr;               // Expr; the lambda's body results are in `list`
  std::string str;            // String (unescaped)
  std::vector<SchedArg> list; // List elements, or the Lambda's result expressions
  std::vector<Ident> lambdaParams;
};

struct SchedStmt : Node {
  std::vector<Ident> targets; // empty for a bare call; `_` skips a handle
  Ident primitive;
  std::vector<SchedArg> args;
};

struct SchedParam : Node {
  Ident name;
  ExprPtr value;
};

// ------------------------------------------------------------------------------------------
// Items and modules
// ------------------------------------------------------------------------------------------

enum class ItemKind {
#define TDSL_AST_ITEM_KIND(NAME, KEYWORD, NOUN) NAME,
#include "frontend/AST.def"
};

/// What the AST dump shows for a resolved callee of this kind: "func", "extern", ….
const char *spelling(ItemKind kind);
/// What diagnostics call an item of this kind: "func", "extern func", "constant", ….
const char *noun(ItemKind kind);

struct Item : KindedNode<ItemKind> {
  using KindedNode::as;
  using KindedNode::KindedNode;
  template <typename T> T *as() { return kind == T::kKind ? static_cast<T *>(this) : nullptr; }
};
using ItemPtr = std::unique_ptr<Item>;

struct Module;

struct ImportDecl : NodeOf<Item, ItemKind::Import> {
  std::string path; // as written, unescaped
  SourceRange pathRange;
  std::string prefix;               // the file's stem: `nn`, `helpers`
  const Module *resolved = nullptr; // set by the module loader
};

/// `const NAME: TYPE = load("FILE.npy");` (spec §8), or `= hex("…")`: the bytes themselves,
/// the form --emit=ir prints for a constant made by constant folding.
struct ConstDecl : NodeOf<Item, ItemKind::Const> {
  enum class Source { Load, Hex };
  Ident name;
  Type type;
  Source source = Source::Load;
  std::string text; // the path as written (unescaped), or the hex digits
  SourceRange textRange;
  std::string resolvedPath; // Load: the file found (set by the module loader), else empty
};

struct FuncDecl : NodeOf<Item, ItemKind::Func> {
  Ident name;
  std::vector<GenericParam> generics;
  std::vector<Param> inputs, outputs;
  std::vector<StmtPtr> body;
};

struct ExternDecl : NodeOf<Item, ItemKind::Extern> {
  Ident name;
  bool pure = false;
  std::vector<Param> inputs, outputs;
  std::string symbol;
  SourceRange symbolRange;
};

struct GraphDecl : NodeOf<Item, ItemKind::Graph> {
  Ident name;
  std::vector<GenericParam> generics;
  std::vector<Param> inputs;
  std::vector<Type> results;
  bool tupleResult = false; // `-> (T0, T1)` rather than `-> T`
  std::vector<GraphStmtPtr> body;
};

struct ScheduleDecl : NodeOf<Item, ItemKind::Schedule> {
  QualifiedName func;
  std::optional<Ident> target; // `cpu` or `cuda`
  std::vector<SchedParam> params;
  std::vector<SchedStmt> body;
  const FuncDecl *resolved = nullptr; // set by name resolution
  /// A schedule of a --schedule file naming a function the source does not declare: one the
  /// graph passes may make (`fused_…`, an instance, a specialized copy: what tdsl-tune -o
  /// writes). Looked up when the schedules run.
  bool deferred = false;
};

/// `intrinsic NAME(DESC, IMPL);`: a tensor intrinsic for `tensorize` (docs/schedules.md). DESC
/// and IMPL name funcs (IMPL may be an extern) of the same module.
struct IntrinsicDecl : NodeOf<Item, ItemKind::Intrinsic> {
  Ident name, desc, impl;
};

/// `grad NAME = F wrt (P1, …);` (spec §13): NAME is a graph derived from the graph or func F by
/// reverse-mode differentiation with respect to F's tensor parameters `wrt`.
struct GradDecl : NodeOf<Item, ItemKind::Grad> {
  Ident name;
  QualifiedName func;
  std::vector<Ident> wrt;
  const Item *resolved = nullptr; // F, set by name resolution
};

/// One parsed file. Imported modules are owned by the ModuleLoader, not by the importer.
struct Module {
  std::string path; // as the SourceManager knows it
  std::string name; // the file's stem: the prefix importers use
  uint32_t fileId = 0;
  std::vector<ItemPtr> items;
  /// For a `--schedule FILE` module: the module whose funcs its schedules name.
  const Module *scheduleHost = nullptr;

  std::vector<const ImportDecl *> imports() const;
  /// The func, graph or extern named `name` declared in this module, or null.
  const Item *findCallable(const std::string &name) const;
  /// The constant named `name` declared in this module, or null.
  const ConstDecl *findConst(const std::string &name) const;
};

/// A deep copy of `m` with every location moved to file `fileId` of another SourceManager (a
/// parsed file reused: the module loader's cache of imported files). What the module loader and
/// name resolution set later (`resolved`, `resolvedPath`, `scheduleHost`) is not copied: copy a
/// module as the parser made it.
std::unique_ptr<Module> cloneModule(const Module &m, uint32_t fileId);

/// The name an item declares: a callable's or a constant's (empty for imports and schedules).
const std::string &declaredName(const Item &item);

} // namespace tdsl::ast

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
enum class BinaryOp { Add, Sub, Mul, Div, Mod, EQ, NE, LT, LE, GT, GE, And, Or };

const char *spelling(UnaryOp op);
const char *spelling(BinaryOp op);

struct Expr : Node {
  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
  const ExprKind kind;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
};
using ExprPtr = std::unique_ptr<Expr>;

struct IntLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Int;
  IntLit() : Expr(kKind) {}
  uint64_t value = 0; // literals are non-negative; `-` is a unary operator
  std::string text;
};

struct FloatLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Float;
  FloatLit() : Expr(kKind) {}
  double value = 0;
  std::string text;
};

struct BoolLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Bool;
  BoolLit() : Expr(kKind) {}
  bool value = false;
};

/// `inf`: positive infinity of the float dtype the context gives it.
struct InfLit : Expr {
  static constexpr ExprKind kKind = ExprKind::Inf;
  InfLit() : Expr(kKind) {}
};

/// A name: a loop variable, axis, `let`, scalar input, shape variable, constant, or a dtype
/// name used as a value (`min_value(f32)`).
struct NameExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Name;
  NameExpr() : Expr(kKind) {}
  std::string name;
};

/// `A[i, k]`; `D[]` for rank 0.
struct LoadExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Load;
  LoadExpr() : Expr(kKind) {}
  Ident buffer;
  std::vector<ExprPtr> indices;
};

/// `f(args)`: an intrinsic (`exp`, `max`, `select`, …) or a cast (`f32(x)`).
struct CallExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Call;
  CallExpr() : Expr(kKind) {}
  Ident callee;
  std::vector<ExprPtr> args;
};

struct UnaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryExpr() : Expr(kKind) {}
  UnaryOp op = UnaryOp::Neg;
  ExprPtr operand;
};

struct BinaryExpr : Expr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryExpr() : Expr(kKind) {}
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
enum class AssignOp { Set, Add, Sub, Mul };
enum class LoopKind { Serial, Parallel, Vectorized, Unrolled, Thread };
enum class AxisKind { Spatial, Reduce };

const char *spelling(AssignOp op);
const char *spelling(LoopKind kind);

struct Stmt : Node {
  explicit Stmt(StmtKind k) : kind(k) {}
  virtual ~Stmt() = default;
  const StmtKind kind;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
};
using StmtPtr = std::unique_ptr<Stmt>;

struct StoreStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Store;
  StoreStmt() : Stmt(kKind) {}
  Ident buffer;
  std::vector<ExprPtr> indices;
  AssignOp op = AssignOp::Set;
  ExprPtr value;
};

struct LetStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Let;
  LetStmt() : Stmt(kKind) {}
  Ident name;
  ExprPtr value;
};

/// `if c { … } else { … }`; `else if` nests an IfStmt as the only else statement.
struct IfStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::If;
  IfStmt() : Stmt(kKind) {}
  ExprPtr cond;
  std::vector<StmtPtr> thenBody, elseBody;
  bool hasElse = false;
};

struct InitStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Init;
  InitStmt() : Stmt(kKind) {}
  std::vector<StmtPtr> body;
};

enum class Scope { Global, Shared, Local };
const char *spelling(Scope s);

struct AllocStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Alloc;
  AllocStmt() : Stmt(kKind) {}
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

struct ForStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::For;
  ForStmt() : Stmt(kKind) {}
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

struct BlockStmt : Stmt {
  static constexpr StmtKind kKind = StmtKind::Block;
  BlockStmt() : Stmt(kKind) {}
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

struct GraphStmt : Node {
  explicit GraphStmt(GraphStmtKind k) : kind(k) {}
  virtual ~GraphStmt() = default;
  const GraphStmtKind kind;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
};
using GraphStmtPtr = std::unique_ptr<GraphStmt>;

struct DataflowStmt : GraphStmt {
  static constexpr GraphStmtKind kKind = GraphStmtKind::Dataflow;
  DataflowStmt() : GraphStmt(kKind) {}
  std::vector<GraphStmtPtr> body;
};

struct OutputStmt : GraphStmt {
  static constexpr GraphStmtKind kKind = GraphStmtKind::Output;
  OutputStmt() : GraphStmt(kKind) {}
  std::vector<Ident> names;
};

struct ReturnStmt : GraphStmt {
  static constexpr GraphStmtKind kKind = GraphStmtKind::Return;
  ReturnStmt() : GraphStmt(kKind) {}
  std::vector<Ident> names;
};

/// `a, b = call F(…);`
struct BindStmt : GraphStmt {
  static constexpr GraphStmtKind kKind = GraphStmtKind::Bind;
  BindStmt() : GraphStmt(kKind) {}
  std::vector<Ident> targets;
  CallValue call;
};

/// `call log_tensor(h);` — an impure extern called for its effect.
struct CallStmt : GraphStmt {
  static constexpr GraphStmtKind kKind = GraphStmtKind::Call;
  CallStmt() : GraphStmt(kKind) {}
  CallValue call;
};

/// `v = reshape(x, [d0, …]);`
struct ReshapeStmt : GraphStmt {
  static constexpr GraphStmtKind kKind = GraphStmtKind::Reshape;
  ReshapeStmt() : GraphStmt(kKind) {}
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

enum class ItemKind { Import, Const, Func, Graph, Extern, Schedule, Intrinsic };

struct Item : Node {
  explicit Item(ItemKind k) : kind(k) {}
  virtual ~Item() = default;
  const ItemKind kind;

  template <typename T> const T *as() const {
    return kind == T::kKind ? static_cast<const T *>(this) : nullptr;
  }
  template <typename T> T *as() { return kind == T::kKind ? static_cast<T *>(this) : nullptr; }
};
using ItemPtr = std::unique_ptr<Item>;

struct Module;

struct ImportDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Import;
  ImportDecl() : Item(kKind) {}
  std::string path; // as written, unescaped
  SourceRange pathRange;
  std::string prefix;               // the file's stem: `nn`, `helpers`
  const Module *resolved = nullptr; // set by the module loader
};

/// `const NAME: TYPE = load("FILE.npy");` (spec §8), or `= hex("…")`: the bytes themselves,
/// the form --emit=ir prints for a constant made by constant folding.
struct ConstDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Const;
  ConstDecl() : Item(kKind) {}
  enum class Source { Load, Hex };
  Ident name;
  Type type;
  Source source = Source::Load;
  std::string text; // the path as written (unescaped), or the hex digits
  SourceRange textRange;
  std::string resolvedPath; // Load: the file found (set by the module loader), else empty
};

struct FuncDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Func;
  FuncDecl() : Item(kKind) {}
  Ident name;
  std::vector<GenericParam> generics;
  std::vector<Param> inputs, outputs;
  std::vector<StmtPtr> body;
};

struct ExternDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Extern;
  ExternDecl() : Item(kKind) {}
  Ident name;
  bool pure = false;
  std::vector<Param> inputs, outputs;
  std::string symbol;
  SourceRange symbolRange;
};

struct GraphDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Graph;
  GraphDecl() : Item(kKind) {}
  Ident name;
  std::vector<GenericParam> generics;
  std::vector<Param> inputs;
  std::vector<Type> results;
  bool tupleResult = false; // `-> (T0, T1)` rather than `-> T`
  std::vector<GraphStmtPtr> body;
};

struct ScheduleDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Schedule;
  ScheduleDecl() : Item(kKind) {}
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
struct IntrinsicDecl : Item {
  static constexpr ItemKind kKind = ItemKind::Intrinsic;
  IntrinsicDecl() : Item(kKind) {}
  Ident name, desc, impl;
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

/// The name an item declares: a callable's or a constant's (empty for imports and schedules).
const std::string &declaredName(const Item &item);

} // namespace tdsl::ast

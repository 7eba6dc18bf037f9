//===- ir/IR.h - The TDSL intermediate representation -------------------------------------===//
//
// Immutable IR nodes behind intrusive reference-counted handles (Expr, Stmt, Func), built with
// `make()` factories. Variables (Var) and buffers (Buffer) are objects compared by identity:
// their names are only hints, made unique when the IR is printed (ir/IRPrinter.h).
//
// The node kinds are listed once, in TDSL_FOR_EACH_EXPR_NODE / TDSL_FOR_EACH_STMT_NODE; the
// kind enums, `as<T>()`, IRVisitor and IRMutator are generated from these lists.
//
// Semantics (spec §5, §6, §11)
// ----------------------------
// - Integers are two's complement and wrap on overflow (never undefined behaviour).
// - Div and Mod on integers are floor division and floor modulo (Python and TVM):
//   -7 / 2 == -4 and -7 % 2 == 1. On floats, Div is IEEE division and Mod is floor modulo,
//   `a - floor(a / b) * b`. Division by zero is unspecified but not undefined behaviour.
// - Both operands of a binary node have the same dtype; comparisons produce bool (with the
//   operands' lanes); And, Or and Not take bool. There are no implicit conversions: Cast is
//   explicit. A float→int cast truncates toward zero (its value is unspecified when out of
//   range); f32→f16/bf16 rounds to nearest even.
// - Select evaluates its condition, then only the chosen branch: `select(h >= 1, X[h - 1],
//   0.0)` never reads X[-1]. And and Or evaluate both operands (they have no side effects).
// - The `round` intrinsic rounds half away from zero; min_value/max_value are the dtype's
//   lowest and highest finite values.
// - For loops are half-open: the loop variable takes min, min + 1, ..., min + extent - 1;
//   an extent <= 0 runs no iteration. Loop variables, axes and shape variables are i64.
// - A Block is one execution instance per point of its iteration domain. Each iter var is
//   bound to `binding`, an expression of the surrounding loop variables (all bound or none:
//   none only in the short form outside any loop). The block runs only where `predicate`
//   holds (the `where` condition; true by default). `init`, if present, runs for each
//   spatial point before the first reduction step. `reads`/`writes` summarise the regions
//   the body accesses; `allocBuffers` are allocated for the block's lifetime.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/DType.h"
#include "ir/SourceLoc.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

namespace tdsl::ir {

// ---------------------------------------------------------------------------------------------
// Node kinds
// ---------------------------------------------------------------------------------------------

/// Binary nodes with two operands `a` and `b` of the same dtype.
#define TDSL_FOR_EACH_ARITH_BINARY_NODE(X) X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Min) X(Max)
/// Comparisons: operands of the same dtype, result bool.
#define TDSL_FOR_EACH_CMP_NODE(X) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE)
/// Logical connectives on bool operands.
#define TDSL_FOR_EACH_LOGICAL_BINARY_NODE(X) X(And) X(Or)
#define TDSL_FOR_EACH_BINARY_NODE(X)                                                               \
  TDSL_FOR_EACH_ARITH_BINARY_NODE(X) TDSL_FOR_EACH_CMP_NODE(X) TDSL_FOR_EACH_LOGICAL_BINARY_NODE(X)

// clang-format off
#define TDSL_FOR_EACH_EXPR_NODE(X)                                                                 \
  X(IntImm) X(FloatImm) X(VarRef) X(Cast) X(Neg)                                                   \
  TDSL_FOR_EACH_BINARY_NODE(X)                                                                     \
  X(Not) X(Select) X(BufferLoad) X(Call) X(Ramp) X(Broadcast)
// clang-format on

#define TDSL_FOR_EACH_STMT_NODE(X)                                                                 \
  X(For)                                                                                           \
  X(Block)                                                                                         \
  X(BufferStore)                                                                                   \
  X(LetStmt)                                                                                       \
  X(IfThenElse)                                                                                    \
  X(SeqStmt) X(Evaluate) X(Allocate) X(AssertStmt) X(BufferView) X(FuncCall) X(ProfileRegion)

#define TDSL_FOR_EACH_FUNC_NODE(X) X(PrimFunc) X(GraphFunc) X(ExternFunc)

#define TDSL_IR_ENUM_ENTRY(NAME) NAME,
enum class ExprKind : uint8_t { TDSL_FOR_EACH_EXPR_NODE(TDSL_IR_ENUM_ENTRY) };
enum class StmtKind : uint8_t { TDSL_FOR_EACH_STMT_NODE(TDSL_IR_ENUM_ENTRY) };
enum class FuncKind : uint8_t { TDSL_FOR_EACH_FUNC_NODE(TDSL_IR_ENUM_ENTRY) };
#undef TDSL_IR_ENUM_ENTRY

#define TDSL_IR_FORWARD_DECL(NAME) struct NAME;
TDSL_FOR_EACH_EXPR_NODE(TDSL_IR_FORWARD_DECL)
TDSL_FOR_EACH_STMT_NODE(TDSL_IR_FORWARD_DECL)
TDSL_FOR_EACH_FUNC_NODE(TDSL_IR_FORWARD_DECL)
#undef TDSL_IR_FORWARD_DECL

namespace detail {
[[noreturn]] void checkFailed(const char *condition, const char *message, const char *file,
                              int line);
} // namespace detail

/// An internal invariant of the IR (a compiler bug when it fails, never a user error): prints
/// the message and aborts, in every build type.
#define TDSL_IR_CHECK(COND, MESSAGE)                                                               \
  do {                                                                                             \
    if (!(COND))                                                                                   \
      ::tdsl::ir::detail::checkFailed(#COND, MESSAGE, __FILE__, __LINE__);                         \
  } while (false)

const char *kindName(ExprKind kind);
const char *kindName(StmtKind kind);

// ---------------------------------------------------------------------------------------------
// Reference counting
// ---------------------------------------------------------------------------------------------

/// Base of everything reference counted: nodes, Var and Buffer objects, functions.
class IRNode {
public:
  /// Where the construct came from in user code; invalid for compiler-made nodes.
  SourceLoc loc;

  IRNode(const IRNode &) = delete;
  IRNode &operator=(const IRNode &) = delete;
  virtual ~IRNode() = default;

protected:
  IRNode() = default;

private:
  template <typename T> friend class IntrusivePtr;
  mutable std::atomic<uint32_t> refCount_{0};
};

/// A shared handle to an IRNode. Handles compare by identity with sameAs(); they define no
/// operator== so that `a == b` on expressions cannot be mistaken for structural equality.
template <typename T> class IntrusivePtr {
public:
  IntrusivePtr() = default;
  IntrusivePtr(T *ptr) : ptr_(ptr) { retain(); }
  IntrusivePtr(const IntrusivePtr &other) : ptr_(other.ptr_) { retain(); }
  IntrusivePtr(IntrusivePtr &&other) noexcept : ptr_(other.ptr_) { other.ptr_ = nullptr; }
  ~IntrusivePtr() { release(); }

  IntrusivePtr &operator=(const IntrusivePtr &other) {
    IntrusivePtr copy(other);
    std::swap(ptr_, copy.ptr_);
    return *this;
  }
  IntrusivePtr &operator=(IntrusivePtr &&other) noexcept {
    std::swap(ptr_, other.ptr_);
    return *this;
  }

  T *get() const { return ptr_; }
  T *operator->() const { return ptr_; }
  T &operator*() const { return *ptr_; }
  bool defined() const { return ptr_ != nullptr; }
  explicit operator bool() const { return defined(); }
  /// Identity: both handles refer to the same node.
  bool sameAs(const IntrusivePtr &other) const { return ptr_ == other.ptr_; }

private:
  void retain() {
    if (ptr_)
      ptr_->refCount_.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (ptr_ && ptr_->refCount_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete ptr_;
    ptr_ = nullptr;
  }

  T *ptr_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Handles: Expr, Stmt, Var, Buffer
// ---------------------------------------------------------------------------------------------

class Var;

/// Base of expression nodes: every expression has a dtype.
struct ExprNode : IRNode {
  const ExprKind kind;
  DType type;

protected:
  explicit ExprNode(ExprKind kind) : kind(kind) {}
};

/// Base of statement nodes.
struct StmtNode : IRNode {
  const StmtKind kind;

protected:
  explicit StmtNode(StmtKind kind) : kind(kind) {}
};

/// Gives a node type of the family `Base` (ExprNode, StmtNode, FuncNode) its static kKind (what
/// as<T>() checks) and sets the kind on construction.
template <typename Base, auto K> struct NodeOf : Base {
  static constexpr decltype(K) kKind = K;
  NodeOf() : Base(K) {}
};
template <ExprKind K> using ExprNodeOf = NodeOf<ExprNode, K>;
template <StmtKind K> using StmtNodeOf = NodeOf<StmtNode, K>;

/// A handle on a node of the family `Node` (ExprNode, StmtNode, FuncNode): its kind and a
/// checked downcast.
template <typename Node> class NodeHandle : public IntrusivePtr<const Node> {
public:
  NodeHandle() = default;
  NodeHandle(const Node *node) : IntrusivePtr<const Node>(node) {}

  auto kind() const { return this->get()->kind; }
  /// Checked downcast: the node as a T, or nullptr if it is undefined or another kind.
  template <typename T> const T *as() const {
    if (!this->defined() || this->get()->kind != T::kKind)
      return nullptr;
    return static_cast<const T *>(this->get());
  }
};

class Expr : public NodeHandle<ExprNode> {
public:
  using NodeHandle::NodeHandle;
  Expr() = default;
  /// A reference to `var` (a new VarRef node).
  Expr(const Var &var);

  DType dtype() const { return get()->type; }
};

class Stmt : public NodeHandle<StmtNode> {
public:
  using NodeHandle::NodeHandle;
};

struct VarNode final : IRNode {
  std::string name; ///< A hint only; two Vars with one name are distinct.
  DType dtype;
};

/// A scalar variable with identity: loop variables, axes, let names, shape variables, scalar
/// parameters and generic constants. Copies of a Var handle are the same variable.
class Var : public IntrusivePtr<const VarNode> {
public:
  /// An undefined handle.
  Var() = default;
  Var(const VarNode *node) : IntrusivePtr(node) {}
  /// A fresh variable.
  explicit Var(std::string nameHint, DType dtype = DType::i64(), SourceLoc loc = {});

  const std::string &name() const { return get()->name; }
  DType dtype() const { return get()->dtype; }

  friend bool operator==(const Var &a, const Var &b) { return a.get() == b.get(); }
};

/// Where a buffer lives (`scope(...)` of spec §5).
enum class MemScope : uint8_t { Global, Shared, Local };
const char *scopeName(MemScope scope);
std::optional<MemScope> parseScope(std::string_view text);

/// How a buffer enters its function. Constant: a graph constant of the module (Module::constants),
/// read-only, with a static shape; graphs use it as a value like an input.
enum class BufferRole : uint8_t { Input, Output, Alloc, Constant };

/// storage_align for one dimension: the stride of that dimension is padded to
/// `k * factor + offset` elements. factor == 0 means no alignment for that dimension.
struct StorageAlign {
  int64_t factor = 0;
  int64_t offset = 0;
};

struct BufferNode final : IRNode {
  std::string name; ///< A hint only.
  DType dtype;
  std::vector<Expr> shape; ///< One i64 expression per dimension; empty for rank 0.
  MemScope scope = MemScope::Global;
  BufferRole role = BufferRole::Alloc;
  std::vector<StorageAlign> align; ///< Empty (none), or one entry per dimension.
};

/// A dense row-major tensor with identity.
class Buffer : public IntrusivePtr<const BufferNode> {
public:
  Buffer() = default;
  Buffer(const BufferNode *node) : IntrusivePtr(node) {}
  /// A fresh buffer.
  Buffer(std::string nameHint, DType dtype, std::vector<Expr> shape, BufferRole role,
         MemScope scope = MemScope::Global, std::vector<StorageAlign> align = {},
         SourceLoc loc = {});

  const std::string &name() const { return get()->name; }
  DType dtype() const { return get()->dtype; }
  const std::vector<Expr> &shape() const { return get()->shape; }
  size_t rank() const { return get()->shape.size(); }
  MemScope scope() const { return get()->scope; }
  BufferRole role() const { return get()->role; }

  friend bool operator==(const Buffer &a, const Buffer &b) { return a.get() == b.get(); }
};

/// The half-open interval [min, min + extent).
struct Range {
  Expr min;
  Expr extent;
};

/// A rectangular part of a buffer: one Range per dimension.
struct BufferRegion {
  Buffer buffer;
  std::vector<Range> region;
};

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

/// An integer or bool constant. `value` is normalised to the dtype: sign-extended for signed
/// types, zero-extended for unsigned ones (u64 keeps the raw bits), 0 or 1 for bool.
struct IntImm final : ExprNodeOf<ExprKind::IntImm> {
  int64_t value = 0;
  static Expr make(DType type, int64_t value, SourceLoc loc = {});
};

/// A float constant. For f32 the value is rounded to float precision on construction.
struct FloatImm final : ExprNodeOf<ExprKind::FloatImm> {
  double value = 0;
  static Expr make(DType type, double value, SourceLoc loc = {});
};

struct VarRef final : ExprNodeOf<ExprKind::VarRef> {
  Var var;
  static Expr make(Var var, SourceLoc loc = {});
};

struct Cast final : ExprNodeOf<ExprKind::Cast> {
  Expr value;
  static Expr make(DType type, Expr value, SourceLoc loc = {});
};

/// Unary minus (wraps for integers: -INT_MIN == INT_MIN).
struct Neg final : ExprNodeOf<ExprKind::Neg> {
  Expr a;
  static Expr make(Expr a, SourceLoc loc = {});
};

// Add, Sub, Mul, Div, Mod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or.
#define TDSL_IR_DECLARE_BINARY(NAME)                                                               \
  struct NAME final : ExprNodeOf<ExprKind::NAME> {                                                 \
    Expr a, b;                                                                                     \
    static Expr make(Expr a, Expr b, SourceLoc loc = {});                                          \
  };
TDSL_FOR_EACH_BINARY_NODE(TDSL_IR_DECLARE_BINARY)
#undef TDSL_IR_DECLARE_BINARY

struct Not final : ExprNodeOf<ExprKind::Not> {
  Expr a;
  static Expr make(Expr a, SourceLoc loc = {});
};

/// select(condition, trueValue, falseValue): evaluates only the chosen branch.
struct Select final : ExprNodeOf<ExprKind::Select> {
  Expr condition, trueValue, falseValue;
  static Expr make(Expr condition, Expr trueValue, Expr falseValue, SourceLoc loc = {});
};

struct BufferLoad final : ExprNodeOf<ExprKind::BufferLoad> {
  Buffer buffer;
  std::vector<Expr> indices;
  static Expr make(Buffer buffer, std::vector<Expr> indices, SourceLoc loc = {});
};

// clang-format off
/// X(Enumerator, spelling, number of arguments)
#define TDSL_FOR_EACH_INTRINSIC(X)                                                                 \
  X(Exp, "exp", 1)                                                                                 \
  X(Exp2, "exp2", 1)                                                                               \
  X(Log, "log", 1)                                                                                 \
  X(Log2, "log2", 1)                                                                               \
  X(Sqrt, "sqrt", 1)                                                                               \
  X(Rsqrt, "rsqrt", 1)                                                                             \
  X(Tanh, "tanh", 1)                                                                               \
  X(Sigmoid, "sigmoid", 1)                                                                         \
  X(Erf, "erf", 1)                                                                                 \
  X(Abs, "abs", 1)                                                                                 \
  X(Sin, "sin", 1)                                                                                 \
  X(Cos, "cos", 1)                                                                                 \
  X(Floor, "floor", 1)                                                                             \
  X(Ceil, "ceil", 1)                                                                               \
  X(Round, "round", 1)                                                                             \
  X(Trunc, "trunc", 1)                                                                             \
  X(Pow, "pow", 2)                                                                                 \
  X(Fma, "fma", 3)                                                                                 \
  X(MinValue, "min_value", 0)                                                                      \
  X(MaxValue, "max_value", 0)
// clang-format on

#define TDSL_IR_ENUM_ENTRY(NAME, SPELLING, ARITY) NAME,
/// The intrinsics of spec §5 other than min, max and select (which are nodes). MinValue and
/// MaxValue take no argument: the call's dtype says which type's limit is meant.
enum class Intrinsic : uint8_t { TDSL_FOR_EACH_INTRINSIC(TDSL_IR_ENUM_ENTRY) };
#undef TDSL_IR_ENUM_ENTRY
const char *intrinsicName(Intrinsic op);
int intrinsicArity(Intrinsic op);
std::optional<Intrinsic> parseIntrinsic(std::string_view name);

/// A call of a pure intrinsic. Elementwise intrinsics have the dtype of their arguments.
struct Call final : ExprNodeOf<ExprKind::Call> {
  Intrinsic op{};
  std::vector<Expr> args;
  static Expr make(DType type, Intrinsic op, std::vector<Expr> args, SourceLoc loc = {});
};

/// The vector <base, base + stride, ..., base + (lanes - 1) * stride>.
struct Ramp final : ExprNodeOf<ExprKind::Ramp> {
  Expr base, stride;
  int lanes = 1;
  static Expr make(Expr base, Expr stride, int lanes, SourceLoc loc = {});
};

/// A scalar repeated in every lane.
struct Broadcast final : ExprNodeOf<ExprKind::Broadcast> {
  Expr value;
  int lanes = 1;
  static Expr make(Expr value, int lanes, SourceLoc loc = {});
};

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
const char *forKindName(ForKind kind);

/// for loopVar in [min, min + extent). A ThreadBinding loop carries a tag such as
/// "threadIdx.x" or "blockIdx.y".
struct For final : StmtNodeOf<StmtKind::For> {
  Var loopVar;
  Expr min, extent;
  ForKind forKind = ForKind::Serial;
  std::string threadTag;
  Stmt body;
  static Stmt make(Var loopVar, Expr min, Expr extent, ForKind kind, Stmt body,
                   std::string threadTag = {}, SourceLoc loc = {});
};

enum class IterKind : uint8_t { Spatial, Reduce };

/// A block axis. `binding` is undefined only in the short form.
struct IterVar {
  Var var;
  IterKind kind = IterKind::Spatial;
  Expr extent;
  Expr binding;
  SourceLoc loc;
};

/// A TensorIR block (see the semantics at the top of this file).
struct Block final : StmtNodeOf<StmtKind::Block> {
  std::string name; ///< Block names live in their own name space; not necessarily unique.
  std::vector<IterVar> iterVars;
  Expr predicate; ///< Always defined: a `true` constant when there is no `where`.
  Stmt init;      ///< May be undefined.
  Stmt body;
  std::vector<BufferRegion> reads, writes;
  std::vector<Buffer> allocBuffers;
  /// An undefined predicate stands for `true`.
  static Stmt make(std::string name, std::vector<IterVar> iterVars, Expr predicate, Stmt init,
                   Stmt body, std::vector<BufferRegion> reads = {},
                   std::vector<BufferRegion> writes = {}, std::vector<Buffer> allocBuffers = {},
                   SourceLoc loc = {});
};

struct BufferStore final : StmtNodeOf<StmtKind::BufferStore> {
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
  static Stmt make(Buffer buffer, Expr value, std::vector<Expr> indices, SourceLoc loc = {});
};

/// `let var = value;` in scope for `body`.
struct LetStmt final : StmtNodeOf<StmtKind::LetStmt> {
  Var var;
  Expr value;
  Stmt body;
  static Stmt make(Var var, Expr value, Stmt body, SourceLoc loc = {});
};

struct IfThenElse final : StmtNodeOf<StmtKind::IfThenElse> {
  Expr condition;
  Stmt thenCase;
  Stmt elseCase; ///< May be undefined.
  static Stmt make(Expr condition, Stmt thenCase, Stmt elseCase = {}, SourceLoc loc = {});
};

/// Statements run in order. May be empty.
struct SeqStmt final : StmtNodeOf<StmtKind::SeqStmt> {
  std::vector<Stmt> seq;
  static Stmt make(std::vector<Stmt> seq, SourceLoc loc = {});
};

/// Evaluates an expression for its effect (used by lowered code, e.g. for extern calls).
struct Evaluate final : StmtNodeOf<StmtKind::Evaluate> {
  Expr value;
  static Stmt make(Expr value, SourceLoc loc = {});
};

/// Lowered form: `buffer` is allocated for the duration of `body`.
struct Allocate final : StmtNodeOf<StmtKind::Allocate> {
  Buffer buffer;
  Stmt body;
  static Stmt make(Buffer buffer, Stmt body, SourceLoc loc = {});
};

/// Lowered form (only with --bounds-check, passes/lower/BoundsCheck.h): runs `body` when
/// `condition` holds. Otherwise `body` is skipped, the function goes on, and its entry returns
/// non-zero at the end with `message` in tdsl_last_error() (the first failure's message), each
/// "{}" of `message` replaced by the value of the next of `args` (i64 expressions).
struct AssertStmt final : StmtNodeOf<StmtKind::AssertStmt> {
  Expr condition;
  std::string message;
  std::vector<Expr> args;
  Stmt body;
  static Stmt make(Expr condition, std::string message, std::vector<Expr> args, Stmt body,
                   SourceLoc loc = {});
};

/// Lowered graphs (passes/lower/LowerGraph.h): `buffer` names the storage of `source` starting
/// `byteOffset` bytes in, for the duration of `body` (an intermediate in the arena, a reshape).
/// `buffer` may have another dtype and shape than `source`; the caller guarantees it fits.
struct BufferView final : StmtNodeOf<StmtKind::BufferView> {
  Buffer buffer;
  Buffer source;
  Expr byteOffset; ///< i64, a multiple of the buffer's element size.
  Stmt body;
  static Stmt make(Buffer buffer, Buffer source, Expr byteOffset, Stmt body, SourceLoc loc = {});
};

/// Lowered graphs: a call of the raw entry (spec §10) of module function `callee` (a func, or an
/// extern through its C symbol) with `args` in raw order: inputs, outputs, shape variables.
/// A non-zero status ends the calling function with that status (tdsl_last_error is left as the
/// callee set it; every allocation of the caller is released first).
struct FuncCall final : StmtNodeOf<StmtKind::FuncCall> {
  std::string callee;
  std::vector<std::variant<Buffer, Expr>> args;
  static Stmt make(std::string callee, std::vector<std::variant<Buffer, Expr>> args,
                   SourceLoc loc = {});
};

/// Lowered form (--profile only, passes/lower/Profile.h): `body` timed as region `id`, which
/// `label` names (a graph's callee, the outermost block of a loop nest). The backends call
/// `tdsl_profile_begin(id)` before the body and `tdsl_profile_end(id)` after it, C functions
/// the program that runs the code defines (runtime/Profile.h). Only at loop depth 0, outside
/// parallel loops.
struct ProfileRegion final : StmtNodeOf<StmtKind::ProfileRegion> {
  int32_t id = 0;
  std::string label;
  Stmt body;
  static Stmt make(int32_t id, std::string label, Stmt body, SourceLoc loc = {});
};

// ---------------------------------------------------------------------------------------------
// Functions and modules
// ---------------------------------------------------------------------------------------------

/// A function input: a tensor or a scalar.
struct FuncParam {
  Buffer buffer; ///< Defined for a tensor.
  Var scalar;    ///< Defined for a scalar.

  static FuncParam tensor(Buffer buffer) { return {std::move(buffer), Var()}; }
  static FuncParam scalarVar(Var var) { return {Buffer(), std::move(var)}; }
  bool isTensor() const { return buffer.defined(); }
  const std::string &name() const { return isTensor() ? buffer.name() : scalar.name(); }
};

struct FuncNode : IRNode {
  const FuncKind kind;
  std::string name;

protected:
  explicit FuncNode(FuncKind kind) : kind(kind) {}
};

template <FuncKind K> using FuncNodeOf = NodeOf<FuncNode, K>;

class Func : public NodeHandle<FuncNode> {
public:
  using NodeHandle::NodeHandle;

  const std::string &name() const { return get()->name; }
};

/// A tensor function (`func`, spec §5): destination passing, inputs then outputs.
struct PrimFunc final : FuncNodeOf<FuncKind::PrimFunc> {
  std::vector<Var> constVars;       ///< Generic constants `<S: i64, ...>`.
  std::vector<FuncParam> inputs;    ///< In signature order.
  std::vector<Buffer> outputs;      ///< In signature order.
  std::vector<Var> shapeVars;       ///< In order of first appearance in the signature.
  std::vector<Buffer> allocBuffers; ///< `alloc` at the function root.
  Stmt body;
  static Func make(std::string name, std::vector<Var> constVars, std::vector<FuncParam> inputs,
                   std::vector<Buffer> outputs, std::vector<Var> shapeVars,
                   std::vector<Buffer> allocBuffers, Stmt body, SourceLoc loc = {});
};

/// An argument of a graph call: a tensor value or a scalar expression.
using GraphArg = std::variant<Buffer, Expr>;

/// `targets = call callee<constArgs>(args);` (spec §8). Targets are the values (buffers) the
/// graph allocates for the callee's outputs; none for an impure call made as a statement.
struct CallBinding {
  std::vector<Buffer> targets;
  std::string callee; ///< Qualified name, looked up in the module: "nn.linear".
  std::vector<Expr> constArgs;
  std::vector<GraphArg> args;
  bool annotated = false; ///< The source stated the result type (`-> f32[B, 32]`).
  SourceLoc loc;
};

/// `target = reshape(source, [target's shape]);`: a view with the same element count.
struct ReshapeBinding {
  Buffer target;
  Buffer source;
  SourceLoc loc;
};

using GraphBinding = std::variant<CallBinding, ReshapeBinding>;

/// `dataflow { bindings; output values; }`: pure calls whose names are local unless listed in
/// `outputs`.
struct DataflowBlock {
  std::vector<GraphBinding> bindings;
  std::vector<Buffer> outputs;
  SourceLoc loc;
};

using GraphItem = std::variant<CallBinding, ReshapeBinding, DataflowBlock>;

/// Where one value of a graph lives (passes/graph/PlanMemory.h).
struct PlannedValue {
  enum class Kind : uint8_t {
    Arena,  ///< `bytes` at `offset` in the graph's arena.
    Result, ///< computed in place in the caller's output number `result`.
    View,   ///< a reshape: the storage of `viewOf`.
  };
  Buffer value;
  Kind kind = Kind::Arena;
  Expr offset, bytes;               ///< Arena: i64 byte offset and size.
  size_t result = 0;                ///< Result.
  Buffer viewOf;                    ///< View.
  size_t firstUse = 0, lastUse = 0; ///< Lifetime in binding positions (Arena).
};

/// The memory plan of a graph: one arena of `arenaBytes` bytes (an i64 expression of the shape
/// variables) holds every intermediate at its offset; values whose lifetimes do not overlap
/// may share bytes. Results returned from a call are computed in the caller's output.
struct MemoryPlan {
  Expr arenaBytes;
  std::vector<PlannedValue> values; ///< In order of definition.
};

/// A graph (spec §8). Results are returned values, passed by the caller like outputs.
struct GraphFunc final : FuncNodeOf<FuncKind::GraphFunc> {
  std::vector<Var> constVars;
  std::vector<FuncParam> inputs;
  std::vector<Var> shapeVars;
  std::vector<GraphItem> body;
  std::vector<Buffer> results;
  /// Set by graph.plan-memory; printed as comments (not part of the syntax).
  std::optional<MemoryPlan> plan;
  static Func make(std::string name, std::vector<Var> constVars, std::vector<FuncParam> inputs,
                   std::vector<Var> shapeVars, std::vector<GraphItem> body,
                   std::vector<Buffer> results, SourceLoc loc = {},
                   std::optional<MemoryPlan> plan = std::nullopt);
};

/// `extern [pure] func name(inputs) -> (outputs) = "symbol";`
struct ExternFunc final : FuncNodeOf<FuncKind::ExternFunc> {
  bool pure = false;
  std::vector<FuncParam> inputs;
  std::vector<Buffer> outputs;
  std::vector<Var> shapeVars;
  std::string symbol;
  static Func make(std::string name, bool pure, std::vector<FuncParam> inputs,
                   std::vector<Buffer> outputs, std::vector<Var> shapeVars, std::string symbol,
                   SourceLoc loc = {});
};

/// A graph constant (spec §8): `const w: f32[4, 8] = load("w.npy");`, or a value made by
/// constant folding. Its data is read at compile time and embedded in compiled code.
struct Constant {
  /// The module-level name: `w` for the main module's, `nn.w` for an imported module's.
  std::string name;
  /// The graph value: role Constant, a static shape, named after the constant (unqualified).
  Buffer buffer;
  /// The bytes in the storage of spec §10 (row-major, host byte order), shared between copies.
  std::shared_ptr<const std::vector<uint8_t>> data;
  /// The absolute path of the .npy file it was loaded from; empty for a folded constant (whose
  /// data --emit=ir prints as `hex("…")`).
  std::string path;
  SourceLoc loc;

  /// The number of elements of its static shape.
  int64_t numElements() const;
};

/// An ordered list of functions with lookup by name, the module's own `import` lines and its
/// graph constants.
/// `intrinsic NAME(DESC, IMPL);`: a tensor intrinsic `tensorize` can use (docs/schedules.md).
/// The names are qualified as functions' are (`intrin.avx2_6x16` from an import).
struct TensorIntrin {
  std::string name;
  std::string desc; ///< A PrimFunc of the module: one block under a chain of loops.
  std::string impl; ///< A PrimFunc with the signature of `desc`.
  SourceLoc loc;
};

/// `grad NAME = F wrt (P1, …);` (spec §13) as the checker found it. The module holds NAME as a
/// graph with F's gradient signature (ir/Grad.h) and an empty body until the pipeline's `grad`
/// step derives it (passes/grad/Grad.h); the IR printer prints the item for such a graph.
struct GradItem {
  std::string name; ///< NAME, qualified as functions' are.
  std::string func; ///< F, qualified.
  std::vector<std::string> wrt;
  SourceLoc loc, nameLoc;
  std::vector<SourceLoc> wrtLocs;
  /// Set by the grad step once NAME's graph has its body (the printer prints the graph then).
  bool derived = false;
};

class Module {
public:
  std::vector<std::string> imports;
  /// The `grad` items, in declaration order (imported modules' first).
  std::vector<GradItem> grads;
  /// The grad item defining `name`, or null.
  const GradItem *lookupGrad(std::string_view name) const;
  /// The tensor intrinsics, in declaration order (imported modules' first).
  std::vector<TensorIntrin> intrinsics;
  /// The intrinsic named `name`, or null.
  const TensorIntrin *lookupIntrinsic(std::string_view name) const;
  /// The graph constants, in declaration order (imported modules' first, then the module's own,
  /// then those constant folding made).
  std::vector<Constant> constants;
  /// The constant named `name`, or null.
  const Constant *lookupConstant(std::string_view name) const;
  /// The constant whose graph value is `buffer`, or null.
  const Constant *constantOf(const Buffer &buffer) const;
  /// Each PrimFunc as it was before its schedule applied (recorded by the pipeline's schedule
  /// step): the accesses lower.bounds-check checks against symbolic shapes are the unscheduled
  /// function's (ir/ShapeBounds.h). A function missing here is its own.
  std::map<std::string, Func> unscheduled;

  /// Appends `func`; its name must not be taken yet.
  void add(Func func);
  /// Replaces the function of the same name, keeping its position.
  void replace(Func func);
  /// The function named `name`, or an undefined handle.
  Func lookup(std::string_view name) const;
  const std::vector<Func> &functions() const { return funcs_; }

private:
  std::vector<Func> funcs_;
  std::unordered_map<std::string, size_t> index_;
};

// ---------------------------------------------------------------------------------------------
// Convenience constructors
// ---------------------------------------------------------------------------------------------

Expr intImm(int64_t value, DType type = DType::i64());
Expr floatImm(double value, DType type = DType::f32());
Expr boolImm(bool value);

namespace detail {
Expr intConstant(DType type, int64_t value);
Expr floatConstant(DType type, double value);
} // namespace detail

/// A constant of `type` with the given value: an IntImm for integer and bool types, a FloatImm
/// for float types. A non-integral value for an integer type is an internal error.
template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
Expr constant(DType type, T value) {
  if constexpr (std::is_floating_point_v<T>)
    return detail::floatConstant(type, static_cast<double>(value));
  else
    return detail::intConstant(type, static_cast<int64_t>(value));
}

/// The value of an IntImm (including bool), if `e` is one.
std::optional<int64_t> asConstInt(const Expr &e);
bool isConstInt(const Expr &e, int64_t value);

/// A single statement for `stmts`: the statement itself when there is one, otherwise a
/// SeqStmt with nested SeqStmts flattened.
Stmt seq(std::vector<Stmt> stmts);

#define TDSL_IR_DECLARE_HELPER(NAME) Expr NAME(Expr a, Expr b);
TDSL_IR_DECLARE_HELPER(add)
TDSL_IR_DECLARE_HELPER(sub)
TDSL_IR_DECLARE_HELPER(mul)
TDSL_IR_DECLARE_HELPER(div)
TDSL_IR_DECLARE_HELPER(mod)
TDSL_IR_DECLARE_HELPER(min)
TDSL_IR_DECLARE_HELPER(max)
TDSL_IR_DECLARE_HELPER(eq)
TDSL_IR_DECLARE_HELPER(ne)
TDSL_IR_DECLARE_HELPER(lt)
TDSL_IR_DECLARE_HELPER(le)
TDSL_IR_DECLARE_HELPER(gt)
TDSL_IR_DECLARE_HELPER(ge)
TDSL_IR_DECLARE_HELPER(logicalAnd)
TDSL_IR_DECLARE_HELPER(logicalOr)
#undef TDSL_IR_DECLARE_HELPER
Expr logicalNot(Expr a);
Expr cast(DType type, Expr value);
Expr select(Expr condition, Expr trueValue, Expr falseValue);
Expr call(Intrinsic op, std::vector<Expr> args);

// Arithmetic operators. A plain number on one side becomes a constant of the other side's
// dtype. Comparisons have no operators: use eq(), lt(), ... (handles compare by identity).
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
#define TDSL_IR_DECLARE_SCALAR_OPS(OP)                                                             \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>                        \
  Expr operator OP(Expr a, T b) {                                                                  \
    Expr rhs = constant(a.dtype(), b);                                                             \
    return std::move(a) OP std::move(rhs);                                                         \
  }                                                                                                \
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>                        \
  Expr operator OP(T a, Expr b) {                                                                  \
    Expr lhs = constant(b.dtype(), a);                                                             \
    return std::move(lhs) OP std::move(b);                                                         \
  }
TDSL_IR_DECLARE_SCALAR_OPS(+)
TDSL_IR_DECLARE_SCALAR_OPS(-)
TDSL_IR_DECLARE_SCALAR_OPS(*)
TDSL_IR_DECLARE_SCALAR_OPS(/)
TDSL_IR_DECLARE_SCALAR_OPS(%)
#undef TDSL_IR_DECLARE_SCALAR_OPS

// ---------------------------------------------------------------------------------------------
// Dispatch on the node kind
// ---------------------------------------------------------------------------------------------

/// Calls `f` with `e`'s node cast to its own type (`f` takes `const auto *`): the one switch
/// over the expression kinds that the traversals share. `e` must be defined.
template <typename F> decltype(auto) dispatch(const Expr &e, F &&f) {
  switch (e.kind()) {
#define TDSL_IR_CASE(NAME)                                                                         \
  case ExprKind::NAME:                                                                             \
    return f(static_cast<const NAME *>(e.get()));
    TDSL_FOR_EACH_EXPR_NODE(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  }
  __builtin_unreachable();
}

/// The same over the statement kinds.
template <typename F> decltype(auto) dispatch(const Stmt &s, F &&f) {
  switch (s.kind()) {
#define TDSL_IR_CASE(NAME)                                                                         \
  case StmtKind::NAME:                                                                             \
    return f(static_cast<const NAME *>(s.get()));
    TDSL_FOR_EACH_STMT_NODE(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  }
  __builtin_unreachable();
}

} // namespace tdsl::ir

template <> struct std::hash<tdsl::ir::Var> {
  size_t operator()(const tdsl::ir::Var &v) const noexcept {
    return std::hash<const void *>()(v.get());
  }
};
template <> struct std::hash<tdsl::ir::Buffer> {
  size_t operator()(const tdsl::ir::Buffer &b) const noexcept {
    return std::hash<const void *>()(b.get());
  }
};

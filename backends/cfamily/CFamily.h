//===- backends/cfamily/CFamily.h - What the C++ and CUDA emitters share ------------------===//
//
// The C++ (backends/cpp) and CUDA (backends/cuda) backends print the same lowered IR as text
// of one C family: this library holds the one copy of what they print alike — C type names,
// unique C names, integer and float literals, the scalar expression printer with its interval
// analysis (plain C operators where they are exact), the §10 prototypes and the validating
// DLPack entry, and the prelude helpers both define. A backend derives FunctionEmitterBase and
// supplies its dialect (math functions, non-finite literals, limits, float→int casts).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tdsl::cfamily {

// --- Types and names ---------------------------------------------------------------------------

/// The C type of a tensor element or an ABI scalar (f16/bf16 are uint16_t bit patterns, bool
/// is uint8_t).
std::string storageType(ir::DType t);
/// The C type of a value computed on: f16/bf16 values are floats, bools are bools.
std::string valueType(ir::DType t);
bool isHalf(ir::DType t);
/// DLPack's {code spelling, bits} of a dtype ({"kDLUInt", 8} for bool).
std::pair<const char *, int> dlType(ir::DType t);

/// Unique C names for the Vars, Buffers and functions of one scope, chosen in order of
/// definition: abi::cIdentifier of the hint, suffixed `_1`, `_2`, ... when it is taken, a
/// reserved word (abi::isReservedWord, or `extraReserved` when given) or starts with `tdsl_`.
class NameTable {
public:
  explicit NameTable(std::set<std::string> taken,
                     bool (*extraReserved)(const std::string &) = nullptr)
      : taken_(std::move(taken)), extraReserved_(extraReserved) {}

  const std::string &define(const void *object, const std::string &hint);
  /// Gives `object` exactly `name` (a global the unit defines, such as a graph constant's).
  void fix(const void *object, const std::string &name) {
    taken_.insert(name);
    names_[object] = name;
  }
  const std::string &operator()(const ir::Var &v) { return define(v.get(), v.name()); }
  const std::string &operator()(const ir::Buffer &b) { return define(b.get(), b.name()); }

private:
  std::set<std::string> taken_;
  bool (*extraReserved_)(const std::string &);
  std::unordered_map<const void *, std::string> names_;
};

/// `text` without one pair of outer parentheses, when they enclose all of it.
std::string stripParens(const std::string &text);

/// The negation of the operand `text`, parenthesized: `(-x)`, and `(-(-0.0f))` where the operand
/// itself starts with a minus sign (`--0.0f` would be a decrement).
std::string negated(const std::string &text);

/// The deepest nesting of (), [] and {} in `text` (what Clang's -fbracket-depth limits, 256 by
/// default).
int nestingDepth(const std::string &text);

// --- Interval analysis ---------------------------------------------------------------------------

/// Known bounds of an integer value (inclusive).
struct Bounds {
  std::optional<int64_t> lo, hi;
};

/// `v` when it fits in `t` (integer), nullopt otherwise.
std::optional<int64_t> fit(__int128 v, ir::DType t);

/// Each loop variable of a source function (and the first iter var of a short-form block,
/// which lowering makes a loop variable) mapped to "block Y (line 5), ..." for the blocks
/// inside it: the comment above each emitted loop nest.
std::unordered_map<ir::Var, std::string> nestComments(const ir::Stmt &sourceBody);

// --- Prelude pieces ------------------------------------------------------------------------------
// Text of the helpers both preludes define; `qualifier` goes before `static inline` of each
// function ("" for C++, "[[maybe_unused]] __host__ __device__ " for CUDA).

/// `namespace {` and tdsl_fail (which sets the message of tdsl_last_error()).
std::string preludeFail(const std::string &qualifier = "");
/// Wrapping integer arithmetic (tdsl_add, ..., tdsl_abs), floor division and modulo.
std::string preludeIntegerArithmetic(const std::string &qualifier);
/// How a prelude spells what the f16/bf16 conversions use (device code has no std::).
struct HalfDialect {
  std::string qualifier;  ///< Before each `static inline`.
  std::string memcpy;     ///< "std::memcpy"
  std::string isInf;      ///< Whether the double `value` (its bits in `bits`) is infinite.
  std::string findTop;    ///< Statements that `leadingBit` needs ("" for none).
  std::string leadingBit; ///< The index of the leading set bit of the uint64_t `mag`.
  std::string ldexp;      ///< ldexp on floats.
  std::string nan, inf;   ///< Float NaN and infinity.
};
/// f16/bf16 conversions: tdsl_half_encode, tdsl_f16_bits, ..., tdsl_round_bf16.
std::string preludeHalfConversions(const HalfDialect &d);
/// tdsl_is_compact and tdsl_data, for the DLPack entries.
std::string preludeDlpackChecks(const std::string &qualifier);
/// The end of the anonymous namespace and the weak tdsl_last_error().
std::string preludeEnd();

// --- One function ------------------------------------------------------------------------------

/// What a DLPack entry requires of a tensor's device.
struct DlpackDevice {
  const char *type;    ///< kDLCPU
  const char *notOnIt; ///< "is not on the CPU"
};

/// The printer of one lowered function's scalar code and ABI entries; a backend adds the
/// statements (and kernels) it emits.
class FunctionEmitterBase {
public:
  FunctionEmitterBase(const ir::PrimFunc *source, const ir::PrimFunc *lowered, std::string cName,
                      NameTable names)
      : source_(source), lowered_(lowered), cName_(std::move(cName)), names_(std::move(names)) {}
  virtual ~FunctionEmitterBase() = default;

  /// The raw and DLPack prototypes (no trailing ';'); `forHeader` writes `(void)` when empty.
  std::string rawPrototype(bool forHeader);
  std::string dlpackPrototype(bool forHeader);

protected:
  // The dialect.
  /// A call of the math function `name` ("sqrt", "fmin", ...) on values of type `t`.
  virtual std::string mathFunction(const std::string &name, ir::DType t) = 0;
  /// NaN or (positive) infinity of f32 (or f64).
  virtual std::string nonFinite(bool isF64, bool isNan) = 0;
  /// min_value/max_value of `t` (neither bool nor f16/bf16).
  virtual std::string limit(ir::DType t, bool isMax) = 0;
  /// A float value `x` converted to the integer type `to` (saturating).
  virtual std::string floatToInt(ir::DType to, const std::string &x) = 0;
  /// The element `index` of `buffer` as an lvalue of its storage type: `NAME[INDEX]`.
  virtual std::string elementAccess(const ir::Buffer &buffer, const ir::Expr &index) {
    return names_(buffer) + "[" + expr(index) + "]";
  }

  // Scalar expressions. A left operand of the same precedence as its parent is printed without
  // parentheses (`a + b + c`, `a * b / c`), so that long chains stay flat.
  std::string expr(const ir::Expr &e);
  std::string intLiteral(ir::DType t, int64_t v);
  std::string floatLiteral(ir::DType t, double v);
  std::string binary(const ir::Expr &e, ir::ExprKind kind, const ir::Expr &a, const ir::Expr &b);
  std::string castExpr(ir::DType to, const ir::Expr &value);
  std::string callExpr(const ir::Call *op);
  /// Rounds a float-computed value of a half type back to its precision.
  std::string roundHalf(ir::DType t, const std::string &text);
  Bounds bounds(const ir::Expr &e);

  // Pieces of statements.
  void line(const std::string &text) { *os_ << std::string(indent_ * 2, ' ') << text << "\n"; }
  /// Before emitting the body: scalar parameters kept as bit patterns, parameters named first
  /// (so that they keep their source names), shape variables non-negative, the block comments
  /// of the source's loop nests. Returns the raw prototype.
  std::string prepare();
  /// `(void)NAME;` for each parameter the lowered body never uses (-Wunused-parameter).
  void markUnusedParameters();
  /// `for (int64_t v = MIN; v < END; ++v) {`, recording the bounds of the loop variable.
  void forHeader(const ir::For *op);
  /// The text of that header (printing any temporaries it needs first); the caller prints it
  /// and then calls recordLoopBounds.
  std::string forHeaderText(const ir::For *op);
  /// The bounds of a loop's variable from those of its min and extent.
  void recordLoopBounds(const ir::For *op);
  /// The comment naming the blocks of a loop nest, when there is one.
  void nestComment(const ir::For *op);
  /// `NAME[INDEX] = VALUE;` of a scalar store (half and bool values converted to storage).
  void scalarStore(const ir::BufferStore *op);
  /// `const T v = VALUE;`, recording the bounds of v.
  void letLine(const ir::LetStmt *op);
  /// `if (COND) { THEN } else { ELSE }`, the branches printed by `body`.
  void ifThenElse(const ir::IfThenElse *op, const std::function<void(const ir::Stmt &)> &body);
  /// Prints what every dialect prints alike: a `let`, an `if` or a sequence (true), `recurse`
  /// printing the statements inside; before the outermost loop of a nest (`inFor` false), the
  /// comment naming its blocks (false: the dialect prints the loop). False for anything else.
  bool structuralStmt(const ir::Stmt &s, bool inFor,
                      const std::function<void(const ir::Stmt &)> &recurse);
  /// The validating entry NAME_dlpack: null, device, dtype, rank, shape and compactness
  /// checks, shape variables bound at their first appearance, then the raw entry's call.
  void emitDlpack(std::ostream &os, const DlpackDevice &device);

  const ir::PrimFunc *source_;
  const ir::PrimFunc *lowered_;
  std::string cName_;
  NameTable names_;
  std::unordered_map<ir::Var, Bounds> varBounds_;
  std::set<const ir::VarNode *> halfParams_; ///< f16/bf16/bool scalar parameters (bit patterns).
  std::unordered_map<ir::Var, std::string> comments_;
  std::ostream *os_ = nullptr;
  int indent_ = 0;

  /// Deep expressions: when set (by a backend, around statements whose expressions are
  /// evaluated before the statement runs), a scalar expression nested deeper than
  /// kMaxNesting becomes a temporary `const T tdsl_eN = ...;` printed before the statement,
  /// so that no compiler's nesting limit is reached. Never inside a select branch or the right
  /// operand of && and || (evaluated only on a condition: they may guard a load).
  static constexpr int kMaxNesting = 16;
  bool hoistDeep_ = false;
  int noHoist_ = 0;
  int hoisted_ = 0;

private:
  std::string exprText(const ir::Expr &e);
  Bounds computeBounds(const ir::Expr &e);
  /// Bounds of the expression nodes seen since varBounds_ last changed (one evaluation per
  /// node: nested Adds would otherwise take exponential time). Each entry holds its node, so
  /// that a temporary expression freed while emitting cannot leave its address, and its
  /// bounds, to another one (which made the emitted C++ depend on the allocator).
  std::unordered_map<const void *, std::pair<ir::Expr, Bounds>> boundsCache_;
  void setVarBounds(const ir::Var &v, Bounds b);
};

} // namespace tdsl::cfamily

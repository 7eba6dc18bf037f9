//===- backends/cpp/CppEmitter.cpp - The C++ backend --------------------------------------===//
#include "backends/cpp/CppEmitter.h"

#include "backends/abi/Abi.h"
#include "backends/cpp/Format.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/lower/LowerGraph.h"
#include "runtime/Float16.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tdsl::cpp {

using namespace ir;

namespace {

// ---------------------------------------------------------------------------------------------
// The prelude: includes and the helpers the emitted code calls (all static inline or
// templates, so unused ones cost nothing and raise no warning).
// ---------------------------------------------------------------------------------------------

const char *kPrelude = R"(#include <dlpack/dlpack.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

// The message of tdsl_last_error(), one per thread and one per program: an inline variable
// (a COMDAT symbol), so that the objects of several .tdsl files share it.
namespace tdsl_generated {
inline thread_local char last_error[512];
} // namespace tdsl_generated

namespace {

// Sets the message of tdsl_last_error() and returns the failure status.
static inline int32_t tdsl_fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(tdsl_generated::last_error, sizeof tdsl_generated::last_error, format, args);
  va_end(args);
  return 1;
}

// Wrapping integer arithmetic: computed on an unsigned type at least as wide as int.
template <typename T> struct tdsl_unsigned {
  using type = typename std::conditional<(sizeof(T) < 8), uint32_t, uint64_t>::type;
};
template <typename T> static inline T tdsl_add(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T> static inline T tdsl_sub(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T> static inline T tdsl_mul(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename T> static inline T tdsl_neg(T a) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(U(0) - static_cast<U>(a));
}
template <typename T> static inline T tdsl_min(T a, T b) { return a < b ? a : b; }
template <typename T> static inline T tdsl_max(T a, T b) { return a < b ? b : a; }
template <typename T> static inline T tdsl_abs(T a) { return a < T(0) ? tdsl_neg(a) : a; }

// Floor division and modulo (x / 0 == 0, x % 0 == x, MIN / -1 wraps).
template <typename T> static inline T tdsl_floordiv(T a, T b) {
  if (b == 0)
    return 0;
  if constexpr (std::is_unsigned<T>::value) {
    return static_cast<T>(a / b);
  } else {
    if (b == T(-1))
      return tdsl_neg(a);
    T q = static_cast<T>(a / b), r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  }
}
template <typename T> static inline T tdsl_floormod(T a, T b) {
  if (b == 0)
    return a;
  if constexpr (std::is_unsigned<T>::value) {
    return static_cast<T>(a % b);
  } else {
    if (b == T(-1))
      return 0;
    T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(r + b) : r;
  }
}
template <typename T> static inline T tdsl_fmod_floor(T a, T b) { return a - std::floor(a / b) * b; }

// float -> integer: truncates toward zero, saturates out of range, NaN gives 0.
template <typename T> static inline T tdsl_f2i(double x) {
  if (x != x)
    return 0;
  if (x <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  if (x >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(x);
}

// f16 and bf16 are stored as bit patterns and computed in float; conversions to them round
// once, to nearest even.
static inline uint16_t tdsl_half_encode(int expBits, int manBits, double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  uint16_t sign = (bits >> 63) ? static_cast<uint16_t>(1u << (expBits + manBits)) : 0;
  uint16_t inf = static_cast<uint16_t>(((1u << expBits) - 1) << manBits);
  if (value != value)
    return static_cast<uint16_t>(sign | inf | (1u << (manBits - 1)));
  if (std::isinf(value))
    return static_cast<uint16_t>(sign | inf);
  int field = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mag = bits & ((uint64_t(1) << 52) - 1);
  int exp = field == 0 ? -1074 : field - 1075;
  if (field != 0)
    mag |= uint64_t(1) << 52;
  if (mag == 0)
    return sign;
  int bias = (1 << (expBits - 1)) - 1, emin = 1 - bias;
  int lead = 63 - __builtin_clzll(mag) + exp;
  int lsb = (lead < emin ? emin : lead) - manBits;
  int shift = lsb - exp;
  uint64_t q;
  if (shift <= 0) {
    q = mag << -shift;
  } else if (shift >= 64) {
    q = 0;
  } else {
    q = mag >> shift;
    uint64_t rem = mag & ((uint64_t(1) << shift) - 1), half = uint64_t(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
      ++q;
  }
  uint64_t out = lead < emin ? q : (uint64_t(lead + bias - 1) << manBits) + q;
  if (out >= inf)
    return static_cast<uint16_t>(sign | inf);
  return static_cast<uint16_t>(sign | out);
}
static inline uint16_t tdsl_f16_bits(double x) { return tdsl_half_encode(5, 10, x); }
static inline uint16_t tdsl_bf16_bits(double x) { return tdsl_half_encode(8, 7, x); }
static inline float tdsl_f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? std::ldexp(static_cast<float>(m), -24)
            : e == 31 ? (m ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity())
                      : std::ldexp(static_cast<float>(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}
static inline float tdsl_bf16_value(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}
static inline float tdsl_round_f16(double x) { return tdsl_f16_value(tdsl_f16_bits(x)); }
static inline float tdsl_round_bf16(double x) { return tdsl_bf16_value(tdsl_bf16_bits(x)); }

// --bounds-check: the first failed check of a call records its message; the entry returns
// it at the end (a check inside an OpenMP loop cannot return). Atomic: threads may race.
static inline void tdsl_report(int *failed, char *message, size_t size, const char *format, ...) {
  if (__atomic_exchange_n(failed, 1, __ATOMIC_ACQ_REL))
    return;
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, size, format, args);
  va_end(args);
}

// DLPack checks.
static inline bool tdsl_is_compact(const DLTensor *t) {
  if (!t->strides)
    return true;
  int64_t expected = 1;
  for (int d = t->ndim - 1; d >= 0; --d) {
    if (t->shape[d] != 1 && t->strides[d] != expected)
      return false;
    expected *= t->shape[d];
  }
  return true;
}
static inline void *tdsl_data(const DLTensor *t) {
  return static_cast<char *>(t->data) + t->byte_offset;
}

} // namespace

// Weak: every translation unit defines it, the program keeps one (all return the same buffer).
extern "C" __attribute__((weak)) const char *tdsl_last_error(void) {
  return tdsl_generated::last_error;
}
)";

// ---------------------------------------------------------------------------------------------
// Types and names
// ---------------------------------------------------------------------------------------------

/// The C type of a tensor element or an ABI scalar.
std::string storageType(DType t) {
  switch (t.code()) {
  case DType::Code::Bool:
  case DType::Code::U8:
    return "uint8_t";
  case DType::Code::I8:
    return "int8_t";
  case DType::Code::I16:
    return "int16_t";
  case DType::Code::I32:
    return "int32_t";
  case DType::Code::I64:
    return "int64_t";
  case DType::Code::U16:
  case DType::Code::F16:
  case DType::Code::BF16:
    return "uint16_t";
  case DType::Code::U32:
    return "uint32_t";
  case DType::Code::U64:
    return "uint64_t";
  case DType::Code::F32:
    return "float";
  case DType::Code::F64:
    return "double";
  }
  return "?";
}

/// The C type of a value computed on: f16/bf16 values are floats, bools are bools.
std::string valueType(DType t) {
  if (t.isBool())
    return "bool";
  if (t.code() == DType::Code::F16 || t.code() == DType::Code::BF16)
    return "float";
  return storageType(t);
}

bool isHalf(DType t) { return t.code() == DType::Code::F16 || t.code() == DType::Code::BF16; }

/// DLPack's {code, bits} of a dtype.
std::pair<const char *, int> dlType(DType t) {
  auto [code, bits] = abi::dlpackType(t);
  return {abi::dlpackCodeName(code), bits};
}

/// Unique C names for the Vars and Buffers of one function, chosen in order of definition.
class NameTable {
public:
  explicit NameTable(std::set<std::string> taken) : taken_(std::move(taken)) {}

  const std::string &define(const void *object, const std::string &hint) {
    auto it = names_.find(object);
    if (it != names_.end())
      return it->second;
    std::string base = abi::cIdentifier(hint), name = base;
    for (int i = 1; taken_.count(name) || abi::isReservedWord(name) ||
                    name.rfind("tdsl_", 0) == 0;
         ++i)
      name = base + "_" + std::to_string(i);
    taken_.insert(name);
    return names_.emplace(object, name).first->second;
  }
  const std::string &operator()(const Var &v) { return define(v.get(), v.name()); }
  const std::string &operator()(const Buffer &b) { return define(b.get(), b.name()); }

private:
  std::set<std::string> taken_;
  std::unordered_map<const void *, std::string> names_;
};

/// `text` without one pair of outer parentheses, when they enclose all of it.
std::string stripParens(const std::string &text) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return text;
  int depth = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0)
      return text;
  }
  return text.substr(1, text.size() - 2);
}

// ---------------------------------------------------------------------------------------------
// Interval analysis (for plain C operators where they cannot overflow or round wrongly)
// ---------------------------------------------------------------------------------------------

struct Bounds {
  std::optional<int64_t> lo, hi;
};

std::optional<int64_t> fit(__int128 v, DType t) {
  __int128 lo, hi;
  if (t.isUInt()) {
    lo = 0;
    hi = t.bits() >= 64 ? __int128(INT64_MAX) : (__int128(1) << t.bits()) - 1;
  } else {
    lo = -(__int128(1) << (t.bits() - 1));
    hi = (__int128(1) << (t.bits() - 1)) - 1;
  }
  if (v < lo || v > hi)
    return std::nullopt;
  return static_cast<int64_t>(v);
}

// ---------------------------------------------------------------------------------------------
// Block comments: which blocks each loop nest came from
// ---------------------------------------------------------------------------------------------

/// Maps each loop variable of the source function (and the first iter var of a short-form
/// block, which lowering makes a loop variable) to "block Y (line 5)" for the blocks inside.
class NestComments : public IRVisitor {
public:
  std::unordered_map<Var, std::string> comments;

  void visit(const For *op) override {
    size_t mark = blocks_.size();
    IRVisitor::visit(op);
    comments[op->loopVar] = describe(mark);
  }
  void visit(const Block *op) override {
    size_t mark = blocks_.size();
    std::string self = "block " + op->name;
    if (op->loc.valid())
      self += " (line " + std::to_string(op->loc.line) + ")";
    blocks_.push_back(self);
    IRVisitor::visit(op);
    if (!op->iterVars.empty() && !op->iterVars.front().binding.defined())
      comments[op->iterVars.front().var] = describe(mark);
  }

private:
  std::string describe(size_t mark) const {
    std::string out;
    for (size_t i = mark; i < blocks_.size(); ++i)
      out += (i == mark ? "" : ", ") + blocks_[i];
    return out;
  }
  std::vector<std::string> blocks_;
};

// ---------------------------------------------------------------------------------------------
// One function
// ---------------------------------------------------------------------------------------------

class FunctionEmitter {
public:
  FunctionEmitter(const PrimFunc *source, const PrimFunc *lowered, std::string cName,
                  const std::map<std::string, std::string> *callees = nullptr, bool isGraph = false)
      : source_(source), lowered_(lowered), cName_(std::move(cName)), names_({}),
        callees_(callees), isGraph_(isGraph) {}

  void emit(std::ostream &os);
  /// The raw and DLPack prototypes (no trailing ';'), for the header too.
  std::string rawPrototype(bool forHeader);
  std::string dlpackPrototype(bool forHeader);

private:
  // Expressions.
  std::string expr(const Expr &e);
  std::string intLiteral(DType t, int64_t v);
  std::string floatLiteral(DType t, double v);
  std::string binary(const Expr &e, ExprKind kind, const Expr &a, const Expr &b);
  std::string castExpr(DType to, const Expr &value);
  std::string callExpr(const Call *op);
  std::string roundHalf(DType t, const std::string &text);
  Bounds bounds(const Expr &e);

  // Vector code (lowered by lower.vectorize): GCC/Clang vector extensions, loads and stores
  // through memcpy (unaligned), every vector value a local, never a function argument.
  std::string vexpr(const Expr &e);
  std::string vtemp(DType t, const std::string &init);
  void vectorStore(const BufferStore *op);
  // --bounds-check.
  void assertStmt(const AssertStmt *op);

  // Statements.
  void stmt(const Stmt &s, bool inFor);
  void line(const std::string &text) { *os_ << std::string(indent_ * 2, ' ') << text << "\n"; }

  void emitDlpack(std::ostream &os);

  const PrimFunc *source_;
  const PrimFunc *lowered_;
  std::string cName_;
  NameTable names_;
  std::unordered_map<Var, Bounds> varBounds_;
  std::set<const VarNode *> halfParams_; ///< f16/bf16/bool scalar parameters (bit patterns).
  std::unordered_map<Var, std::string> comments_;
  std::ostream *os_ = nullptr;
  int indent_ = 0;
  int loopDepth_ = 0;
  int temps_ = 0; ///< Vector temporaries tdsl_v0, tdsl_v1, ...

  // Lowered graphs (passes/lower/LowerGraph.h).
  void graphStmt(const Stmt &s);
  std::string abiScalar(const Expr &e);
  const std::map<std::string, std::string> *callees_; ///< Module name → C symbol.
  bool isGraph_;
  std::vector<std::string> heap_; ///< Heap allocations in scope, released on an early return.
};

/// The C name of a vector type: tdsl_f32x8.
std::string vectorTypeName(DType t) { return "tdsl_" + t.name(); }

/// `text` as a C string literal body.
std::string cString(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string FunctionEmitter::rawPrototype(bool forHeader) {
  std::ostringstream os;
  os << "int32_t " << cName_ << "(";
  bool first = true;
  auto sep = [&] {
    if (!first)
      os << ", ";
    first = false;
  };
  for (size_t i = 0; i < lowered_->inputs.size(); ++i) {
    const FuncParam &p = lowered_->inputs[i];
    sep();
    if (p.isTensor())
      os << "const " << storageType(p.buffer.dtype()) << " *" << names_(p.buffer);
    else
      os << storageType(p.scalar.dtype()) << " " << names_(p.scalar);
  }
  for (const Buffer &b : lowered_->outputs) {
    sep();
    os << storageType(b.dtype()) << " *" << names_(b);
  }
  for (const Var &v : lowered_->shapeVars) {
    sep();
    os << "int64_t " << names_(v);
  }
  if (first && forHeader)
    os << "void";
  os << ")";
  return os.str();
}

std::string FunctionEmitter::dlpackPrototype(bool forHeader) {
  std::ostringstream os;
  os << "int32_t " << cName_ << "_dlpack(";
  bool first = true;
  auto sep = [&] {
    if (!first)
      os << ", ";
    first = false;
  };
  for (const FuncParam &p : lowered_->inputs) {
    sep();
    if (p.isTensor())
      os << "const DLTensor *" << names_(p.buffer);
    else
      os << storageType(p.scalar.dtype()) << " " << names_(p.scalar);
  }
  for (const Buffer &b : lowered_->outputs) {
    sep();
    os << "DLTensor *" << names_(b);
  }
  if (first && forHeader)
    os << "void";
  os << ")";
  return os.str();
}

// --- Expressions -----------------------------------------------------------------------------

std::string FunctionEmitter::intLiteral(DType t, int64_t v) {
  if (t.isBool())
    return v ? "true" : "false";
  std::string ty = storageType(t);
  if (t.isUInt()) {
    std::string digits = std::to_string(static_cast<uint64_t>(v));
    return t.bits() == 64 ? "UINT64_C(" + digits + ")" : ty + "(" + digits + "u)";
  }
  if (t.bits() == 64) {
    if (v == INT64_MIN)
      return "INT64_MIN";
    if (v >= INT32_MIN && v <= INT32_MAX)
      return v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    return "INT64_C(" + std::to_string(v) + ")";
  }
  if (t.bits() == 32)
    return v == INT32_MIN ? "INT32_MIN" : v < 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
  return ty + "(" + std::to_string(v) + ")";
}

std::string FunctionEmitter::floatLiteral(DType t, double v) {
  bool isF64 = t.code() == DType::Code::F64;
  if (std::isnan(v))
    return isF64 ? "std::numeric_limits<double>::quiet_NaN()"
                 : "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(v)) {
    std::string inf = isF64 ? "std::numeric_limits<double>::infinity()"
                            : "std::numeric_limits<float>::infinity()";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  // Halves are exact floats once rounded; print them as f32 literals.
  if (t.code() == DType::Code::F16)
    v = runtime::f16ToDouble(runtime::f16FromDouble(v));
  else if (t.code() == DType::Code::BF16)
    v = runtime::bf16ToDouble(runtime::bf16FromDouble(v));
  std::string text = formatFloat(v, isF64 ? DType::f64() : DType::f32());
  if (!isF64)
    text += "f";
  return v < 0 ? "(" + text + ")" : text;
}

/// Rounds a float-computed value of a half type back to its precision.
std::string FunctionEmitter::roundHalf(DType t, const std::string &text) {
  if (t.code() == DType::Code::F16)
    return "tdsl_round_f16(" + text + ")";
  if (t.code() == DType::Code::BF16)
    return "tdsl_round_bf16(" + text + ")";
  return text;
}

Bounds FunctionEmitter::bounds(const Expr &e) {
  DType t = e.dtype();
  if (!t.isInteger() || !t.isScalar())
    return {};
  if (auto v = asConstInt(e)) {
    if (t.isUInt() && *v < 0)
      return {};
    return {*v, *v};
  }
  if (auto *op = e.as<VarRef>()) {
    auto it = varBounds_.find(op->var);
    return it == varBounds_.end() ? Bounds{} : it->second;
  }
  auto both = [&](const Expr &a, const Expr &b, auto combine) -> Bounds {
    Bounds x = bounds(a), y = bounds(b);
    if (!x.lo || !x.hi || !y.lo || !y.hi)
      return {};
    __int128 c[4] = {combine(*x.lo, *y.lo), combine(*x.lo, *y.hi), combine(*x.hi, *y.lo),
                     combine(*x.hi, *y.hi)};
    __int128 lo = c[0], hi = c[0];
    for (__int128 v : c) {
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    auto flo = fit(lo, t), fhi = fit(hi, t);
    if (!flo || !fhi)
      return {};
    return {flo, fhi};
  };
  if (auto *op = e.as<Add>()) {
    Bounds r = both(op->a, op->b, [](__int128 x, __int128 y) { return x + y; });
    if (!r.lo) { // A lower bound alone still proves non-negativity.
      Bounds x = bounds(op->a), y = bounds(op->b);
      if (x.lo && y.lo && *x.lo >= 0 && *y.lo >= 0)
        r.lo = std::optional<int64_t>(0);
    }
    return r;
  }
  if (auto *op = e.as<Sub>())
    return both(op->a, op->b, [](__int128 x, __int128 y) { return x - y; });
  if (auto *op = e.as<Mul>()) {
    Bounds r = both(op->a, op->b, [](__int128 x, __int128 y) { return x * y; });
    if (!r.lo) {
      Bounds x = bounds(op->a), y = bounds(op->b);
      if (x.lo && y.lo && *x.lo >= 0 && *y.lo >= 0)
        r.lo = std::optional<int64_t>(0);
    }
    return r;
  }
  if (auto *op = e.as<Div>()) {
    Bounds x = bounds(op->a), y = bounds(op->b);
    if (x.lo && *x.lo >= 0 && y.lo && *y.lo > 0) {
      Bounds r{std::optional<int64_t>(0), std::nullopt};
      if (x.hi)
        r.hi = *x.hi / *y.lo;
      return r;
    }
    return {};
  }
  if (auto *op = e.as<Mod>()) {
    Bounds y = bounds(op->b);
    if (y.lo && *y.lo > 0 && y.hi)
      return {std::optional<int64_t>(0), *y.hi - 1};
    return {};
  }
  if (auto *op = e.as<Min>()) {
    Bounds x = bounds(op->a), y = bounds(op->b);
    Bounds r;
    if (x.lo && y.lo)
      r.lo = std::min(*x.lo, *y.lo);
    if (x.hi || y.hi)
      r.hi = x.hi && y.hi ? std::min(*x.hi, *y.hi) : x.hi ? x.hi : y.hi;
    return r;
  }
  if (auto *op = e.as<Max>()) {
    Bounds x = bounds(op->a), y = bounds(op->b);
    Bounds r;
    if (x.hi && y.hi)
      r.hi = std::max(*x.hi, *y.hi);
    if (x.lo || y.lo)
      r.lo = x.lo && y.lo ? std::max(*x.lo, *y.lo) : x.lo ? x.lo : y.lo;
    return r;
  }
  if (auto *op = e.as<Cast>()) {
    if (!op->value.dtype().isInteger())
      return {};
    Bounds x = bounds(op->value);
    if (x.lo && x.hi && fit(*x.lo, t) && fit(*x.hi, t))
      return x;
    return {};
  }
  return {};
}

std::string FunctionEmitter::binary(const Expr &e, ExprKind kind, const Expr &a, const Expr &b) {
  DType t = e.dtype();
  DType operand = a.dtype();
  std::string x = expr(a), y = expr(b);
  auto infix = [&](const char *op) { return "(" + x + " " + op + " " + y + ")"; };
  auto helper = [&](const char *name) {
    return std::string(name) + "<" + storageType(operand) + ">(" + x + ", " + y + ")";
  };
  switch (kind) {
  case ExprKind::EQ:
    return infix("==");
  case ExprKind::NE:
    return infix("!=");
  case ExprKind::LT:
    return infix("<");
  case ExprKind::LE:
    return infix("<=");
  case ExprKind::GT:
    return infix(">");
  case ExprKind::GE:
    return infix(">=");
  case ExprKind::And:
    return infix("&&");
  case ExprKind::Or:
    return infix("||");
  default:
    break;
  }
  if (t.isFloat()) {
    std::string text;
    switch (kind) {
    case ExprKind::Add:
      text = infix("+");
      break;
    case ExprKind::Sub:
      text = infix("-");
      break;
    case ExprKind::Mul:
      text = infix("*");
      break;
    case ExprKind::Div:
      text = infix("/");
      break;
    case ExprKind::Mod:
      text = "tdsl_fmod_floor(" + x + ", " + y + ")";
      break;
    case ExprKind::Min:
      text = "std::fmin(" + x + ", " + y + ")";
      break;
    case ExprKind::Max:
      text = "std::fmax(" + x + ", " + y + ")";
      break;
    default:
      TDSL_IR_CHECK(false, "not an arithmetic node");
    }
    return roundHalf(t, text);
  }
  if (t.isBool()) { // min/max on bools
    if (kind == ExprKind::Min)
      return infix("&&");
    if (kind == ExprKind::Max)
      return infix("||");
  }
  // Integers: plain operators where the interval analysis proves them exact.
  bool exact = bounds(e).lo.has_value() && bounds(e).hi.has_value();
  Bounds bx = bounds(a), by = bounds(b);
  switch (kind) {
  case ExprKind::Add:
    return exact ? infix("+") : helper("tdsl_add");
  case ExprKind::Sub:
    return exact ? infix("-") : helper("tdsl_sub");
  case ExprKind::Mul:
    return exact ? infix("*") : helper("tdsl_mul");
  case ExprKind::Div:
  case ExprKind::Mod: {
    bool plain = bx.lo && *bx.lo >= 0 && by.lo && *by.lo > 0;
    if (plain)
      return infix(kind == ExprKind::Div ? "/" : "%");
    return helper(kind == ExprKind::Div ? "tdsl_floordiv" : "tdsl_floormod");
  }
  case ExprKind::Min:
    return helper("tdsl_min");
  case ExprKind::Max:
    return helper("tdsl_max");
  default:
    TDSL_IR_CHECK(false, "not an arithmetic node");
  }
}

std::string FunctionEmitter::castExpr(DType to, const Expr &value) {
  DType from = value.dtype();
  std::string x = expr(value);
  if (to == from)
    return x;
  if (to.isBool())
    return "(" + x + " != 0)";
  if (to.isFloat()) {
    if (isHalf(to)) // one rounding, from the exact source value
      return roundHalf(to, "static_cast<double>(" + x + ")");
    return "static_cast<" + storageType(to) + ">(" + x + ")";
  }
  if (from.isFloat())
    return "tdsl_f2i<" + storageType(to) + ">(" + x + ")";
  return "static_cast<" + storageType(to) + ">(" + x + ")";
}

std::string FunctionEmitter::callExpr(const Call *op) {
  DType t = op->type;
  std::vector<std::string> args;
  for (const Expr &a : op->args)
    args.push_back(expr(a));
  if (op->op == Intrinsic::MinValue || op->op == Intrinsic::MaxValue) {
    bool isMax = op->op == Intrinsic::MaxValue;
    switch (t.code()) {
    case DType::Code::Bool:
      return isMax ? "true" : "false";
    case DType::Code::F16:
      return isMax ? "65504.0f" : "(-65504.0f)";
    case DType::Code::BF16:
      return isMax ? "tdsl_bf16_value(0x7f7f)" : "tdsl_bf16_value(0xff7f)";
    default:
      return "std::numeric_limits<" + storageType(t) + ">::" + (isMax ? "max()" : "lowest()");
    }
  }
  if (t.isInteger()) {
    TDSL_IR_CHECK(op->op == Intrinsic::Abs, "only abs applies to integers");
    return "tdsl_abs<" + storageType(t) + ">(" + args[0] + ")";
  }
  std::string one = t.code() == DType::Code::F64 ? "1.0" : "1.0f";
  std::string text;
  switch (op->op) {
  case Intrinsic::Rsqrt:
    text = "(" + one + " / std::sqrt(" + args[0] + "))";
    break;
  case Intrinsic::Sigmoid:
    text = "(" + one + " / (" + one + " + std::exp(-" + args[0] + ")))";
    break;
  case Intrinsic::Abs:
    text = "std::fabs(" + args[0] + ")";
    break;
  default: {
    text = std::string("std::") + intrinsicName(op->op) + "(";
    for (size_t i = 0; i < args.size(); ++i)
      text += (i ? ", " : "") + args[i];
    text += ")";
  }
  }
  return roundHalf(t, text);
}

std::string FunctionEmitter::vtemp(DType t, const std::string &init) {
  std::string name = "tdsl_v" + std::to_string(temps_++);
  line(vectorTypeName(t) + " " + name + init + ";");
  return name;
}

std::string FunctionEmitter::vexpr(const Expr &e) {
  DType t = e.dtype();
  int lanes = t.lanes();
  switch (e.kind()) {
  case ExprKind::Broadcast: {
    std::string value = expr(e.as<Broadcast>()->value);
    std::string scalar = "tdsl_v" + std::to_string(temps_++);
    line("const " + valueType(t.element()) + " " + scalar + " = " + stripParens(value) + ";");
    std::string init = " = {";
    for (int i = 0; i < lanes; ++i)
      init += (i ? ", " : "") + scalar;
    return vtemp(t, init + "}");
  }
  case ExprKind::BufferLoad: {
    const auto *op = e.as<BufferLoad>();
    const auto *ramp = op->indices[0].as<Ramp>();
    TDSL_IR_CHECK(ramp && isConstInt(ramp->stride, 1), "vector loads are contiguous");
    std::string v = vtemp(t, "");
    line("std::memcpy(&" + v + ", &" + names_(op->buffer) + "[" + stripParens(expr(ramp->base)) +
         "], sizeof " + v + ");");
    return v;
  }
  case ExprKind::Add:
  case ExprKind::Sub:
  case ExprKind::Mul:
  case ExprKind::Div: {
    // Operands in order, each emitted before the text that combines them.
    auto [a, b] = e.kind() == ExprKind::Add   ? std::pair(e.as<Add>()->a, e.as<Add>()->b)
                  : e.kind() == ExprKind::Sub ? std::pair(e.as<Sub>()->a, e.as<Sub>()->b)
                  : e.kind() == ExprKind::Mul ? std::pair(e.as<Mul>()->a, e.as<Mul>()->b)
                                              : std::pair(e.as<Div>()->a, e.as<Div>()->b);
    const char *op = e.kind() == ExprKind::Add   ? " + "
                     : e.kind() == ExprKind::Sub ? " - "
                     : e.kind() == ExprKind::Mul ? " * "
                                                 : " / ";
    std::string x = vexpr(a);
    std::string y = vexpr(b);
    return "(" + x + op + y + ")";
  }
  case ExprKind::Neg:
    return "(-" + vexpr(e.as<Neg>()->a) + ")";
  case ExprKind::Min:
  case ExprKind::Max: {
    bool isMin = e.kind() == ExprKind::Min;
    const Expr &a = isMin ? e.as<Min>()->a : e.as<Max>()->a;
    const Expr &b = isMin ? e.as<Min>()->b : e.as<Max>()->b;
    std::string x = vexpr(a);
    x = vtemp(t, " = " + stripParens(x));
    std::string y = vexpr(b);
    y = vtemp(t, " = " + stripParens(y));
    line("for (int tdsl_lane = 0; tdsl_lane < " + std::to_string(lanes) + "; ++tdsl_lane)");
    line("  " + x + "[tdsl_lane] = std::" + (isMin ? "fmin(" : "fmax(") + x + "[tdsl_lane], " + y +
         "[tdsl_lane]);");
    return x;
  }
  case ExprKind::Cast: {
    std::string a = vexpr(e.as<Cast>()->value);
    a = vtemp(e.as<Cast>()->value.dtype(), " = " + stripParens(a));
    return "__builtin_convertvector(" + a + ", " + vectorTypeName(t) + ")";
  }
  default:
    break;
  }
  TDSL_IR_CHECK(false, "a vector expression the C++ backend has no form for");
}

void FunctionEmitter::vectorStore(const BufferStore *op) {
  const auto *ramp = op->indices[0].as<Ramp>();
  TDSL_IR_CHECK(ramp && isConstInt(ramp->stride, 1), "vector stores are contiguous");
  std::string value = vexpr(op->value);
  std::string v = vtemp(op->value.dtype(), " = " + stripParens(value));
  line("std::memcpy(&" + names_(op->buffer) + "[" + stripParens(expr(ramp->base)) + "], &" + v +
       ", sizeof " + v + ");");
}

void FunctionEmitter::assertStmt(const AssertStmt *op) {
  std::string format = cString(op->message), args;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format.compare(i, 2, "{}") == 0) {
      out += "%lld";
      ++i;
    } else if (format[i] == '%') {
      out += "%%";
    } else {
      out += format[i];
    }
  }
  for (const Expr &arg : op->args)
    args += ", static_cast<long long>(" + stripParens(expr(arg)) + ")";
  line("if (" + stripParens(expr(op->condition)) + ") {");
  ++indent_;
  stmt(op->body, false);
  --indent_;
  line("} else {");
  line("  tdsl_report(&tdsl_failed, tdsl_message, sizeof tdsl_message, \"" + out + "\"" + args +
       ");");
  line("}");
}

std::string FunctionEmitter::expr(const Expr &e) {
  TDSL_IR_CHECK(e.dtype().isScalar(), "vector values are emitted by vexpr");
  switch (e.kind()) {
  case ExprKind::IntImm:
    return intLiteral(e.dtype(), e.as<IntImm>()->value);
  case ExprKind::FloatImm:
    return floatLiteral(e.dtype(), e.as<FloatImm>()->value);
  case ExprKind::VarRef: {
    const Var &v = e.as<VarRef>()->var;
    std::string name = names_(v);
    if (!halfParams_.count(v.get()))
      return name;
    if (v.dtype().isBool())
      return "(" + name + " != 0)";
    return (v.dtype().code() == DType::Code::F16 ? "tdsl_f16_value(" : "tdsl_bf16_value(") +
           name + ")";
  }
  case ExprKind::Cast:
    return castExpr(e.dtype(), e.as<Cast>()->value);
  case ExprKind::Neg: {
    const Expr &a = e.as<Neg>()->a;
    if (e.dtype().isFloat())
      return "(-" + expr(a) + ")";
    return "tdsl_neg<" + storageType(e.dtype()) + ">(" + expr(a) + ")";
  }
#define TDSL_CPP_BINARY(NAME)                                                                    \
  case ExprKind::NAME:                                                                           \
    return binary(e, ExprKind::NAME, e.as<NAME>()->a, e.as<NAME>()->b);
    TDSL_FOR_EACH_BINARY_NODE(TDSL_CPP_BINARY)
#undef TDSL_CPP_BINARY
  case ExprKind::Not:
    return "(!" + expr(e.as<Not>()->a) + ")";
  case ExprKind::Select: {
    const auto *op = e.as<Select>();
    return "(" + expr(op->condition) + " ? " + expr(op->trueValue) + " : " +
           expr(op->falseValue) + ")";
  }
  case ExprKind::BufferLoad: {
    const auto *op = e.as<BufferLoad>();
    std::string access = names_(op->buffer) + "[" + expr(op->indices[0]) + "]";
    switch (op->type.code()) {
    case DType::Code::Bool:
      return "(" + access + " != 0)";
    case DType::Code::F16:
      return "tdsl_f16_value(" + access + ")";
    case DType::Code::BF16:
      return "tdsl_bf16_value(" + access + ")";
    default:
      return access;
    }
  }
  case ExprKind::Call:
    return callExpr(e.as<Call>());
  case ExprKind::Ramp:
  case ExprKind::Broadcast:
    break;
  }
  TDSL_IR_CHECK(false, "vector expressions are not emitted by the C++ backend yet");
}

// --- Statements ------------------------------------------------------------------------------

void FunctionEmitter::stmt(const Stmt &s, bool inFor) {
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    if (!inFor) {
      auto it = comments_.find(op->loopVar);
      if (it != comments_.end() && !it->second.empty())
        line("// " + it->second);
    }
    std::string v = names_(op->loopVar);
    Bounds mb = bounds(op->min), eb = bounds(op->extent);
    std::string end = isConstInt(op->min, 0) ? expr(op->extent) : expr(op->min + op->extent);
    switch (op->forKind) {
    case ForKind::Parallel:
      line("#pragma omp parallel for");
      break;
    case ForKind::Vectorized:
      line("#pragma omp simd");
      break;
    case ForKind::Unrolled: {
      auto n = asConstInt(op->extent);
      line("#pragma GCC unroll " + std::to_string(n && *n > 0 && *n < 65535 ? *n : 8));
      break;
    }
    case ForKind::ThreadBinding:
      line("// thread(\"" + op->threadTag + "\"): a serial loop on the CPU");
      break;
    case ForKind::Serial:
      break;
    }
    line("for (int64_t " + v + " = " + expr(op->min) + "; " + v + " < " + end + "; ++" + v +
         ") {");
    Bounds vb;
    vb.lo = mb.lo;
    if (mb.hi && eb.hi)
      vb.hi = fit(__int128(*mb.hi) + *eb.hi - 1, DType::i64());
    varBounds_[op->loopVar] = vb;
    ++indent_;
    ++loopDepth_;
    stmt(op->body, true);
    --loopDepth_;
    --indent_;
    line("}");
    return;
  }
  case StmtKind::BufferStore: {
    const auto *op = s.as<BufferStore>();
    if (op->value.dtype().isVector())
      return vectorStore(op);
    std::string value = stripParens(expr(op->value));
    switch (op->buffer.dtype().code()) {
    case DType::Code::F16:
      value = "tdsl_f16_bits(" + value + ")";
      break;
    case DType::Code::BF16:
      value = "tdsl_bf16_bits(" + value + ")";
      break;
    case DType::Code::Bool:
      value = "static_cast<uint8_t>(" + value + ")";
      break;
    default:
      break;
    }
    line(names_(op->buffer) + "[" + expr(op->indices[0]) + "] = " + value + ";");
    return;
  }
  case StmtKind::LetStmt: {
    const auto *op = s.as<LetStmt>();
    varBounds_[op->var] = bounds(op->value);
    line("const " + valueType(op->var.dtype()) + " " + names_(op->var) + " = " +
         expr(op->value) + ";");
    stmt(op->body, false);
    return;
  }
  case StmtKind::IfThenElse: {
    const auto *op = s.as<IfThenElse>();
    line("if (" + stripParens(expr(op->condition)) + ") {");
    ++indent_;
    stmt(op->thenCase, false);
    --indent_;
    if (op->elseCase.defined()) {
      line("} else {");
      ++indent_;
      stmt(op->elseCase, false);
      --indent_;
    }
    line("}");
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &child : s.as<SeqStmt>()->seq)
      stmt(child, false);
    return;
  case StmtKind::Evaluate:
    line("(void)" + expr(s.as<Evaluate>()->value) + ";");
    return;
  case StmtKind::Allocate: {
    const auto *op = s.as<Allocate>();
    const Buffer &b = op->buffer;
    std::string name = names_(b), type = storageType(b.dtype());
    auto size = asConstInt(b.shape()[0]);
    const int64_t kStackBytes = 16 * 1024;
    line("// " + std::string(scopeName(b.scope())) + " " + b.dtype().name() + "[" +
         toString(b.shape()[0]) + "]");
    if (size && *size * b.dtype().storageBytes() <= kStackBytes) {
      // Zero-filled: a reduction over an empty domain (N == 0) reads its accumulator without
      // any init having run; zeros make that defined (g++ -Wmaybe-uninitialized agrees).
      line(type + " " + name + "[" + std::to_string(std::max<int64_t>(*size, 1)) + "] = {};");
      stmt(op->body, false);
      return;
    }
    std::string count = size ? std::to_string(std::max<int64_t>(*size, 1))
                             : "(" + expr(b.shape()[0]) + " > 0 ? " + expr(b.shape()[0]) + " : 1)";
    line(type + " *" + name + " = static_cast<" + type + " *>(std::malloc(sizeof(" + type +
         ") * static_cast<size_t>(" + count + ")));");
    // A failure inside a loop (possibly an OpenMP region) cannot return: it aborts.
    line(loopDepth_ == 0 ? "if (!" + name + ") return tdsl_fail(\"" + cName_ +
                               ": out of memory for '" + b.name() + "'\");"
                         : "if (!" + name + ") std::abort();");
    heap_.push_back(name);
    stmt(op->body, false);
    heap_.pop_back();
    line("std::free(" + name + ");");
    return;
  }
  case StmtKind::AssertStmt:
    return assertStmt(s.as<AssertStmt>());
  case StmtKind::BufferView:
  case StmtKind::FuncCall:
    return graphStmt(s);
  case StmtKind::Block:
    break;
  }
  TDSL_IR_CHECK(false, "the C++ backend takes lowered code (no blocks)");
}

// --- Lowered graphs --------------------------------------------------------------------------

/// A scalar argument as the raw ABI passes it: f16/bf16 as bit patterns, bool as uint8_t.
std::string FunctionEmitter::abiScalar(const Expr &e) {
  DType t = e.dtype();
  if (const auto *ref = e.as<VarRef>(); ref && halfParams_.count(ref->var.get()))
    return names_(ref->var);
  if (t.code() == DType::Code::F16)
    return "tdsl_f16_bits(" + stripParens(expr(e)) + ")";
  if (t.code() == DType::Code::BF16)
    return "tdsl_bf16_bits(" + stripParens(expr(e)) + ")";
  if (t.isBool())
    return "static_cast<uint8_t>(" + stripParens(expr(e)) + ")";
  return stripParens(expr(e));
}

void FunctionEmitter::graphStmt(const Stmt &s) {
  if (const auto *op = s.as<BufferView>()) {
    std::string type = storageType(op->buffer.dtype()), source = names_(op->source);
    std::string offset = isConstInt(op->byteOffset, 0) ? "" : " + " + expr(op->byteOffset);
    line(type + " *" + names_(op->buffer) + " = reinterpret_cast<" + type +
         " *>(const_cast<char *>(reinterpret_cast<const char *>(" + source + "))" + offset + ");");
    stmt(op->body, false);
    return;
  }
  const auto *op = s.as<FuncCall>();
  TDSL_IR_CHECK(loopDepth_ == 0 && callees_ && callees_->count(op->callee),
                "a call of a raw entry outside any loop, to an emitted function or extern");
  std::string call = callees_->at(op->callee) + "(";
  for (size_t i = 0; i < op->args.size(); ++i) {
    if (i)
      call += ", ";
    if (const auto *b = std::get_if<Buffer>(&op->args[i]))
      call += names_(*b);
    else
      call += abiScalar(std::get<Expr>(op->args[i]));
  }
  call += ")";
  // A failing callee's status is returned as is; its message stays in tdsl_last_error().
  line("if (const int32_t tdsl_status = " + call + ") {");
  ++indent_;
  for (size_t i = heap_.size(); i-- > 0;)
    line("std::free(" + heap_[i] + ");");
  line("return tdsl_status;");
  --indent_;
  line("}");
}

void FunctionEmitter::emit(std::ostream &os) {
  os_ = &os;
  // Parameters are named first so that they keep their source names.
  for (const FuncParam &p : lowered_->inputs)
    if (!p.isTensor() && (isHalf(p.scalar.dtype()) || p.scalar.dtype().isBool()))
      halfParams_.insert(p.scalar.get());
  std::string raw = rawPrototype(false);
  for (const Var &v : lowered_->shapeVars)
    varBounds_[v] = Bounds{std::optional<int64_t>(0), std::nullopt};
  NestComments nests;
  nests.visitStmt(source_->body);
  comments_ = std::move(nests.comments);

  os << (isGraph_ ? "// graph " : "// func ") << source_->name;
  if (source_->loc.valid())
    os << " (line " << source_->loc.line << ")";
  os << "\nextern \"C\" " << raw << " {\n";
  indent_ = 1;
  // Parameters the body never uses are marked so, for -Wunused-parameter.
  struct Uses : IRVisitor {
    std::set<const void *> used;
    void visit(const VarRef *op) override { used.insert(op->var.get()); }
    void visit(const BufferLoad *op) override {
      used.insert(op->buffer.get());
      IRVisitor::visit(op);
    }
    void visit(const BufferStore *op) override {
      used.insert(op->buffer.get());
      IRVisitor::visit(op);
    }
    void visit(const BufferView *op) override {
      used.insert(op->source.get());
      IRVisitor::visit(op);
    }
    void visit(const FuncCall *op) override {
      for (const auto &arg : op->args)
        if (const auto *b = std::get_if<Buffer>(&arg))
          used.insert(b->get());
      IRVisitor::visit(op);
    }
  } uses;
  uses.visitStmt(lowered_->body);
  auto unused = [&](const void *p, const std::string &name) {
    if (!uses.used.count(p)) line("(void)" + name + ";");
  };
  for (const FuncParam &p : lowered_->inputs)
    unused(p.isTensor() ? static_cast<const void *>(p.buffer.get()) : p.scalar.get(),
           p.isTensor() ? names_(p.buffer) : names_(p.scalar));
  for (const Buffer &b : lowered_->outputs)
    unused(b.get(), names_(b));
  for (const Var &v : lowered_->shapeVars)
    unused(v.get(), names_(v));
  struct Asserts : IRVisitor {
    bool found = false;
    void visit(const AssertStmt *) override { found = true; }
  } asserts;
  asserts.visitStmt(lowered_->body);
  if (asserts.found) {
    line("int tdsl_failed = 0;");
    line("char tdsl_message[512] = \"\";");
  }
  stmt(lowered_->body, false);
  if (asserts.found)
    line("if (tdsl_failed) return tdsl_fail(\"%s\", tdsl_message);");
  line("return 0;");
  indent_ = 0;
  os << "}\n\n";
  emitDlpack(os);
}

void FunctionEmitter::emitDlpack(std::ostream &os) {
  os << "extern \"C\" " << dlpackPrototype(false) << " {\n";
  indent_ = 1;
  std::vector<std::pair<Buffer, std::string>> tensors; // source buffer, C name
  for (size_t i = 0; i < source_->inputs.size(); ++i)
    if (source_->inputs[i].isTensor())
      tensors.emplace_back(source_->inputs[i].buffer, names_(lowered_->inputs[i].buffer));
  for (size_t i = 0; i < source_->outputs.size(); ++i)
    tensors.emplace_back(source_->outputs[i], names_(lowered_->outputs[i]));

  std::string fn = cName_;
  std::map<const VarNode *, std::string> shapeNames;
  for (const Var &v : lowered_->shapeVars) {
    shapeNames[v.get()] = names_(v);
    line("int64_t " + names_(v) + " = -1;");
  }
  line("tdsl_generated::last_error[0] = '\\0';");
  // Device, dtype, rank and compactness; shape variables bound at their first appearance.
  for (const auto &[buffer, name] : tensors) {
    DType t = buffer.dtype();
    auto [code, bits] = dlType(t);
    std::string q = "'" + buffer.name() + "'";
    line("if (!" + name + ")");
    line("  return tdsl_fail(\"" + fn + ": argument " + q + " is null\");");
    line("if (" + name + "->device.device_type != kDLCPU)");
    line("  return tdsl_fail(\"" + fn + ": argument " + q +
         " is not on the CPU (device type %d)\", static_cast<int>(" + name +
         "->device.device_type));");
    std::string codeOk = name + "->dtype.code == " + code;
    if (t.isBool())
      codeOk = "(" + codeOk + " || " + name + "->dtype.code == 6)";
    line("if (!(" + codeOk + " && " + name + "->dtype.bits == " + std::to_string(bits) + " && " +
         name + "->dtype.lanes == 1))");
    line("  return tdsl_fail(\"" + fn + ": argument " + q + " should have dtype " + t.name() +
         ", got code %d bits %d lanes %d\", " + name + "->dtype.code, " + name +
         "->dtype.bits, " + name + "->dtype.lanes);");
    line("if (" + name + "->ndim != " + std::to_string(buffer.rank()) + ")");
    line("  return tdsl_fail(\"" + fn + ": argument " + q + " should have rank " +
         std::to_string(buffer.rank()) + ", got %d\", " + name + "->ndim);");
    for (size_t d = 0; d < buffer.rank(); ++d) {
      auto *ref = buffer.shape()[d].as<VarRef>();
      if (!ref || !shapeNames.count(ref->var.get()))
        continue;
      const std::string &sv = shapeNames[ref->var.get()];
      std::string dim = name + "->shape[" + std::to_string(d) + "]";
      line("if (" + sv + " < 0)");
      line("  " + sv + " = " + dim + ";");
      line("else if (" + sv + " != " + dim + ")");
      line("  return tdsl_fail(\"" + fn + ": dimension " + std::to_string(d) + " of argument " +
           q + " is %lld but " + ref->var.name() + " is %lld\", static_cast<long long>(" + dim +
           "), static_cast<long long>(" + sv + "));");
    }
    line("if (!tdsl_is_compact(" + name + "))");
    line("  return tdsl_fail(\"" + fn + ": argument " + q +
         " is not compact (row-major strides expected)\");");
  }
  // Dimensions given by constants or expressions, once every shape variable is bound.
  for (const Var &v : lowered_->shapeVars) {
    line("if (" + names_(v) + " < 0)");
    line("  return tdsl_fail(\"" + fn + ": shape variable " + v.name() +
         " is not bound by any argument\");");
  }
  for (const auto &[buffer, name] : tensors)
    for (size_t d = 0; d < buffer.rank(); ++d) {
      if (buffer.shape()[d].as<VarRef>())
        continue;
      std::string dim = name + "->shape[" + std::to_string(d) + "]";
      std::string want = expr(buffer.shape()[d]);
      line("if (" + dim + " != " + want + ")");
      line("  return tdsl_fail(\"" + fn + ": dimension " + std::to_string(d) + " of argument '" +
           buffer.name() + "' is %lld, expected %lld\", static_cast<long long>(" + dim +
           "), static_cast<long long>(" + want + "));");
    }
  std::string call = "return " + cName_ + "(";
  bool first = true;
  auto sep = [&] {
    if (!first)
      call += ", ";
    first = false;
  };
  for (size_t i = 0; i < lowered_->inputs.size(); ++i) {
    const FuncParam &p = lowered_->inputs[i];
    sep();
    if (p.isTensor())
      call += "static_cast<const " + storageType(p.buffer.dtype()) + " *>(tdsl_data(" +
              names_(p.buffer) + "))";
    else
      call += names_(p.scalar);
  }
  for (const Buffer &b : lowered_->outputs) {
    sep();
    call += "static_cast<" + storageType(b.dtype()) + " *>(tdsl_data(" + names_(b) + "))";
  }
  for (const Var &v : lowered_->shapeVars) {
    sep();
    call += names_(v);
  }
  line(call + ");");
  indent_ = 0;
  os << "}\n";
}

/// The callees of a graph's calls, in order, without repeats.
std::vector<std::string> graphCallees(const GraphFunc &g) {
  std::vector<std::string> out;
  auto add = [&](const CallBinding &c) {
    if (std::find(out.begin(), out.end(), c.callee) == out.end())
      out.push_back(c.callee);
  };
  for (const GraphItem &item : g.body) {
    if (const auto *c = std::get_if<CallBinding>(&item))
      add(*c);
    if (const auto *df = std::get_if<DataflowBlock>(&item))
      for (const GraphBinding &b : df->bindings)
        if (const auto *c = std::get_if<CallBinding>(&b))
          add(*c);
  }
  return out;
}

/// `extern "C"` declarations of the extern symbols the emitted graphs call (their raw entries,
/// spec §10), each symbol once; adds each extern to `callees`.
std::string externDeclarations(const Module &module, const std::vector<Func> &emitted,
                               std::map<std::string, std::string> &callees) {
  std::ostringstream os;
  std::set<std::string> declared;
  for (const Func &f : emitted) {
    const auto *g = f.as<GraphFunc>();
    if (!g)
      continue;
    for (const std::string &name : graphCallees(*g)) {
      const auto *x = module.lookup(name).as<ExternFunc>();
      if (!x)
        continue;
      callees[name] = x->symbol;
      if (!declared.insert(x->symbol).second)
        continue;
      std::vector<std::string> params;
      for (const FuncParam &p : x->inputs)
        params.push_back(p.isTensor() ? "const " + storageType(p.buffer.dtype()) + " *"
                                      : storageType(p.scalar.dtype()));
      for (const Buffer &b : x->outputs)
        params.push_back(storageType(b.dtype()) + " *");
      for (size_t i = 0; i < x->shapeVars.size(); ++i)
        params.push_back("int64_t");
      os << "\n// extern " << (x->pure ? "pure " : "") << "func " << x->name << "\n"
         << "extern \"C\" int32_t " << x->symbol << "(";
      for (size_t i = 0; i < params.size(); ++i)
        os << (i ? ", " : "") << params[i];
      os << ");\n";
    }
  }
  return os.str();
}

} // namespace

std::vector<Func> emittedFunctions(const Module &module, const CppOptions &options) {
  // --func NAME on a graph: the graph and the functions it calls.
  std::set<std::string> wanted;
  if (!options.onlyFunc.empty()) {
    wanted.insert(options.onlyFunc);
    if (const auto *g = module.lookup(options.onlyFunc).as<GraphFunc>())
      for (const std::string &callee : graphCallees(*g))
        wanted.insert(callee);
  }
  std::vector<Func> prims, graphs;
  for (const Func &f : module.functions()) {
    if (!options.onlyFunc.empty() && !wanted.count(f.name()))
      continue;
    if (const auto *p = f.as<PrimFunc>(); p && p->constVars.empty())
      prims.push_back(f);
    if (const auto *g = f.as<GraphFunc>(); g && g->constVars.empty())
      graphs.push_back(f);
  }
  prims.insert(prims.end(), graphs.begin(), graphs.end());
  return prims;
}

std::vector<Func> lowerModule(const Module &module, const CppOptions &options) {
  lower::LowerOptions lowerOptions = options.lower;
  if (options.afterLowerStep)
    lowerOptions.afterStep = options.afterLowerStep;
  std::vector<Func> out;
  for (const Func &f : emittedFunctions(module, options)) {
    if (!f.as<GraphFunc>()) {
      out.push_back(lower::lowerPrimFunc(f, lowerOptions));
      continue;
    }
    out.push_back(lower::lowerGraph(f, module));
    if (lowerOptions.afterStep)
      lowerOptions.afterStep("lower.graph", out.back());
  }
  return out;
}

namespace {

/// `typedef float tdsl_f32x8 __attribute__((vector_size(32)));` for each vector type the
/// lowered functions compute on, in a fixed order.
std::string vectorTypedefs(const std::vector<Func> &lowered) {
  struct Walker : IRVisitor {
    std::map<std::string, DType> types;
    void visit(const BufferStore *op) override {
      note(op->value);
      IRVisitor::visit(op);
    }
    void note(const Expr &e) {
      struct All : IRVisitor {
        std::map<std::string, DType> *types;
#define TDSL_NOTE(NAME)                                                                          \
  void visit(const NAME *op) override {                                                          \
    if (op->type.isVector())                                                                     \
      types->emplace(vectorTypeName(op->type), op->type);                                        \
    IRVisitor::visit(op);                                                                        \
  }
        TDSL_NOTE(Add) TDSL_NOTE(Sub) TDSL_NOTE(Mul) TDSL_NOTE(Div) TDSL_NOTE(Min) TDSL_NOTE(Max)
        TDSL_NOTE(Neg) TDSL_NOTE(Cast) TDSL_NOTE(BufferLoad) TDSL_NOTE(Broadcast)
#undef TDSL_NOTE
      } all;
      all.types = &types;
      if (e.dtype().isVector())
        types.emplace(vectorTypeName(e.dtype()), e.dtype());
      all.visitExpr(e);
    }
  } walker;
  for (const Func &f : lowered)
    walker.visitStmt(f.as<PrimFunc>()->body);
  std::string out;
  for (const auto &[name, t] : walker.types)
    out += "typedef " + storageType(t.element()) + " " + name + " __attribute__((vector_size(" +
           std::to_string(t.lanes() * t.element().storageBytes()) + ")));\n";
  return out.empty() ? out : "\n// Vector types (GCC/Clang vector extensions).\n" + out;
}

} // namespace

std::string emitCpp(const Module &module, const CppOptions &options) {
  std::vector<Func> sources = emittedFunctions(module, options);
  std::vector<Func> lowered = lowerModule(module, options);
  std::vector<std::string> names = abi::cFunctionNames(sources);
  std::map<std::string, std::string> callees;
  for (size_t i = 0; i < sources.size(); ++i)
    callees[sources[i].name()] = names[i];
  std::string externs = externDeclarations(module, sources, callees);
  std::ostringstream os;
  os << "// Generated by tdslc (C++ backend). Do not edit.\n" << kPrelude << vectorTypedefs(lowered)
     << externs;
  for (size_t i = 0; i < sources.size(); ++i) {
    os << "\n";
    if (sources[i].as<GraphFunc>()) {
      Func sig = lower::graphSignature(sources[i]);
      FunctionEmitter(sig.as<PrimFunc>(), lowered[i].as<PrimFunc>(), names[i], &callees, true)
          .emit(os);
      continue;
    }
    FunctionEmitter(sources[i].as<PrimFunc>(), lowered[i].as<PrimFunc>(), names[i]).emit(os);
  }
  return options.format ? formatCpp(os.str(), "tdsl.cpp") : os.str();
}

std::string emitHeader(const Module &module, const CppOptions &options) {
  std::vector<Func> sources = emittedFunctions(module, options);
  std::vector<std::string> names = abi::cFunctionNames(sources);
  std::ostringstream os;
  const std::string &guard = options.headerGuard;
  os << "/* Generated by tdslc. Do not edit. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n#include <dlpack/dlpack.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (size_t i = 0; i < sources.size(); ++i) {
    // The prototypes only need names and types: the unlowered signature gives the same.
    Func source = sources[i].as<GraphFunc>() ? lower::graphSignature(sources[i]) : sources[i];
    Func lowered = lower::lowerPrimFunc(source);
    FunctionEmitter e(source.as<PrimFunc>(), lowered.as<PrimFunc>(), names[i]);
    os << e.rawPrototype(true) << ";\n" << e.dlpackPrototype(true) << ";\n\n";
  }
  os << "const char *tdsl_last_error(void);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return options.format ? formatCpp(os.str(), "tdsl.h") : os.str();
}

} // namespace tdsl::cpp

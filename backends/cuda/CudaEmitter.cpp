//===- backends/cuda/CudaEmitter.cpp - The CUDA backend -----------------------------------===//
#include "backends/cuda/CudaEmitter.h"

#include "backends/cpp/Format.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/lower/GpuAnalysis.h"
#include "passes/lower/InsertSyncs.h"
#include "runtime/Float16.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

namespace tdsl::cuda {

using namespace ir;

namespace {

// ---------------------------------------------------------------------------------------------
// The prelude: includes and the helpers the emitted code calls (host and device versions).
// ---------------------------------------------------------------------------------------------

const char *kPrelude = R"(#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

// The message of tdsl_last_error(), one per host thread and one per program (an inline
// variable, shared with the objects of the C++ backend).
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

// A device buffer freed when the entry returns, on every path.
struct tdsl_device_buffer {
  void *ptr = nullptr;
  ~tdsl_device_buffer() {
    if (ptr)
      cudaFree(ptr);
  }
};

// Wrapping integer arithmetic: computed on an unsigned type at least as wide as int.
template <typename T> struct tdsl_unsigned {
  using type = typename std::conditional<(sizeof(T) < 8), uint32_t, uint64_t>::type;
};
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_add(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_sub(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_mul(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_neg(T a) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(U(0) - static_cast<U>(a));
}
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_min(T a, T b) { return a < b ? a : b; }
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_max(T a, T b) { return a < b ? b : a; }
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_abs(T a) { return a < T(0) ? tdsl_neg(a) : a; }

// Floor division and modulo (x / 0 == 0, x % 0 == x, MIN / -1 wraps).
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_floordiv(T a, T b) {
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
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_floormod(T a, T b) {
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
[[maybe_unused]] __host__ __device__ static inline float tdsl_fmod_floor(float a, float b) { return a - floorf(a / b) * b; }
[[maybe_unused]] __host__ __device__ static inline double tdsl_fmod_floor(double a, double b) { return a - floor(a / b) * b; }

// float -> integer: truncates toward zero, saturates out of range, NaN gives 0.
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_f2i(double x, T lowest, T highest) {
  if (x != x)
    return 0;
  if (x <= static_cast<double>(lowest))
    return lowest;
  if (x >= static_cast<double>(highest))
    return highest;
  return static_cast<T>(x);
}

// f16 and bf16 are stored as bit patterns and computed in float; conversions to them round
// once, to nearest even.
[[maybe_unused]] __host__ __device__ static inline uint16_t tdsl_half_encode(int expBits, int manBits, double value) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  uint16_t sign = (bits >> 63) ? static_cast<uint16_t>(1u << (expBits + manBits)) : 0;
  uint16_t inf = static_cast<uint16_t>(((1u << expBits) - 1) << manBits);
  if (value != value)
    return static_cast<uint16_t>(sign | inf | (1u << (manBits - 1)));
  if (bits << 1 == uint64_t(0x7ff) << 53)
    return static_cast<uint16_t>(sign | inf);
  int field = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mag = bits & ((uint64_t(1) << 52) - 1);
  int exp = field == 0 ? -1074 : field - 1075;
  if (field != 0)
    mag |= uint64_t(1) << 52;
  if (mag == 0)
    return sign;
  int top = 63;
  while (!((mag >> top) & 1))
    --top;
  int bias = (1 << (expBits - 1)) - 1, emin = 1 - bias;
  int lead = top + exp;
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
[[maybe_unused]] __host__ __device__ static inline uint16_t tdsl_f16_bits(double x) { return tdsl_half_encode(5, 10, x); }
[[maybe_unused]] __host__ __device__ static inline uint16_t tdsl_bf16_bits(double x) { return tdsl_half_encode(8, 7, x); }
[[maybe_unused]] __host__ __device__ static inline float tdsl_f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? ldexpf(static_cast<float>(m), -24)
            : e == 31 ? (m ? NAN : INFINITY)
                      : ldexpf(static_cast<float>(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}
[[maybe_unused]] __host__ __device__ static inline float tdsl_bf16_value(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  memcpy(&v, &bits, sizeof v);
  return v;
}
[[maybe_unused]] __host__ __device__ static inline float tdsl_round_f16(double x) { return tdsl_f16_value(tdsl_f16_bits(x)); }
[[maybe_unused]] __host__ __device__ static inline float tdsl_round_bf16(double x) { return tdsl_bf16_value(tdsl_bf16_bits(x)); }

// DLPack checks.
[[maybe_unused]] static inline bool tdsl_is_compact(const DLTensor *t) {
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
[[maybe_unused]] static inline void *tdsl_data(const DLTensor *t) {
  return static_cast<char *>(t->data) + t->byte_offset;
}

// A launch configuration the device accepts (grid.y and grid.z at most 65535, at most 1024
// threads per block); 0 when some dimension is empty (the kernel has no iteration).
[[maybe_unused]] static inline int32_t tdsl_launch_ok(const char *kernel, int64_t gx, int64_t gy, int64_t gz,
                                     int64_t tx, int64_t ty, int64_t tz, bool &empty) {
  empty = gx <= 0 || gy <= 0 || gz <= 0 || tx <= 0 || ty <= 0 || tz <= 0;
  if (empty)
    return 0;
  if (gx > 2147483647 || gy > 65535 || gz > 65535 || tx * ty * tz > 1024 || tz > 64)
    return tdsl_fail("%s: launch configuration grid (%lld, %lld, %lld) block (%lld, %lld, %lld) "
                     "exceeds the device limits", kernel, (long long)gx, (long long)gy,
                     (long long)gz, (long long)tx, (long long)ty, (long long)tz);
  return 0;
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
  if (t.isBool())
    return {"kDLUInt", 8};
  if (t.isInt())
    return {"kDLInt", t.bits()};
  if (t.isUInt())
    return {"kDLUInt", t.bits()};
  if (t.code() == DType::Code::BF16)
    return {"kDLBfloat", 16};
  return {"kDLFloat", t.bits()};
}

const std::set<std::string> &reservedWords() {
  static const std::set<std::string> words = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char",
      "class", "const", "constexpr", "continue", "default", "delete", "do", "double", "else",
      "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "main", "mutable", "namespace", "new", "not", "operator", "or",
      "private", "protected", "public", "register", "return", "short", "signed", "sizeof",
      "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor",
      "std", "errno", "assert", "NULL", "INFINITY", "NAN", "free", "malloc", "abs", "exp",
      "log", "sqrt", "floor", "ceil", "round", "pow", "fma", "min", "max", "select", "data",
      "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
      "DLTensor", "kDLCPU", "kDLCUDA", "threadIdx", "blockIdx", "blockDim", "gridDim", "dim3",
      "warpSize", "cudaError_t", "cudaSuccess", "fmin", "fmax", "fabs", "exp2", "log2", "tanh",
      "erf", "sin", "cos", "trunc", "rsqrt", "sigmoid", "sinf", "cosf", "expf", "logf"};
  return words;
}

/// A C identifier for a name hint: non-identifier characters become '_'.
std::string cIdentifier(const std::string &hint) {
  std::string out;
  for (char c : hint)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '_')
    out = "v" + out;
  return out;
}

/// Unique C names for the Vars and Buffers of one function, chosen in order of definition.
class NameTable {
public:
  explicit NameTable(std::set<std::string> taken) : taken_(std::move(taken)) {}

  const std::string &define(const void *object, const std::string &hint) {
    auto it = names_.find(object);
    if (it != names_.end())
      return it->second;
    std::string base = cIdentifier(hint), name = base;
    for (int i = 1; taken_.count(name) || reservedWords().count(name) ||
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
// Kernels: the outermost thread-bound loop nests of the lowered body
// ---------------------------------------------------------------------------------------------

/// One `__global__` function: its loop nest, what it uses from the host, its launch extents.
struct Kernel {
  const For *root = nullptr;
  std::string name;
  std::vector<Buffer> buffers; ///< Global buffers, in order of first use.
  std::vector<Var> scalars;    ///< Variables defined outside the kernel, in order of first use.
  std::map<std::string, Expr> launch; ///< Tag → number of blocks or threads along it.
};

/// What a kernel refers to from outside and the extents of its bound loops.
class KernelScan : public IRVisitor {
public:
  Kernel &k;
  std::map<std::string, std::vector<Expr>> extents;
  std::set<const void *> defined, seenBuffer, seenVar;

  explicit KernelScan(Kernel &kernel) : k(kernel) {}

  void visit(const For *op) override {
    defined.insert(op->loopVar.get());
    if (op->forKind == ForKind::ThreadBinding)
      extents[op->threadTag].push_back(op->extent);
    IRVisitor::visit(op);
  }
  void visit(const LetStmt *op) override {
    defined.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    defined.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const VarRef *op) override {
    if (op->var == lower::syncThreadsVar() || defined.count(op->var.get()) ||
        !seenVar.insert(op->var.get()).second)
      return;
    k.scalars.push_back(op->var);
  }
  void visit(const BufferLoad *op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }

private:
  void use(const Buffer &b) {
    if (defined.count(b.get()) || !seenBuffer.insert(b.get()).second)
      return;
    k.buffers.push_back(b);
  }
};

/// The launch extent of a tag: the common extent of its loops, the largest constant, or the
/// maximum computed on the host.
Expr launchExtent(const std::vector<Expr> &extents) {
  Expr out = extents.front();
  for (const Expr &e : extents) {
    if (lower::sameExpr(out, e))
      continue;
    auto a = asConstInt(out), b = asConstInt(e);
    out = a && b ? intImm(std::max(*a, *b)) : ir::max(out, e);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// One function
// ---------------------------------------------------------------------------------------------

class FunctionEmitter {
public:
  FunctionEmitter(const PrimFunc *source, const PrimFunc *lowered, std::string cName)
      : source_(source), lowered_(lowered), cName_(std::move(cName)), names_({}) {}

  void emit(std::ostream &os);
  std::string rawPrototype(bool forHeader);
  std::string dlpackPrototype(bool forHeader);

private:
  // Expressions (as the C++ backend, with CUDA's math functions).
  std::string expr(const Expr &e);
  std::string intLiteral(DType t, int64_t v);
  std::string intLimit(DType t, bool isMax);
  std::string floatLiteral(DType t, double v);
  std::string binary(const Expr &e, ExprKind kind, const Expr &a, const Expr &b);
  std::string castExpr(DType to, const Expr &value);
  std::string callExpr(const Call *op);
  std::string roundHalf(DType t, const std::string &text);
  Bounds bounds(const Expr &e);

  // Statements: host code (launches) and device code (kernel bodies).
  void hostStmt(const Stmt &s);
  void deviceStmt(const Stmt &s, bool inFor);
  void forHeader(const For *op);
  void collectKernels(const Stmt &s);
  void emitKernel(std::ostream &os, const Kernel &k);
  void emitLaunch(const Kernel &k);
  void line(const std::string &text) { *os_ << std::string(indent_ * 2, ' ') << text << "\n"; }
  std::string paramDecl(const Buffer &b);
  std::string scalarDecl(const Var &v);

  void emitDlpack(std::ostream &os);

  const PrimFunc *source_;
  const PrimFunc *lowered_;
  std::string cName_;
  NameTable names_;
  std::unordered_map<Var, Bounds> varBounds_;
  std::set<const VarNode *> halfParams_;
  std::unordered_map<Var, std::string> comments_;
  std::vector<Kernel> kernels_;
  std::map<const For *, size_t> kernelOf_;
  const Kernel *current_ = nullptr; ///< The kernel being emitted (device code).
  std::ostream *os_ = nullptr;
  int indent_ = 0;
};

/// f32 (and the half types, computed in float) call the `f` variants of the math functions.
std::string mathFn(const std::string &name, DType t) {
  return t.code() == DType::Code::F64 ? name : name + "f";
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
  for (const FuncParam &p : lowered_->inputs) {
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

std::string FunctionEmitter::intLimit(DType t, bool isMax) {
  if (t.isBool())
    return isMax ? "true" : "false";
  if (t.isUInt())
    return intLiteral(t, isMax ? (t.bits() == 64 ? -1 : (int64_t(1) << t.bits()) - 1) : 0);
  if (t.bits() == 64)
    return isMax ? "INT64_MAX" : "INT64_MIN";
  int64_t hi = (int64_t(1) << (t.bits() - 1)) - 1;
  return intLiteral(t, isMax ? hi : -hi - 1);
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
    return isF64 ? "static_cast<double>(NAN)" : "NAN";
  if (std::isinf(v)) {
    std::string inf = isF64 ? "static_cast<double>(INFINITY)" : "INFINITY";
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
      text = mathFn("fmin", t) + "(" + x + ", " + y + ")";
      break;
    case ExprKind::Max:
      text = mathFn("fmax", t) + "(" + x + ", " + y + ")";
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
    return "tdsl_f2i<" + storageType(to) + ">(" + x + ", " + intLimit(to, false) + ", " +
           intLimit(to, true) + ")";
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
    case DType::Code::F32:
      return isMax ? "FLT_MAX" : "(-FLT_MAX)";
    case DType::Code::F64:
      return isMax ? "DBL_MAX" : "(-DBL_MAX)";
    default:
      return intLimit(t, isMax);
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
    text = "(" + one + " / " + mathFn("sqrt", t) + "(" + args[0] + "))";
    break;
  case Intrinsic::Sigmoid:
    text = "(" + one + " / (" + one + " + " + mathFn("exp", t) + "(-" + args[0] + ")))";
    break;
  case Intrinsic::Abs:
    text = mathFn("fabs", t) + "(" + args[0] + ")";
    break;
  default: {
    text = mathFn(intrinsicName(op->op), t) + "(";
    for (size_t i = 0; i < args.size(); ++i)
      text += (i ? ", " : "") + args[i];
    text += ")";
  }
  }
  return roundHalf(t, text);
}

std::string FunctionEmitter::expr(const Expr &e) {
  TDSL_IR_CHECK(e.dtype().isScalar(), "the CUDA backend emits scalar code only");
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
  TDSL_IR_CHECK(false, "vector expressions are not emitted by the CUDA backend");
}

// --- Statements ------------------------------------------------------------------------------

std::string FunctionEmitter::paramDecl(const Buffer &b) {
  bool input = b.role() == BufferRole::Input;
  return std::string(input ? "const " : "") + storageType(b.dtype()) + " *__restrict__ " +
         names_(b);
}

std::string FunctionEmitter::scalarDecl(const Var &v) {
  DType t = v.dtype();
  // Scalar parameters of a half or bool type travel as their bit patterns, as in the ABI.
  return (halfParams_.count(v.get()) ? storageType(t) : valueType(t)) + " " + names_(v);
}

void FunctionEmitter::collectKernels(const Stmt &s) {
  if (!s.defined())
    return;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    if (op->forKind != ForKind::ThreadBinding)
      return collectKernels(op->body);
    Kernel k;
    k.root = op;
    k.name = cName_ + "_kernel" + std::to_string(kernels_.size());
    KernelScan scan(k);
    scan.visitStmt(s);
    // Parameters in signature order (inputs, outputs, shape variables), then the rest (global
    // intermediates, host loop variables) in order of first use.
    std::vector<const void *> order;
    for (const FuncParam &p : lowered_->inputs)
      if (p.isTensor())
        order.push_back(p.buffer.get());
    for (const Buffer &b : lowered_->outputs)
      order.push_back(b.get());
    for (const FuncParam &p : lowered_->inputs)
      if (!p.isTensor())
        order.push_back(p.scalar.get());
    for (const Var &v : lowered_->shapeVars)
      order.push_back(v.get());
    auto rank = [&](const void *x) {
      return std::find(order.begin(), order.end(), x) - order.begin();
    };
    std::stable_sort(k.buffers.begin(), k.buffers.end(),
                     [&](const Buffer &x, const Buffer &y) { return rank(x.get()) < rank(y.get()); });
    std::stable_sort(k.scalars.begin(), k.scalars.end(),
                     [&](const Var &x, const Var &y) { return rank(x.get()) < rank(y.get()); });
    for (auto &[tag, extents] : scan.extents)
      k.launch[tag] = launchExtent(extents);
    kernelOf_[op] = kernels_.size();
    kernels_.push_back(std::move(k));
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &c : s.as<SeqStmt>()->seq)
      collectKernels(c);
    return;
  case StmtKind::LetStmt:
    return collectKernels(s.as<LetStmt>()->body);
  case StmtKind::Allocate:
    return collectKernels(s.as<Allocate>()->body);
  case StmtKind::IfThenElse:
    collectKernels(s.as<IfThenElse>()->thenCase);
    return collectKernels(s.as<IfThenElse>()->elseCase);
  default:
    return;
  }
}

void FunctionEmitter::forHeader(const For *op) {
  std::string v = names_(op->loopVar);
  Bounds mb = bounds(op->min), eb = bounds(op->extent);
  std::string end = isConstInt(op->min, 0) ? expr(op->extent) : expr(op->min + op->extent);
  line("for (int64_t " + v + " = " + expr(op->min) + "; " + v + " < " + end + "; ++" + v + ") {");
  Bounds vb;
  vb.lo = mb.lo;
  if (mb.hi && eb.hi)
    vb.hi = fit(__int128(*mb.hi) + *eb.hi - 1, DType::i64());
  varBounds_[op->loopVar] = vb;
}

void FunctionEmitter::deviceStmt(const Stmt &s, bool inFor) {
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    if (!inFor) {
      auto it = comments_.find(op->loopVar);
      if (it != comments_.end() && !it->second.empty())
        line("// " + it->second);
    }
    if (op->forKind == ForKind::ThreadBinding) {
      // Each thread runs one iteration: the loop variable is its index along the tag.
      std::string v = names_(op->loopVar);
      const Expr &launch = current_->launch.at(op->threadTag);
      std::string index = "static_cast<int64_t>(" + op->threadTag + ")";
      line("{");
      ++indent_;
      line("[[maybe_unused]] const int64_t " + v + " = " +
           (isConstInt(op->min, 0) ? index : expr(op->min) + " + " + index) + "; // thread(\"" +
           op->threadTag + "\")");
      Bounds vb;
      Bounds mb = bounds(op->min), eb = bounds(op->extent);
      vb.lo = mb.lo;
      if (mb.hi && eb.hi)
        vb.hi = fit(__int128(*mb.hi) + *eb.hi - 1, DType::i64());
      varBounds_[op->loopVar] = vb;
      bool guard = !lower::sameExpr(op->extent, launch);
      if (guard) {
        std::string end = isConstInt(op->min, 0) ? expr(op->extent) : expr(op->min + op->extent);
        line("if (" + v + " < " + end + ") {");
        ++indent_;
      }
      deviceStmt(op->body, true);
      if (guard) {
        --indent_;
        line("}");
      }
      --indent_;
      line("}");
      return;
    }
    switch (op->forKind) {
    case ForKind::Vectorized:
    case ForKind::Unrolled: {
      auto n = asConstInt(op->extent);
      if (op->forKind == ForKind::Vectorized)
        line("// vectorized: consecutive elements, unrolled");
      line(n && *n > 0 && *n < 65535 ? "#pragma unroll " + std::to_string(*n) : "#pragma unroll");
      break;
    }
    case ForKind::Parallel:
      line("// parallel: a serial loop inside a CUDA thread");
      break;
    default:
      break;
    }
    forHeader(op);
    ++indent_;
    deviceStmt(op->body, true);
    --indent_;
    line("}");
    return;
  }
  case StmtKind::BufferStore: {
    const auto *op = s.as<BufferStore>();
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
    deviceStmt(op->body, false);
    return;
  }
  case StmtKind::IfThenElse: {
    const auto *op = s.as<IfThenElse>();
    line("if (" + stripParens(expr(op->condition)) + ") {");
    ++indent_;
    deviceStmt(op->thenCase, false);
    --indent_;
    if (op->elseCase.defined()) {
      line("} else {");
      ++indent_;
      deviceStmt(op->elseCase, false);
      --indent_;
    }
    line("}");
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &child : s.as<SeqStmt>()->seq)
      deviceStmt(child, false);
    return;
  case StmtKind::Evaluate:
    if (lower::isSyncThreads(s)) {
      line("__syncthreads();");
      return;
    }
    line("(void)" + expr(s.as<Evaluate>()->value) + ";");
    return;
  case StmtKind::Allocate: {
    const auto *op = s.as<Allocate>();
    const Buffer &b = op->buffer;
    auto size = asConstInt(b.shape()[0]);
    TDSL_IR_CHECK(size, "kernel buffers have a constant size (checkCudaModule)");
    std::string decl = storageType(b.dtype()) + " " + names_(b) + "[" +
                       std::to_string(std::max<int64_t>(*size, 1)) + "];";
    if (b.scope() == MemScope::Shared)
      line("__shared__ " + decl + " // shared by the threads of a block");
    else
      line(decl + " // " + std::string(scopeName(b.scope())) + ": one per thread");
    deviceStmt(op->body, false);
    return;
  }
  case StmtKind::Block:
    break;
  }
  TDSL_IR_CHECK(false, "the CUDA backend takes lowered code (no blocks)");
}

void FunctionEmitter::emitKernel(std::ostream &os, const Kernel &k) {
  os_ = &os;
  current_ = &k;
  std::string bounds;
  int64_t threads = 1;
  for (const char *tag : {"threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
    auto it = k.launch.find(tag);
    if (it == k.launch.end())
      continue;
    auto n = asConstInt(it->second);
    threads = n && threads > 0 ? threads * *n : -1;
  }
  if (threads > 0)
    bounds = "__launch_bounds__(" + std::to_string(threads) + ") ";
  auto it = comments_.find(k.root->loopVar);
  if (it != comments_.end() && !it->second.empty())
    os << "// " << it->second << "\n";
  os << "__global__ void " << bounds << k.name << "(";
  bool first = true;
  for (const Buffer &b : k.buffers) {
    os << (first ? "" : ", ") << paramDecl(b);
    first = false;
  }
  for (const Var &v : k.scalars) {
    os << (first ? "" : ", ") << scalarDecl(v);
    first = false;
  }
  os << ") {\n";
  indent_ = 1;
  deviceStmt(Stmt(k.root), true);
  indent_ = 0;
  os << "}\n\n";
  current_ = nullptr;
}

void FunctionEmitter::emitLaunch(const Kernel &k) {
  auto dim = [&](const char *tag) {
    auto it = k.launch.find(tag);
    return it == k.launch.end() ? std::string("1") : stripParens(expr(it->second));
  };
  line("{");
  ++indent_;
  auto show = [&](const char *tag) {
    auto it = k.launch.find(tag);
    return it == k.launch.end() ? std::string("1") : toString(it->second);
  };
  line("// " + k.name + ": grid (" + show("blockIdx.x") + ", " + show("blockIdx.y") + ", " +
       show("blockIdx.z") + "), block (" + show("threadIdx.x") + ", " + show("threadIdx.y") +
       ", " + show("threadIdx.z") + ")");
  line("const int64_t grid[3] = {" + dim("blockIdx.x") + ", " + dim("blockIdx.y") + ", " +
       dim("blockIdx.z") + "};");
  line("const int64_t block[3] = {" + dim("threadIdx.x") + ", " + dim("threadIdx.y") + ", " +
       dim("threadIdx.z") + "};");
  line("bool empty = false;");
  line("if (tdsl_launch_ok(\"" + k.name +
       "\", grid[0], grid[1], grid[2], block[0], block[1], block[2], empty) != 0)");
  line("  return 1;");
  line("if (!empty) {");
  ++indent_;
  std::string args;
  for (const Buffer &b : k.buffers)
    args += (args.empty() ? "" : ", ") + names_(b);
  for (const Var &v : k.scalars)
    args += (args.empty() ? "" : ", ") + names_(v);
  line(k.name +
       "<<<dim3(static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), "
       "static_cast<unsigned>(grid[2])), dim3(static_cast<unsigned>(block[0]), "
       "static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]))>>>(" +
       args + ");");
  line("const cudaError_t error = cudaGetLastError();");
  line("if (error != cudaSuccess)");
  line("  return tdsl_fail(\"" + cName_ + ": launching " + k.name +
       " failed: %s\", cudaGetErrorString(error));");
  --indent_;
  line("}");
  --indent_;
  line("}");
}

void FunctionEmitter::hostStmt(const Stmt &s) {
  if (!s.defined())
    return;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    auto it = kernelOf_.find(op);
    if (it != kernelOf_.end())
      return emitLaunch(kernels_[it->second]);
    forHeader(op); // a loop on the host around kernel launches
    ++indent_;
    hostStmt(op->body);
    --indent_;
    line("}");
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &c : s.as<SeqStmt>()->seq)
      hostStmt(c);
    return;
  case StmtKind::LetStmt: {
    const auto *op = s.as<LetStmt>();
    varBounds_[op->var] = bounds(op->value);
    line("const " + valueType(op->var.dtype()) + " " + names_(op->var) + " = " +
         expr(op->value) + ";");
    return hostStmt(op->body);
  }
  case StmtKind::IfThenElse: {
    const auto *op = s.as<IfThenElse>();
    line("if (" + stripParens(expr(op->condition)) + ") {");
    ++indent_;
    hostStmt(op->thenCase);
    --indent_;
    if (op->elseCase.defined()) {
      line("} else {");
      ++indent_;
      hostStmt(op->elseCase);
      --indent_;
    }
    line("}");
    return;
  }
  case StmtKind::Allocate: {
    // A global intermediate: device memory for the duration of the call.
    const auto *op = s.as<Allocate>();
    const Buffer &b = op->buffer;
    std::string name = names_(b), type = storageType(b.dtype());
    std::string count = "(" + expr(b.shape()[0]) + " > 0 ? " + expr(b.shape()[0]) + " : 1)";
    line("// " + std::string(scopeName(b.scope())) + " " + b.dtype().name() + "[" +
         toString(b.shape()[0]) + "] in device memory");
    line("tdsl_device_buffer " + name + "_memory;");
    line("if (cudaMalloc(&" + name + "_memory.ptr, sizeof(" + type + ") * static_cast<size_t>(" +
         count + ")) != cudaSuccess)");
    line("  return tdsl_fail(\"" + cName_ + ": out of device memory for '" + b.name() + "'\");");
    line(type + " *" + name + " = static_cast<" + type + " *>(" + name + "_memory.ptr);");
    return hostStmt(op->body);
  }
  default:
    TDSL_IR_CHECK(false, "work outside every kernel (checkCudaModule refuses it)");
  }
}

void FunctionEmitter::emit(std::ostream &os) {
  os_ = &os;
  for (const FuncParam &p : lowered_->inputs)
    if (!p.isTensor() && (isHalf(p.scalar.dtype()) || p.scalar.dtype().isBool()))
      halfParams_.insert(p.scalar.get());
  std::string raw = rawPrototype(false);
  for (const Var &v : lowered_->shapeVars)
    varBounds_[v] = Bounds{std::optional<int64_t>(0), std::nullopt};
  NestComments nests;
  nests.visitStmt(source_->body);
  comments_ = std::move(nests.comments);

  os << "// ===== func " << source_->name;
  if (source_->loc.valid())
    os << " (line " << source_->loc.line << ")";
  os << " =====\n\n";
  collectKernels(lowered_->body);
  for (const Kernel &k : kernels_)
    emitKernel(os, k);

  os_ = &os;
  os << "// Launches the kernels of " << source_->name
     << " in order on the default stream; pointers are device pointers.\n";
  os << "extern \"C\" " << raw << " {\n";
  indent_ = 1;
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
  } uses;
  uses.visitStmt(lowered_->body);
  auto unused = [&](const void *p, const std::string &name) {
    if (!uses.used.count(p))
      line("(void)" + name + ";");
  };
  for (const FuncParam &p : lowered_->inputs)
    unused(p.isTensor() ? static_cast<const void *>(p.buffer.get()) : p.scalar.get(),
           p.isTensor() ? names_(p.buffer) : names_(p.scalar));
  for (const Buffer &b : lowered_->outputs)
    unused(b.get(), names_(b));
  for (const Var &v : lowered_->shapeVars)
    unused(v.get(), names_(v));
  line("tdsl_generated::last_error[0] = '\\0';");
  hostStmt(lowered_->body);
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
    line("if (" + name + "->device.device_type != kDLCUDA)");
    line("  return tdsl_fail(\"" + fn + ": argument " + q +
         " is not in CUDA device memory (device type %d)\", static_cast<int>(" + name +
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

/// C function names for the emitted functions, unique over the module.
std::vector<std::string> functionNames(const std::vector<Func> &funcs) {
  NameTable table({"tdsl_last_error", "tdsl_generated"});
  std::vector<std::string> out;
  for (const Func &f : funcs)
    out.push_back(table.define(f.get(), f.name()));
  return out;
}

} // namespace

std::vector<Func> emittedFunctions(const Module &module, const CudaOptions &options) {
  std::vector<Func> out;
  for (const Func &f : module.functions()) {
    const auto *p = f.as<PrimFunc>();
    if (!p || !p->constVars.empty())
      continue;
    if (!options.onlyFunc.empty() && f.name() != options.onlyFunc)
      continue;
    out.push_back(f);
  }
  return out;
}

std::vector<Func> lowerModule(const Module &module, const CudaOptions &options) {
  std::vector<Func> out;
  for (const Func &f : emittedFunctions(module, options))
    out.push_back(lower::lowerPrimFuncForCuda(f, options.afterLowerStep));
  return out;
}

std::string emitCuda(const Module &module, const CudaOptions &options) {
  std::vector<Func> sources = emittedFunctions(module, options);
  std::vector<Func> lowered = lowerModule(module, options);
  std::vector<std::string> names = functionNames(sources);
  std::ostringstream os;
  os << "// Generated by tdslc (CUDA backend). Do not edit.\n" << kPrelude;
  for (size_t i = 0; i < sources.size(); ++i) {
    os << "\n";
    FunctionEmitter(sources[i].as<PrimFunc>(), lowered[i].as<PrimFunc>(), names[i]).emit(os);
  }
  return options.format ? cpp::formatCpp(os.str(), "tdsl.cu") : os.str();
}

} // namespace tdsl::cuda

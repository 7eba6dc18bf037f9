//===- backends/cpp/CppEmitter.cpp - The C++ backend --------------------------------------===//
#include "backends/cpp/CppEmitter.h"

#include "backends/abi/Abi.h"
#include "backends/cfamily/CFamily.h"
#include "backends/cpp/Format.h"

#include "ir/Arith.h"
#include "ir/Contains.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Utils.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tdsl::cpp {

using namespace ir;
using cfamily::Bounds;
using cfamily::fit;
using cfamily::isHalf;
using cfamily::negated;
using cfamily::storageType;
using cfamily::stripParens;
using cfamily::valueType;

namespace {

// ---------------------------------------------------------------------------------------------
// The prelude: includes and the helpers the emitted code calls (all static inline or
// templates, so unused ones cost nothing; functions are [[maybe_unused]], for Clang's -Wall).
// ---------------------------------------------------------------------------------------------

const std::string kPrelude =
    std::string(R"(#include <dlpack/dlpack.h>

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

#ifdef _OPENMP
// Parallel loops call the GNU OpenMP entry point, which GCC's libgomp and LLVM's libomp both
// provide (the LLVM backend calls it too): any object links with either runtime's -fopenmp.
extern "C" void GOMP_parallel(void (*fn)(void *), void *data, unsigned threads, unsigned flags);
extern "C" int omp_get_thread_num(void);
extern "C" int omp_get_num_threads(void);
#endif

)") +
    cfamily::preludeFail("[[maybe_unused]] ") + cfamily::preludeIntegerArithmetic("") +
    R"(template <typename T> static inline T tdsl_fmod_floor(T a, T b) { return a - std::floor(a / b) * b; }

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

// A parallel loop: body(i) for i in [begin, end), thread t of n running the static chunk
// [begin + t*c, begin + (t+1)*c) with c = ceil((end - begin) / n), as the LLVM backend does.
// Serial when the unit is compiled without OpenMP.
template <typename Body> static inline void tdsl_parallel_for(int64_t begin, int64_t end, const Body &body) {
  if (end <= begin)
    return;
#ifdef _OPENMP
  struct Context {
    int64_t begin, end;
    const Body *body;
  } context{begin, end, &body};
  GOMP_parallel(
      [](void *data) {
        const Context &c = *static_cast<const Context *>(data);
        const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
        const int64_t chunk = (c.end - c.begin + threads - 1) / threads;
        const int64_t first = c.begin + thread * chunk;
        const int64_t last = first + chunk < c.end ? first + chunk : c.end;
        for (int64_t i = first; i < last; ++i)
          (*c.body)(i);
      },
      &context, 0, 0);
#else
  for (int64_t i = begin; i < end; ++i)
    body(i);
#endif
}

)" +
    cfamily::preludeHalfConversions({"[[maybe_unused]] ", "std::memcpy", "std::isinf(value)", "",
                                     "63 - __builtin_clzll(mag)", "std::ldexp",
                                     "std::numeric_limits<float>::quiet_NaN()",
                                     "std::numeric_limits<float>::infinity()"}) +
    R"(// --bounds-check: the first failed check of a call records its message; the entry returns
// it at the end (a check inside an OpenMP loop cannot return). Atomic: threads may race.
[[maybe_unused]] static inline void tdsl_report(int *failed, char *message, size_t size, const char *format, ...) {
  if (__atomic_exchange_n(failed, 1, __ATOMIC_ACQ_REL))
    return;
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, size, format, args);
  va_end(args);
}

)" + cfamily::preludeDlpackChecks("[[maybe_unused]] ") +
    cfamily::preludeEnd();

/// --ffp-contract=off (spec §11): no a * b + c computed as one fused multiply-add. Clang
/// follows the standard pragma; GCC ignores it (and warns under -Wall), but takes its own option
/// as a pragma (GCC's -ffp-contract=on would also mean off, up to GCC 13 at least). Before the
/// includes, so that every function of the unit, inline ones of the headers too, has it.
const char *kNoContraction = R"(
// --ffp-contract=off: no fused multiply-add contraction, with any compiler.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

)";

/// The vector types' helpers, emitted when a function computes on vectors. g++ keeps a vector
/// type wider than the target's vector registers in memory (BLKmode), so a register tile of
/// accumulators (e.g. 16-lane f32 on AVX2) would go through the stack at every step: for g++,
/// such a type is a pair of halves, down to the target's width, with the same operators.
/// Loads, stores and conversions are helpers taking references (never a vector by value
/// across a call: -Wpsabi) that work on both forms.
const char *kVectorPrelude = R"(
// Vector types: GCC/Clang vector extensions. g++ keeps a vector wider than the target's vector
// registers in memory; for g++ such a type is a pair of halves, down to the target's width.
#if defined(__GNUC__) && !defined(__clang__)
#if defined(__AVX512F__)
#define TDSL_VECTOR_BYTES 64
#elif defined(__AVX__)
#define TDSL_VECTOR_BYTES 32
#else
#define TDSL_VECTOR_BYTES 16
#endif
#if defined(__x86_64__) || defined(__i386__)
#define TDSL_VLOAD_IN_REGISTER 1
#endif
#else
#define TDSL_VECTOR_BYTES 1024
#endif
namespace {
template <typename T, typename H> struct tdsl_pair {
  H lo, hi;
  friend tdsl_pair operator+(const tdsl_pair &a, const tdsl_pair &b) {
    return {a.lo + b.lo, a.hi + b.hi};
  }
  friend tdsl_pair operator-(const tdsl_pair &a, const tdsl_pair &b) {
    return {a.lo - b.lo, a.hi - b.hi};
  }
  friend tdsl_pair operator*(const tdsl_pair &a, const tdsl_pair &b) {
    return {a.lo * b.lo, a.hi * b.hi};
  }
  friend tdsl_pair operator/(const tdsl_pair &a, const tdsl_pair &b) {
    return {a.lo / b.lo, a.hi / b.hi};
  }
  friend tdsl_pair operator-(const tdsl_pair &a) { return {-a.lo, -a.hi}; }
  T &operator[](int64_t i) { return reinterpret_cast<T *>(this)[i]; }
  const T &operator[](int64_t i) const { return reinterpret_cast<const T *>(this)[i]; }
};
template <typename T, int Bytes, bool Split = (Bytes > TDSL_VECTOR_BYTES)> struct tdsl_vector {
  typedef T type __attribute__((vector_size(Bytes)));
};
template <typename T, int Bytes> struct tdsl_vector<T, Bytes, true> {
  typedef tdsl_pair<T, typename tdsl_vector<T, Bytes / 2>::type> type;
};
template <typename V> struct tdsl_is_pair : std::false_type {};
template <typename T, typename H> struct tdsl_is_pair<tdsl_pair<T, H>> : std::true_type {};
// Unaligned loads and stores.
template <typename V> static inline void tdsl_vload(V &v, const void *p) {
  if constexpr (tdsl_is_pair<V>::value) {
    tdsl_vload(v.lo, p);
    tdsl_vload(v.hi, static_cast<const char *>(p) + sizeof v.lo);
  } else {
    std::memcpy(&v, p, sizeof v);
#ifdef TDSL_VLOAD_IN_REGISTER
    // g++ would fold the load into each use as a memory operand (a register tile's B vector
    // read once per row): the loads then saturate the load ports.
    if constexpr (sizeof v >= 16)
      __asm__("" : "+v"(v));
#endif
  }
}
template <typename V> static inline void tdsl_vstore(void *p, const V &v) {
  if constexpr (tdsl_is_pair<V>::value) {
    tdsl_vstore(p, v.lo);
    tdsl_vstore(static_cast<char *>(p) + sizeof v.lo, v.hi);
  } else {
    std::memcpy(p, &v, sizeof v);
  }
}
// max and min of vectors, lane by lane; for floats a NaN lane gives the other operand's lane
// (as std::fmax and std::fmin do). A vector select, not a loop over lanes, which Clang unrolls and
// vectorizes only at -O3 (at -O2 each lane went through the stack: 10x slower softmax).
template <typename V> static inline V tdsl_vmax(const V &a, const V &b) {
  if constexpr (tdsl_is_pair<V>::value)
    return {tdsl_vmax(a.lo, b.lo), tdsl_vmax(a.hi, b.hi)};
  else
    return ((a > b) | (b != b)) ? a : b;
}
template <typename V> static inline V tdsl_vmin(const V &a, const V &b) {
  if constexpr (tdsl_is_pair<V>::value)
    return {tdsl_vmin(a.lo, b.lo), tdsl_vmin(a.hi, b.hi)};
  else
    return ((a < b) | (b != b)) ? a : b;
}
// r = a converted lane by lane.
template <typename To, typename From> static inline void tdsl_convert(To &r, const From &a) {
  if constexpr (!tdsl_is_pair<To>::value && !tdsl_is_pair<From>::value) {
    r = __builtin_convertvector(a, To);
  } else {
    using E = std::remove_reference_t<decltype(r[0])>;
    for (size_t i = 0; i < sizeof r / sizeof(E); ++i)
      r[i] = static_cast<E>(a[i]);
  }
}
} // namespace
)";

/// Vector math, emitted with the first vector call of exp, erf, …: glibc's libmvec through the
/// x86-64 vector function ABI ('b' SSE 16 bytes, 'd' AVX2 32, 'e' AVX-512 64) at the widest
/// ISA the compiling compiler targets, where glibc is 2.35 or later (erf, tanh, exp2 and log2
/// came then); elsewhere, or with -DTDSL_NO_LIBMVEC, the scalar function lane by lane. The
/// ABI's vector types are plain GCC vectors of the variant's width, never split into pairs.
const char *kVectorMathPrelude = R"(
// Vector math: glibc's libmvec (x86-64 vector function ABI) at the widest ISA targeted.
#if defined(__x86_64__) && defined(__GLIBC__) && !defined(TDSL_NO_LIBMVEC) &&                        \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#if defined(__AVX512F__)
#define TDSL_LIBMVEC 64
#elif defined(__AVX2__)
#define TDSL_LIBMVEC 32
#else
#define TDSL_LIBMVEC 16
#endif
#else
#define TDSL_LIBMVEC 0
#endif
typedef float tdsl_mvec_f32x4 __attribute__((vector_size(16)));
typedef float tdsl_mvec_f32x8 __attribute__((vector_size(32)));
typedef float tdsl_mvec_f32x16 __attribute__((vector_size(64)));
typedef double tdsl_mvec_f64x2 __attribute__((vector_size(16)));
typedef double tdsl_mvec_f64x4 __attribute__((vector_size(32)));
typedef double tdsl_mvec_f64x8 __attribute__((vector_size(64)));
namespace {
// r = f(a) (and f(a, b)), in pieces of f's width (the pieces of a register, for Clang).
template <typename V, typename N> static inline void tdsl_mvec_map(V &r, N (*f)(N), const V &a) {
  for (size_t at = 0; at < sizeof r; at += sizeof(N)) {
    N x;
    std::memcpy(&x, reinterpret_cast<const char *>(&a) + at, sizeof x);
    const N y = f(x);
    std::memcpy(reinterpret_cast<char *>(&r) + at, &y, sizeof y);
  }
}
template <typename V, typename N>
static inline void tdsl_mvec_map(V &r, N (*f)(N, N), const V &a, const V &b) {
  for (size_t at = 0; at < sizeof r; at += sizeof(N)) {
    N x, y;
    std::memcpy(&x, reinterpret_cast<const char *>(&a) + at, sizeof x);
    std::memcpy(&y, reinterpret_cast<const char *>(&b) + at, sizeof y);
    const N z = f(x, y);
    std::memcpy(reinterpret_cast<char *>(&r) + at, &z, sizeof z);
  }
}
} // namespace
)";

/// The intrinsics whose vector calls go through vector math (libmvec has them; sigmoid is
/// 1 / (1 + exp(-x))).
bool hasVectorMath(Intrinsic op) {
  switch (op) {
  case Intrinsic::Exp:
  case Intrinsic::Exp2:
  case Intrinsic::Log:
  case Intrinsic::Log2:
  case Intrinsic::Tanh:
  case Intrinsic::Sigmoid:
  case Intrinsic::Erf:
  case Intrinsic::Sin:
  case Intrinsic::Cos:
  case Intrinsic::Pow:
    return true;
  default:
    return false;
  }
}

/// The helper computing `op` on vectors of `t`'s element type: tdsl_vexpf, tdsl_vpow, ….
std::string vectorMathHelper(Intrinsic op, DType t) {
  return std::string("tdsl_v") + intrinsicName(op) + (t.element() == DType::f32() ? "f" : "");
}

/// The definition of vectorMathHelper(op, t): a template over the vector types (pairs split
/// into halves), the libmvec variants it may call declared before it.
std::string vectorMathDefinition(Intrinsic op, DType t) {
  bool f32 = t.element() == DType::f32();
  std::string e = f32 ? "float" : "double", name = vectorMathHelper(op, t);
  std::string fn = op == Intrinsic::Sigmoid ? "exp" : intrinsicName(op);
  bool binary = op == Intrinsic::Pow;
  std::string params = binary ? "(V &r, const V &a, const V &b)" : "(V &r, const V &a)";
  std::string out = "// r = " + std::string(intrinsicName(op)) + (binary ? "(a, b)" : "(a)") +
                    " of " + t.element().name() + " lanes.\n";
  struct Variant {
    int bytes;
    char isa;
  };
  const Variant variants[] = {{64, 'e'}, {32, 'd'}, {16, 'b'}};
  auto symbol = [&](const Variant &v) {
    return "_ZGV" + std::string(1, v.isa) + "N" + std::to_string(v.bytes / (f32 ? 4 : 8)) +
           (binary ? "vv_" : "v_") + fn + (f32 ? "f" : "");
  };
  auto abiType = [&](const Variant &v) {
    return std::string("tdsl_mvec_") + (f32 ? "f32x" : "f64x") +
           std::to_string(v.bytes / (f32 ? 4 : 8));
  };
  for (const Variant &v : variants)
    out += "#if TDSL_LIBMVEC >= " + std::to_string(v.bytes) + "\nextern \"C\" " + abiType(v) + " " +
           symbol(v) + "(" + abiType(v) + (binary ? ", " + abiType(v) : "") + ");\n#endif\n";
  out += "namespace {\ntemplate <typename V> static inline void " + name + params + " {\n";
  out += "  if constexpr (tdsl_is_pair<V>::value) {\n";
  out += "    " + name + (binary ? "(r.lo, a.lo, b.lo);\n" : "(r.lo, a.lo);\n");
  out += "    " + name + (binary ? "(r.hi, a.hi, b.hi);\n" : "(r.hi, a.hi);\n");
  for (const Variant &v : variants) {
    std::string b = std::to_string(v.bytes);
    out += "#if TDSL_LIBMVEC >= " + b + "\n  } else if constexpr (sizeof(V) % " + b + " == 0) {\n";
    if (op == Intrinsic::Sigmoid)
      out += "    tdsl_mvec_map(r, " + symbol(v) + ", V(-a));\n    r = 1 / (1 + r);\n";
    else
      out += "    tdsl_mvec_map(r, " + symbol(v) + (binary ? ", a, b);\n" : ", a);\n");
    out += "#endif\n";
  }
  std::string sfx = f32 ? "f" : "";
  std::string lane = op == Intrinsic::Sigmoid ? "1 / (1 + std::exp(-a[i]))"
                     : binary                 ? "std::pow(a[i], b[i])"
                                              : "std::" + fn + "(a[i])";
  out += "  } else {\n    for (size_t i = 0; i < sizeof r / sizeof(" + e +
         "); ++i)\n      r[i] = " + lane + ";\n  }\n}\n} // namespace\n";
  return out;
}

/// kVectorMathPrelude and the helpers of the vector calls of `lowered` that go through vector
/// math; nothing when there is none.
std::string vectorMathHelpers(const std::vector<Func> &lowered) {
  struct Walker : IRVisitor {
    std::set<std::pair<Intrinsic, std::string>> used;
    std::vector<std::pair<Intrinsic, DType>> order;
    void visit(const Call *op) override {
      if (op->type.isVector() && hasVectorMath(op->op) &&
          used.insert({op->op, op->type.element().name()}).second)
        order.push_back({op->op, op->type.element()});
      IRVisitor::visit(op);
    }
  } walker;
  for (const Func &f : lowered)
    walker.visitStmt(f.as<PrimFunc>()->body);
  if (walker.order.empty())
    return "";
  std::sort(walker.order.begin(), walker.order.end(), [](const auto &a, const auto &b) {
    return std::pair(static_cast<int>(a.first), a.second.name()) <
           std::pair(static_cast<int>(b.first), b.second.name());
  });
  std::string out = kVectorMathPrelude;
  for (const auto &[op, t] : walker.order)
    out += vectorMathDefinition(op, t);
  return out;
}

// ---------------------------------------------------------------------------------------------
// One function
// ---------------------------------------------------------------------------------------------

/// The C++ dialect: std:: math functions and std::numeric_limits; plus vector code,
/// --bounds-check assertions, heap allocations and the calls of lowered graphs.
class FunctionEmitter : public cfamily::FunctionEmitterBase {
public:
  FunctionEmitter(const PrimFunc *source, const PrimFunc *lowered, std::string cName,
                  const std::map<std::string, std::string> *callees = nullptr, bool isGraph = false,
                  bool exported = true,
                  const std::vector<std::pair<Buffer, std::string>> *constants = nullptr)
      : FunctionEmitterBase(source, lowered, std::move(cName), cfamily::NameTable({})),
        callees_(callees), isGraph_(isGraph), exported_(exported) {
    if (constants)
      for (const auto &[buffer, symbol] : *constants)
        names_.fix(buffer.get(), symbol);
  }

  /// Prints the function. A body with deep expressions goes into `unformatted` (when given)
  /// and a placeholder line `kUnformattedBody(K);` into `os`.
  void emit(std::ostream &os, std::vector<std::string> *unformatted = nullptr);

  /// Vector calls of exp, erf, … go through the helpers of vectorMathHelpers (libmvec where
  /// the compiler targets it); otherwise each lane calls the scalar function.
  bool vectorMath = false;

private:
  std::string mathFunction(const std::string &name, DType) override { return "std::" + name; }
  std::string nonFinite(bool isF64, bool isNan) override {
    return std::string("std::numeric_limits<") + (isF64 ? "double" : "float") +
           ">::" + (isNan ? "quiet_NaN()" : "infinity()");
  }
  std::string limit(DType t, bool isMax) override {
    return "std::numeric_limits<" + storageType(t) + ">::" + (isMax ? "max()" : "lowest()");
  }
  std::string floatToInt(DType to, const std::string &x) override {
    return "tdsl_f2i<" + storageType(to) + ">(" + x + ")";
  }
  std::string elementAccess(const Buffer &buffer, const Expr &index) override;

  // Vector code (lowered by lower.vectorize): GCC/Clang vector extensions (pairs of halves
  // with g++ where wider than the target's registers, kVectorPrelude), loads and stores
  // through tdsl_vload/tdsl_vstore (unaligned), every vector value a local, passed to the
  // prelude's helpers by reference only.
  std::string vexpr(const Expr &e);
  std::string vaddress(const Buffer &buffer, const Expr &base);
  std::string vtemp(DType t, const std::string &init);
  void vectorStore(const BufferStore *op);
  // --bounds-check.
  void assertStmt(const AssertStmt *op);

  // Statements.
  void stmt(const Stmt &s, bool inFor);

  int loopDepth_ = 0;
  int temps_ = 0; ///< Vector temporaries tdsl_v0, tdsl_v1, ...
  /// Stack arrays declared as arrays of vectors (vectorArrayLanes): buffer → lanes.
  std::map<const void *, int> vectorArrays_;

  // Lowered graphs (passes/lower/LowerGraph.h).
  void graphStmt(const Stmt &s);
  std::string abiScalar(const Expr &e);
  const std::map<std::string, std::string> *callees_; ///< Module name → C symbol.
  bool isGraph_;
  bool exported_; ///< false: a `static` raw entry only (an imported or derived function)
  std::vector<std::string> heap_; ///< Heap allocations in scope, released on an early return.
  /// How many Allocate nodes each buffer has in the body; the Allocates printed in a block of
  /// their own.
  std::map<const BufferNode *, int> allocations_;
  std::set<const StmtNode *> inOwnBlock_;
};

/// The statement that stands for a body left unformatted until clang::format has run.
const char *kUnformattedBody = "tdsl_unformatted_body_";

/// Whether clang::format would search long for line breaks in `body`: it has many lines over
/// the column limit whose brackets nest deeply (each costs the formatter a search over every
/// way to break it; 40 of them take seconds).
bool costlyToFormat(const std::string &body) {
  constexpr size_t kColumns = 100;
  constexpr int kDepth = 4, kLines = 40;
  int costly = 0;
  size_t start = 0;
  while (start < body.size()) {
    size_t end = body.find('\n', start);
    if (end == std::string::npos)
      end = body.size();
    if (end - start > kColumns &&
        cfamily::nestingDepth(body.substr(start, end - start)) >= kDepth && ++costly >= kLines)
      return true;
    start = end + 1;
  }
  return false;
}

/// `text` with each placeholder line of `bodies` replaced by that body.
std::string restoreBodies(const std::string &text, const std::vector<std::string> &bodies) {
  std::string out = text;
  for (size_t k = 0; k < bodies.size(); ++k) {
    std::string call = std::string(kUnformattedBody) + "(" + std::to_string(k) + ");\n";
    size_t at = out.find(call);
    TDSL_IR_CHECK(at != std::string::npos, "an unformatted body's placeholder is kept");
    size_t begin = out.rfind('\n', at) + 1; // the line, with its indentation
    out.replace(begin, at + call.size() - begin, bodies[k]);
  }
  return out;
}

/// The C name of a vector type: tdsl_f32x8.
std::string vectorTypeName(DType t) { return "tdsl_" + t.name(); }

/// `index / lanes` when `index` is a multiple of `lanes` by its form: a constant multiple, a
/// product with such a factor, or a sum or difference of such terms.
std::optional<Expr> divideExact(const Expr &index, int64_t lanes) {
  if (auto c = asConstInt(index))
    return *c % lanes == 0 ? std::optional<Expr>(intImm(*c / lanes, index.dtype())) : std::nullopt;
  if (const auto *op = index.as<Mul>()) {
    for (const auto &[factor, other] : {std::pair(op->a, op->b), std::pair(op->b, op->a)}) {
      if (auto c = asConstInt(factor); c && *c % lanes == 0)
        return *c == lanes ? other : other * intImm(*c / lanes, index.dtype());
      if (auto q = divideExact(factor, lanes))
        return *q * other;
    }
    return std::nullopt;
  }
  if (const auto *op = index.as<Add>()) {
    auto a = divideExact(op->a, lanes), b = divideExact(op->b, lanes);
    return a && b ? std::optional<Expr>(*a + *b) : std::nullopt;
  }
  if (const auto *op = index.as<Sub>()) {
    auto a = divideExact(op->a, lanes), b = divideExact(op->b, lanes);
    return a && b ? std::optional<Expr>(*a - *b) : std::nullopt;
  }
  return std::nullopt;
}

/// The lanes of the vectors through which `body` accesses the stack array `buffer` of `size`
/// elements, when each of its vector loads and stores is a contiguous vector of the same width
/// at a multiple of that width (an accumulator tile, say), so that it can be an array of
/// vectors: g++ keeps the elements of such an array in registers across a loop, not those of
/// a scalar array accessed through memcpy. Scalar accesses (a tile's init and copy-back) are
/// fine: they become `[i / L][i % L]`. 0 otherwise (no vector access, an unaligned or mixed
/// width).
int vectorArrayLanes(const Buffer &buffer, int64_t size, const Stmt &body) {
  if (isHalf(buffer.dtype()) || buffer.dtype().isBool())
    return 0;
  struct Walker : IRVisitor {
    const void *buffer;
    int lanes = -1;      // -1: no access seen yet; 0: not eligible
    bool scalar = false; // a scalar access seen
    void note(DType t, const std::vector<Expr> &indices) {
      if (!t.isVector() && indices.size() == 1 && !indices[0].dtype().isVector()) {
        scalar = true; // element [i / L][i % L]
        return;
      }
      int l = 0;
      const auto *ramp = indices.size() == 1 ? indices[0].as<Ramp>() : nullptr;
      if (t.isVector() && ramp && isConstInt(ramp->stride, 1) && divideExact(ramp->base, t.lanes()))
        l = t.lanes();
      lanes = lanes == -1 || lanes == l ? l : 0;
    }
    void visit(const BufferLoad *op) override {
      if (op->buffer.get() == buffer)
        note(op->type, op->indices);
      IRVisitor::visit(op);
    }
    void visit(const BufferStore *op) override {
      if (op->buffer.get() == buffer)
        note(op->value.dtype(), op->indices);
      IRVisitor::visit(op);
    }
    // Lowered graphs pass buffers by pointer: none of that.
    void visit(const BufferView *) override { lanes = 0; }
    void visit(const FuncCall *) override { lanes = 0; }
  } walker;
  walker.buffer = buffer.get();
  walker.visitStmt(body);
  return walker.lanes > 1 && size % walker.lanes == 0 ? walker.lanes : 0;
}

/// Lane `lane` of the vector expression `e`, as a scalar expression (simplified: a condition
/// known for that lane picks its branch): a ramp's element, a broadcast's value, every node on
/// its operands' lanes.
Expr laneOf(const Expr &e, int64_t lane) {
  struct Lane : IRMutator {
    int64_t lane;
    Expr visit(const Ramp *op) override {
      return simplify(mutate(op->base) + mutate(op->stride) * intImm(lane));
    }
    Expr visit(const Broadcast *op) override { return mutate(op->value); }
    // Conditions folded where a lane's operands are constants (simplify leaves `&&`, `||`, `!`
    // of constants as they are).
    Expr visit(const Not *op) override {
      Expr a = simplify(mutate(op->a));
      if (std::optional<int64_t> v = asConstInt(a))
        return boolImm(!*v);
      return Not::make(a, op->loc);
    }
    Expr visit(const And *op) override { return logical(op->a, op->b, false, op->loc); }
    Expr visit(const Or *op) override { return logical(op->a, op->b, true, op->loc); }
    /// `a && b` (isOr false) or `a || b`: one constant operand decides or drops out.
    Expr logical(const Expr &x, const Expr &y, bool isOr, SourceLoc loc) {
      Expr a = simplify(mutate(x)), b = simplify(mutate(y));
      for (auto [known, other] : {std::pair(a, b), std::pair(b, a)})
        if (std::optional<int64_t> v = asConstInt(known))
          return (*v != 0) == isOr ? boolImm(isOr) : other;
      return isOr ? Or::make(a, b, loc) : And::make(a, b, loc);
    }
    Expr visit(const Select *op) override {
      Expr c = simplify(mutate(op->condition));
      if (std::optional<int64_t> known = asConstInt(c))
        return mutate(*known ? op->trueValue : op->falseValue);
      return Select::make(c, mutate(op->trueValue), mutate(op->falseValue), op->loc);
    }
    Expr visit(const Cast *op) override {
      return Cast::make(op->type.element(), mutate(op->value), op->loc);
    }
    Expr visit(const Call *op) override {
      std::vector<Expr> args;
      for (const Expr &a : op->args)
        args.push_back(mutate(a));
      return Call::make(op->type.element(), op->op, std::move(args), op->loc);
    }
  } mutator;
  mutator.lane = lane;
  return simplify(mutator.mutate(e));
}

/// `text` as a C string literal body.
std::string cString(const std::string &text) { return escapeString(text); }

// --- Expressions -----------------------------------------------------------------------------

/// An element of an array of vectors (vectorArrays_) is `NAME[Q][R]`: the index's terms that
/// are multiples of the lanes L make Q (divided by L), the rest R when it lies in [0, L);
/// otherwise `NAME[I / L][I % L]`.
std::string FunctionEmitter::elementAccess(const Buffer &buffer, const Expr &index) {
  auto it = vectorArrays_.find(buffer.get());
  if (it == vectorArrays_.end())
    return FunctionEmitterBase::elementAccess(buffer, index);
  int64_t lanes = it->second;
  std::vector<Expr> terms, pending = {index};
  while (!pending.empty()) {
    Expr e = pending.back();
    pending.pop_back();
    if (const auto *add = e.as<Add>()) {
      pending.push_back(add->b);
      pending.push_back(add->a);
    } else {
      terms.push_back(e);
    }
  }
  std::optional<Expr> q, r;
  for (const Expr &term : terms) {
    if (auto part = divideExact(term, lanes))
      q = q ? *q + *part : *part;
    else
      r = r ? *r + term : term;
  }
  std::string name = names_(buffer);
  if (r) {
    Bounds b = bounds(*r);
    if (!b.lo || *b.lo < 0 || !b.hi || *b.hi >= lanes) {
      std::string i = expr(index), l = std::to_string(lanes);
      return name + "[" + i + " / " + l + "][" + i + " % " + l + "]";
    }
  }
  return name + "[" + stripParens(q ? expr(*q) : "0") + "][" + stripParens(r ? expr(*r) : "0") +
         "]";
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
    TDSL_IR_CHECK(ramp, "a vector load has a ramp index");
    if (!isConstInt(ramp->stride, 1)) {
      // A strided load (lower.vectorize: a small constant stride): its lanes one by one, which
      // the C++ compiler turns into loads and shuffles.
      std::optional<int64_t> s = asConstInt(ramp->stride);
      TDSL_IR_CHECK(s && !vectorArrays_.count(op->buffer.get()),
                    "a strided vector load has a constant stride");
      std::string b = "tdsl_i" + std::to_string(temps_++);
      line("const int64_t " + b + " = " + stripParens(expr(ramp->base)) + ";");
      std::string init = " = {";
      for (int i = 0; i < t.lanes(); ++i)
        init += (i ? ", " : "") + names_(op->buffer) + "[" + b +
                (i ? " + " + std::to_string(i * *s) : "") + "]";
      return vtemp(t, init + "}");
    }
    if (auto it = vectorArrays_.find(op->buffer.get()); it != vectorArrays_.end())
      return vtemp(t, " = " + names_(op->buffer) + "[" +
                          stripParens(expr(*divideExact(ramp->base, it->second))) + "]");
    std::string v = vtemp(t, "");
    line("tdsl_vload(" + v + ", " + vaddress(op->buffer, ramp->base) + ");");
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
    auto group = [](ExprKind k) {
      return k == ExprKind::Add || k == ExprKind::Sub   ? 1
             : k == ExprKind::Mul || k == ExprKind::Div ? 2
                                                        : 0;
    };
    std::string x = vexpr(a);
    std::string y = vexpr(b);
    if (group(a.kind()) == group(e.kind())) // left-associative: `a + b + c`, flat
      x = stripParens(x);
    std::string text = "(" + x + op + y + ")";
    if (text.size() > 2 * kMaxNesting && cfamily::nestingDepth(text) > kMaxNesting)
      return vtemp(t, " = " + stripParens(text)); // no compiler nesting limit is reached
    return text;
  }
  case ExprKind::Neg:
    return negated(vexpr(e.as<Neg>()->a));
  case ExprKind::Min:
  case ExprKind::Max: {
    bool isMin = e.kind() == ExprKind::Min;
    const Expr &a = isMin ? e.as<Min>()->a : e.as<Max>()->a;
    const Expr &b = isMin ? e.as<Min>()->b : e.as<Max>()->b;
    std::string x = vtemp(t, " = " + stripParens(vexpr(a)));
    std::string y = vtemp(t, " = " + stripParens(vexpr(b)));
    return std::string(isMin ? "tdsl_vmin(" : "tdsl_vmax(") + x + ", " + y + ")";
  }
  case ExprKind::Call: {
    const auto *op = e.as<Call>();
    std::vector<std::string> vectors;
    for (const Expr &a : op->args)
      vectors.push_back(vtemp(a.dtype(), " = " + stripParens(vexpr(a))));
    std::string r = vtemp(t, "");
    if (vectorMath && hasVectorMath(op->op)) { // tdsl_vexpf(r, a): libmvec where it can
      std::string call = vectorMathHelper(op->op, t) + "(" + r;
      for (const std::string &v : vectors)
        call += ", " + v;
      line(call + ");");
      return r;
    }
    // Lane by lane through the scalar form (callExpr), on named scalars of the loop's body.
    std::vector<Var> scalars;
    std::vector<Expr> refs;
    for (const Expr &a : op->args) {
      scalars.emplace_back("x", a.dtype().element());
      refs.push_back(VarRef::make(scalars.back()));
    }
    line("for (int tdsl_lane = 0; tdsl_lane < " + std::to_string(lanes) + "; ++tdsl_lane) {");
    for (size_t i = 0; i < scalars.size(); ++i)
      line("  const " + valueType(scalars[i].dtype()) + " " + names_(scalars[i]) + " = " +
           vectors[i] + "[tdsl_lane];");
    line("  " + r + "[tdsl_lane] = " +
         stripParens(callExpr(Call::make(t.element(), op->op, refs, op->loc).as<Call>())) + ";");
    line("}");
    return r;
  }
  case ExprKind::Select: {
    // Lane by lane, each a scalar `c ? a : b`: a branch's loads run only on the lanes that
    // take it (lower.vectorize's padding guards), which the compiler turns into blends or
    // masked loads where it can.
    std::string init = " = {";
    for (int i = 0; i < lanes; ++i)
      init += (i ? ", " : "") + stripParens(expr(laneOf(e, i)));
    return vtemp(t, init + "}");
  }
  case ExprKind::Cast: {
    std::string a = vexpr(e.as<Cast>()->value);
    a = vtemp(e.as<Cast>()->value.dtype(), " = " + stripParens(a));
    std::string r = vtemp(t, "");
    line("tdsl_convert(" + r + ", " + a + ");");
    return r;
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
  if (auto it = vectorArrays_.find(op->buffer.get()); it != vectorArrays_.end()) {
    line(names_(op->buffer) + "[" + stripParens(expr(*divideExact(ramp->base, it->second))) +
         "] = " + v + ";");
    return;
  }
  line("tdsl_vstore(" + vaddress(op->buffer, ramp->base) + ", " + v + ");");
}

/// The address of a vector access: `&B[rest] + c` when the index is `rest + c` in canonical
/// form, else `&B[index]`. The rows of a register tile that accumulates in its output buffer
/// then share one `&C[rest]` and differ by constants, which both compilers' alias analyses
/// compare at once, so that they keep the tile in registers over k (with one flat index each
/// neither does: the LLVM backend splits its GEPs the same way, backends/llvm/CodeGen.cpp).
std::string FunctionEmitter::vaddress(const Buffer &buffer, const Expr &base) {
  if (base.dtype() == DType::i64() && !asConstInt(base)) {
    Expr flat = canonical(base);
    if (const auto *add = flat.as<Add>())
      if (std::optional<int64_t> c = asConstInt(add->b); c && *c != 0)
        return "&" + names_(buffer) + "[" + stripParens(expr(add->a)) + "] + " + std::to_string(*c);
    return "&" + names_(buffer) + "[" + stripParens(expr(flat)) + "]";
  }
  return "&" + names_(buffer) + "[" + stripParens(expr(base)) + "]";
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
  ++noHoist_; // the arguments are evaluated only when the check fails
  for (const Expr &arg : op->args)
    args += ", static_cast<long long>(" + stripParens(expr(arg)) + ")";
  --noHoist_;
  line("if (" + stripParens(expr(op->condition)) + ") {");
  ++indent_;
  stmt(op->body, false);
  --indent_;
  line("} else {");
  line("  tdsl_report(&tdsl_failed, tdsl_message, sizeof tdsl_message, \"" + out + "\"" + args +
       ");");
  line("}");
}

// --- Statements ------------------------------------------------------------------------------

void FunctionEmitter::stmt(const Stmt &s, bool inFor) {
  if (structuralStmt(s, inFor, [&](const Stmt &inner) { stmt(inner, false); }))
    return;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    // The loop's body, one level deeper, then `close`.
    auto loopBody = [&](const char *close) {
      recordLoopBounds(op);
      ++indent_;
      ++loopDepth_;
      stmt(op->body, true);
      --loopDepth_;
      --indent_;
      line(close);
    };
    if (op->forKind == ForKind::Parallel) {
      // The body becomes a lambda run by tdsl_parallel_for (GOMP_parallel, see the prelude).
      std::string v = names_(op->loopVar);
      std::string begin = stripParens(expr(op->min));
      std::string end =
          stripParens(isConstInt(op->min, 0) ? expr(op->extent) : expr(op->min + op->extent));
      line("tdsl_parallel_for(" + begin + ", " + end + ", [&](int64_t " + v + ") {");
      loopBody("});");
      return;
    }
    // The header first: temporaries it needs go before the pragma, which must precede `for`.
    std::string header = forHeaderText(op);
    switch (op->forKind) {
    case ForKind::Parallel:
      break;
    case ForKind::Vectorized:
      // Not on a loop holding loops: on the outer loop of a reduction under an `if`, Clang's
      // vectorization gave a wrong result (the generator's seed 5000, program 3101);
      // lower.vectorize has already made vector code of the loops it could.
      if (!contains<For>(op->body))
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
    line(header);
    loopBody("}");
    return;
  }
  case StmtKind::BufferStore: {
    const auto *op = s.as<BufferStore>();
    if (op->value.dtype().isVector())
      return vectorStore(op);
    return scalarStore(op);
  }
  case StmtKind::LetStmt:
  case StmtKind::IfThenElse:
  case StmtKind::SeqStmt:
    return; // printed by structuralStmt
  case StmtKind::Evaluate:
    line("(void)" + expr(s.as<Evaluate>()->value) + ";");
    return;
  case StmtKind::Allocate: {
    const auto *op = s.as<Allocate>();
    const Buffer &b = op->buffer;
    // A partitioned loop's empty piece of a per-iteration buffer, which nothing uses: no
    // declaration.
    if (allocations_[b.get()] > 1 &&
        !contains<BufferLoad>(op->body, [&](const BufferLoad *l) { return l->buffer.sameAs(b); }) &&
        !contains<BufferStore>(op->body,
                               [&](const BufferStore *st) { return st->buffer.sameAs(b); })) {
      stmt(op->body, false);
      return;
    }
    // A buffer allocated more than once in the function (the copies of a per-iteration buffer
    // in a partitioned loop's pieces, siblings in one C++ scope): each Allocate is a C++ block
    // of its own, so that its declaration does not meet the others'.
    if (allocations_[b.get()] > 1 && !inOwnBlock_.count(op)) {
      line("{");
      ++indent_;
      inOwnBlock_.insert(op);
      stmt(s, false);
      inOwnBlock_.erase(op);
      --indent_;
      line("}");
      return;
    }
    std::string name = names_(b), type = storageType(b.dtype());
    auto size = asConstInt(b.shape()[0]);
    const int64_t kStackBytes = 16 * 1024;
    line("// " + std::string(scopeName(b.scope())) + " " + b.dtype().name() + "[" +
         toString(b.shape()[0]) + "]");
    if (size && *size * b.dtype().storageBytes() <= kStackBytes) {
      // Zero-filled: a reduction over an empty domain (N == 0) reads its accumulator without
      // any init having run; zeros make that defined (g++ -Wmaybe-uninitialized agrees).
      if (int lanes = vectorArrayLanes(b, *size, op->body)) {
        // Only vector accesses: an array of vectors (element [i] holds lanes i·L … i·L+L-1).
        line(vectorTypeName(b.dtype().withLanes(lanes)) + " " + name + "[" +
             std::to_string(*size / lanes) + "] = {};");
        vectorArrays_[b.get()] = lanes;
        stmt(op->body, false);
        vectorArrays_.erase(b.get());
        return;
      }
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
  case StmtKind::ProfileRegion: {
    // --profile: the runner's timers around the region (runtime/Profile.h).
    const auto *op = s.as<ProfileRegion>();
    line("tdsl_profile_begin(" + std::to_string(op->id) + ");");
    stmt(op->body, false);
    line("tdsl_profile_end(" + std::to_string(op->id) + ");");
    return;
  }
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

/// Whether `body` names `buffer` (a load, a store, a view's source or a call argument).
static bool usesBuffer(const Stmt &body, const Buffer &buffer) {
  bool found = false;
  forEachBufferRef(body, [&](const Buffer &b) { found |= b == buffer; });
  return found;
}

void FunctionEmitter::graphStmt(const Stmt &s) {
  if (const auto *op = s.as<BufferView>()) {
    std::string type = storageType(op->buffer.dtype()), source = names_(op->source);
    std::string offset = isConstInt(op->byteOffset, 0) ? "" : " + " + expr(op->byteOffset);
    // A view of a result computed in place may be unused (-Wunused-variable).
    std::string unused = usesBuffer(op->body, op->buffer) ? "" : "[[maybe_unused]] ";
    line(unused + type + " *" + names_(op->buffer) + " = reinterpret_cast<" + type +
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

void FunctionEmitter::emit(std::ostream &os, std::vector<std::string> *unformatted) {
  os_ = &os;
  std::string raw = prepare();

  os << (isGraph_ ? "// graph " : "// func ") << source_->name;
  if (source_->loc.valid())
    os << " (line " << source_->loc.line << ")";
  // Only the file's own items are exported (spec §10); what it needs from imported modules is
  // private to the unit, so that two objects importing the same module link together.
  os << (exported_ ? "\nextern \"C\" " : "\nstatic ") << raw << " {\n";
  std::ostringstream body;
  os_ = &body;
  indent_ = 1;
  markUnusedParameters();
  struct Asserts : IRVisitor {
    bool found = false;
    void visit(const AssertStmt *) override { found = true; }
  } asserts;
  asserts.visitStmt(lowered_->body);
  forEach<Allocate>(lowered_->body, [&](const Allocate *a) { ++allocations_[a->buffer.get()]; });
  if (asserts.found) {
    line("int tdsl_failed = 0;");
    line("char tdsl_message[512] = \"\";");
  }
  hoistDeep_ = true; // statements print their expressions before themselves
  stmt(lowered_->body, false);
  hoistDeep_ = false;
  if (asserts.found)
    line("if (tdsl_failed) return tdsl_fail(\"%s\", tdsl_message);");
  line("return 0;");
  indent_ = 0;
  os_ = &os;
  // A body with deep expressions broken into temporaries stays as printed: clang::format
  // takes seconds on each of those statements. So does a body with many long nested index
  // expressions (a convolution's symbolic strides: 25 s for one function). Such a body is put
  // back after formatting (emitCpp).
  if ((hoisted_ > 0 || costlyToFormat(body.str())) && unformatted) {
    os << "  // "
       << (hoisted_ > 0 ? "Deep expressions, as temporaries tdsl_eN" : "Long expressions")
       << ": this body is not formatted.\n"
       << "  " << kUnformattedBody << "(" << unformatted->size() << ");\n";
    unformatted->push_back(body.str());
  } else {
    os << body.str();
  }
  os << "}\n";
  if (!exported_)
    return;
  os << "\n";
  emitDlpack(os, {"kDLCPU", "is not on the CPU"});
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
    for (const std::string &name : ir::graphCallees(*g)) {
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

namespace {

/// The vector prelude and `typedef tdsl_vector<float, 32>::type tdsl_f32x8;` for each vector
/// type the lowered functions compute on, in a fixed order.
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
#define TDSL_NOTE(NAME)                                                                            \
  void visit(const NAME *op) override {                                                            \
    if (op->type.isVector())                                                                       \
      types->emplace(vectorTypeName(op->type), op->type);                                          \
    IRVisitor::visit(op);                                                                          \
  }
        // clang-format off
        TDSL_NOTE(Add) TDSL_NOTE(Sub) TDSL_NOTE(Mul) TDSL_NOTE(Div) TDSL_NOTE(Min)
        TDSL_NOTE(Max) TDSL_NOTE(Neg) TDSL_NOTE(Cast) TDSL_NOTE(BufferLoad) TDSL_NOTE(Broadcast)
        TDSL_NOTE(Call)
        // clang-format on
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
    out += "typedef tdsl_vector<" + storageType(t.element()) + ", " +
           std::to_string(t.lanes() * t.element().storageBytes()) + ">::type " + name + ";\n";
  return out.empty() ? out : kVectorPrelude + out;
}

} // namespace

namespace {

/// `"…"` for a C string literal and, inside it, an assembler string: `\` and `"` escaped for the
/// assembler, then again for C.
std::string asmPathLiteral(const std::string &path) {
  auto escaped = [](const std::string &text, bool newlines) {
    std::string out;
    for (char c : text) {
      if (c == '\\' || c == '"')
        out += '\\';
      if (newlines && c == '\n') {
        out += "\\n";
        continue;
      }
      out += c;
    }
    return out;
  };
  return "\\\"" + escaped(escaped(path, false), true) + "\\\"";
}

/// The graph constants: each a read-only, 64-byte aligned array that a top-level asm assembles
/// from its file, declared for the functions with hidden visibility (a PC-relative address).
/// `symbols` gets each one's flat buffer and C name.
std::string constantDefinitions(const LoweredModule &module, const CppOptions &options,
                                std::vector<std::pair<Buffer, std::string>> &symbols) {
  if (module.constants.empty())
    return "";
  std::ostringstream os;
  os << "\n// Graph constants (spec §8), read-only and 64-byte aligned: the bytes of each are\n"
        "// assembled from its file by .incbin (a symbol local to the object).\n";
  for (size_t i = 0; i < module.constants.size(); ++i) {
    const LoweredConstant &c = module.constants[i];
    std::string symbol = "tdsl_const_" + std::to_string(i) + "_" + abi::cIdentifier(c.source.name);
    symbols.emplace_back(c.flat, symbol);
    uint64_t bytes = c.source.data ? c.source.data->size() : 0;
    ConstantFile file;
    if (auto it = options.constantFiles.find(c.source.name); it != options.constantFiles.end()) {
      file = it->second;
    } else if (!c.source.path.empty()) {
      std::error_code ec;
      uintmax_t size = std::filesystem::file_size(c.source.path, ec);
      if (!ec && size >= bytes)
        file = {c.source.path, static_cast<uint64_t>(size - bytes)};
    }
    os << "// " << c.source.name << ": " << c.flat.dtype().name() << "[";
    for (size_t d = 0; d < c.source.buffer.rank(); ++d)
      os << (d ? ", " : "") << toString(c.source.buffer.shape()[d]);
    os << "]";
    if (file.path.empty()) {
      os << "\n#error \"the data file of graph constant '" << abi::cIdentifier(c.source.name)
         << "' is missing\"\n";
      continue;
    }
    os << " (" << bytes << " bytes)\n";
    // The layout below is ours, not the formatter's: a long path would otherwise move
    // the first string onto its own line.
    os << "// clang-format off\n";
    os << "__asm__(\".pushsection .rodata." << symbol << ",\\\"a\\\",@progbits\\n\"\n"
       << "        \".balign 64\\n\"\n"
       << "        \"" << symbol << ":\\n\"\n";
    if (bytes > 0)
      os << "        \".incbin " << asmPathLiteral(file.path) << ", " << file.offset << ", "
         << bytes << "\\n\"\n";
    else
      os << "        \".byte 0\\n\"\n";
    os << "        \".popsection\");\n";
    os << "// clang-format on\n";
    os << "extern \"C\" __attribute__((visibility(\"hidden\"))) const "
       << storageType(c.flat.dtype()) << " " << symbol << "["
       << std::max<int64_t>(1, c.source.numElements()) << "];\n";
  }
  return os.str();
}

} // namespace

bool writeConstantFiles(const LoweredModule &module, const std::string &prefix,
                        std::map<std::string, ConstantFile> &files, std::string &error) {
  for (const LoweredConstant &c : module.constants) {
    if (!c.source.path.empty())
      continue;
    std::string path = prefix + abi::cIdentifier(c.source.name) + ".bin";
    std::ofstream out(path, std::ios::binary);
    if (c.source.data)
      out.write(reinterpret_cast<const char *>(c.source.data->data()),
                static_cast<std::streamsize>(c.source.data->size()));
    out.close();
    if (!out) {
      error = "cannot write the data file '" + path + "' of graph constant '" + c.source.name + "'";
      return false;
    }
    std::error_code ec;
    std::filesystem::path abs = std::filesystem::absolute(path, ec);
    files[c.source.name] = {(ec ? std::filesystem::path(path) : abs).lexically_normal().string(),
                            0};
  }
  return true;
}

TemporaryConstantFiles::~TemporaryConstantFiles() {
  if (dir_.empty())
    return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

bool TemporaryConstantFiles::write(const LoweredModule &module,
                                   std::map<std::string, ConstantFile> &files, std::string &error) {
  bool needed = false;
  for (const LoweredConstant &c : module.constants)
    needed |= c.source.path.empty();
  if (!needed)
    return true;
  std::error_code ec;
  std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  if (ec)
    base = "/tmp";
  std::string pattern = (base / "tdsl-constants-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (!mkdtemp(buffer.data())) {
    error = "cannot create a temporary folder for the data of graph constants";
    return false;
  }
  dir_ = buffer.data();
  return writeConstantFiles(module, dir_ + "/", files, error);
}

std::string emitCpp(const LoweredModule &module, const CppOptions &options) {
  std::vector<Func> sources = module.sources();
  std::vector<std::string> names = abi::cFunctionNames(module);
  std::map<std::string, std::string> callees;
  for (size_t i = 0; i < sources.size(); ++i)
    callees[sources[i].name()] = names[i];
  std::string externs = externDeclarations(module.module, sources, callees);
  for (const Func &f : module.lowered())
    if (contains<ProfileRegion>(f.as<PrimFunc>()->body)) {
      externs += "\n// tdsl-run --profile: the runner's timers (runtime/Profile.h)\n"
                 "extern \"C\" void tdsl_profile_begin(int32_t region);\n"
                 "extern \"C\" void tdsl_profile_end(int32_t region);\n";
      break;
    }
  std::ostringstream os;
  os << "// Generated by tdslc (C++ backend). Do not edit.\n"
     << (options.fpContract ? "" : kNoContraction) << kPrelude << vectorTypedefs(module.lowered())
     << (options.fpContract ? vectorMathHelpers(module.lowered()) : "") << externs;
  std::vector<std::pair<Buffer, std::string>> constants;
  os << constantDefinitions(module, options, constants);
  std::vector<std::string> unformatted;
  std::vector<std::string> *bodies = options.format ? &unformatted : nullptr;
  for (size_t i = 0; i < sources.size(); ++i) {
    const LoweredFunc &f = module.funcs[i];
    os << "\n";
    FunctionEmitter emitter(f.signature.as<PrimFunc>(), f.lowered.as<PrimFunc>(), names[i],
                            f.isGraph() ? &callees : nullptr, f.isGraph(), f.exported, &constants);
    // --ffp-contract=off: libm's results bit for bit (spec §11), lane by lane.
    emitter.vectorMath = options.fpContract;
    emitter.emit(os, bodies);
  }
  if (!options.format)
    return os.str();
  return restoreBodies(formatCpp(os.str(), "tdsl.cpp"), unformatted);
}

std::string emitHeader(const LoweredModule &module, const CppOptions &options) {
  std::vector<std::string> names = abi::cFunctionNames(module);
  std::ostringstream os;
  const std::string &guard = options.headerGuard;
  os << "/* Generated by tdslc. Do not edit. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <stdint.h>\n\n#include <dlpack/dlpack.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (size_t i = 0; i < module.funcs.size(); ++i) {
    const LoweredFunc &f = module.funcs[i];
    if (!f.exported)
      continue; // private to the object (spec §10)
    FunctionEmitter e(f.signature.as<PrimFunc>(), f.lowered.as<PrimFunc>(), names[i]);
    os << e.rawPrototype(true) << ";\n" << e.dlpackPrototype(true) << ";\n\n";
  }
  os << "const char *tdsl_last_error(void);\n\n"
     << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return options.format ? formatCpp(os.str(), "tdsl.h") : os.str();
}

} // namespace tdsl::cpp

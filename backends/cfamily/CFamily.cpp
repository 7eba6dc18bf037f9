//===- backends/cfamily/CFamily.cpp - Types, names and prelude text of the C family -------===//
#include "backends/cfamily/CFamily.h"

#include "backends/abi/Abi.h"
#include "ir/IRVisitor.h"

#include <algorithm>

namespace tdsl::cfamily {

using namespace ir;

std::string storageType(DType t) {
  switch (t.code()) {
#define TDSL_DTYPE(CODE, CTOR, NAME, BITS, STORAGE)                                                \
  case DType::Code::CODE:                                                                          \
    return #STORAGE;
#include "ir/DType.def"
  }
  return "?";
}

std::string valueType(DType t) {
  if (t.isBool())
    return "bool";
  if (isHalf(t))
    return "float";
  return storageType(t);
}

bool isHalf(DType t) { return t.code() == DType::Code::F16 || t.code() == DType::Code::BF16; }

std::pair<const char *, int> dlType(DType t) {
  auto [code, bits] = abi::dlpackType(t);
  return {abi::dlpackCodeName(code), bits};
}

const std::string &NameTable::define(const void *object, const std::string &hint) {
  auto it = names_.find(object);
  if (it != names_.end())
    return it->second;
  auto reserved = [&](const std::string &name) {
    return abi::isReservedWord(name) || (extraReserved_ && extraReserved_(name));
  };
  std::string base = abi::cIdentifier(hint);
  // The runtime's prefix: `tdsl_x` would stay reserved whatever suffix it got.
  if (base.rfind("tdsl_", 0) == 0)
    base = "v" + base;
  std::string name = base;
  for (int i = 1; taken_.count(name) || reserved(name); ++i)
    name = base + "_" + std::to_string(i);
  taken_.insert(name);
  return names_.emplace(object, name).first->second;
}

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

std::string negated(const std::string &text) {
  if (!text.empty() && text.front() == '-')
    return "(-(" + text + "))";
  return "(-" + text + ")";
}

int nestingDepth(const std::string &text) {
  int depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{')
      deepest = std::max(deepest, ++depth);
    else if (c == ')' || c == ']' || c == '}')
      --depth;
  }
  return deepest;
}

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

namespace {

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

/// `text` with each `$KEY` of `fills` replaced by its value.
std::string fillIn(std::string text,
                   const std::vector<std::pair<std::string, std::string>> &fills) {
  for (const auto &[key, value] : fills)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
      text.replace(at, key.size(), value);
      at += value.size();
    }
  return text;
}

std::string qualify(const std::string &text, const std::string &qualifier) {
  return fillIn(text, {{"$Q", qualifier}});
}

} // namespace

std::unordered_map<Var, std::string> nestComments(const Stmt &sourceBody) {
  NestComments nests;
  nests.visitStmt(sourceBody);
  return std::move(nests.comments);
}

// --- Prelude pieces ------------------------------------------------------------------------------

std::string preludeFail(const std::string &qualifier) {
  return qualify(R"(namespace {

// Sets the message of tdsl_last_error() and returns the failure status.
$Qstatic inline int32_t tdsl_fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(tdsl_generated::last_error, sizeof tdsl_generated::last_error, format, args);
  va_end(args);
  return 1;
}

)",
                 qualifier);
}

std::string preludeIntegerArithmetic(const std::string &qualifier) {
  return qualify(
      R"(// Wrapping integer arithmetic: computed on an unsigned type at least as wide as int.
template <typename T> struct tdsl_unsigned {
  using type = typename std::conditional<(sizeof(T) < 8), uint32_t, uint64_t>::type;
};
template <typename T> $Qstatic inline T tdsl_add(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T> $Qstatic inline T tdsl_sub(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T> $Qstatic inline T tdsl_mul(T a, T b) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename T> $Qstatic inline T tdsl_neg(T a) {
  using U = typename tdsl_unsigned<T>::type;
  return static_cast<T>(U(0) - static_cast<U>(a));
}
template <typename T> $Qstatic inline T tdsl_min(T a, T b) { return a < b ? a : b; }
template <typename T> $Qstatic inline T tdsl_max(T a, T b) { return a < b ? b : a; }
template <typename T> $Qstatic inline T tdsl_abs(T a) { return a < T(0) ? tdsl_neg(a) : a; }

// Floor division and modulo (x / 0 == 0, x % 0 == x, MIN / -1 wraps).
template <typename T> $Qstatic inline T tdsl_floordiv(T a, T b) {
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
template <typename T> $Qstatic inline T tdsl_floormod(T a, T b) {
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
)",
      qualifier);
}

std::string preludeHalfConversions(const HalfDialect &d) {
  return fillIn(
      R"(// f16 and bf16 are stored as bit patterns and computed in float; conversions to them round
// once, to nearest even.
$Qstatic inline uint16_t tdsl_half_encode(int expBits, int manBits, double value) {
  uint64_t bits;
  $MEMCPY(&bits, &value, sizeof bits);
  uint16_t sign = (bits >> 63) ? static_cast<uint16_t>(1u << (expBits + manBits)) : 0;
  uint16_t inf = static_cast<uint16_t>(((1u << expBits) - 1) << manBits);
  if (value != value)
    return static_cast<uint16_t>(sign | inf | (1u << (manBits - 1)));
  if ($ISINF)
    return static_cast<uint16_t>(sign | inf);
  int field = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mag = bits & ((uint64_t(1) << 52) - 1);
  int exp = field == 0 ? -1074 : field - 1075;
  if (field != 0)
    mag |= uint64_t(1) << 52;
  if (mag == 0)
    return sign;
$TOP  int bias = (1 << (expBits - 1)) - 1, emin = 1 - bias;
  int lead = $LEAD + exp;
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
$Qstatic inline uint16_t tdsl_f16_bits(double x) { return tdsl_half_encode(5, 10, x); }
$Qstatic inline uint16_t tdsl_bf16_bits(double x) { return tdsl_half_encode(8, 7, x); }
$Qstatic inline float tdsl_f16_value(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  float v = e == 0 ? $LDEXP(static_cast<float>(m), -24)
            : e == 31 ? (m ? $NAN : $INF)
                      : $LDEXP(static_cast<float>(m | 0x400), e - 25);
  return (h & 0x8000) ? -v : v;
}
$Qstatic inline float tdsl_bf16_value(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  $MEMCPY(&v, &bits, sizeof v);
  return v;
}
$Qstatic inline float tdsl_round_f16(double x) { return tdsl_f16_value(tdsl_f16_bits(x)); }
$Qstatic inline float tdsl_round_bf16(double x) { return tdsl_bf16_value(tdsl_bf16_bits(x)); }

)",
      {{"$Q", d.qualifier},
       {"$MEMCPY", d.memcpy},
       {"$ISINF", d.isInf},
       {"$TOP", d.findTop},
       {"$LEAD", d.leadingBit},
       {"$LDEXP", d.ldexp},
       {"$NAN", d.nan},
       {"$INF", d.inf}});
}

std::string preludeDlpackChecks(const std::string &qualifier) {
  return qualify(R"(// DLPack checks.
$Qstatic inline bool tdsl_is_compact(const DLTensor *t) {
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
$Qstatic inline void *tdsl_data(const DLTensor *t) {
  return static_cast<char *>(t->data) + t->byte_offset;
}

)",
                 qualifier);
}

std::string preludeEnd() {
  return R"(} // namespace

// Weak: every translation unit defines it, the program keeps one (all return the same buffer).
extern "C" __attribute__((weak)) const char *tdsl_last_error(void) {
  return tdsl_generated::last_error;
}
)";
}

} // namespace tdsl::cfamily

//===- frontend/Shapes.cpp --------------------------------------------------------------------===//
//
// Checked evaluation of dimensions and extents (spec §4): a constant expression is computed
// exactly, so that a division by zero, an i64 overflow, a negative dimension or an element count
// past i64 is reported at its position instead of wrapping (or being undefined behaviour in the
// compiler itself).

#include "frontend/SemaInternal.h"

#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"

namespace tdsl::sema {

using namespace ir;

namespace {

int64_t floorDivExact(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

ConstResult value(int64_t v) {
  ConstResult r;
  r.kind = ConstResult::Value;
  r.value = v;
  return r;
}

ConstResult failure(ConstResult::Kind k, SourceLoc at) {
  ConstResult r;
  r.kind = k;
  r.at = at;
  return r;
}

/// `v` as a value of integer type `t` (two's complement truncation for the narrower types).
int64_t normalise(DType t, int64_t v) { return asConstInt(IntImm::make(t, v)).value(); }

/// a + b, a - b or a * b (`op`), or nullopt where the result overflows i64.
std::optional<int64_t> checkedArith(char op, int64_t a, int64_t b) {
  int64_t r;
  bool overflow = op == '+'   ? __builtin_add_overflow(a, b, &r)
                  : op == '-' ? __builtin_sub_overflow(a, b, &r)
                              : __builtin_mul_overflow(a, b, &r);
  if (overflow)
    return std::nullopt;
  return r;
}

} // namespace

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) { return checkedArith('+', a, b); }
std::optional<int64_t> checkedSub(int64_t a, int64_t b) { return checkedArith('-', a, b); }
std::optional<int64_t> checkedMul(int64_t a, int64_t b) { return checkedArith('*', a, b); }

std::optional<int64_t> checkedFloorDiv(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return std::nullopt;
  return floorDivExact(a, b);
}

std::optional<int64_t> checkedFloorMod(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  if (b == -1)
    return 0;
  return a - floorDivExact(a, b) * b;
}

ConstResult evalConstant(const Expr &e) {
  if (!e.defined())
    return {};
  if (auto *i = e.as<IntImm>())
    return i->type.isInteger() || i->type.isBool() ? value(i->value) : ConstResult{};
  if (auto *c = e.as<Cast>()) {
    if (!c->type.isInteger() || !c->value.dtype().isInteger())
      return {};
    ConstResult v = evalConstant(c->value);
    if (v.kind == ConstResult::Value)
      v.value = normalise(c->type, v.value);
    return v;
  }
  if (auto *n = e.as<Neg>()) {
    ConstResult v = evalConstant(n->a);
    if (v.kind != ConstResult::Value || !n->type.isInteger())
      return v.kind == ConstResult::Value ? ConstResult{} : v;
    if (n->type == DType::i64()) {
      if (v.value == INT64_MIN)
        return failure(ConstResult::Overflow, n->loc);
      return value(-v.value);
    }
    return value(normalise(n->type, static_cast<int64_t>(0 - static_cast<uint64_t>(v.value))));
  }
  const Expr *lhs = nullptr, *rhs = nullptr;
  switch (e.kind()) {
#define TDSL_OPERANDS(NAME)                                                                        \
  case ExprKind::NAME:                                                                             \
    lhs = &e.as<NAME>()->a, rhs = &e.as<NAME>()->b;                                                \
    break;
    TDSL_FOR_EACH_ARITH_BINARY_NODE(TDSL_OPERANDS)
#undef TDSL_OPERANDS
  default:
    break;
  }
  if (!lhs || !e.dtype().isInteger())
    return {};
  // Both sides first: a division by a constant zero is an error whatever the dividend is.
  ConstResult a = evalConstant(*lhs), b = evalConstant(*rhs);
  for (const ConstResult *r : {&a, &b})
    if (r->kind == ConstResult::DivByZero || r->kind == ConstResult::Overflow)
      return *r;
  bool isDiv = e.as<Div>() || e.as<Mod>();
  if (isDiv && b.kind == ConstResult::Value && b.value == 0)
    return failure(ConstResult::DivByZero, e->loc);
  if (a.kind != ConstResult::Value || b.kind != ConstResult::Value)
    return {};
  DType t = e.dtype();
  bool wide = t == DType::i64();
  auto wrap = [&](uint64_t bits) { return value(normalise(t, static_cast<int64_t>(bits))); };
  uint64_t ua = static_cast<uint64_t>(a.value), ub = static_cast<uint64_t>(b.value);
  std::optional<int64_t> r;
  if (e.as<Add>()) {
    if (!wide)
      return wrap(ua + ub);
    r = checkedAdd(a.value, b.value);
  } else if (e.as<Sub>()) {
    if (!wide)
      return wrap(ua - ub);
    r = checkedSub(a.value, b.value);
  } else if (e.as<Mul>()) {
    if (!wide)
      return wrap(ua * ub);
    r = checkedMul(a.value, b.value);
  } else if (e.as<Div>()) {
    if (t.isUInt())
      return wrap(ua / ub);
    r = checkedFloorDiv(a.value, b.value);
    if (r && !wide)
      return value(normalise(t, *r));
  } else if (e.as<Mod>()) {
    if (t.isUInt())
      return wrap(ua % ub);
    r = checkedFloorMod(a.value, b.value);
  } else if (e.as<Min>()) {
    r = t.isUInt() ? static_cast<int64_t>(std::min(ua, ub)) : std::min(a.value, b.value);
  } else {
    r = t.isUInt() ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a.value, b.value);
  }
  if (!r)
    return failure(ConstResult::Overflow, e->loc);
  return value(*r);
}

bool checkExtent(const Expr &e, SourceRange at, const std::string &what, DiagnosticEngine &diags,
                 const std::string &tail) {
  ConstResult r = evalConstant(e);
  SourceRange where = r.at.valid() ? SourceRange(r.at) : at;
  switch (r.kind) {
  case ConstResult::DivByZero:
    diags.error(where, what + " divides by zero" + tail);
    return false;
  case ConstResult::Overflow:
    diags.error(where, what + " overflows i64" + tail);
    return false;
  case ConstResult::Value:
    if (r.value < 0) {
      diags.error(at, what + " is negative (" + std::to_string(r.value) + ")" + tail);
      return false;
    }
    return true;
  case ConstResult::NotConstant:
    return true;
  }
  return true;
}

bool checkElementCount(DType t, const std::vector<Expr> &shape, SourceRange at,
                       const std::string &what, DiagnosticEngine &diags, const std::string &tail) {
  int64_t count = 1;
  bool overflow = false;
  for (const Expr &d : shape) {
    ConstResult r = evalConstant(d);
    if (r.kind != ConstResult::Value || r.value < 0)
      return true; // symbolic (or reported already)
    if (r.value == 0)
      return true; // no element, whatever the other dimensions are
    if (std::optional<int64_t> n = checkedMul(count, r.value))
      count = *n;
    else
      overflow = true;
  }
  std::string type = t.name() + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    type += (i ? ", " : "") + toString(shape[i]);
  type += "]";
  if (overflow) {
    diags.error(at, what + " of type " + type + " has more elements than i64 can count" + tail);
    return false;
  }
  // Byte offsets are i64 in compiled code (spec §10): the size in bytes must fit too.
  int64_t bytes = std::max<int64_t>(1, t.storageBytes());
  if (!checkedMul(count, bytes)) {
    diags.error(at, what + " of type " + type + " has " + std::to_string(count) + " elements of " +
                        std::to_string(bytes) + " bytes, more bytes than i64 can address" + tail);
    return false;
  }
  return true;
}

} // namespace tdsl::sema

//===- backends/cfamily/FunctionEmitterBase.cpp - One function's scalar code and ABI entries -===//
#include "backends/cfamily/CFamily.h"

#include "ir/Contains.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "runtime/Float16.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

namespace tdsl::cfamily {

using namespace ir;

// --- Prototypes ----------------------------------------------------------------------------------

std::string FunctionEmitterBase::rawPrototype(bool forHeader) {
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

std::string FunctionEmitterBase::dlpackPrototype(bool forHeader) {
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

// --- Expressions ---------------------------------------------------------------------------------

std::string FunctionEmitterBase::intLiteral(DType t, int64_t v) {
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

std::string FunctionEmitterBase::floatLiteral(DType t, double v) {
  bool isF64 = t.code() == DType::Code::F64;
  if (std::isnan(v))
    return nonFinite(isF64, true);
  if (std::isinf(v)) {
    std::string inf = nonFinite(isF64, false);
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
std::string FunctionEmitterBase::roundHalf(DType t, const std::string &text) {
  if (t.code() == DType::Code::F16)
    return "tdsl_round_f16(" + text + ")";
  if (t.code() == DType::Code::BF16)
    return "tdsl_round_bf16(" + text + ")";
  return text;
}

void FunctionEmitterBase::setVarBounds(const Var &v, Bounds b) {
  varBounds_[v] = b;
  boundsCache_.clear();
}

Bounds FunctionEmitterBase::bounds(const Expr &e) {
  auto it = boundsCache_.find(e.get());
  if (it != boundsCache_.end())
    return it->second.second;
  Bounds b = computeBounds(e);
  boundsCache_[e.get()] = {e, b};
  return b;
}

Bounds FunctionEmitterBase::computeBounds(const Expr &e) {
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
    if (!r.lo) { // A lower bound alone still proves non-negativity (bounds are cached).
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

std::string FunctionEmitterBase::binary(const Expr &e, ExprKind kind, const Expr &a,
                                        const Expr &b) {
  DType t = e.dtype();
  DType operand = a.dtype();
  std::string x = expr(a), y;
  bool shortCircuit = kind == ExprKind::And || kind == ExprKind::Or;
  noHoist_ += shortCircuit; // the right operand runs only on a condition
  y = expr(b);
  noHoist_ -= shortCircuit;
  // The left operand without its parentheses when it has the same precedence as this
  // operator, which is left-associative: `a + b + c` rather than `((a + b) + c)` (a 300-term
  // sum would nest deeper than compilers allow). Only plain infix operands have them.
  auto group = [](ExprKind k) {
    return k == ExprKind::Add || k == ExprKind::Sub                         ? 1
           : k == ExprKind::Mul || k == ExprKind::Div || k == ExprKind::Mod ? 2
           : k == ExprKind::And                                             ? 3
           : k == ExprKind::Or                                              ? 4
                                                                            : 0;
  };
  bool flatten = group(kind) != 0 && group(kind) == group(a.kind()) && !isHalf(t) &&
                 !(t.isFloat() && (kind == ExprKind::Mod || a.kind() == ExprKind::Mod));
  auto infix = [&](const char *op) {
    return "(" + (flatten ? stripParens(x) : x) + " " + op + " " + y + ")";
  };
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
      text = mathFunction("fmin", t) + "(" + x + ", " + y + ")";
      break;
    case ExprKind::Max:
      text = mathFunction("fmax", t) + "(" + x + ", " + y + ")";
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

std::string FunctionEmitterBase::castExpr(DType to, const Expr &value) {
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
    return floatToInt(to, x);
  return "static_cast<" + storageType(to) + ">(" + x + ")";
}

std::string FunctionEmitterBase::callExpr(const Call *op) {
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
      return limit(t, isMax);
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
    text = "(" + one + " / " + mathFunction("sqrt", t) + "(" + args[0] + "))";
    break;
  case Intrinsic::Sigmoid:
    text = "(" + one + " / (" + one + " + " + mathFunction("exp", t) + "(" +
           stripParens(negated(args[0])) + ")))";
    break;
  case Intrinsic::Abs:
    text = mathFunction("fabs", t) + "(" + args[0] + ")";
    break;
  default: {
    text = mathFunction(intrinsicName(op->op), t) + "(";
    for (size_t i = 0; i < args.size(); ++i)
      text += (i ? ", " : "") + args[i];
    text += ")";
  }
  }
  return roundHalf(t, text);
}

std::string FunctionEmitterBase::expr(const Expr &e) {
  std::string text = exprText(e);
  if (!hoistDeep_ || noHoist_ > 0 || text.size() <= 2 * kMaxNesting ||
      nestingDepth(text) <= kMaxNesting)
    return text;
  std::string name = "tdsl_e" + std::to_string(hoisted_++);
  line("const " + valueType(e.dtype()) + " " + name + " = " + stripParens(text) + ";");
  return name;
}

std::string FunctionEmitterBase::exprText(const Expr &e) {
  TDSL_IR_CHECK(e.dtype().isScalar(),
                "expr prints scalar values (the C++ backend's vexpr prints vectors)");
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
    return (v.dtype().code() == DType::Code::F16 ? "tdsl_f16_value(" : "tdsl_bf16_value(") + name +
           ")";
  }
  case ExprKind::Cast:
    return castExpr(e.dtype(), e.as<Cast>()->value);
  case ExprKind::Neg: {
    const Expr &a = e.as<Neg>()->a;
    if (e.dtype().isFloat())
      return negated(expr(a));
    return "tdsl_neg<" + storageType(e.dtype()) + ">(" + expr(a) + ")";
  }
#define TDSL_CPP_BINARY(NAME)                                                                      \
  case ExprKind::NAME:                                                                             \
    return binary(e, ExprKind::NAME, e.as<NAME>()->a, e.as<NAME>()->b);
    TDSL_FOR_EACH_BINARY_NODE(TDSL_CPP_BINARY)
#undef TDSL_CPP_BINARY
  case ExprKind::Not:
    return "(!" + expr(e.as<Not>()->a) + ")";
  case ExprKind::Select: {
    const auto *op = e.as<Select>();
    std::string condition = expr(op->condition);
    ++noHoist_; // only one branch runs
    std::string text =
        "(" + condition + " ? " + expr(op->trueValue) + " : " + expr(op->falseValue) + ")";
    --noHoist_;
    return text;
  }
  case ExprKind::BufferLoad: {
    const auto *op = e.as<BufferLoad>();
    std::string access = elementAccess(op->buffer, op->indices[0]);
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
  TDSL_IR_CHECK(false, "a vector expression in scalar code");
}

// --- Pieces of statements ------------------------------------------------------------------------

std::string FunctionEmitterBase::prepare() {
  for (const FuncParam &p : lowered_->inputs)
    if (!p.isTensor() && (isHalf(p.scalar.dtype()) || p.scalar.dtype().isBool()))
      halfParams_.insert(p.scalar.get());
  std::string raw = rawPrototype(false);
  for (const Var &v : lowered_->shapeVars)
    setVarBounds(v, Bounds{std::optional<int64_t>(0), std::nullopt});
  comments_ = nestComments(source_->body);
  return raw;
}

void FunctionEmitterBase::markUnusedParameters() {
  std::set<const void *> used;
  forEachBufferRef(lowered_->body, [&](const Buffer &b) { used.insert(b.get()); });
  forEach<VarRef>(lowered_->body, [&](const VarRef *op) { used.insert(op->var.get()); });
  auto unused = [&](const void *p, const std::string &name) {
    if (!used.count(p))
      line("(void)" + name + ";");
  };
  for (const FuncParam &p : lowered_->inputs)
    unused(p.isTensor() ? static_cast<const void *>(p.buffer.get()) : p.scalar.get(),
           p.isTensor() ? names_(p.buffer) : names_(p.scalar));
  for (const Buffer &b : lowered_->outputs)
    unused(b.get(), names_(b));
  for (const Var &v : lowered_->shapeVars)
    unused(v.get(), names_(v));
}

void FunctionEmitterBase::recordLoopBounds(const For *op) {
  Bounds mb = bounds(op->min), eb = bounds(op->extent);
  Bounds vb;
  vb.lo = mb.lo;
  if (mb.hi && eb.hi)
    vb.hi = fit(__int128(*mb.hi) + *eb.hi - 1, DType::i64());
  setVarBounds(op->loopVar, vb);
}

std::string FunctionEmitterBase::forHeaderText(const For *op) {
  std::string v = names_(op->loopVar);
  std::string end = isConstInt(op->min, 0) ? expr(op->extent) : expr(op->min + op->extent);
  return "for (int64_t " + v + " = " + expr(op->min) + "; " + v + " < " + end + "; ++" + v + ") {";
}

void FunctionEmitterBase::forHeader(const For *op) {
  line(forHeaderText(op));
  recordLoopBounds(op);
}

void FunctionEmitterBase::nestComment(const For *op) {
  auto it = comments_.find(op->loopVar);
  if (it != comments_.end() && !it->second.empty())
    line("// " + it->second);
}

void FunctionEmitterBase::scalarStore(const BufferStore *op) {
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
  line(elementAccess(op->buffer, op->indices[0]) + " = " + value + ";");
}

void FunctionEmitterBase::letLine(const LetStmt *op) {
  setVarBounds(op->var, bounds(op->value));
  line("const " + valueType(op->var.dtype()) + " " + names_(op->var) + " = " + expr(op->value) +
       ";");
}

void FunctionEmitterBase::ifThenElse(const IfThenElse *op,
                                     const std::function<void(const Stmt &)> &body) {
  line("if (" + stripParens(expr(op->condition)) + ") {");
  ++indent_;
  body(op->thenCase);
  --indent_;
  if (op->elseCase.defined()) {
    line("} else {");
    ++indent_;
    body(op->elseCase);
    --indent_;
  }
  line("}");
}

bool FunctionEmitterBase::structuralStmt(const Stmt &s, bool inFor,
                                         const std::function<void(const Stmt &)> &recurse) {
  switch (s.kind()) {
  case StmtKind::For:
    if (!inFor)
      nestComment(s.as<For>());
    return false;
  case StmtKind::LetStmt:
    letLine(s.as<LetStmt>());
    recurse(s.as<LetStmt>()->body);
    return true;
  case StmtKind::IfThenElse:
    ifThenElse(s.as<IfThenElse>(), recurse);
    return true;
  case StmtKind::SeqStmt:
    for (const Stmt &child : s.as<SeqStmt>()->seq)
      recurse(child);
    return true;
  default:
    return false;
  }
}

// --- The DLPack entry ----------------------------------------------------------------------------

void FunctionEmitterBase::emitDlpack(std::ostream &os, const DlpackDevice &device) {
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
    line("if (" + name + "->device.device_type != " + device.type + ")");
    line("  return tdsl_fail(\"" + fn + ": argument " + q + " " + device.notOnIt +
         " (device type %d)\", static_cast<int>(" + name + "->device.device_type));");
    std::string codeOk = name + "->dtype.code == " + code;
    if (t.isBool())
      codeOk = "(" + codeOk + " || " + name + "->dtype.code == 6)";
    line("if (!(" + codeOk + " && " + name + "->dtype.bits == " + std::to_string(bits) + " && " +
         name + "->dtype.lanes == 1))");
    line("  return tdsl_fail(\"" + fn + ": argument " + q + " should have dtype " + t.name() +
         ", got code %d bits %d lanes %d\", " + name + "->dtype.code, " + name + "->dtype.bits, " +
         name + "->dtype.lanes);");
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
      line("  return tdsl_fail(\"" + fn + ": dimension " + std::to_string(d) + " of argument " + q +
           " is %lld but " + ref->var.name() + " is %lld\", static_cast<long long>(" + dim +
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

} // namespace tdsl::cfamily

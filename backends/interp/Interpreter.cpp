//===- backends/interp/Interpreter.cpp - The reference interpreter ------------------------===//
//
// A tree-walking evaluator over the IR. Run-time errors are thrown as RunError inside and
// turned into an error string at the public entry points.
//
//===--------------------------------------------------------------------------------------===//
#include "backends/interp/Interpreter.h"

#include "ir/Arith.h"
#include "ir/FloatArith.h"
#include "ir/IRPrinter.h"
#include "ir/Utils.h"
#include "runtime/Float16.h"
#include "support/Join.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <ffi.h>
#include <limits>
#include <unordered_map>

namespace tdsl::interp {

using namespace ir;
using runtime::Scalar;
using runtime::Tensor;
using Code = DType::Code;

namespace {

struct RunError {
  std::string message;
  /// A variable had no value (describe(): a shape the given tensors do not determine yet).
  bool unbound = false;
};

/// The parameters of any kind of function, in call order: inputs, then outputs.
struct Signature {
  std::vector<Var> constVars;
  std::vector<FuncParam> inputs;
  std::vector<Buffer> outputs;
  size_t size() const { return inputs.size() + outputs.size(); }
  bool isTensor(size_t k) const { return k >= inputs.size() || inputs[k].isTensor(); }
  const Buffer &buffer(size_t k) const {
    return k < inputs.size() ? inputs[k].buffer : outputs[k - inputs.size()];
  }
  std::string name(size_t k) const {
    return k < inputs.size() ? inputs[k].name() : outputs[k - inputs.size()].name();
  }
  const char *role(size_t k) const { return k < inputs.size() ? "input" : "output"; }
};

Signature signatureOf(const Func &func) {
  if (const auto *p = func.as<PrimFunc>())
    return {p->constVars, p->inputs, p->outputs};
  if (const auto *g = func.as<GraphFunc>())
    return {g->constVars, g->inputs, g->results};
  const auto *x = func.as<ExternFunc>();
  return {{}, x->inputs, x->outputs};
}

/// One argument of a call: a tensor, a scalar, or neither (not given yet).
struct Arg {
  Tensor *tensor = nullptr;
  const Scalar *scalar = nullptr;
  bool present() const { return tensor || scalar; }
};

/// The state of one function activation.
struct Frame {
  const std::string *funcName = nullptr;
  const std::string *blockName = nullptr;
  std::unordered_map<const VarNode *, Scalar> vars;
  std::unordered_map<const BufferNode *, Tensor *> buffers;
};

std::string quoted(const std::string &s) { return "'" + s + "'"; }

/// "f32[M, 4]": a buffer's declared type.
std::string declaredType(const Buffer &buffer) {
  return buffer.dtype().name() + "[" +
         join(buffer.shape(), ", ", [](const Expr &d) { return toString(d); }) + "]";
}

std::string shapeString(const std::vector<int64_t> &shape) {
  return "[" + join(shape, ", ", [](int64_t n) { return std::to_string(n); }) + "]";
}

[[noreturn]] void fail(const Frame &frame, const std::string &message) {
  std::string where;
  if (frame.blockName)
    where = " (in block " + quoted(*frame.blockName) + " of " + quoted(*frame.funcName) + ")";
  else if (frame.funcName)
    where = " (in " + quoted(*frame.funcName) + ")";
  throw RunError{message + where};
}

bool isTrue(const Scalar &s) { return s.i != 0; }

// The interpreter's failures, out of line: eval builds no message in its own frame.
[[noreturn, gnu::noinline, gnu::cold]] void failNoValue(const Frame &frame, const Var &var) {
  try {
    fail(frame, "variable " + quoted(var.name()) + " has no value");
  } catch (RunError &e) {
    e.unbound = true;
    throw;
  }
}
[[noreturn, gnu::noinline, gnu::cold]] void failUnsupportedType(const Frame &frame, DType t) {
  fail(frame, "vector expressions (" + t.name() + ") are not supported by the interpreter");
}
[[noreturn, gnu::noinline, gnu::cold]] void failUnsupportedNode(const Frame &frame, ExprKind kind) {
  fail(frame, std::string(kindName(kind)) + " is not supported by the interpreter");
}

bool isComparison(ExprKind kind) {
  switch (kind) {
#define TDSL_INTERP_CASE(NAME) case ExprKind::NAME:
    TDSL_FOR_EACH_CMP_NODE(TDSL_INTERP_CASE)
#undef TDSL_INTERP_CASE
    return true;
  default:
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Scalar semantics (ir/IR.h, spec §11)
// ---------------------------------------------------------------------------------------------

Scalar intScalar(DType t, int64_t normalised) { return Scalar{t, normalised, 0}; }
Scalar floatScalar(DType t, double value) { return Scalar{t, 0, value}; }

/// Floor division and modulo on normalised integers of `t`. x / 0 == 0 and x % 0 == x.
int64_t intDivMod(ExprKind kind, DType t, int64_t a, int64_t b) {
  bool isDiv = kind == ExprKind::Div;
  if (b == 0)
    return isDiv ? 0 : a;
  if (t.isUInt()) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    return runtime::normaliseInt(t, isDiv ? ua / ub : ua % ub);
  }
  return runtime::normaliseInt(t, static_cast<uint64_t>(isDiv ? floorDiv(a, b) : floorMod(a, b)));
}

int64_t intBinary(ExprKind kind, DType t, int64_t a, int64_t b) {
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool less = t.isUInt() ? ua < ub : a < b;
  switch (kind) {
  case ExprKind::Add:
    return runtime::normaliseInt(t, ua + ub);
  case ExprKind::Sub:
    return runtime::normaliseInt(t, ua - ub);
  case ExprKind::Mul:
    return runtime::normaliseInt(t, ua * ub);
  case ExprKind::Div:
  case ExprKind::Mod:
    return intDivMod(kind, t, a, b);
  case ExprKind::Min:
    return less ? a : b;
  case ExprKind::Max:
    return less ? b : a;
  default:
    TDSL_IR_CHECK(false, "not an arithmetic node");
  }
}

Scalar arithmetic(ExprKind kind, DType t, const Scalar &a, const Scalar &b) {
  if (!t.isFloat())
    return intScalar(t, intBinary(kind, t, a.i, b.i));
  if (t.code() == Code::F64)
    return floatScalar(t, floatBinary<double>(kind, a.f, b.f));
  // f32, and f16/bf16 computed in f32 and rounded back.
  float r = floatBinary<float>(kind, static_cast<float>(a.f), static_cast<float>(b.f));
  return floatScalar(t, runtime::roundToFloat(t, r));
}

Scalar compare(ExprKind kind, const Scalar &a, const Scalar &b) {
  DType t = a.dtype;
  int order; // -1, 0, 1; or 2 for unordered (a NaN)
  if (t.isFloat()) {
    order = a.f < b.f ? -1 : a.f > b.f ? 1 : a.f == b.f ? 0 : 2;
  } else if (t.isUInt()) {
    uint64_t x = static_cast<uint64_t>(a.i), y = static_cast<uint64_t>(b.i);
    order = x < y ? -1 : x > y ? 1 : 0;
  } else {
    order = a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  }
  bool r = false;
  switch (kind) {
  case ExprKind::EQ:
    r = order == 0;
    break;
  case ExprKind::NE:
    r = order != 0;
    break;
  case ExprKind::LT:
    r = order == -1;
    break;
  case ExprKind::LE:
    r = order == -1 || order == 0;
    break;
  case ExprKind::GT:
    r = order == 1;
    break;
  case ExprKind::GE:
    r = order == 1 || order == 0;
    break;
  default:
    TDSL_IR_CHECK(false, "not a comparison");
  }
  return Scalar::ofBool(r);
}

/// A float→int conversion: truncation toward zero, saturating at the dtype's range, NaN to 0.
int64_t floatToInt(DType to, double v) {
  if (std::isnan(v))
    return 0;
  double t = std::trunc(v);
  int bits = to.bits();
  if (to.isUInt()) {
    if (t <= 0)
      return 0;
    if (t >= std::ldexp(1.0, bits))
      return runtime::normaliseInt(to, ~uint64_t(0));
    return runtime::normaliseInt(to, static_cast<uint64_t>(t));
  }
  double limit = std::ldexp(1.0, bits - 1);
  if (t >= limit)
    return runtime::normaliseInt(to, (uint64_t(1) << (bits - 1)) - 1);
  if (t < -limit)
    return runtime::normaliseInt(to, uint64_t(1) << (bits - 1));
  return static_cast<int64_t>(t);
}

double intToFloat(DType to, DType from, int64_t v) {
  bool u64 = from.code() == Code::U64;
  uint64_t uv = static_cast<uint64_t>(v);
  switch (to.code()) {
  case Code::F16:
    return runtime::f16ToDouble(u64 ? runtime::f16FromUInt(uv) : runtime::f16FromInt(v));
  case Code::BF16:
    return runtime::bf16ToDouble(u64 ? runtime::bf16FromUInt(uv) : runtime::bf16FromInt(v));
  case Code::F32:
    return u64 ? static_cast<float>(uv) : static_cast<float>(v);
  default:
    return u64 ? static_cast<double>(uv) : static_cast<double>(v);
  }
}

Scalar castScalar(DType to, const Scalar &v) {
  DType from = v.dtype;
  if (to.isBool())
    return Scalar::ofBool(from.isFloat() ? v.f != 0 : v.i != 0);
  if (to.isFloat())
    return floatScalar(to,
                       from.isFloat() ? runtime::roundToFloat(to, v.f) : intToFloat(to, from, v.i));
  if (from.isFloat())
    return intScalar(to, floatToInt(to, v.f));
  return intScalar(to, runtime::normaliseInt(to, static_cast<uint64_t>(v.i)));
}

Scalar limitValue(DType t, bool max) {
  switch (t.code()) {
  case Code::Bool:
    return Scalar::ofBool(max);
  case Code::F16:
    return floatScalar(t, max ? 65504.0 : -65504.0);
  case Code::BF16: {
    double m = runtime::bf16ToDouble(0x7f7f);
    return floatScalar(t, max ? m : -m);
  }
  case Code::F32:
    return floatScalar(t, max ? FLT_MAX : -FLT_MAX);
  case Code::F64:
    return floatScalar(t, max ? DBL_MAX : -DBL_MAX);
  default:
    break;
  }
  int bits = t.bits();
  if (t.isUInt())
    return intScalar(t, max ? runtime::normaliseInt(t, ~uint64_t(0)) : 0);
  uint64_t maxBits = (uint64_t(1) << (bits - 1)) - 1;
  return intScalar(t, runtime::normaliseInt(t, max ? maxBits : maxBits + 1));
}

template <typename T> T mathIntrinsic(Intrinsic op, T x, T y, T z) {
  switch (op) {
  case Intrinsic::Exp:
    return std::exp(x);
  case Intrinsic::Exp2:
    return std::exp2(x);
  case Intrinsic::Log:
    return std::log(x);
  case Intrinsic::Log2:
    return std::log2(x);
  case Intrinsic::Sqrt:
    return std::sqrt(x);
  case Intrinsic::Rsqrt:
    return T(1) / std::sqrt(x);
  case Intrinsic::Tanh:
    return std::tanh(x);
  case Intrinsic::Sigmoid:
    return T(1) / (T(1) + std::exp(-x));
  case Intrinsic::Erf:
    return std::erf(x);
  case Intrinsic::Abs:
    return std::fabs(x);
  case Intrinsic::Sin:
    return std::sin(x);
  case Intrinsic::Cos:
    return std::cos(x);
  case Intrinsic::Floor:
    return std::floor(x);
  case Intrinsic::Ceil:
    return std::ceil(x);
  case Intrinsic::Round:
    return std::round(x); // half away from zero
  case Intrinsic::Trunc:
    return std::trunc(x);
  case Intrinsic::Pow:
    return std::pow(x, y);
  case Intrinsic::Fma:
    return std::fma(x, y, z);
  default:
    TDSL_IR_CHECK(false, "not an elementwise intrinsic");
  }
}

// ---------------------------------------------------------------------------------------------
// Extern calls through libffi
// ---------------------------------------------------------------------------------------------

/// Storage for one argument passed by value.
union FfiSlot {
  void *ptr;
  uint8_t u8;
  int8_t i8;
  int16_t i16;
  uint16_t u16;
  int32_t i32;
  uint32_t u32;
  int64_t i64;
  uint64_t u64;
  float f32;
  double f64;
};

/// The libffi type of a scalar passed by value, filling `slot` with `value`.
ffi_type *ffiScalar(const Scalar &value, FfiSlot &slot) {
  switch (value.dtype.code()) {
  case Code::Bool:
  case Code::U8:
    slot.u8 = static_cast<uint8_t>(value.i);
    return &ffi_type_uint8;
  case Code::I8:
    slot.i8 = static_cast<int8_t>(value.i);
    return &ffi_type_sint8;
  case Code::I16:
    slot.i16 = static_cast<int16_t>(value.i);
    return &ffi_type_sint16;
  case Code::U16:
    slot.u16 = static_cast<uint16_t>(value.i);
    return &ffi_type_uint16;
  case Code::F16:
    slot.u16 = runtime::f16FromDouble(value.f);
    return &ffi_type_uint16;
  case Code::BF16:
    slot.u16 = runtime::bf16FromDouble(value.f);
    return &ffi_type_uint16;
  case Code::I32:
    slot.i32 = static_cast<int32_t>(value.i);
    return &ffi_type_sint32;
  case Code::U32:
    slot.u32 = static_cast<uint32_t>(value.i);
    return &ffi_type_uint32;
  case Code::I64:
    slot.i64 = value.i;
    return &ffi_type_sint64;
  case Code::U64:
    slot.u64 = static_cast<uint64_t>(value.i);
    return &ffi_type_uint64;
  case Code::F32:
    slot.f32 = static_cast<float>(value.f);
    return &ffi_type_float;
  case Code::F64:
    slot.f64 = value.f;
    return &ffi_type_double;
  }
  return &ffi_type_void;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The interpreter
// ---------------------------------------------------------------------------------------------

struct Interpreter::Impl {
  const Module &module;
  std::function<std::string(const SourceLoc &)> locationText;
  std::vector<std::pair<std::string, void *>> libraries;
  /// The module's graph constants (spec §8), by their graph value; graphs read them.
  std::deque<Tensor> constants;
  std::unordered_map<const BufferNode *, Tensor *> constantOf;

  explicit Impl(const Module &module) : module(module) {
    for (const Constant &c : module.constants) {
      std::vector<int64_t> shape;
      for (const Expr &d : c.buffer.shape())
        shape.push_back(d.as<IntImm>()->value);
      constants.emplace_back(c.buffer.dtype(), shape);
      if (c.data && c.data->size() == constants.back().bytes.size())
        constants.back().bytes = *c.data;
      constantOf[c.buffer.get()] = &constants.back();
    }
  }
  ~Impl() {
    for (auto &lib : libraries)
      dlclose(lib.second);
  }

  // Calls.
  void bindArgs(Frame &frame, const Signature &sig, const std::vector<int64_t> &constArgs,
                const std::vector<Arg> &args, bool partial);
  std::optional<std::vector<int64_t>> tryShape(Frame &frame, const Buffer &buffer);
  std::vector<int64_t> evalShape(Frame &frame, const Buffer &buffer);
  std::optional<int64_t> evalExtent(Frame &frame, const Expr &e);
  void call(const Func &func, const std::vector<int64_t> &constArgs, std::vector<Arg> &args);
  void callGraph(Frame &frame, const GraphFunc &graph, std::vector<Arg> &args);
  void callExtern(Frame &frame, const ExternFunc &ext, std::vector<Arg> &args);
  void runBinding(Frame &frame, const GraphBinding &binding, std::deque<Tensor> &values);
  std::vector<int64_t> resolveConsts(const Signature &sig, const std::string &funcName,
                                     const Defines &consts);

  // Statements and expressions.
  void exec(Frame &frame, const Stmt &stmt);
  void execBlock(Frame &frame, const Block &block);
  void iterateShortForm(Frame &frame, const Block &block, size_t axis);
  void runBlockInstance(Frame &frame, const Block &block);
  Scalar eval(Frame &frame, const Expr &expr);
  Scalar evalIntrinsic(Frame &frame, const Call &call);
  int64_t evalInt(Frame &frame, const Expr &expr) { return eval(frame, expr).i; }
  Tensor &tensorOf(Frame &frame, const Buffer &buffer);
  int64_t flatIndex(Frame &frame, const Tensor &tensor, const Buffer &buffer, SourceLoc loc,
                    const std::vector<Expr> &indices, const char *access);
};

// ---- Binding arguments --------------------------------------------------------------------

void Interpreter::Impl::bindArgs(Frame &frame, const Signature &sig,
                                 const std::vector<int64_t> &constArgs,
                                 const std::vector<Arg> &args, bool partial) {
  TDSL_IR_CHECK(constArgs.size() == sig.constVars.size(), "wrong number of constants");
  TDSL_IR_CHECK(args.size() == sig.size(), "wrong number of arguments");
  for (size_t k = 0; k < constArgs.size(); ++k)
    frame.vars[sig.constVars[k].get()] = Scalar::ofInt(DType::i64(), constArgs[k]);

  // Scalars, and the shape variables that stand as a whole dimension.
  for (size_t k = 0; k < args.size(); ++k) {
    const Arg &arg = args[k];
    std::string what = std::string(sig.role(k)) + " " + quoted(sig.name(k));
    if (!arg.present()) {
      if (!partial)
        fail(frame, "missing " + what);
      continue;
    }
    if (!sig.isTensor(k)) {
      const Var &var = sig.inputs[k].scalar;
      if (!arg.scalar)
        fail(frame, what + " is a scalar of type " + var.dtype().name() + ", got a tensor");
      if (arg.scalar->dtype != var.dtype())
        fail(frame, what + " has type " + var.dtype().name() + ", got a value of type " +
                        arg.scalar->dtype.name());
      frame.vars[var.get()] = *arg.scalar;
      continue;
    }
    const Buffer &buffer = sig.buffer(k);
    if (!arg.tensor)
      fail(frame, what + " is a tensor of type " + buffer.dtype().name() + ", got a scalar");
    const Tensor &t = *arg.tensor;
    if (t.dtype != buffer.dtype() || t.shape.size() != buffer.rank())
      fail(frame, what + " has type " + declaredType(buffer) + ", got " + t.typeString());
    for (size_t d = 0; d < buffer.rank(); ++d)
      if (const auto *ref = buffer.shape()[d].as<VarRef>())
        frame.vars.try_emplace(ref->var.get(), Scalar::ofInt(DType::i64(), t.shape[d]));
  }

  // Every dimension of every tensor given must agree with the signature.
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].tensor)
      continue;
    const Buffer &buffer = sig.buffer(k);
    const Tensor &t = *args[k].tensor;
    for (size_t d = 0; d < buffer.rank(); ++d) {
      const Expr &dim = buffer.shape()[d];
      int64_t expected;
      try {
        expected = evalInt(frame, dim);
      } catch (const RunError &) {
        if (partial)
          continue;
        throw;
      }
      if (expected == t.shape[d])
        continue;
      std::string because = dim.as<IntImm>() ? "" : " (" + toString(dim) + ")";
      fail(frame, std::string(sig.role(k)) + " " + quoted(sig.name(k)) + " has shape " +
                      shapeString(t.shape) + " but its dimension " + std::to_string(d) +
                      " must be " + std::to_string(expected) + because);
    }
  }
}

std::optional<std::vector<int64_t>> Interpreter::Impl::tryShape(Frame &frame,
                                                                const Buffer &buffer) {
  try {
    return evalShape(frame, buffer);
  } catch (const RunError &e) {
    if (e.unbound)
      return std::nullopt; // a negative or overflowing extent is an error, not "unknown"
    throw;
  }
}

/// An extent's value, its + - * on i64 checked for overflow (spec §4: an extent that overflows
/// is an error, never a wrapped size); nullopt when it overflows.
std::optional<int64_t> Interpreter::Impl::evalExtent(Frame &frame, const Expr &e) {
  const Expr *a = nullptr, *b = nullptr;
  int op = 0;
  if (const auto *x = e.as<Add>())
    a = &x->a, b = &x->b, op = 1;
  else if (const auto *x = e.as<Sub>())
    a = &x->a, b = &x->b, op = 2;
  else if (const auto *x = e.as<Mul>())
    a = &x->a, b = &x->b, op = 3;
  if (!op || e.dtype() != DType::i64())
    return evalInt(frame, e);
  std::optional<int64_t> l = evalExtent(frame, *a), r = evalExtent(frame, *b);
  int64_t out = 0;
  if (!l || !r || (op == 1 && __builtin_add_overflow(*l, *r, &out)) ||
      (op == 2 && __builtin_sub_overflow(*l, *r, &out)) ||
      (op == 3 && __builtin_mul_overflow(*l, *r, &out)))
    return std::nullopt;
  return out;
}

std::vector<int64_t> Interpreter::Impl::evalShape(Frame &frame, const Buffer &buffer) {
  std::vector<int64_t> shape;
  int64_t bytes = (buffer.dtype().bits() + 7) / 8;
  for (const Expr &dim : buffer.shape()) {
    std::optional<int64_t> v = evalExtent(frame, dim);
    if (!v)
      fail(frame, "dimension " + toString(dim) + " of buffer " + quoted(buffer.name()) +
                      " overflows 64-bit integers");
    if (*v < 0)
      fail(frame, "buffer " + quoted(buffer.name()) + " has a negative dimension " + toString(dim) +
                      " = " + std::to_string(*v));
    if (__builtin_mul_overflow(bytes, *v, &bytes))
      fail(frame, "the size of buffer " + quoted(buffer.name()) + " overflows 64-bit integers");
    shape.push_back(*v);
  }
  return shape;
}

std::vector<int64_t> Interpreter::Impl::resolveConsts(const Signature &sig,
                                                      const std::string &funcName,
                                                      const Defines &consts) {
  std::vector<int64_t> values;
  for (const Var &var : sig.constVars) {
    // The plain -D NAME only: a generic function given FUNC.NAME was instantiated before.
    std::optional<int64_t> v = consts.lookup(var.name());
    if (!v)
      throw RunError{"function " + quoted(funcName) + " needs a value for its constant " +
                     quoted(var.name()) + " (give it with -D " + var.name() + "=VALUE)"};
    values.push_back(*v);
  }
  return values;
}

// ---- Calls ----------------------------------------------------------------------------------

void Interpreter::Impl::call(const Func &func, const std::vector<int64_t> &constArgs,
                             std::vector<Arg> &args) {
  Frame frame;
  frame.funcName = &func->name;
  Signature sig = signatureOf(func);
  bindArgs(frame, sig, constArgs, args, /*partial=*/false);
  if (const auto *graph = func.as<GraphFunc>())
    return callGraph(frame, *graph, args);
  if (const auto *ext = func.as<ExternFunc>())
    return callExtern(frame, *ext, args);

  const auto *prim = func.as<PrimFunc>();
  for (size_t k = 0; k < args.size(); ++k)
    if (args[k].tensor)
      frame.buffers[sig.buffer(k).get()] = args[k].tensor;
  std::deque<Tensor> allocs;
  for (const Buffer &buffer : prim->allocBuffers) {
    allocs.emplace_back(buffer.dtype(), evalShape(frame, buffer));
    frame.buffers[buffer.get()] = &allocs.back();
  }
  exec(frame, prim->body);
}

void Interpreter::Impl::callGraph(Frame &frame, const GraphFunc &graph, std::vector<Arg> &args) {
  // Constants are read-only values: callees take them as inputs, results are copied out.
  for (const auto &[buffer, tensor] : constantOf)
    frame.buffers[buffer] = tensor;
  for (size_t k = 0; k < graph.inputs.size(); ++k)
    if (graph.inputs[k].isTensor())
      frame.buffers[graph.inputs[k].buffer.get()] = args[k].tensor;
  std::deque<Tensor> values; // every value the graph computes
  for (const GraphItem &item : graph.body) {
    if (const auto *call = std::get_if<CallBinding>(&item))
      runBinding(frame, *call, values);
    else if (const auto *reshape = std::get_if<ReshapeBinding>(&item))
      runBinding(frame, *reshape, values);
    else
      for (const GraphBinding &binding : std::get<DataflowBlock>(item).bindings)
        runBinding(frame, binding, values);
  }
  for (size_t k = 0; k < graph.results.size(); ++k) {
    const Tensor &result = tensorOf(frame, graph.results[k]);
    Tensor &out = *args[graph.inputs.size() + k].tensor;
    if (result.shape != out.shape)
      fail(frame, "result " + quoted(graph.results[k].name()) + " has shape " +
                      shapeString(result.shape) + ", expected " + shapeString(out.shape));
    out.bytes = result.bytes;
  }
}

void Interpreter::Impl::runBinding(Frame &frame, const GraphBinding &binding,
                                   std::deque<Tensor> &values) {
  if (const auto *reshape = std::get_if<ReshapeBinding>(&binding)) {
    const Tensor &source = tensorOf(frame, reshape->source);
    std::vector<int64_t> shape = evalShape(frame, reshape->target);
    if (runtime::numElements(shape) != source.numElements())
      fail(frame, "reshape of " + quoted(reshape->source.name()) + " from " +
                      shapeString(source.shape) + " to " + shapeString(shape) +
                      " changes the number of elements");
    values.push_back(Tensor{source.dtype, shape});
    values.back().bytes = source.bytes;
    frame.buffers[reshape->target.get()] = &values.back();
    return;
  }

  const auto &site = std::get<CallBinding>(binding);
  Func callee = module.lookup(site.callee);
  if (!callee)
    fail(frame, "call of unknown function " + quoted(site.callee));
  Signature sig = signatureOf(callee);
  std::vector<int64_t> constArgs;
  for (const Expr &c : site.constArgs)
    constArgs.push_back(evalInt(frame, c));
  if (constArgs.size() != sig.constVars.size() || site.args.size() != sig.inputs.size())
    fail(frame, "call of " + quoted(site.callee) + " with the wrong number of arguments");

  // Inputs, then outputs allocated with the shapes the callee's signature gives them.
  std::deque<Scalar> scalars;
  std::vector<Arg> args;
  for (const GraphArg &a : site.args) {
    if (const auto *buffer = std::get_if<Buffer>(&a)) {
      args.push_back(Arg{&tensorOf(frame, *buffer), nullptr});
      continue;
    }
    scalars.push_back(eval(frame, std::get<Expr>(a)));
    args.push_back(Arg{nullptr, &scalars.back()});
  }
  {
    Frame shapes;
    shapes.funcName = &callee->name;
    std::vector<Arg> inputsOnly = args;
    inputsOnly.resize(sig.size());
    bindArgs(shapes, sig, constArgs, inputsOnly, /*partial=*/true);
    for (const Buffer &out : sig.outputs) {
      values.emplace_back(out.dtype(), evalShape(shapes, out));
      args.push_back(Arg{&values.back(), nullptr});
    }
  }
  call(callee, constArgs, args);
  for (size_t k = 0; k < site.targets.size() && k < sig.outputs.size(); ++k)
    frame.buffers[site.targets[k].get()] = args[sig.inputs.size() + k].tensor;
}

void Interpreter::Impl::callExtern(Frame &frame, const ExternFunc &ext, std::vector<Arg> &args) {
  void *symbol = nullptr, *library = nullptr;
  for (auto &lib : libraries) {
    if ((symbol = dlsym(lib.second, ext.symbol.c_str()))) {
      library = lib.second;
      break;
    }
  }
  if (!symbol)
    fail(frame, "extern function " + quoted(ext.name) + " needs the symbol " + quoted(ext.symbol) +
                    ", which no library given with --load defines");

  // The raw entry of spec §10: inputs, outputs, then shape variables as int64_t.
  size_t count = args.size() + ext.shapeVars.size();
  std::vector<FfiSlot> slots(count);
  std::vector<ffi_type *> types(count);
  std::vector<void *> values(count);
  for (size_t k = 0; k < count; ++k) {
    values[k] = &slots[k];
    if (k >= args.size()) {
      slots[k].i64 = frame.vars.at(ext.shapeVars[k - args.size()].get()).i;
      types[k] = &ffi_type_sint64;
    } else if (args[k].tensor) {
      slots[k].ptr = args[k].tensor->bytes.data();
      types[k] = &ffi_type_pointer;
    } else {
      types[k] = ffiScalar(*args[k].scalar, slots[k]);
    }
  }
  ffi_cif cif;
  if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, static_cast<unsigned>(count), &ffi_type_sint32,
                   types.data()) != FFI_OK)
    fail(frame, "cannot prepare the call of extern symbol " + quoted(ext.symbol));
  ffi_arg result = 0;
  ffi_call(&cif, reinterpret_cast<void (*)()>(symbol), &result, values.data());
  int32_t status = static_cast<int32_t>(result);
  if (status == 0)
    return;
  std::string message = "extern function " + quoted(ext.name) + " (symbol " + quoted(ext.symbol) +
                        ") failed with status " + std::to_string(status);
  using LastError = const char *(*)();
  if (auto lastError = reinterpret_cast<LastError>(dlsym(library, "tdsl_last_error")))
    if (const char *text = lastError(); text && *text)
      message += ": " + std::string(text);
  fail(frame, message);
}

// ---- Statements -----------------------------------------------------------------------------

void Interpreter::Impl::exec(Frame &frame, const Stmt &stmt) {
  switch (stmt.kind()) {
  case StmtKind::For: {
    const auto *loop = stmt.as<For>();
    int64_t min = evalInt(frame, loop->min), extent = evalInt(frame, loop->extent);
    Scalar &var = frame.vars[loop->loopVar.get()];
    for (int64_t i = 0; i < extent; ++i) {
      var = Scalar::ofInt(DType::i64(), min + i);
      exec(frame, loop->body);
    }
    return;
  }
  case StmtKind::Block:
    return execBlock(frame, *stmt.as<Block>());
  case StmtKind::BufferStore: {
    const auto *store = stmt.as<BufferStore>();
    Scalar value = eval(frame, store->value);
    Tensor &t = tensorOf(frame, store->buffer);
    int64_t index = flatIndex(frame, t, store->buffer, store->loc, store->indices, "write");
    if (value.dtype != t.dtype)
      fail(frame, "storing a " + value.dtype.name() + " value into " +
                      quoted(store->buffer.name()) + " of type " + t.dtype.name());
    t.store(index, value);
    return;
  }
  case StmtKind::LetStmt: {
    const auto *let = stmt.as<LetStmt>();
    frame.vars[let->var.get()] = eval(frame, let->value);
    return exec(frame, let->body);
  }
  case StmtKind::IfThenElse: {
    const auto *ite = stmt.as<IfThenElse>();
    if (isTrue(eval(frame, ite->condition)))
      return exec(frame, ite->thenCase);
    if (ite->elseCase.defined())
      exec(frame, ite->elseCase);
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &s : stmt.as<SeqStmt>()->seq)
      exec(frame, s);
    return;
  case StmtKind::Evaluate:
    eval(frame, stmt.as<Evaluate>()->value);
    return;
  case StmtKind::Allocate: {
    const auto *alloc = stmt.as<Allocate>();
    Tensor t(alloc->buffer.dtype(), evalShape(frame, alloc->buffer));
    frame.buffers[alloc->buffer.get()] = &t;
    exec(frame, alloc->body);
    frame.buffers.erase(alloc->buffer.get());
    return;
  }
  case StmtKind::AssertStmt: {
    // Lowered code only (--bounds-check): a failed check stops the run with its message.
    const auto *op = stmt.as<AssertStmt>();
    if (isTrue(eval(frame, op->condition)))
      return exec(frame, op->body);
    std::string message;
    size_t arg = 0;
    for (size_t i = 0; i < op->message.size(); ++i) {
      if (op->message.compare(i, 2, "{}") == 0 && arg < op->args.size()) {
        message += std::to_string(evalInt(frame, op->args[arg++]));
        ++i;
      } else {
        message += op->message[i];
      }
    }
    fail(frame, message);
  }
  case StmtKind::ProfileRegion: // timers of compiled code only: the interpreter runs the body
    return exec(frame, stmt.as<ProfileRegion>()->body);
  case StmtKind::BufferView:
  case StmtKind::FuncCall:
    // Lowered graphs are emitted by the backends; the interpreter runs the graph itself.
    fail(frame, std::string("the interpreter does not run lowered graph statements (") +
                    kindName(stmt.kind()) + ")");
  }
}

void Interpreter::Impl::execBlock(Frame &frame, const Block &block) {
  const std::string *outer = frame.blockName;
  frame.blockName = &block.name;
  bool bound = !block.iterVars.empty() && block.iterVars.front().binding.defined();
  if (bound) {
    for (const IterVar &iv : block.iterVars)
      frame.vars[iv.var.get()] = eval(frame, iv.binding);
    runBlockInstance(frame, block);
  } else {
    iterateShortForm(frame, block, 0);
  }
  frame.blockName = outer;
}

/// The short form: one loop per axis, outermost first, each from 0 to its extent.
void Interpreter::Impl::iterateShortForm(Frame &frame, const Block &block, size_t axis) {
  if (axis == block.iterVars.size())
    return runBlockInstance(frame, block);
  const IterVar &iv = block.iterVars[axis];
  int64_t extent = evalInt(frame, iv.extent);
  for (int64_t i = 0; i < extent; ++i) {
    frame.vars[iv.var.get()] = Scalar::ofInt(DType::i64(), i);
    iterateShortForm(frame, block, axis + 1);
  }
}

void Interpreter::Impl::runBlockInstance(Frame &frame, const Block &block) {
  if (!isTrue(eval(frame, block.predicate)))
    return;
  bool firstReductionStep = true;
  for (const IterVar &iv : block.iterVars) {
    int64_t value = frame.vars.at(iv.var.get()).i;
    int64_t extent = evalInt(frame, iv.extent);
    if (value < 0 || value >= extent)
      fail(frame, "axis " + quoted(iv.var.name()) + " = " + std::to_string(value) +
                      " is outside its domain [0, " + std::to_string(extent) + ")");
    if (iv.kind == IterKind::Reduce && value != 0)
      firstReductionStep = false;
  }
  // No allocation for the common block without buffers of its own (an empty std::deque
  // allocates; this runs once per block instance).
  std::vector<std::unique_ptr<Tensor>> allocs;
  for (const Buffer &buffer : block.allocBuffers) {
    allocs.push_back(std::make_unique<Tensor>(buffer.dtype(), evalShape(frame, buffer)));
    frame.buffers[buffer.get()] = allocs.back().get();
  }
  if (block.init.defined() && firstReductionStep)
    exec(frame, block.init);
  exec(frame, block.body);
  for (const Buffer &buffer : block.allocBuffers)
    frame.buffers.erase(buffer.get());
}

// ---- Expressions ----------------------------------------------------------------------------

Tensor &Interpreter::Impl::tensorOf(Frame &frame, const Buffer &buffer) {
  auto it = frame.buffers.find(buffer.get());
  if (it == frame.buffers.end())
    fail(frame, "buffer " + quoted(buffer.name()) + " is not allocated here");
  return *it->second;
}

int64_t Interpreter::Impl::flatIndex(Frame &frame, const Tensor &tensor, const Buffer &buffer,
                                     SourceLoc loc, const std::vector<Expr> &indices,
                                     const char *access) {
  if (indices.size() != tensor.shape.size())
    fail(frame, "buffer " + quoted(buffer.name()) + " of rank " +
                    std::to_string(tensor.shape.size()) + " accessed with " +
                    std::to_string(indices.size()) + " indices");
  bool inBounds = true;
  int64_t flat = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t i = evalInt(frame, indices[d]);
    inBounds = inBounds && i >= 0 && i < tensor.shape[d];
    flat = flat * tensor.shape[d] + i;
  }
  if (!inBounds) {
    // The point, for the message only (evaluated again: no allocation on every access).
    std::vector<int64_t> point;
    for (const Expr &index : indices)
      point.push_back(evalInt(frame, index));
    std::string at;
    if (loc.valid())
      at = " at " + (locationText ? locationText(loc)
                                  : "line " + std::to_string(loc.line) + ", column " +
                                        std::to_string(loc.col));
    fail(frame, std::string("out-of-bounds ") + access + " of " + quoted(buffer.name()) + " at " +
                    shapeString(point) + ": its shape is " + shapeString(tensor.shape) + at);
  }
  return flat;
}

Scalar Interpreter::Impl::eval(Frame &frame, const Expr &expr) {
  // The hottest function of the interpreter (and of the schedule harness, where ASan gives every
  // local of the frame a red zone): the binary nodes share two operand slots, and the messages
  // are built in cold functions.
  DType t = expr.dtype();
  if (t.isVector())
    failUnsupportedType(frame, t);
  switch (expr.kind()) {
  case ExprKind::IntImm:
    return intScalar(t, expr.as<IntImm>()->value);
  case ExprKind::FloatImm:
    return floatScalar(t, runtime::roundToFloat(t, expr.as<FloatImm>()->value));
  case ExprKind::VarRef: {
    const Var &var = expr.as<VarRef>()->var;
    auto it = frame.vars.find(var.get());
    if (it == frame.vars.end())
      failNoValue(frame, var);
    return it->second;
  }
  case ExprKind::Cast:
    return castScalar(t, eval(frame, expr.as<Cast>()->value));
  case ExprKind::Neg: {
    Scalar a = eval(frame, expr.as<Neg>()->a);
    if (t.isFloat())
      return floatScalar(t, -a.f);
    return intScalar(t, runtime::normaliseInt(t, 0 - static_cast<uint64_t>(a.i)));
  }
#define TDSL_INTERP_CASE(NAME) case ExprKind::NAME:
    TDSL_FOR_EACH_BINARY_NODE(TDSL_INTERP_CASE)
#undef TDSL_INTERP_CASE
    {
      // And and Or evaluate both operands (ir/IR.h).
      auto [first, second] = binaryOperands(expr);
      Scalar a = eval(frame, *first);
      Scalar b = eval(frame, *second);
      ExprKind kind = expr.kind();
      if (kind == ExprKind::And || kind == ExprKind::Or)
        return Scalar::ofBool(kind == ExprKind::And ? isTrue(a) && isTrue(b)
                                                    : isTrue(a) || isTrue(b));
      if (isComparison(kind))
        return compare(kind, a, b);
      return arithmetic(kind, t, a, b);
    }
  case ExprKind::Not:
    return Scalar::ofBool(!isTrue(eval(frame, expr.as<Not>()->a)));
  case ExprKind::Select: { // only the chosen branch is evaluated
    const auto *node = expr.as<Select>();
    return isTrue(eval(frame, node->condition)) ? eval(frame, node->trueValue)
                                                : eval(frame, node->falseValue);
  }
  case ExprKind::BufferLoad: {
    const auto *load = expr.as<BufferLoad>();
    const Tensor &tensor = tensorOf(frame, load->buffer);
    return tensor.load(flatIndex(frame, tensor, load->buffer, load->loc, load->indices, "read"));
  }
  case ExprKind::Call:
    return evalIntrinsic(frame, *expr.as<Call>());
  case ExprKind::Ramp:
  case ExprKind::Broadcast:
    break;
  }
  failUnsupportedNode(frame, expr.kind());
}

Scalar Interpreter::Impl::evalIntrinsic(Frame &frame, const Call &call) {
  DType t = call.type;
  if (call.op == Intrinsic::MinValue || call.op == Intrinsic::MaxValue)
    return limitValue(t, call.op == Intrinsic::MaxValue);
  Scalar args[3];
  for (size_t k = 0; k < call.args.size() && k < 3; ++k)
    args[k] = eval(frame, call.args[k]);

  if (!t.isFloat()) {
    switch (call.op) {
    case Intrinsic::Abs:
      if (t.isInt() && args[0].i < 0)
        return intScalar(t, runtime::normaliseInt(t, 0 - static_cast<uint64_t>(args[0].i)));
      return args[0];
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round:
    case Intrinsic::Trunc:
      return args[0];
    default:
      fail(frame, std::string("intrinsic '") + intrinsicName(call.op) + "' on " + t.name() +
                      " is not supported");
    }
  }
  if (t.code() == Code::F64)
    return floatScalar(t, mathIntrinsic<double>(call.op, args[0].f, args[1].f, args[2].f));
  float r = mathIntrinsic<float>(call.op, static_cast<float>(args[0].f),
                                 static_cast<float>(args[1].f), static_cast<float>(args[2].f));
  return floatScalar(t, runtime::roundToFloat(t, r));
}

// ---------------------------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------------------------

Interpreter::Interpreter(const Module &module) : impl_(std::make_unique<Impl>(module)) {}
Interpreter::~Interpreter() = default;

void Interpreter::setLocationText(std::function<std::string(const SourceLoc &)> locationText) {
  impl_->locationText = std::move(locationText);
}

bool Interpreter::loadLibrary(const std::string &path, std::string &error) {
  // A path without a slash would be searched in the system folders: make it relative.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    error = "cannot load " + quoted(path) + ": " + (why ? why : "unknown error");
    return false;
  }
  impl_->libraries.emplace_back(path, handle);
  return true;
}

namespace {
/// The arguments of `sig` found in `args`, in call order; absent ones are empty.
std::vector<Arg> argsByName(const Signature &sig, ArgMap &args) {
  std::vector<Arg> result(sig.size());
  for (size_t k = 0; k < sig.size(); ++k) {
    auto it = args.find(sig.name(k));
    if (it == args.end())
      continue;
    if (auto *t = std::get_if<Tensor>(&it->second))
      result[k].tensor = t;
    else
      result[k].scalar = &std::get<Scalar>(it->second);
  }
  return result;
}
} // namespace

std::optional<std::vector<ParamInfo>> Interpreter::describe(const Func &func, const ArgMap &given,
                                                            const Defines &consts,
                                                            std::string &error) {
  Signature sig = signatureOf(func);
  ArgMap copy = given;
  try {
    std::vector<int64_t> constArgs = impl_->resolveConsts(sig, func.name(), consts);
    Frame frame;
    frame.funcName = &func->name;
    impl_->bindArgs(frame, sig, constArgs, argsByName(sig, copy), /*partial=*/true);
    std::vector<ParamInfo> params;
    for (size_t k = 0; k < sig.size(); ++k) {
      ParamInfo p;
      p.name = sig.name(k);
      p.isOutput = k >= sig.inputs.size();
      p.isTensor = sig.isTensor(k);
      if (p.isTensor) {
        p.dtype = sig.buffer(k).dtype();
        p.shape = impl_->tryShape(frame, sig.buffer(k));
      } else {
        p.dtype = sig.inputs[k].scalar.dtype();
      }
      params.push_back(std::move(p));
    }
    return params;
  } catch (const RunError &e) {
    error = e.message;
    return std::nullopt;
  }
}

bool Interpreter::run(const Func &func, ArgMap &args, const Defines &consts, std::string &error) {
  Signature sig = signatureOf(func);
  try {
    std::vector<int64_t> constArgs = impl_->resolveConsts(sig, func.name(), consts);
    // Outputs not given start zero-filled, with the shapes the inputs determine.
    std::vector<Arg> given = argsByName(sig, args);
    Frame frame;
    frame.funcName = &func->name;
    impl_->bindArgs(frame, sig, constArgs, given, /*partial=*/true);
    for (size_t k = sig.inputs.size(); k < sig.size(); ++k) {
      if (given[k].present())
        continue;
      const Buffer &out = sig.buffer(k);
      args.emplace(out.name(), Tensor(out.dtype(), impl_->evalShape(frame, out)));
    }
    std::vector<Arg> all = argsByName(sig, args);
    impl_->call(func, constArgs, all);
    return true;
  } catch (const RunError &e) {
    error = e.message;
    return false;
  }
}

} // namespace tdsl::interp

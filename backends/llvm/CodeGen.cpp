//===- backends/llvm/CodeGen.cpp - Lowered statements and expressions to LLVM IR ----------===//
#include "backends/llvm/CodeGenInternal.h"

#include "backends/abi/Abi.h"
#include "ir/Arith.h"
#include "ir/Contains.h"
#include "ir/IRVisitor.h"
#include "ir/StructuralEqual.h"
#include "runtime/Float16.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include <limits>
#include <set>

namespace tdsl::llvmgen {

using namespace ir;
using llvm::BasicBlock;
using llvm::Value;

namespace detail {

namespace {

/// Allocations up to this size with a constant extent live on the stack (as in the C++
/// backend); larger or symbolic ones are malloc'ed.
constexpr int64_t kStackBytes = 16 * 1024;
/// Heap allocations (aligned_alloc) and stack ones of at least this many bytes are aligned
/// to it: a cache line, and enough for any vector type (graph arenas hold every dtype).
constexpr int64_t kHeapAlign = 64;

bool isHalf(DType t) { return t.code() == DType::Code::F16 || t.code() == DType::Code::BF16; }

/// The variables and buffers a statement uses but does not define, in order of first use.
struct FreeNames : IRVisitor {
  std::vector<const void *> vars, buffers;
  std::set<const void *> seenVars, seenBuffers, defined;

  void useVar(const Var &v) {
    if (!defined.count(v.get()) && seenVars.insert(v.get()).second)
      vars.push_back(v.get());
  }
  void useBuffer(const Buffer &b) {
    if (!defined.count(b.get()) && seenBuffers.insert(b.get()).second)
      buffers.push_back(b.get());
  }
  void visit(const VarRef *op) override { useVar(op->var); }
  void visit(const BufferLoad *op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    useBuffer(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const For *op) override {
    defined.insert(op->loopVar.get());
    IRVisitor::visit(op);
  }
  void visit(const LetStmt *op) override {
    visitExpr(op->value);
    defined.insert(op->var.get());
    visitStmt(op->body);
  }
  void visit(const Allocate *op) override {
    for (const Expr &e : op->buffer.shape())
      visitExpr(e);
    defined.insert(op->buffer.get());
    visitStmt(op->body);
  }
};

} // namespace

// ---------------------------------------------------------------------------------------------
// Module state: types and helpers
// ---------------------------------------------------------------------------------------------

llvm::Type *ModuleState::valueType(DType t) {
  llvm::Type *scalar = nullptr;
  switch (t.code()) {
  case DType::Code::Bool:
    scalar = llvm::Type::getInt1Ty(context);
    break;
  case DType::Code::F16:
  case DType::Code::BF16:
  case DType::Code::F32:
    scalar = llvm::Type::getFloatTy(context);
    break;
  case DType::Code::F64:
    scalar = llvm::Type::getDoubleTy(context);
    break;
  default:
    scalar = llvm::Type::getIntNTy(context, static_cast<unsigned>(t.bits()));
  }
  return t.isVector() ? llvm::FixedVectorType::get(scalar, t.lanes()) : scalar;
}

llvm::Type *ModuleState::storageType(DType t) {
  llvm::Type *scalar = nullptr;
  if (t.isBool())
    scalar = llvm::Type::getInt8Ty(context);
  else if (isHalf(t))
    scalar = llvm::Type::getInt16Ty(context);
  else
    return valueType(t);
  return t.isVector() ? llvm::FixedVectorType::get(scalar, t.lanes()) : scalar;
}

llvm::FunctionCallee ModuleState::libFunction(const std::string &name) {
  llvm::Type *i32 = llvm::Type::getInt32Ty(context), *i64 = llvm::Type::getInt64Ty(context);
  llvm::Type *ptr = llvm::PointerType::getUnqual(context), *voidTy = llvm::Type::getVoidTy(context);
  llvm::FunctionType *type = nullptr;
  if (name == "malloc")
    type = llvm::FunctionType::get(ptr, {i64}, false);
  else if (name == "aligned_alloc")
    type = llvm::FunctionType::get(ptr, {i64, i64}, false);
  else if (name == "free")
    type = llvm::FunctionType::get(voidTy, {ptr}, false);
  else if (name == "abort")
    type = llvm::FunctionType::get(voidTy, {}, false);
  else if (name == "snprintf")
    type = llvm::FunctionType::get(i32, {ptr, i64, ptr}, true);
  else if (name == "omp_get_thread_num" || name == "omp_get_num_threads")
    type = llvm::FunctionType::get(i32, {}, false);
  else if (name ==
           "GOMP_parallel") // void GOMP_parallel(void (*)(void *), void *, unsigned, unsigned)
    type = llvm::FunctionType::get(voidTy, {ptr, ptr, i32, i32}, false);
  else if (name == "tdsl_profile_begin" || name == "tdsl_profile_end")
    type = llvm::FunctionType::get(voidTy, {i32}, false);
  else if (name == "erff")
    type = llvm::FunctionType::get(llvm::Type::getFloatTy(context),
                                   {llvm::Type::getFloatTy(context)}, false);
  else if (name == "erf")
    type = llvm::FunctionType::get(llvm::Type::getDoubleTy(context),
                                   {llvm::Type::getDoubleTy(context)}, false);
  TDSL_IR_CHECK(type, "unknown runtime function");
  llvm::FunctionCallee callee = module.getOrInsertFunction(name, type);
  if (auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (name == "abort")
      fn->addFnAttr(llvm::Attribute::NoReturn);
  }
  return callee;
}

llvm::Function *ModuleState::halfEncoder(bool bf16, unsigned lanes) {
  llvm::Function *&fn = encoders_[{bf16, lanes}];
  if (fn)
    return fn;
  auto vec = [&](llvm::Type *t) -> llvm::Type * {
    return lanes > 1 ? llvm::FixedVectorType::get(t, lanes) : t;
  };
  llvm::Type *i64 = vec(llvm::Type::getInt64Ty(context));
  llvm::Type *dbl = vec(llvm::Type::getDoubleTy(context));
  llvm::Type *i16 = vec(llvm::Type::getInt16Ty(context));
  std::string name = std::string("tdsl.") + (bf16 ? "bf16" : "f16") + "_bits" +
                     (lanes > 1 ? ".v" + std::to_string(lanes) : "");
  fn = llvm::Function::Create(llvm::FunctionType::get(i16, {dbl}, false),
                              llvm::GlobalValue::InternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::AlwaysInline);
  fn->addFnAttr(llvm::Attribute::WillReturn);
  fn->setDoesNotAccessMemory();
  llvm::IRBuilder<> b(BasicBlock::Create(context, "entry", fn));
  // The steps of runtime/Float16.cpp's encoder, without branches (so that vectors work).
  const int expBits = bf16 ? 8 : 5, manBits = bf16 ? 7 : 10;
  const int64_t bias = (int64_t(1) << (expBits - 1)) - 1, emin = 1 - bias;
  const int64_t inf = ((int64_t(1) << expBits) - 1) << manBits;
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(i64, static_cast<uint64_t>(v), true); };
  Value *x = fn->getArg(0);
  x->setName("x");
  Value *bits = b.CreateBitCast(x, i64, "bits");
  Value *sign = b.CreateShl(b.CreateLShr(bits, c(63)), c(expBits + manBits), "sign");
  Value *isNaN = b.CreateFCmpUNO(x, x, "is_nan");
  Value *isInf = b.CreateFCmpOEQ(b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                                 llvm::ConstantFP::getInfinity(dbl), "is_inf");
  Value *field = b.CreateAnd(b.CreateLShr(bits, c(52)), c(0x7ff), "field");
  Value *mantissa = b.CreateAnd(bits, c((int64_t(1) << 52) - 1));
  Value *subnormal = b.CreateICmpEQ(field, c(0));
  Value *exp = b.CreateSelect(subnormal, c(-1074), b.CreateSub(field, c(1075)), "exp");
  Value *mag =
      b.CreateSelect(subnormal, mantissa, b.CreateOr(mantissa, c(int64_t(1) << 52)), "mag");
  Value *isZero = b.CreateICmpEQ(mag, c(0), "is_zero");
  Value *clz = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, mag, b.getFalse());
  Value *lead = b.CreateAdd(b.CreateSub(c(63), clz), exp, "lead");
  Value *lsb =
      b.CreateSub(b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, lead, c(emin)), c(manBits));
  Value *shift = b.CreateSub(lsb, exp, "shift");
  Value *shiftRight = b.CreateICmpSGT(shift, c(0));
  Value *shiftAll = b.CreateICmpSGE(shift, c(64));
  // shift <= 0: exact, mag << -shift.
  Value *left = b.CreateSelect(shiftRight, c(0), b.CreateNeg(shift));
  Value *qLeft = b.CreateShl(mag, b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, left, c(63)));
  // 0 < shift < 64: round to nearest even.
  Value *right = b.CreateSelect(shiftRight,
                                b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, shift, c(63)), c(1));
  Value *q = b.CreateLShr(mag, right);
  Value *rem = b.CreateAnd(mag, b.CreateSub(b.CreateShl(c(1), right), c(1)));
  Value *half = b.CreateShl(c(1), b.CreateSub(right, c(1)));
  Value *up =
      b.CreateOr(b.CreateICmpUGT(rem, half),
                 b.CreateAnd(b.CreateICmpEQ(rem, half), b.CreateTrunc(q, vec(b.getInt1Ty()))));
  Value *qRight = b.CreateAdd(q, b.CreateZExt(up, i64));
  Value *rounded = b.CreateSelect(shiftRight, b.CreateSelect(shiftAll, c(0), qRight), qLeft, "q");
  Value *normal = b.CreateAdd(b.CreateShl(b.CreateAdd(lead, c(bias - 1)), c(manBits)), rounded);
  Value *out = b.CreateSelect(b.CreateICmpSLT(lead, c(emin)), rounded, normal);
  out = b.CreateSelect(b.CreateICmpSGE(out, c(inf)), c(inf), out);
  Value *result = b.CreateOr(sign, out);
  result = b.CreateSelect(isZero, sign, result);
  result = b.CreateSelect(isInf, b.CreateOr(sign, c(inf)), result);
  result = b.CreateSelect(isNaN, b.CreateOr(sign, c(inf | (int64_t(1) << (manBits - 1)))), result);
  b.CreateRet(b.CreateTrunc(result, i16));
  return fn;
}

// ---------------------------------------------------------------------------------------------
// Function emitter: helpers
// ---------------------------------------------------------------------------------------------

static llvm::FastMathFlags fastMathFlags(const CodeGenOptions &options) {
  llvm::FastMathFlags flags;
  if (options.fastMath) {
    flags = llvm::FastMathFlags::getFast();
    flags.setAllowContract(options.fpContract); // --ffp-contract=off wins over --ffast-math
  }
  return flags;
}

FunctionEmitter::FunctionEmitter(ModuleState &state, llvm::Function *function, std::string cName)
    : state(state), builder(state.context), function_(function), cName_(std::move(cName)) {
  builder.setFastMathFlags(fastMathFlags(state.options));
}

BasicBlock *FunctionEmitter::newBlock(const std::string &name) {
  return BasicBlock::Create(state.context, name, function_);
}

llvm::AllocaInst *FunctionEmitter::entryAlloca(llvm::Type *type, Value *count,
                                               const std::string &name) {
  BasicBlock &entry = function_->getEntryBlock();
  llvm::IRBuilder<> b(&entry, entry.getFirstInsertionPt());
  return b.CreateAlloca(type, count, name);
}

llvm::Value *FunctionEmitter::decodeHalf(Value *bits, bool bf16) {
  llvm::Type *i32 = builder.getInt32Ty(), *f32 = builder.getFloatTy();
  if (auto *v = llvm::dyn_cast<llvm::FixedVectorType>(bits->getType())) {
    i32 = llvm::FixedVectorType::get(i32, v->getNumElements());
    f32 = llvm::FixedVectorType::get(f32, v->getNumElements());
  }
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(i32, x); };
  Value *wide = builder.CreateZExt(bits, i32);
  if (bf16)
    return builder.CreateBitCast(builder.CreateShl(wide, c(16)), f32, "bf16");
  // Exponent and mantissa moved to f32's position, then scaled by 2^112: exact for normal and
  // subnormal halves; infinities and NaNs get f32's all-ones exponent.
  Value *sign = builder.CreateShl(builder.CreateAnd(wide, c(0x8000)), c(16));
  Value *em = builder.CreateAnd(wide, c(0x7fff));
  Value *moved = builder.CreateShl(em, c(13));
  Value *scaled =
      builder.CreateFMul(builder.CreateBitCast(moved, f32), llvm::ConstantFP::get(f32, 0x1p112));
  Value *special = builder.CreateICmpUGE(em, c(0x7c00));
  Value *magnitude = builder.CreateSelect(special, builder.CreateOr(moved, c(0x7f800000)),
                                          builder.CreateBitCast(scaled, i32));
  return builder.CreateBitCast(builder.CreateOr(magnitude, sign), f32, "f16");
}

llvm::Value *FunctionEmitter::roundHalf(Value *value, DType t) {
  if (!isHalf(t))
    return value;
  bool bf16 = t.code() == DType::Code::BF16;
  llvm::Type *dbl = state.valueType(DType::f64().withLanes(t.lanes()));
  Value *wide =
      value->getType()->getScalarType()->isDoubleTy() ? value : builder.CreateFPExt(value, dbl);
  Value *bits = builder.CreateCall(state.halfEncoder(bf16, t.lanes()), {wide});
  return decodeHalf(bits, bf16);
}

llvm::Value *FunctionEmitter::fromStorage(Value *stored, DType t) {
  if (t.isBool())
    return builder.CreateICmpNE(stored, llvm::Constant::getNullValue(stored->getType()));
  if (isHalf(t))
    return decodeHalf(stored, t.code() == DType::Code::BF16);
  return stored;
}

llvm::Value *FunctionEmitter::toStorage(Value *value, DType t) {
  if (t.isBool())
    return builder.CreateZExt(value, state.storageType(t));
  if (isHalf(t)) {
    llvm::Type *dbl = state.valueType(DType::f64().withLanes(t.lanes()));
    Value *wide =
        value->getType()->getScalarType()->isDoubleTy() ? value : builder.CreateFPExt(value, dbl);
    return builder.CreateCall(state.halfEncoder(t.code() == DType::Code::BF16, t.lanes()), {wide});
  }
  return value;
}

llvm::Value *FunctionEmitter::constantFloat(DType t, double v) {
  if (t.code() == DType::Code::F16)
    v = runtime::f16ToDouble(runtime::f16FromDouble(v));
  else if (t.code() == DType::Code::BF16)
    v = runtime::bf16ToDouble(runtime::bf16FromDouble(v));
  return llvm::ConstantFP::get(state.valueType(t), v);
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

llvm::Value *FunctionEmitter::expr(const Expr &e) {
  DType t = e.dtype();
  switch (e.kind()) {
  case ExprKind::IntImm:
    return llvm::ConstantInt::get(state.valueType(t), static_cast<uint64_t>(e.as<IntImm>()->value),
                                  t.isInt());
  case ExprKind::FloatImm:
    return constantFloat(t, e.as<FloatImm>()->value);
  case ExprKind::VarRef: {
    auto it = vars_.find(e.as<VarRef>()->var.get());
    TDSL_IR_CHECK(it != vars_.end(), "the LLVM backend met a variable out of scope");
    return it->second;
  }
  case ExprKind::Cast:
    return cast(t, e.as<Cast>()->value);
  case ExprKind::Neg: {
    Value *a = expr(e.as<Neg>()->a);
    if (t.isFloat())
      return builder.CreateFNeg(a); // exact: no rounding needed for halves
    return builder.CreateSub(llvm::Constant::getNullValue(a->getType()), a);
  }
#define TDSL_LLVM_BINARY(NAME)                                                                     \
  case ExprKind::NAME:                                                                             \
    return binary(ExprKind::NAME, e, e.as<NAME>()->a, e.as<NAME>()->b);
    TDSL_FOR_EACH_BINARY_NODE(TDSL_LLVM_BINARY)
#undef TDSL_LLVM_BINARY
  case ExprKind::Not:
    return builder.CreateNot(expr(e.as<Not>()->a));
  case ExprKind::Select:
    return select(e.as<Select>());
  case ExprKind::BufferLoad:
    return load(e.as<BufferLoad>());
  case ExprKind::Call:
    return call(e.as<Call>());
  case ExprKind::Ramp: {
    const auto *op = e.as<Ramp>();
    Value *base = builder.CreateVectorSplat(op->lanes, expr(op->base));
    Value *stride = builder.CreateVectorSplat(op->lanes, expr(op->stride));
    std::vector<llvm::Constant *> steps;
    for (int i = 0; i < op->lanes; ++i)
      steps.push_back(llvm::ConstantInt::get(state.valueType(op->base.dtype()), i));
    return builder.CreateAdd(base, builder.CreateMul(stride, llvm::ConstantVector::get(steps)),
                             "ramp");
  }
  case ExprKind::Broadcast: {
    const auto *op = e.as<Broadcast>();
    return builder.CreateVectorSplat(op->lanes, expr(op->value));
  }
  }
  TDSL_IR_CHECK(false, "unknown expression kind");
}

bool FunctionEmitter::contracts(DType t) const {
  return t.isFloat() && !isHalf(t) && state.options.fpContract && !state.options.fastMath;
}

llvm::Value *FunctionEmitter::mulAdd(bool isSub, const Expr &lhs, const Expr &rhs) {
  // Clang's tryEmitFMulAdd: a product operand, looking through one negation, the left operand
  // first; `x - p` negates the product, `p - x` the addend.
  auto product = [](const Expr &e, bool &negated) -> const Mul * {
    const auto *neg = e.as<Neg>();
    negated = neg != nullptr;
    return neg ? neg->a.as<Mul>() : e.as<Mul>();
  };
  auto fmuladd = [&](Value *a, Value *b, Value *c) -> Value * {
    return builder.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, b, c});
  };
  bool negated = false;
  if (const Mul *m = product(lhs, negated)) {
    Value *a = expr(m->a), *b = expr(m->b), *c = expr(rhs);
    return fmuladd(negated ? builder.CreateFNeg(a) : a, b, isSub ? builder.CreateFNeg(c) : c);
  }
  if (const Mul *m = product(rhs, negated)) {
    Value *c = expr(lhs), *a = expr(m->a), *b = expr(m->b);
    return fmuladd(isSub != negated ? builder.CreateFNeg(a) : a, b, c);
  }
  return nullptr;
}

llvm::Value *FunctionEmitter::binary(ExprKind kind, const Expr &e, const Expr &a, const Expr &b) {
  DType t = e.dtype(), operand = a.dtype();
  if ((kind == ExprKind::Add || kind == ExprKind::Sub) && contracts(t))
    if (Value *fused = mulAdd(kind == ExprKind::Sub, a, b))
      return fused;
  Value *x = expr(a), *y = expr(b);
  bool isFloat = operand.isFloat(), isSigned = operand.isInt();
  switch (kind) {
  case ExprKind::EQ:
    return isFloat ? builder.CreateFCmpOEQ(x, y) : builder.CreateICmpEQ(x, y);
  case ExprKind::NE:
    return isFloat ? builder.CreateFCmpUNE(x, y) : builder.CreateICmpNE(x, y);
  case ExprKind::LT:
    return isFloat    ? builder.CreateFCmpOLT(x, y)
           : isSigned ? builder.CreateICmpSLT(x, y)
                      : builder.CreateICmpULT(x, y);
  case ExprKind::LE:
    return isFloat    ? builder.CreateFCmpOLE(x, y)
           : isSigned ? builder.CreateICmpSLE(x, y)
                      : builder.CreateICmpULE(x, y);
  case ExprKind::GT:
    return isFloat    ? builder.CreateFCmpOGT(x, y)
           : isSigned ? builder.CreateICmpSGT(x, y)
                      : builder.CreateICmpUGT(x, y);
  case ExprKind::GE:
    return isFloat    ? builder.CreateFCmpOGE(x, y)
           : isSigned ? builder.CreateICmpSGE(x, y)
                      : builder.CreateICmpUGE(x, y);
  case ExprKind::And:
    return builder.CreateAnd(x, y);
  case ExprKind::Or:
    return builder.CreateOr(x, y);
  default:
    break;
  }
  if (t.isFloat()) {
    Value *r = nullptr;
    switch (kind) {
    case ExprKind::Add:
      r = builder.CreateFAdd(x, y);
      break;
    case ExprKind::Sub:
      r = builder.CreateFSub(x, y);
      break;
    case ExprKind::Mul:
      r = builder.CreateFMul(x, y);
      break;
    case ExprKind::Div:
      r = builder.CreateFDiv(x, y);
      break;
    case ExprKind::Mod: { // a - floor(a / b) * b (contracted as Clang does tdsl_fmod_floor's)
      Value *q = builder.CreateUnaryIntrinsic(llvm::Intrinsic::floor, builder.CreateFDiv(x, y));
      r = contracts(t) ? builder.CreateIntrinsic(llvm::Intrinsic::fmuladd, {x->getType()},
                                                 {builder.CreateFNeg(q), y, x})
                       : builder.CreateFSub(x, builder.CreateFMul(q, y));
      break;
    }
    case ExprKind::Min: // IEEE minNum: a NaN operand is ignored
      r = builder.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, x, y);
      break;
    case ExprKind::Max:
      r = builder.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, y);
      break;
    default:
      TDSL_IR_CHECK(false, "not an arithmetic node");
    }
    return roundHalf(r, t);
  }
  if (t.isBool()) {
    TDSL_IR_CHECK(kind == ExprKind::Min || kind == ExprKind::Max, "arithmetic on bool");
    return kind == ExprKind::Min ? builder.CreateAnd(x, y) : builder.CreateOr(x, y);
  }
  // Integers wrap: no nsw/nuw.
  switch (kind) {
  case ExprKind::Add:
    return builder.CreateAdd(x, y);
  case ExprKind::Sub:
    return builder.CreateSub(x, y);
  case ExprKind::Mul:
    return builder.CreateMul(x, y);
  case ExprKind::Div:
    return intDivMod(true, t, x, y);
  case ExprKind::Mod:
    return intDivMod(false, t, x, y);
  case ExprKind::Min:
    return builder.CreateBinaryIntrinsic(isSigned ? llvm::Intrinsic::smin : llvm::Intrinsic::umin,
                                         x, y);
  case ExprKind::Max:
    return builder.CreateBinaryIntrinsic(isSigned ? llvm::Intrinsic::smax : llvm::Intrinsic::umax,
                                         x, y);
  default:
    TDSL_IR_CHECK(false, "not an arithmetic node");
  }
}

/// Floor division and modulo with the interpreter's answers where C leaves them undefined:
/// x / 0 == 0, x % 0 == x, MIN / -1 == MIN (wraps), x % -1 == 0. The divisor is replaced by 1
/// in those cases so that sdiv/udiv never trap; constant divisors fold all of it away.
llvm::Value *FunctionEmitter::intDivMod(bool isDiv, DType t, Value *a, Value *b) {
  llvm::Type *type = a->getType();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(type, static_cast<uint64_t>(v), true); };
  Value *byZero = builder.CreateICmpEQ(b, c(0));
  if (t.isUInt()) {
    Value *safe = builder.CreateSelect(byZero, c(1), b);
    if (isDiv)
      return builder.CreateSelect(byZero, c(0), builder.CreateUDiv(a, safe));
    return builder.CreateSelect(byZero, a, builder.CreateURem(a, safe));
  }
  Value *byMinusOne = builder.CreateICmpEQ(b, c(-1));
  Value *safe = builder.CreateSelect(builder.CreateOr(byZero, byMinusOne), c(1), b);
  Value *q = builder.CreateSDiv(a, safe), *r = builder.CreateSRem(a, safe);
  // The truncated result is one too high (quotient) when the remainder's sign differs from
  // the divisor's.
  Value *adjust = builder.CreateAnd(
      builder.CreateICmpNE(r, c(0)),
      builder.CreateXor(builder.CreateICmpSLT(r, c(0)), builder.CreateICmpSLT(b, c(0))));
  if (isDiv) {
    Value *floor = builder.CreateSub(q, builder.CreateZExt(adjust, type));
    return builder.CreateSelect(
        byZero, c(0), builder.CreateSelect(byMinusOne, builder.CreateSub(c(0), a), floor));
  }
  Value *floor = builder.CreateSelect(adjust, builder.CreateAdd(r, b), r);
  return builder.CreateSelect(byZero, a, builder.CreateSelect(byMinusOne, c(0), floor));
}

llvm::Value *FunctionEmitter::cast(DType to, const Expr &value) {
  DType from = value.dtype();
  Value *x = expr(value);
  if (to == from)
    return x;
  llvm::Type *target = state.valueType(to);
  llvm::Type *f64 = state.valueType(DType::f64().withLanes(to.lanes()));
  if (to.isBool()) {
    if (from.isFloat())
      return builder.CreateFCmpUNE(x, llvm::Constant::getNullValue(x->getType()));
    return builder.CreateICmpNE(x, llvm::Constant::getNullValue(x->getType()));
  }
  if (to.isFloat()) {
    // The exact source value (integers and floats fit in double but for i64/u64 beyond 2^53,
    // which round once, as in the C++ backend), then one rounding to the target.
    if (isHalf(to)) {
      Value *wide = from.isFloat()
                        ? (from.code() == DType::Code::F64 ? x : builder.CreateFPExt(x, f64))
                    : from.isInt() ? builder.CreateSIToFP(x, f64)
                                   : builder.CreateUIToFP(x, f64);
      return roundHalf(wide, to);
    }
    if (from.isFloat()) {
      unsigned fromBits = x->getType()->getScalarSizeInBits(),
               toBits = target->getScalarSizeInBits();
      if (fromBits == toBits)
        return x; // f16/bf16 values are already f32
      return fromBits < toBits ? builder.CreateFPExt(x, target) : builder.CreateFPTrunc(x, target);
    }
    return from.isInt() ? builder.CreateSIToFP(x, target) : builder.CreateUIToFP(x, target);
  }
  // To an integer.
  if (from.isFloat()) // truncates toward zero, saturates, NaN gives 0
    return builder.CreateIntrinsic(to.isInt() ? llvm::Intrinsic::fptosi_sat
                                              : llvm::Intrinsic::fptoui_sat,
                                   {target, x->getType()}, {x});
  if (from.isBool())
    return builder.CreateZExt(x, target);
  return builder.CreateIntCast(x, target, from.isInt());
}

/// `name` (libm's spelling for f64; `name`f for f32) of each lane of the f32/f64 vectors
/// `args` through glibc's libmvec, whose variants the x86-64 vector function ABI names
/// `_ZGV<isa>N<lanes><v per argument>_<name>`: 'b' SSE (128-bit), 'c' AVX and 'd' AVX2
/// (256-bit), 'e' AVX-512 (512-bit). `isa` is the widest the target runs (CodeGenOptions::
/// vectorMath); a vector wider than its variant is called in pieces, a narrower one through the
/// narrower ISA ('d' for 8 f32 lanes under 'e', 'b' for 4), one narrower than 'b' padded with
/// zeros. Every function used here is in glibc 2.35's libmvec (x86-64). nullptr: not a vector
/// of f32/f64.
static Value *vectorMath(llvm::IRBuilder<> &b, llvm::Module &module, char isa,
                         const std::string &name, std::vector<Value *> args) {
  auto *vt = llvm::dyn_cast<llvm::FixedVectorType>(args[0]->getType());
  if (isa == 0 || !vt || !(vt->getElementType()->isFloatTy() || vt->getElementType()->isDoubleTy()))
    return nullptr;
  bool isF32 = vt->getElementType()->isFloatTy();
  unsigned lanes = vt->getNumElements(), elementBits = isF32 ? 32 : 64;
  auto width = [&](char i) { return (i == 'e' ? 512u : i == 'b' ? 128u : 256u) / elementBits; };
  // The widest variant not wider than the vector (the ISAs below 'e': AVX-512 runs AVX2's).
  char use = isa;
  while (use != 'b' && width(use) > lanes)
    use = use == 'e' ? 'd' : 'b';
  unsigned w = width(use);
  auto *pt = llvm::FixedVectorType::get(vt->getElementType(), w);
  std::vector<llvm::Type *> params(args.size(), pt);
  llvm::FunctionCallee fn = module.getOrInsertFunction(
      "_ZGV" + std::string(1, use) + "N" + std::to_string(w) + std::string(args.size(), 'v') + "_" +
          name + (isF32 ? "f" : ""),
      llvm::FunctionType::get(pt, params, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    f->setDoesNotThrow();
    f->setDoesNotAccessMemory();
    f->setWillReturn();
  }
  // The variant takes its 512-bit argument in zmm0: the caller must allow 512-bit registers
  // (no attribute means no limit; a smaller one, as Clang writes, makes the x86 backend pass
  // two ymm halves under skylake-avx512's prefer-vector-width=256).
  if (use == 'e') {
    llvm::Function *caller = b.GetInsertBlock()->getParent();
    unsigned have = 0;
    if (caller->hasFnAttribute("min-legal-vector-width"))
      caller->getFnAttribute("min-legal-vector-width").getValueAsString().getAsInteger(10, have);
    if (have < 512)
      caller->addFnAttr("min-legal-vector-width", "512");
  }
  auto range = [](unsigned from, unsigned count) {
    llvm::SmallVector<int, 64> mask;
    for (unsigned i = 0; i < count; ++i)
      mask.push_back(static_cast<int>(from + i));
    return mask;
  };
  if (lanes < w) { // lanes lanes .. w - 1 from zeros, dropped again after the call
    Value *zero = llvm::Constant::getNullValue(vt);
    for (Value *&a : args)
      a = b.CreateShuffleVector(a, zero, range(0, w));
    return b.CreateShuffleVector(b.CreateCall(fn, args), range(0, lanes));
  }
  std::vector<Value *> pieces;
  for (unsigned at = 0; at < lanes; at += w) {
    std::vector<Value *> part;
    for (Value *a : args)
      part.push_back(lanes == w ? a : b.CreateShuffleVector(a, range(at, w)));
    pieces.push_back(b.CreateCall(fn, part));
  }
  for (unsigned n = w; pieces.size() > 1; n *= 2) { // concatenated pairwise
    std::vector<Value *> joined;
    for (size_t i = 0; i < pieces.size(); i += 2)
      joined.push_back(b.CreateShuffleVector(pieces[i], pieces[i + 1], range(0, 2 * n)));
    pieces = std::move(joined);
  }
  return pieces[0];
}

llvm::Value *FunctionEmitter::call(const Call *op) {
  DType t = op->type;
  llvm::Type *type = state.valueType(t);
  if (op->op == Intrinsic::MinValue || op->op == Intrinsic::MaxValue) {
    bool isMax = op->op == Intrinsic::MaxValue;
    switch (t.code()) {
    case DType::Code::Bool:
      return llvm::ConstantInt::get(type, isMax ? 1 : 0);
    case DType::Code::F16:
      return llvm::ConstantFP::get(type, isMax ? 65504.0 : -65504.0);
    case DType::Code::BF16:
      return llvm::ConstantFP::get(type, runtime::bf16ToDouble(isMax ? 0x7f7f : 0xff7f));
    case DType::Code::F32:
      return llvm::ConstantFP::get(type, isMax ? std::numeric_limits<float>::max()
                                               : std::numeric_limits<float>::lowest());
    case DType::Code::F64:
      return llvm::ConstantFP::get(type, isMax ? std::numeric_limits<double>::max()
                                               : std::numeric_limits<double>::lowest());
    default: {
      unsigned bits = static_cast<unsigned>(t.bits());
      llvm::APInt v =
          t.isInt() ? (isMax ? llvm::APInt::getSignedMaxValue(bits)
                             : llvm::APInt::getSignedMinValue(bits))
                    : (isMax ? llvm::APInt::getMaxValue(bits) : llvm::APInt::getMinValue(bits));
      return llvm::ConstantInt::get(type, v);
    }
    }
  }
  std::vector<Value *> args;
  for (const Expr &a : op->args)
    args.push_back(expr(a));
  if (t.isInteger()) {
    TDSL_IR_CHECK(op->op == Intrinsic::Abs, "only abs applies to integers");
    if (t.isUInt())
      return args[0];
    return builder.CreateBinaryIntrinsic(llvm::Intrinsic::abs, args[0], builder.getFalse());
  }
  auto one = [&] { return llvm::ConstantFP::get(type, 1.0); };
  auto unary = [&](llvm::Intrinsic::ID id) { return builder.CreateUnaryIntrinsic(id, args[0]); };
  // Vectors of exp, log, tanh, erf, … : glibc's libmvec where the target has it (else the LLVM
  // intrinsic, which the x86 backend scalarizes into libm calls).
  auto math = [&](const char *name, Value *x) -> Value * {
    if (!t.isVector())
      return nullptr;
    return vectorMath(builder, state.module, state.options.vectorMath, name, {x});
  };
  Value *r = nullptr;
  switch (op->op) {
  case Intrinsic::Exp:
    r = math("exp", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::exp);
    break;
  case Intrinsic::Exp2:
    r = math("exp2", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::exp2);
    break;
  case Intrinsic::Log:
    r = math("log", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::log);
    break;
  case Intrinsic::Log2:
    r = math("log2", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::log2);
    break;
  case Intrinsic::Sqrt:
    r = unary(llvm::Intrinsic::sqrt);
    break;
  case Intrinsic::Rsqrt:
    r = builder.CreateFDiv(one(), unary(llvm::Intrinsic::sqrt));
    break;
  case Intrinsic::Tanh:
    r = math("tanh", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::tanh);
    break;
  case Intrinsic::Sigmoid: { // 1 / (1 + exp(-x))
    Value *minus = builder.CreateFNeg(args[0]);
    Value *e = math("exp", minus);
    if (!e)
      e = builder.CreateUnaryIntrinsic(llvm::Intrinsic::exp, minus);
    r = builder.CreateFDiv(one(), builder.CreateFAdd(one(), e));
    break;
  }
  case Intrinsic::Erf: { // no LLVM intrinsic: libmvec, or libm's erff/erf lane by lane
    if ((r = math("erf", args[0])))
      break;
    bool isF64 = t.code() == DType::Code::F64;
    llvm::FunctionCallee fn = state.libFunction(isF64 ? "erf" : "erff");
    if (!t.isVector()) {
      r = builder.CreateCall(fn, {args[0]});
      break;
    }
    r = llvm::PoisonValue::get(type);
    for (unsigned i = 0; i < t.lanes(); ++i)
      r = builder.CreateInsertElement(
          r, builder.CreateCall(fn, {builder.CreateExtractElement(args[0], i)}), i);
    break;
  }
  case Intrinsic::Abs:
    r = unary(llvm::Intrinsic::fabs);
    break;
  case Intrinsic::Sin:
    r = math("sin", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::sin);
    break;
  case Intrinsic::Cos:
    r = math("cos", args[0]);
    if (!r)
      r = unary(llvm::Intrinsic::cos);
    break;
  case Intrinsic::Floor:
    r = unary(llvm::Intrinsic::floor);
    break;
  case Intrinsic::Ceil:
    r = unary(llvm::Intrinsic::ceil);
    break;
  case Intrinsic::Round: // half away from zero
    r = unary(llvm::Intrinsic::round);
    break;
  case Intrinsic::Trunc:
    r = unary(llvm::Intrinsic::trunc);
    break;
  case Intrinsic::Pow:
    if (t.isVector())
      r = vectorMath(builder, state.module, state.options.vectorMath, "pow", {args[0], args[1]});
    if (!r)
      r = builder.CreateBinaryIntrinsic(llvm::Intrinsic::pow, args[0], args[1]);
    break;
  case Intrinsic::Fma:
    r = builder.CreateIntrinsic(llvm::Intrinsic::fma, {type}, {args[0], args[1], args[2]});
    break;
  default:
    TDSL_IR_CHECK(false, "not an elementwise intrinsic");
  }
  return roundHalf(r, t);
}

/// select(c, a, b) evaluates only the chosen branch: a branch that reads memory is emitted
/// behind a conditional branch (LLVM turns it into a select when the load is safe). With a
/// vector condition both branches are evaluated, lane by lane, each branch's loads masked by
/// the lanes that choose it (lower.vectorize's padding guards: the lanes left of the input
/// read nothing) except those the condition itself read on every lane, outside any mask
/// (`x > 0 ? x : a·x`: one plain load).
llvm::Value *FunctionEmitter::select(const Select *op) {
  Value *cond = expr(op->condition);
  if (op->condition.dtype().isVector()) {
    struct Loads : IRVisitor {
      std::vector<Expr> *out;
      void visit(const BufferLoad *load) override {
        out->push_back(load);
        IRVisitor::visit(load);
      }
    } loads;
    size_t outerLoads = readByCondition_.size();
    loads.out = &readByCondition_;
    if (!laneMask_) // a condition under a mask read only the lanes of that mask
      loads.visitExpr(op->condition);
    auto branch = [&](Value *lanes, const Expr &value) {
      if (!contains<BufferLoad>(value))
        return expr(value);
      Value *outer = laneMask_;
      laneMask_ = outer ? builder.CreateAnd(outer, lanes) : lanes;
      Value *v = expr(value);
      laneMask_ = outer;
      return v;
    };
    Value *a = branch(cond, op->trueValue);
    Value *b = branch(builder.CreateNot(cond), op->falseValue);
    readByCondition_.resize(outerLoads);
    return builder.CreateSelect(cond, a, b);
  }
  if (!contains<BufferLoad>(op->trueValue) && !contains<BufferLoad>(op->falseValue)) {
    Value *a = expr(op->trueValue), *b = expr(op->falseValue);
    return builder.CreateSelect(cond, a, b);
  }
  BasicBlock *thenBB = newBlock("select.true"), *elseBB = newBlock("select.false");
  BasicBlock *merge = BasicBlock::Create(state.context, "select.end");
  builder.CreateCondBr(cond, thenBB, elseBB);
  builder.SetInsertPoint(thenBB);
  Value *a = expr(op->trueValue);
  BasicBlock *thenEnd = builder.GetInsertBlock();
  builder.CreateBr(merge);
  builder.SetInsertPoint(elseBB);
  Value *b = expr(op->falseValue);
  BasicBlock *elseEnd = builder.GetInsertBlock();
  builder.CreateBr(merge);
  merge->insertInto(function_);
  builder.SetInsertPoint(merge);
  llvm::PHINode *phi = builder.CreatePHI(a->getType(), 2, "select");
  phi->addIncoming(a, thenEnd);
  phi->addIncoming(b, elseEnd);
  return phi;
}

llvm::Value *FunctionEmitter::address(const Buffer &buffer, const Expr &index, bool &contiguous,
                                      bool inBounds) {
  auto it = buffers_.find(buffer.get());
  TDSL_IR_CHECK(it != buffers_.end(), "the LLVM backend met a buffer out of scope");
  llvm::Type *element = state.storageType(buffer.dtype().element());
  contiguous = false;
  auto gep = [&](Value *ptr, Value *offset) {
    return inBounds ? builder.CreateInBoundsGEP(element, ptr, {offset})
                    : builder.CreateGEP(element, ptr, {offset});
  };
  const Expr *offset = &index;
  if (const auto *ramp = index.as<Ramp>(); ramp && isConstInt(ramp->stride, 1)) {
    contiguous = true;
    offset = &ramp->base;
  }
  // `rest + c` as two GEPs, buffer + rest, then + c: the accesses of a register tile (rows
  // r·N apart, columns W apart) then share one base and differ by constants, which alias
  // analysis sees at once; one flat index each is reassociated by instcombine into forms it
  // cannot compare (`(x | y) * 4` against `x * 4 + 8192 + y * 4`), and LICM then keeps the tile
  // in memory across k instead of promoting it to registers.
  // An index without a constant is emitted in the same canonical form, so that the tile's
  // first row is that base itself.
  if (offset->dtype() == DType::i64() && !asConstInt(*offset)) {
    Expr flat = canonical(*offset);
    if (const auto *add = flat.as<Add>())
      if (std::optional<int64_t> c = asConstInt(add->b); c && *c != 0) {
        Value *base = gep(it->second, expr(add->a));
        return gep(base, builder.getInt64(*c));
      }
    return gep(it->second, expr(flat));
  }
  return gep(it->second, expr(*offset));
}

llvm::Value *FunctionEmitter::load(const BufferLoad *op) {
  TDSL_IR_CHECK(op->indices.size() == 1, "the LLVM backend takes flattened buffers");
  DType t = op->type;
  llvm::Align align(static_cast<uint64_t>(op->buffer.dtype().storageBytes()));
  llvm::Type *type = state.storageType(t);
  // In a branch of a vector select, only the lanes that take it (laneMask_) are read, through
  // addresses without `inbounds` (a masked-off lane's may lie outside the buffer); a load the
  // select's condition already read on every lane needs no mask.
  Value *mask = laneMask_ && t.isVector() &&
                        std::none_of(readByCondition_.begin(), readByCondition_.end(),
                                     [&](const Expr &read) { return equalExpr(read, Expr(op)); })
                    ? laneMask_
                    : nullptr;
  // ramp(b, s, L) with a small constant stride s (lower.vectorize makes them, s <= 4): one
  // masked load of the (L - 1)·s + 1 elements from b (the lanes past them are masked off, so
  // nothing beyond the last element read is touched; under a lane mask, lane i·s is read when
  // lane i is set), then every s-th lane. A gather costs a load per lane (and far more than
  // that on AMD's cores).
  if (const auto *ramp = op->indices[0].as<Ramp>(); ramp && t.isVector()) {
    std::optional<int64_t> s = asConstInt(ramp->stride);
    if (s && *s >= 2 && *s <= 4) {
      bool unused = false;
      Value *base = address(op->buffer, ramp->base, unused, /*inBounds=*/!mask);
      unsigned lanes = t.lanes(), step = static_cast<unsigned>(*s);
      unsigned span = (lanes - 1) * step + 1;
      auto *wide = llvm::FixedVectorType::get(type->getScalarType(), lanes * step);
      Value *wideMask = nullptr;
      if (mask) {
        std::vector<int> spread;
        for (unsigned i = 0; i < lanes * step; ++i)
          spread.push_back(i % step == 0 ? static_cast<int>(i / step) : static_cast<int>(lanes));
        wideMask = builder.CreateShuffleVector(mask, llvm::Constant::getNullValue(mask->getType()),
                                               spread);
      } else {
        std::vector<llvm::Constant *> bits;
        for (unsigned i = 0; i < lanes * step; ++i)
          bits.push_back(builder.getInt1(i < span));
        wideMask = llvm::ConstantVector::get(bits);
      }
      Value *all =
          builder.CreateMaskedLoad(wide, base, align, wideMask, llvm::PoisonValue::get(wide));
      std::vector<int> pick;
      for (unsigned i = 0; i < lanes; ++i)
        pick.push_back(static_cast<int>(i * step));
      return fromStorage(builder.CreateShuffleVector(all, pick), t);
    }
  }
  bool contiguous = false;
  Value *addr = address(op->buffer, op->indices[0], contiguous, /*inBounds=*/!mask);
  Value *stored = nullptr;
  if ((!t.isVector() || contiguous) && mask)
    stored = builder.CreateMaskedLoad(type, addr, align, mask, llvm::PoisonValue::get(type));
  else if (!t.isVector() || contiguous)
    stored = builder.CreateAlignedLoad(type, addr, align);
  else if (addr->getType()->isVectorTy())
    stored = builder.CreateMaskedGather(type, addr, align, mask);
  else if (mask) // a scalar index for a vector, read on the lanes of the mask
    stored =
        builder.CreateMaskedGather(type, builder.CreateVectorSplat(t.lanes(), addr), align, mask);
  else // a scalar index for a vector: every lane reads the same element
    stored = builder.CreateVectorSplat(
        t.lanes(), builder.CreateAlignedLoad(type->getScalarType(), addr, align));
  return fromStorage(stored, t);
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

void FunctionEmitter::stmt(const Stmt &s) {
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    if (op->forKind == ForKind::Parallel)
      parallelFor(op);
    else
      forLoop(op);
    return;
  }
  case StmtKind::BufferStore: {
    const auto *op = s.as<BufferStore>();
    TDSL_IR_CHECK(op->indices.size() == 1, "the LLVM backend takes flattened buffers");
    DType t = op->value.dtype();
    Value *value = toStorage(expr(op->value), t);
    bool contiguous = false;
    Value *addr = address(op->buffer, op->indices[0], contiguous);
    llvm::Align align(static_cast<uint64_t>(op->buffer.dtype().storageBytes()));
    if (!t.isVector() || contiguous)
      builder.CreateAlignedStore(value, addr, align);
    else if (addr->getType()->isVectorTy())
      builder.CreateMaskedScatter(value, addr, align);
    else // all lanes to one element: the last lane wins
      builder.CreateAlignedStore(builder.CreateExtractElement(value, t.lanes() - 1), addr, align);
    return;
  }
  case StmtKind::LetStmt: {
    const auto *op = s.as<LetStmt>();
    Value *value = expr(op->value);
    if (!llvm::isa<llvm::Constant>(value) && value->getName().empty())
      value->setName(abi::cIdentifier(op->var.name()));
    bind(op->var, value);
    stmt(op->body);
    return;
  }
  case StmtKind::IfThenElse: {
    const auto *op = s.as<IfThenElse>();
    Value *cond = expr(op->condition);
    BasicBlock *thenBB = newBlock("if.then");
    BasicBlock *elseBB = op->elseCase.defined() ? newBlock("if.else") : nullptr;
    BasicBlock *merge = BasicBlock::Create(state.context, "if.end");
    builder.CreateCondBr(cond, thenBB, elseBB ? elseBB : merge);
    builder.SetInsertPoint(thenBB);
    stmt(op->thenCase);
    builder.CreateBr(merge);
    if (elseBB) {
      builder.SetInsertPoint(elseBB);
      stmt(op->elseCase);
      builder.CreateBr(merge);
    }
    merge->insertInto(function_);
    builder.SetInsertPoint(merge);
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &child : s.as<SeqStmt>()->seq)
      stmt(child);
    return;
  case StmtKind::Evaluate:
    expr(s.as<Evaluate>()->value);
    return;
  case StmtKind::Allocate:
    allocate(s.as<Allocate>());
    return;
  case StmtKind::BufferView:
    bufferView(s.as<BufferView>());
    return;
  case StmtKind::FuncCall:
    funcCall(s.as<FuncCall>());
    return;
  case StmtKind::AssertStmt:
    assertStmt(s.as<AssertStmt>());
    return;
  case StmtKind::ProfileRegion: {
    // --profile: the runner's timers around the region (runtime/Profile.h).
    const auto *op = s.as<ProfileRegion>();
    TDSL_IR_CHECK(loopDepth_ == 0 && !inOutlined_, "a profiled region outside any loop");
    builder.CreateCall(state.libFunction("tdsl_profile_begin"), {builder.getInt32(op->id)});
    stmt(op->body);
    builder.CreateCall(state.libFunction("tdsl_profile_end"), {builder.getInt32(op->id)});
    return;
  }
  case StmtKind::Block:
    break;
  }
  TDSL_IR_CHECK(false, "the LLVM backend takes lowered code (no blocks)");
}

void FunctionEmitter::beginChecks() {
  failed_ = entryAlloca(builder.getInt32Ty(), nullptr, "check.failed");
  message_ = entryAlloca(llvm::ArrayType::get(builder.getInt8Ty(), 512), nullptr, "check.message");
  builder.CreateStore(builder.getInt32(0), failed_);
  builder.CreateStore(builder.getInt8(0), message_);
}

void FunctionEmitter::endChecks() {
  BasicBlock *fail = newBlock("check.fail"), *ok = newBlock("check.ok");
  Value *failed = builder.CreateLoad(builder.getInt32Ty(), failed_, "failed");
  builder.CreateCondBr(builder.CreateICmpNE(failed, builder.getInt32(0)), fail, ok);
  builder.SetInsertPoint(fail);
  builder.CreateCall(state.libFunction("snprintf"),
                     {state.lastErrorAddress(builder), builder.getInt64(512),
                      builder.CreateGlobalString("%s"), message_});
  builder.CreateRet(builder.getInt32(1));
  builder.SetInsertPoint(ok);
}

/// `assert COND, "message {}", args { body }`: the body where COND holds; otherwise the first
/// failure of the call (an atomic exchange of the flag: threads may race) formats the message,
/// and the entry returns 1 with it at the end (a check in a parallel loop cannot return).
void FunctionEmitter::assertStmt(const AssertStmt *op) {
  TDSL_IR_CHECK(failed_, "a run-time check outside an entry that has checks");
  std::string format;
  for (size_t i = 0; i < op->message.size(); ++i) {
    if (op->message.compare(i, 2, "{}") == 0) {
      format += "%lld";
      ++i;
    } else if (op->message[i] == '%') {
      format += "%%";
    } else {
      format += op->message[i];
    }
  }
  Value *cond = expr(op->condition);
  BasicBlock *pass = newBlock("check.pass"), *fail = newBlock("check.fail");
  BasicBlock *report = newBlock("check.report");
  BasicBlock *merge = BasicBlock::Create(state.context, "check.end");
  builder.CreateCondBr(cond, pass, fail);
  builder.SetInsertPoint(pass);
  stmt(op->body);
  builder.CreateBr(merge);
  builder.SetInsertPoint(fail);
  Value *was = builder.CreateAtomicRMW(llvm::AtomicRMWInst::Xchg, failed_, builder.getInt32(1),
                                       llvm::MaybeAlign(4), llvm::AtomicOrdering::AcquireRelease);
  builder.CreateCondBr(builder.CreateICmpEQ(was, builder.getInt32(0)), report, merge);
  builder.SetInsertPoint(report);
  std::vector<Value *> args = {message_, builder.getInt64(512), builder.CreateGlobalString(format)};
  for (const Expr &a : op->args)
    args.push_back(builder.CreateSExtOrTrunc(expr(a), builder.getInt64Ty()));
  builder.CreateCall(state.libFunction("snprintf"), args);
  builder.CreateBr(merge);
  merge->insertInto(function_);
  builder.SetInsertPoint(merge);
}

llvm::Instruction *FunctionEmitter::countedLoop(Value *begin, Value *end, const std::string &name,
                                                const std::function<void(Value *)> &body) {
  BasicBlock *pre = builder.GetInsertBlock();
  BasicBlock *header = newBlock(name + ".header"), *bodyBB = newBlock(name + ".body");
  BasicBlock *exit = BasicBlock::Create(state.context, name + ".exit");
  builder.CreateBr(header);
  builder.SetInsertPoint(header);
  llvm::PHINode *i = builder.CreatePHI(builder.getInt64Ty(), 2, name);
  i->addIncoming(begin, pre);
  builder.CreateCondBr(builder.CreateICmpSLT(i, end), bodyBB, exit);
  builder.SetInsertPoint(bodyBB);
  body(i);
  // i < end <= INT64_MAX, so i + 1 cannot overflow.
  Value *next = builder.CreateAdd(i, builder.getInt64(1), name + ".next", false, true);
  llvm::Instruction *latch = builder.CreateBr(header);
  i->addIncoming(next, builder.GetInsertBlock());
  exit->insertInto(function_);
  builder.SetInsertPoint(exit);
  return latch;
}

void FunctionEmitter::forLoop(const For *op) {
  Value *begin = expr(op->min);
  Value *end =
      isConstInt(op->min, 0) ? expr(op->extent) : builder.CreateAdd(begin, expr(op->extent));
  std::string name = abi::cIdentifier(op->loopVar.name());
  ++loopDepth_;
  llvm::Instruction *latch = countedLoop(begin, end, name, [&](Value *i) {
    bind(op->loopVar, i);
    stmt(op->body);
  });
  --loopDepth_;
  // Loop metadata: the vectorizer with the loop's width, or full unrolling.
  std::vector<llvm::Metadata *> properties;
  llvm::LLVMContext &ctx = state.context;
  auto property = [&](const char *key, llvm::Metadata *value) {
    std::vector<llvm::Metadata *> ops = {llvm::MDString::get(ctx, key)};
    if (value)
      ops.push_back(value);
    properties.push_back(llvm::MDNode::get(ctx, ops));
  };
  if (op->forKind == ForKind::Vectorized) {
    // Without unroll.disable the full unroller would flatten a short loop before the
    // vectorizer sees it (the vectorizer marks the loop it leaves, so later unrolling of the
    // vector loop is unaffected).
    property("llvm.loop.vectorize.enable", llvm::ConstantAsMetadata::get(builder.getTrue()));
    property("llvm.loop.unroll.disable", nullptr);
    auto width = asConstInt(op->extent);
    if (width && *width >= 2 && *width <= 64 && (*width & (*width - 1)) == 0)
      property("llvm.loop.vectorize.width",
               llvm::ConstantAsMetadata::get(builder.getInt32(static_cast<uint32_t>(*width))));
  } else if (op->forKind == ForKind::Unrolled) {
    property("llvm.loop.unroll.full", nullptr);
  }
  if (properties.empty())
    return;
  std::vector<llvm::Metadata *> ops = {nullptr};
  ops.insert(ops.end(), properties.begin(), properties.end());
  llvm::MDNode *loopID = llvm::MDNode::getDistinct(ctx, ops);
  loopID->replaceOperandWith(0, loopID);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loopID);
}

/// A parallel loop: its body becomes `void NAME.parallel.K(ptr context)`, run by every thread
/// of GOMP_parallel(fn, &context, 0, 0) on its static chunk of the iterations (thread t of n
/// takes [min + t * c, min + (t + 1) * c) ∩ [min, min + extent) with c = ceil(extent / n)).
/// The context struct holds min, extent and the values of the variables and buffers the body
/// uses from outside.
void FunctionEmitter::parallelFor(const For *op) {
  llvm::LLVMContext &ctx = state.context;
  Value *minV = expr(op->min), *extent = expr(op->extent);
  FreeNames free;
  free.defined.insert(op->loopVar.get());
  free.visitStmt(op->body);
  std::vector<std::pair<const void *, Value *>> captured; // vars, then buffers
  std::vector<bool> isBuffer;
  for (const void *v : free.vars)
    if (auto it = vars_.find(v); it != vars_.end()) {
      captured.emplace_back(v, it->second);
      isBuffer.push_back(false);
    }
  for (const void *b : free.buffers)
    if (auto it = buffers_.find(b); it != buffers_.end()) {
      captured.emplace_back(b, it->second);
      isBuffer.push_back(true);
    }
  // The run-time checks' flag and message, shared by the threads.
  if (failed_ && contains<AssertStmt>(op->body)) {
    captured.emplace_back(&failed_, failed_);
    captured.emplace_back(&message_, message_);
    isBuffer.insert(isBuffer.end(), {true, true});
  }
  std::vector<llvm::Type *> fields = {builder.getInt64Ty(), builder.getInt64Ty()};
  for (auto &[key, value] : captured)
    fields.push_back(value->getType());
  llvm::StructType *contextType = llvm::StructType::get(ctx, fields);

  // The loop over one thread's chunk: `void NAME.parallel.K.body(i64 begin, i64 end,
  // captures...)`, whose buffer arguments are noalias like the entry's (allocations are
  // distinct memory too); inlined into the outlined function, they keep that information as
  // alias scopes.
  int index = state.nextOutlined[cName_]++;
  std::string name = cName_ + ".parallel." + std::to_string(index);
  std::vector<llvm::Type *> bodyParams = {builder.getInt64Ty(), builder.getInt64Ty()};
  for (auto &[key, value] : captured)
    bodyParams.push_back(value->getType());
  auto *bodyFn =
      llvm::Function::Create(llvm::FunctionType::get(builder.getVoidTy(), bodyParams, false),
                             llvm::GlobalValue::InternalLinkage, name + ".body", state.module);
  bodyFn->addFnAttr(llvm::Attribute::NoUnwind);
  bodyFn->getArg(0)->setName("begin");
  bodyFn->getArg(1)->setName("end");
  FunctionEmitter child(state, bodyFn, cName_);
  child.inOutlined_ = true;
  child.loopDepth_ = loopDepth_ + 1;
  child.builder.SetInsertPoint(BasicBlock::Create(ctx, "entry", bodyFn));
  for (size_t k = 0; k < captured.size(); ++k) {
    llvm::Argument *arg = bodyFn->getArg(static_cast<unsigned>(k + 2));
    arg->setName(captured[k].second->getName());
    if (isBuffer[k]) {
      bodyFn->addParamAttr(arg->getArgNo(), llvm::Attribute::NoAlias);
      bodyFn->addParamAttr(arg->getArgNo(), llvm::Attribute::NoCapture);
    }
    if (captured[k].first == &failed_)
      child.failed_ = arg;
    else if (captured[k].first == &message_)
      child.message_ = arg;
    else
      (isBuffer[k] ? child.buffers_ : child.vars_)[captured[k].first] = arg;
  }
  child.countedLoop(bodyFn->getArg(0), bodyFn->getArg(1), abi::cIdentifier(op->loopVar.name()),
                    [&](Value *i) {
                      child.bind(op->loopVar, i);
                      child.stmt(op->body);
                    });
  child.builder.CreateRetVoid();

  // What GOMP_parallel runs on every thread: `void NAME.parallel.K(ptr context)`.
  auto *fn = llvm::Function::Create(
      llvm::FunctionType::get(builder.getVoidTy(), {builder.getPtrTy()}, false),
      llvm::GlobalValue::InternalLinkage, name, state.module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->getArg(0)->setName("context");
  llvm::IRBuilder<> cb(BasicBlock::Create(ctx, "entry", fn));
  cb.setFastMathFlags(fastMathFlags(state.options));
  auto field = [&](unsigned k) {
    return cb.CreateLoad(fields[k], cb.CreateStructGEP(contextType, fn->getArg(0), k));
  };
  Value *cMin = field(0), *cExtent = field(1);
  std::vector<Value *> bodyArgs = {nullptr, nullptr};
  for (size_t k = 0; k < captured.size(); ++k) {
    Value *v = field(static_cast<unsigned>(k + 2));
    v->setName(captured[k].second->getName());
    bodyArgs.push_back(v);
  }
  Value *thread = cb.CreateSExt(cb.CreateCall(state.libFunction("omp_get_thread_num")),
                                cb.getInt64Ty(), "thread");
  Value *threads = cb.CreateSExt(cb.CreateCall(state.libFunction("omp_get_num_threads")),
                                 cb.getInt64Ty(), "threads");
  Value *chunk =
      cb.CreateSDiv(cb.CreateSub(cb.CreateAdd(cExtent, threads), cb.getInt64(1)), threads, "chunk");
  Value *begin = cb.CreateAdd(cMin, cb.CreateMul(thread, chunk), "begin");
  Value *end = cb.CreateBinaryIntrinsic(llvm::Intrinsic::smin, cb.CreateAdd(begin, chunk),
                                        cb.CreateAdd(cMin, cExtent), nullptr, "end");
  bodyArgs[0] = begin;
  bodyArgs[1] = end;
  cb.CreateCall(bodyFn, bodyArgs);
  cb.CreateRetVoid();

  // The caller: fill the context, start the team (only when there is work).
  llvm::AllocaInst *context = entryAlloca(contextType, nullptr, "parallel.context");
  auto store = [&](unsigned k, Value *v) {
    builder.CreateStore(v, builder.CreateStructGEP(contextType, context, k));
  };
  store(0, minV);
  store(1, extent);
  for (size_t k = 0; k < captured.size(); ++k)
    store(static_cast<unsigned>(k + 2), captured[k].second);
  BasicBlock *run = newBlock("parallel.run");
  BasicBlock *done = BasicBlock::Create(ctx, "parallel.end");
  builder.CreateCondBr(builder.CreateICmpSGT(extent, builder.getInt64(0)), run, done);
  builder.SetInsertPoint(run);
  builder.CreateCall(state.libFunction("GOMP_parallel"),
                     {fn, context, builder.getInt32(0), builder.getInt32(0)});
  builder.CreateBr(done);
  done->insertInto(function_);
  builder.SetInsertPoint(done);
}

void FunctionEmitter::allocate(const Allocate *op) {
  const Buffer &b = op->buffer;
  TDSL_IR_CHECK(b.rank() == 1, "the LLVM backend takes flattened buffers");
  llvm::Type *element = state.storageType(b.dtype().element());
  std::string name = abi::cIdentifier(b.name());
  auto size = asConstInt(b.shape()[0]);
  if (size && *size * b.dtype().storageBytes() <= kStackBytes) {
    llvm::AllocaInst *mem = entryAlloca(
        element, builder.getInt64(static_cast<uint64_t>(std::max<int64_t>(*size, 1))), name);
    mem->setAlignment(
        llvm::Align(*size * b.dtype().storageBytes() >= kHeapAlign ? kHeapAlign : 16));
    bind(b, mem);
    stmt(op->body);
    return;
  }
  // aligned_alloc(64, bytes rounded up to 64): C11 wants a multiple of the alignment.
  Value *count =
      builder.CreateBinaryIntrinsic(llvm::Intrinsic::smax, expr(b.shape()[0]), builder.getInt64(1));
  Value *bytes =
      builder.CreateMul(count, builder.getInt64(static_cast<uint64_t>(b.dtype().storageBytes())));
  bytes = builder.CreateAnd(builder.CreateAdd(bytes, builder.getInt64(kHeapAlign - 1)),
                            builder.getInt64(~static_cast<uint64_t>(kHeapAlign - 1)));
  bool tracked = loopDepth_ == 0 && !inOutlined_;
  if (!size && !tracked) {
    // A symbolic allocation in a loop (a row buffer of softmax under compute_at): on the stack
    // when it holds at most kStackBytes (stacksave/stackrestore around each iteration's), as
    // an aligned_alloc per iteration cost a quarter of nn.softmax's time; else on the heap.
    Value *small = builder.CreateICmpULE(bytes, builder.getInt64(kStackBytes));
    BasicBlock *stackBB = newBlock(name + ".stack"), *heapBB = newBlock(name + ".heap");
    BasicBlock *join = BasicBlock::Create(state.context, name + ".mem");
    builder.CreateCondBr(small, stackBB, heapBB);
    builder.SetInsertPoint(stackBB);
    Value *saved = builder.CreateStackSave();
    llvm::AllocaInst *onStack = builder.CreateAlloca(builder.getInt8Ty(), bytes, name);
    onStack->setAlignment(llvm::Align(kHeapAlign));
    BasicBlock *stackEnd = builder.GetInsertBlock();
    builder.CreateBr(join);
    builder.SetInsertPoint(heapBB);
    Value *onHeap = builder.CreateCall(state.libFunction("aligned_alloc"),
                                       {builder.getInt64(kHeapAlign), bytes}, name);
    BasicBlock *oom = newBlock(name + ".oom");
    BasicBlock *heapEnd = builder.GetInsertBlock();
    builder.CreateCondBr(builder.CreateIsNull(onHeap), oom, join);
    builder.SetInsertPoint(oom);
    builder.CreateCall(state.libFunction("abort")); // on a loop's iteration: nothing to return to
    builder.CreateUnreachable();
    join->insertInto(function_);
    builder.SetInsertPoint(join);
    llvm::PHINode *mem = builder.CreatePHI(builder.getPtrTy(), 2, name);
    mem->addIncoming(onStack, stackEnd);
    mem->addIncoming(onHeap, heapEnd);
    llvm::PHINode *sp = builder.CreatePHI(saved->getType(), 2, name + ".sp");
    sp->addIncoming(saved, stackEnd);
    sp->addIncoming(llvm::PoisonValue::get(saved->getType()), heapEnd);
    bind(b, mem);
    stmt(op->body);
    BasicBlock *restore = newBlock(name + ".restore"), *release = newBlock(name + ".free");
    BasicBlock *after = BasicBlock::Create(state.context, name + ".end");
    builder.CreateCondBr(small, restore, release);
    builder.SetInsertPoint(restore);
    builder.CreateStackRestore(sp);
    builder.CreateBr(after);
    builder.SetInsertPoint(release);
    builder.CreateCall(state.libFunction("free"), {mem});
    builder.CreateBr(after);
    after->insertInto(function_);
    builder.SetInsertPoint(after);
    return;
  }
  Value *mem = builder.CreateCall(state.libFunction("aligned_alloc"),
                                  {builder.getInt64(kHeapAlign), bytes}, name);
  BasicBlock *ok = newBlock(name + ".ok"), *fail = newBlock(name + ".oom");
  builder.CreateCondBr(builder.CreateIsNull(mem), fail, ok);
  builder.SetInsertPoint(fail);
  if (loopDepth_ == 0 && !inOutlined_) {
    // As the C++ backend: the message in tdsl_last_error() and status 1 (the allocations
    // made before this one released).
    std::string message = cName_ + ": out of memory for '" + b.name() + "'";
    builder.CreateCall(state.libFunction("snprintf"),
                       {state.lastErrorAddress(builder), builder.getInt64(512),
                        builder.CreateGlobalString(message)});
    releaseHeap();
    builder.CreateRet(builder.getInt32(1));
  } else { // inside a loop (possibly on another thread): nothing to return to
    builder.CreateCall(state.libFunction("abort"));
    builder.CreateUnreachable();
  }
  builder.SetInsertPoint(ok);
  bind(b, mem);
  if (tracked)
    heap_.push_back(mem);
  stmt(op->body);
  if (tracked)
    heap_.pop_back();
  builder.CreateCall(state.libFunction("free"), {mem});
}

void FunctionEmitter::releaseHeap() {
  for (size_t i = heap_.size(); i-- > 0;)
    builder.CreateCall(state.libFunction("free"), {heap_[i]});
}

void FunctionEmitter::bufferView(const BufferView *op) {
  TDSL_IR_CHECK(op->buffer.rank() == 1, "the LLVM backend takes flattened buffers");
  auto it = buffers_.find(op->source.get());
  TDSL_IR_CHECK(it != buffers_.end(), "a view of a buffer not in scope");
  Value *base = it->second;
  Value *view = isConstInt(op->byteOffset, 0)
                    ? base
                    : builder.CreateInBoundsGEP(builder.getInt8Ty(), base, {expr(op->byteOffset)},
                                                abi::cIdentifier(op->buffer.name()));
  bind(op->buffer, view);
  stmt(op->body);
}

void FunctionEmitter::funcCall(const FuncCall *op) {
  TDSL_IR_CHECK(loopDepth_ == 0 && !inOutlined_,
                "a call of a raw entry is made outside any loop (lowered graphs)");
  llvm::FunctionCallee callee;
  llvm::AttributeList attrs;
  if (auto it = state.rawEntries.find(op->callee); it != state.rawEntries.end()) {
    callee = it->second;
    attrs = it->second->getAttributes();
  } else {
    auto x = state.externs.find(op->callee);
    TDSL_IR_CHECK(x != state.externs.end(),
                  "a graph calls a function that is neither emitted nor a given extern");
    callee = state.externFunction(*x->second);
    attrs = llvm::cast<llvm::Function>(callee.getCallee())->getAttributes();
  }
  llvm::FunctionType *type = callee.getFunctionType();
  TDSL_IR_CHECK(type->getNumParams() == op->args.size(),
                "a raw-entry call with the callee's number of arguments");
  std::vector<Value *> args;
  for (const auto &arg : op->args) {
    if (const auto *b = std::get_if<Buffer>(&arg)) {
      auto it = buffers_.find(b->get());
      TDSL_IR_CHECK(it != buffers_.end(), "a call argument not in scope");
      args.push_back(it->second);
      continue;
    }
    const Expr &e = std::get<Expr>(arg);
    Value *v = toStorage(expr(e), e.dtype()); // bool as a byte, f16/bf16 as bits
    llvm::Type *want = type->getParamType(static_cast<unsigned>(args.size()));
    TDSL_IR_CHECK(v->getType() == want, "a scalar argument of the callee's ABI type");
    args.push_back(v);
  }
  llvm::CallInst *call = builder.CreateCall(callee, args, "status");
  call->setAttributes(attrs);
  // Non-zero: release what this function allocated and return the callee's status (its
  // message stays in tdsl_last_error()).
  BasicBlock *fail = newBlock("call.fail"), *ok = newBlock("call.ok");
  builder.CreateCondBr(builder.CreateICmpEQ(call, builder.getInt32(0)), ok, fail);
  builder.SetInsertPoint(fail);
  releaseHeap();
  builder.CreateRet(call);
  builder.SetInsertPoint(ok);
}

} // namespace detail

// ---------------------------------------------------------------------------------------------
// The module
// ---------------------------------------------------------------------------------------------

std::string externSymbolClash(const LoweredModule &module) {
  std::map<std::string, std::string> emitted; // C name -> function
  std::vector<Func> sources = module.sources();
  std::vector<std::string> names = abi::cFunctionNames(module);
  for (size_t i = 0; i < sources.size(); ++i)
    emitted[names[i]] = sources[i].name();
  static const std::set<std::string> runtime = {"malloc",
                                                "aligned_alloc",
                                                "free",
                                                "abort",
                                                "snprintf",
                                                "erf",
                                                "erff",
                                                "GOMP_parallel",
                                                "omp_get_thread_num",
                                                "omp_get_num_threads",
                                                "tdsl_last_error",
                                                "tdsl_profile_begin",
                                                "tdsl_profile_end",
                                                "_ZN14tdsl_generated10last_errorE"};
  // The raw-entry type of an extern, as text: dtypes of inputs, outputs, shape variables.
  auto signature = [](const ExternFunc &x) {
    std::string out;
    for (const FuncParam &p : x.inputs)
      out += (p.isTensor() ? "*" + p.buffer.dtype().name() : p.scalar.dtype().name()) + ",";
    for (const Buffer &b : x.outputs)
      out += "*" + b.dtype().name() + ",";
    return out + std::to_string(x.shapeVars.size());
  };
  std::map<std::string, const ExternFunc *> declared; // symbol -> first extern
  for (const std::string &callee : module.calledFunctions) {
    const ExternFunc *x = nullptr;
    for (const Func &f : module.externs)
      if (f.name() == callee)
        x = f.as<ExternFunc>();
    if (!x)
      continue;
    std::string what = "extern func '" + x->name + "' has the symbol '" + x->symbol + "', ";
    if (auto it = emitted.find(x->symbol); it != emitted.end())
      return what + "which is also the C name of the emitted function '" + it->second + "'";
    if (runtime.count(x->symbol) || x->symbol.rfind("tdsl.", 0) == 0)
      return what + "which the emitted code uses for itself";
    auto [it, inserted] = declared.emplace(x->symbol, x);
    if (!inserted && it->second != x && signature(*it->second) != signature(*x))
      return what + "which extern func '" + it->second->name + "' declares with other types";
  }
  return "";
}

std::unique_ptr<llvm::Module> emitModule(llvm::LLVMContext &context, const std::string &name,
                                         const LoweredModule &lowered,
                                         const CodeGenOptions &options) {
  auto module = std::make_unique<llvm::Module>(name, context);
  module->setSourceFileName(name);
  detail::ModuleState state(*module, options);
  for (const Func &f : lowered.externs)
    if (const auto *x = f.as<ExternFunc>())
      state.externs[x->name] = x;
  detail::emitLastError(state);
  // Graph constants (spec §8): private read-only globals, 64-byte aligned (the arena's and
  // callees' vector loads may assume it), holding the bytes in storage order.
  for (size_t i = 0; i < lowered.constants.size(); ++i) {
    const LoweredConstant &c = lowered.constants[i];
    llvm::Type *element = state.storageType(c.flat.dtype());
    uint64_t count = static_cast<uint64_t>(c.source.numElements());
    const std::vector<uint8_t> &bytes = *c.source.data;
    TDSL_IR_CHECK(bytes.size() == count * static_cast<uint64_t>(c.flat.dtype().storageBytes()),
                  "a constant's data does not match its type");
    llvm::Constant *init = llvm::ConstantDataArray::getRaw(
        llvm::StringRef(reinterpret_cast<const char *>(bytes.data()), bytes.size()), count,
        element);
    auto *global = new llvm::GlobalVariable(*module, init->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, init,
                                            "tdsl.const." + c.source.name);
    global->setAlignment(llvm::Align(64));
    state.constants.emplace_back(c.flat, global);
  }
  std::vector<std::string> names = abi::cFunctionNames(lowered);
  for (size_t i = 0; i < lowered.funcs.size(); ++i) {
    // A graph's DLPack entry validates its signature (inputs, one output per result).
    const LoweredFunc &f = lowered.funcs[i];
    const auto *prim = f.signature.as<PrimFunc>();
    const auto *low = f.lowered.as<PrimFunc>();
    TDSL_IR_CHECK(prim && low, "the LLVM backend emits PrimFuncs and lowered graphs");
    llvm::Function *raw = detail::emitRawEntry(state, low, names[i], f.exported);
    state.rawEntries[f.source.name()] = raw;
    if (f.exported)
      detail::emitDlpackEntry(state, prim, low, raw, names[i]);
  }
  if (options.packedEntries)
    addPackedEntries(*module, lowered);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(*module, &os)) {
    os.flush();
    llvm::errs() << errors;
    TDSL_IR_CHECK(false, "the LLVM backend built an invalid module");
  }
  return module;
}

} // namespace tdsl::llvmgen

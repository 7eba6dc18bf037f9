//===- backends/llvm/ABI.cpp - Entries of spec §10: raw, DLPack, packed, tdsl_last_error ---===//
#include "backends/llvm/CodeGenInternal.h"

#include "backends/abi/Abi.h"
#include "ir/Contains.h"

using namespace tdsl::ir;
using llvm::BasicBlock;
using llvm::Value;

namespace tdsl::llvmgen::detail {

namespace {

/// The C++ backend's `inline thread_local char tdsl_generated::last_error[512]`: the same
/// mangled name in a COMDAT of its own, so that C++ and LLVM objects share one buffer.
const char *kLastErrorSymbol = "_ZN14tdsl_generated10last_errorE";
constexpr uint64_t kLastErrorSize = 512;

/// The attributes C compilers give such parameters: pointers do not alias (each buffer is a
/// separate tensor), i8/i16 scalars are extended by the caller as their C type says.
void setEntryAttributes(llvm::AttributeList &attrs, llvm::LLVMContext &ctx,
                        const std::vector<DType> &scalarTypes, const std::vector<bool> &isPointer) {
  for (unsigned i = 0; i < isPointer.size(); ++i) {
    if (isPointer[i]) {
      attrs = attrs.addParamAttribute(ctx, i, llvm::Attribute::NoAlias);
      attrs = attrs.addParamAttribute(ctx, i, llvm::Attribute::NoCapture);
      continue;
    }
    DType t = scalarTypes[i];
    int bytes = t.storageBytes();
    if (bytes < 4)
      attrs = attrs.addParamAttribute(ctx, i,
                                      t.isInt() ? llvm::Attribute::SExt : llvm::Attribute::ZExt);
  }
}

/// Per raw-entry argument: its dtype (i64 for shape variables, the element type for buffers)
/// and whether it is a pointer.
void rawArguments(const PrimFunc *lowered, std::vector<DType> &types,
                  std::vector<bool> &isPointer) {
  for (const FuncParam &p : lowered->inputs) {
    types.push_back(p.isTensor() ? p.buffer.dtype() : p.scalar.dtype());
    isPointer.push_back(p.isTensor());
  }
  for (const Buffer &b : lowered->outputs) {
    types.push_back(b.dtype());
    isPointer.push_back(true);
  }
  for (size_t i = 0; i < lowered->shapeVars.size(); ++i) {
    types.push_back(DType::i64());
    isPointer.push_back(false);
  }
}

llvm::AttributeList rawAttributes(ModuleState &state, const PrimFunc *lowered) {
  std::vector<DType> types;
  std::vector<bool> isPointer;
  rawArguments(lowered, types, isPointer);
  llvm::AttributeList attrs;
  setEntryAttributes(attrs, state.context, types, isPointer);
  return attrs.addFnAttribute(state.context, llvm::Attribute::NoUnwind);
}

} // namespace

llvm::GlobalVariable *ModuleState::lastErrorBuffer() {
  if (lastError_)
    return lastError_;
  auto *type = llvm::ArrayType::get(llvm::Type::getInt8Ty(context), kLastErrorSize);
  lastError_ = new llvm::GlobalVariable(module, type, false, llvm::GlobalValue::LinkOnceODRLinkage,
                                        llvm::Constant::getNullValue(type), kLastErrorSymbol);
  lastError_->setComdat(module.getOrInsertComdat(kLastErrorSymbol));
  if (options.threadLocalError)
    lastError_->setThreadLocal(true);
  return lastError_;
}

llvm::Value *ModuleState::lastErrorAddress(llvm::IRBuilder<> &builder) {
  llvm::GlobalVariable *buffer = lastErrorBuffer();
  if (buffer->isThreadLocal())
    return builder.CreateThreadLocalAddress(buffer);
  return buffer;
}

llvm::FunctionCallee ModuleState::externFunction(const ExternFunc &x) {
  std::vector<llvm::Type *> params;
  std::vector<DType> types;
  std::vector<bool> isPointer;
  for (const FuncParam &p : x.inputs) {
    types.push_back(p.isTensor() ? p.buffer.dtype() : p.scalar.dtype());
    isPointer.push_back(p.isTensor());
  }
  for (const Buffer &b : x.outputs) {
    types.push_back(b.dtype());
    isPointer.push_back(true);
  }
  for (size_t i = 0; i < x.shapeVars.size(); ++i) {
    types.push_back(DType::i64());
    isPointer.push_back(false);
  }
  for (size_t i = 0; i < types.size(); ++i)
    params.push_back(isPointer[i] ? llvm::PointerType::getUnqual(context) : storageType(types[i]));
  auto *type = llvm::FunctionType::get(llvm::Type::getInt32Ty(context), params, false);
  llvm::FunctionCallee callee = module.getOrInsertFunction(x.symbol, type);
  auto *fn = llvm::dyn_cast<llvm::Function>(callee.getCallee());
  TDSL_IR_CHECK(fn && fn->getFunctionType() == type && fn->isDeclaration(),
                "an extern symbol that no emitted function defines, declared with one type");
  // Library code: no noalias or nounwind promised, only the C calling convention's
  // extension of small scalars.
  for (unsigned i = 0; i < types.size(); ++i)
    if (!isPointer[i] && types[i].storageBytes() < 4)
      fn->addParamAttr(i, types[i].isInt() ? llvm::Attribute::SExt : llvm::Attribute::ZExt);
  return callee;
}

void emitLastError(ModuleState &state) {
  // Weak, as in the C++ backend: every object defines it, the program keeps one.
  llvm::IRBuilder<> b(state.context);
  auto *fn =
      llvm::Function::Create(llvm::FunctionType::get(b.getPtrTy(), false),
                             llvm::GlobalValue::WeakAnyLinkage, "tdsl_last_error", state.module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  b.SetInsertPoint(BasicBlock::Create(state.context, "entry", fn));
  b.CreateRet(state.lastErrorAddress(b));
}

llvm::FunctionType *rawEntryType(ModuleState &state, const PrimFunc *lowered) {
  std::vector<DType> types;
  std::vector<bool> isPointer;
  rawArguments(lowered, types, isPointer);
  std::vector<llvm::Type *> params;
  for (size_t i = 0; i < types.size(); ++i)
    params.push_back(isPointer[i] ? llvm::PointerType::getUnqual(state.context)
                                  : state.storageType(types[i]));
  return llvm::FunctionType::get(llvm::Type::getInt32Ty(state.context), params, false);
}

llvm::Function *emitRawEntry(ModuleState &state, const PrimFunc *lowered, const std::string &cName,
                             bool exported) {
  // Only the file's own items are exported (spec §10): what it needs from imported modules is
  // internal, so that two objects importing the same module link together.
  auto *fn = llvm::Function::Create(rawEntryType(state, lowered),
                                    exported ? llvm::GlobalValue::ExternalLinkage
                                             : llvm::GlobalValue::InternalLinkage,
                                    cName, state.module);
  fn->setAttributes(rawAttributes(state, lowered));
  FunctionEmitter e(state, fn, cName);
  e.builder.SetInsertPoint(BasicBlock::Create(state.context, "entry", fn));
  unsigned arg = 0;
  auto next = [&](const std::string &name) {
    Value *v = fn->getArg(arg++);
    v->setName(abi::cIdentifier(name));
    return v;
  };
  for (const FuncParam &p : lowered->inputs) {
    if (p.isTensor()) {
      e.bind(p.buffer, next(p.buffer.name()));
      continue;
    }
    Value *v = next(p.scalar.name());
    Value *value = e.fromStorage(v, p.scalar.dtype()); // bool and f16/bf16 bits to values
    if (value != v)
      value->setName(v->getName() + ".value");
    e.bind(p.scalar, value);
  }
  for (const Buffer &b : lowered->outputs)
    e.bind(b, next(b.name()));
  for (const Var &v : lowered->shapeVars)
    e.bind(v, next(v.name()));
  for (const auto &[buffer, global] : state.constants)
    e.bind(buffer, global);
  bool checks = contains<AssertStmt>(lowered->body);
  if (checks)
    e.beginChecks();
  e.stmt(lowered->body);
  if (checks)
    e.endChecks();
  e.builder.CreateRet(e.builder.getInt32(0));
  return fn;
}

/// `NAME_dlpack`: validates every tensor argument in signature order (null, device, dtype,
/// rank, dimensions bound to shape variables, compactness), then every shape variable, then
/// the dimensions given by expressions, and calls the raw entry. Each failure writes the C++
/// backend's message into tdsl_last_error() and returns 1 before anything is written.
void emitDlpackEntry(ModuleState &state, const PrimFunc *source, const PrimFunc *lowered,
                     llvm::Function *raw, const std::string &cName) {
  llvm::LLVMContext &ctx = state.context;
  llvm::Type *ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i8 = llvm::Type::getInt8Ty(ctx), *i16 = llvm::Type::getInt16Ty(ctx);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx), *i64 = llvm::Type::getInt64Ty(ctx);
  // struct DLTensor { void *data; DLDevice device; int32_t ndim; DLDataType dtype;
  //                   int64_t *shape; int64_t *strides; uint64_t byte_offset; }
  llvm::StructType *device = llvm::StructType::get(ctx, {i32, i32});
  llvm::StructType *dtype = llvm::StructType::get(ctx, {i8, i8, i16});
  llvm::StructType *tensorType =
      llvm::StructType::get(ctx, {ptr, device, i32, dtype, ptr, ptr, i64});

  // Parameters: tensors as DLTensor pointers, scalars as in the raw entry.
  std::vector<llvm::Type *> params;
  std::vector<DType> types;
  std::vector<bool> isPointer;
  for (const FuncParam &p : source->inputs) {
    params.push_back(p.isTensor() ? ptr : state.storageType(p.scalar.dtype()));
    types.push_back(p.isTensor() ? p.buffer.dtype() : p.scalar.dtype());
    isPointer.push_back(p.isTensor());
  }
  for (const Buffer &b : source->outputs) {
    params.push_back(ptr);
    types.push_back(b.dtype());
    isPointer.push_back(true);
  }
  auto *fn =
      llvm::Function::Create(llvm::FunctionType::get(i32, params, false),
                             llvm::GlobalValue::ExternalLinkage, cName + "_dlpack", state.module);
  llvm::AttributeList attrs;
  setEntryAttributes(attrs, ctx, types, isPointer);
  fn->setAttributes(attrs.addFnAttribute(ctx, llvm::Attribute::NoUnwind));
  // DLTensor pointers may alias (one tensor passed twice is caught by nothing here either).
  for (unsigned i = 0; i < isPointer.size(); ++i)
    if (isPointer[i])
      fn->removeParamAttr(i, llvm::Attribute::NoAlias);

  FunctionEmitter e(state, fn, cName);
  llvm::IRBuilder<> &b = e.builder;
  b.SetInsertPoint(BasicBlock::Create(ctx, "entry", fn));
  std::vector<std::pair<Buffer, Value *>> tensors; // source buffer, DLTensor pointer
  for (size_t i = 0; i < source->inputs.size(); ++i) {
    const FuncParam &p = source->inputs[i];
    fn->getArg(static_cast<unsigned>(i))->setName(abi::cIdentifier(p.name()));
    if (p.isTensor())
      tensors.emplace_back(p.buffer, fn->getArg(static_cast<unsigned>(i)));
  }
  for (size_t i = 0; i < source->outputs.size(); ++i) {
    Value *arg = fn->getArg(static_cast<unsigned>(source->inputs.size() + i));
    arg->setName(abi::cIdentifier(source->outputs[i].name()));
    tensors.emplace_back(source->outputs[i], arg);
  }

  std::map<const VarNode *, llvm::AllocaInst *> shapeVars;
  for (const Var &v : lowered->shapeVars) {
    llvm::AllocaInst *slot = b.CreateAlloca(i64, nullptr, abi::cIdentifier(v.name()));
    b.CreateStore(b.getInt64(static_cast<uint64_t>(-1)), slot);
    shapeVars[v.get()] = slot;
  }
  b.CreateStore(b.getInt8(0), state.lastErrorAddress(b));

  // Goes on when `ok` holds; otherwise formats the message (arguments made in the failure
  // block) and returns 1.
  auto check = [&](Value *ok, const std::string &format,
                   const std::function<std::vector<Value *>()> &args) {
    BasicBlock *fail = e.newBlock("fail"), *pass = e.newBlock("ok");
    b.CreateCondBr(ok, pass, fail);
    b.SetInsertPoint(fail);
    std::vector<Value *> callArgs = {state.lastErrorAddress(b), b.getInt64(kLastErrorSize),
                                     b.CreateGlobalString(cName + ": " + format)};
    for (Value *v : args ? args() : std::vector<Value *>())
      callArgs.push_back(v);
    b.CreateCall(state.libFunction("snprintf"), callArgs);
    b.CreateRet(b.getInt32(1));
    b.SetInsertPoint(pass);
  };
  auto fieldPtr = [&](Value *t, unsigned field) { return b.CreateStructGEP(tensorType, t, field); };
  auto dimension = [&](Value *t, size_t d) {
    Value *shape = b.CreateLoad(ptr, fieldPtr(t, 4), "shape");
    return b.CreateLoad(i64, b.CreateInBoundsGEP(i64, shape, {b.getInt64(d)}), "dim");
  };

  for (const auto &[buffer, t] : tensors) {
    DType dt = buffer.dtype();
    std::string q = "'" + buffer.name() + "'";
    check(b.CreateIsNotNull(t), "argument " + q + " is null", {});
    Value *deviceType =
        b.CreateLoad(i32, b.CreateStructGEP(device, fieldPtr(t, 1), 0), "device_type");
    check(b.CreateICmpEQ(deviceType, b.getInt32(1)),
          "argument " + q + " is not on the CPU (device type %d)",
          [&] { return std::vector<Value *>{deviceType}; });
    Value *code = b.CreateLoad(i8, b.CreateStructGEP(dtype, fieldPtr(t, 3), 0), "code");
    Value *bits = b.CreateLoad(i8, b.CreateStructGEP(dtype, fieldPtr(t, 3), 1), "bits");
    Value *lanes = b.CreateLoad(i16, b.CreateStructGEP(dtype, fieldPtr(t, 3), 2), "lanes");
    auto [wantCode, wantBits] = abi::dlpackType(dt);
    Value *codeOk = b.CreateICmpEQ(code, b.getInt8(static_cast<uint8_t>(wantCode)));
    if (dt.isBool()) // kDLBool
      codeOk = b.CreateOr(codeOk, b.CreateICmpEQ(code, b.getInt8(6)));
    Value *typeOk = b.CreateAnd(
        b.CreateAnd(codeOk, b.CreateICmpEQ(bits, b.getInt8(static_cast<uint8_t>(wantBits)))),
        b.CreateICmpEQ(lanes, b.getInt16(1)));
    check(typeOk,
          "argument " + q + " should have dtype " + dt.name() + ", got code %d bits %d lanes %d",
          [&] {
            return std::vector<Value *>{b.CreateZExt(code, i32), b.CreateZExt(bits, i32),
                                        b.CreateZExt(lanes, i32)};
          });
    Value *ndim = b.CreateLoad(i32, fieldPtr(t, 2), "ndim");
    std::string rank = std::to_string(buffer.rank());
    check(b.CreateICmpEQ(ndim, b.getInt32(static_cast<uint32_t>(buffer.rank()))),
          "argument " + q + " should have rank " + rank + ", got %d",
          [&] { return std::vector<Value *>{ndim}; });
    for (size_t d = 0; d < buffer.rank(); ++d) {
      const auto *ref = buffer.shape()[d].as<VarRef>();
      if (!ref || !shapeVars.count(ref->var.get()))
        continue;
      llvm::AllocaInst *slot = shapeVars[ref->var.get()];
      Value *dim = dimension(t, d);
      Value *bound = b.CreateLoad(i64, slot);
      Value *unbound = b.CreateICmpSLT(bound, b.getInt64(0));
      auto values = [&] { return std::vector<Value *>{dim, bound}; };
      check(b.CreateOr(unbound, b.CreateICmpEQ(bound, dim)),
            "dimension " + std::to_string(d) + " of argument " + q + " is %lld but " +
                ref->var.name() + " is %lld",
            values);
      b.CreateStore(b.CreateSelect(unbound, dim, bound), slot);
    }
    // Compact: no strides, or row-major ones (a dimension of extent 1 may have any stride).
    Value *strides = b.CreateLoad(ptr, fieldPtr(t, 5), "strides");
    BasicBlock *checkStrides = e.newBlock("strides"), *compact = e.newBlock("compact");
    b.CreateCondBr(b.CreateIsNull(strides), compact, checkStrides);
    b.SetInsertPoint(checkStrides);
    Value *expected = b.getInt64(1), *bad = b.getFalse();
    for (size_t d = buffer.rank(); d-- > 0;) {
      Value *dim = dimension(t, d);
      Value *stride =
          b.CreateLoad(i64, b.CreateInBoundsGEP(i64, strides, {b.getInt64(d)}), "stride");
      bad = b.CreateOr(
          bad, b.CreateAnd(b.CreateICmpNE(dim, b.getInt64(1)), b.CreateICmpNE(stride, expected)));
      expected = b.CreateMul(expected, dim);
    }
    check(b.CreateNot(bad), "argument " + q + " is not compact (row-major strides expected)", {});
    b.CreateBr(compact);
    b.SetInsertPoint(compact);
  }
  for (const Var &v : lowered->shapeVars) {
    Value *value = b.CreateLoad(i64, shapeVars[v.get()]);
    check(b.CreateICmpSGE(value, b.getInt64(0)),
          "shape variable " + v.name() + " is not bound by any argument", {});
  }
  // Dimensions given by constants or expressions, once every shape variable is bound.
  for (const Var &v : lowered->shapeVars)
    e.bind(v, b.CreateLoad(i64, shapeVars[v.get()], abi::cIdentifier(v.name())));
  for (const auto &[buffer, t] : tensors)
    for (size_t d = 0; d < buffer.rank(); ++d) {
      if (buffer.shape()[d].as<VarRef>())
        continue;
      Value *dim = dimension(t, d);
      Value *want = e.expr(buffer.shape()[d]);
      auto values = [&] { return std::vector<Value *>{dim, want}; };
      check(b.CreateICmpEQ(dim, want),
            "dimension " + std::to_string(d) + " of argument '" + buffer.name() +
                "' is %lld, expected %lld",
            values);
    }

  std::vector<Value *> args;
  auto data = [&](Value *t) {
    Value *base = b.CreateLoad(ptr, fieldPtr(t, 0), "data");
    Value *offset = b.CreateLoad(i64, fieldPtr(t, 6), "byte_offset");
    return b.CreateInBoundsGEP(i8, base, {offset});
  };
  for (size_t i = 0; i < source->inputs.size(); ++i)
    args.push_back(source->inputs[i].isTensor()
                       ? data(fn->getArg(static_cast<unsigned>(i)))
                       : static_cast<Value *>(fn->getArg(static_cast<unsigned>(i))));
  for (size_t i = 0; i < source->outputs.size(); ++i)
    args.push_back(data(fn->getArg(static_cast<unsigned>(source->inputs.size() + i))));
  for (const Var &v : lowered->shapeVars)
    args.push_back(e.expr(VarRef::make(v)));
  llvm::CallInst *result = b.CreateCall(raw, args);
  result->setAttributes(raw->getAttributes());
  b.CreateRet(result);
}

} // namespace tdsl::llvmgen::detail

namespace tdsl::llvmgen {

std::string packedEntryName(const std::string &cName) { return cName + ".packed"; }

void addPackedEntries(llvm::Module &module, const LoweredModule &lowered) {
  CodeGenOptions options;
  detail::ModuleState state(module, options);
  std::vector<std::string> names = abi::cFunctionNames(lowered);
  llvm::IRBuilder<> b(module.getContext());
  llvm::Type *ptr = b.getPtrTy();
  for (size_t i = 0; i < lowered.funcs.size(); ++i) {
    if (!lowered.funcs[i].exported)
      continue; // private to its object: no symbol to call
    const auto *low = lowered.funcs[i].lowered.as<PrimFunc>();
    llvm::FunctionType *rawType = detail::rawEntryType(state, low);
    llvm::AttributeList attrs = detail::rawAttributes(state, low);
    llvm::FunctionCallee raw = module.getOrInsertFunction(names[i], rawType, attrs);
    auto *fn = llvm::Function::Create(llvm::FunctionType::get(b.getInt32Ty(), {ptr}, false),
                                      llvm::GlobalValue::ExternalLinkage, packedEntryName(names[i]),
                                      module);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    b.SetInsertPoint(BasicBlock::Create(module.getContext(), "entry", fn));
    std::vector<DType> types;
    std::vector<bool> isPointer;
    detail::rawArguments(low, types, isPointer);
    std::vector<Value *> args;
    for (size_t k = 0; k < types.size(); ++k) {
      Value *slot = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), k));
      args.push_back(isPointer[k]
                         ? slot
                         : b.CreateLoad(rawType->getParamType(static_cast<unsigned>(k)), slot));
    }
    llvm::CallInst *call = b.CreateCall(raw, args);
    call->setAttributes(attrs);
    b.CreateRet(call);
  }
}

} // namespace tdsl::llvmgen

//===- backends/llvm/JIT.cpp - Running emitted code in-process (ORC LLJIT) ----------------===//
#include "backends/llvm/JIT.h"

#include "backends/abi/Abi.h"
#include "backends/llvm/LLVMBackend.h"
#include "runtime/Float16.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdlib>
#include <cstring>

#include <dlfcn.h>

namespace tdsl::llvmgen {

namespace {
/// LLVM's OpenMP runtime (Debian's libomp-19-dev); $TDSL_OMP_LIBRARY overrides it.
const char *kOpenMPLibrary = "/usr/lib/llvm-19/lib/libomp.so";
} // namespace

struct Jit::Impl {
  TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine; // for optimizeModule
  char vectorMath = 0; // CodeGenOptions::vectorMath: 0 unless libmvec is loaded
  std::unique_ptr<llvm::orc::LLJIT> jit;
  /// tdsl_last_error() of each loaded library that defines one: a failing extern writes its
  /// message to its own copy of the buffer (thread-local storage the JIT does not share).
  std::vector<const char *(*)()> libraryErrors;
};

Jit::Jit() : impl_(std::make_unique<Impl>()) {}
Jit::~Jit() = default;

std::unique_ptr<Jit> Jit::create(const TargetOptions &options, std::string &error) {
  ResolvedTarget resolved;
  if (!resolveTarget(options, resolved, error))
    return nullptr;
  std::unique_ptr<Jit> self(new Jit());
  self->impl_->options = options;
  self->impl_->machine = createTargetMachine(options, error);
  if (!self->impl_->machine)
    return nullptr;
  llvm::orc::JITTargetMachineBuilder target{llvm::Triple(resolved.triple)};
  target.setCPU(resolved.cpu);
  std::vector<std::string> features;
  for (llvm::StringRef rest = resolved.features; !rest.empty();) {
    auto [head, tail] = rest.split(',');
    if (!head.empty())
      features.push_back(head.str());
    rest = tail;
  }
  target.addFeatures(features);
  target.setCodeGenOptLevel(self->impl_->machine->getOptLevel());
  target.getOptions() = self->impl_->machine->Options;
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(target)).create();
  if (!jit) {
    error = "cannot start the JIT: " + llvm::toString(jit.takeError());
    return nullptr;
  }
  self->impl_->jit = std::move(*jit);
  llvm::orc::JITDylib &dylib = self->impl_->jit->getMainJITDylib();
  char prefix = self->impl_->jit->getDataLayout().getGlobalPrefix();
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process) {
    error = "cannot search the process's symbols: " + llvm::toString(process.takeError());
    return nullptr;
  }
  dylib.addGenerator(std::move(*process));
  const char *omp = std::getenv("TDSL_OMP_LIBRARY");
  auto openmp = llvm::orc::DynamicLibrarySearchGenerator::Load(omp ? omp : kOpenMPLibrary, prefix);
  if (!openmp) {
    error = "cannot load the OpenMP runtime '" + std::string(omp ? omp : kOpenMPLibrary) +
            "': " + llvm::toString(openmp.takeError());
    return nullptr;
  }
  dylib.addGenerator(std::move(*openmp));
  // glibc's vector math (libmvec), which the code calls for vector exp, erf, … (objects get it
  // from -lm; --via=cpp objects call it too). The LLVM code calls it unless --ffp-contract=off
  // (libm's results bit for bit) or libmvec is missing or older than glibc 2.35 (no erf, tanh,
  // exp2, log2 variants): then those stay lane-by-lane libm calls.
  if (void *mvec = dlopen("libmvec.so.1", RTLD_NOW | RTLD_LOCAL)) {
    auto generator = llvm::orc::DynamicLibrarySearchGenerator::Load("libmvec.so.1", prefix);
    if (generator) {
      dylib.addGenerator(std::move(*generator));
      if (options.fpContract && dlsym(mvec, "_ZGVbN4v_erff"))
        self->impl_->vectorMath = vectorMathIsa(*self->impl_->machine);
    } else {
      llvm::consumeError(generator.takeError());
    }
  }
  return self;
}

bool Jit::loadLibrary(const std::string &path, std::string &error) {
  // A path without a slash would be searched in the system folders: make it relative, as the
  // interpreter does.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  char prefix = impl_->jit->getDataLayout().getGlobalPrefix();
  auto generator = llvm::orc::DynamicLibrarySearchGenerator::Load(file.c_str(), prefix);
  if (!generator) {
    error = "cannot load '" + path + "': " + llvm::toString(generator.takeError());
    return false;
  }
  impl_->jit->getMainJITDylib().addGenerator(std::move(*generator));
  // Opened by the JIT's generator already: this only takes another reference.
  if (void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL))
    if (void *fn = dlsym(handle, "tdsl_last_error"))
      impl_->libraryErrors.push_back(reinterpret_cast<const char *(*)()>(fn));
  return true;
}

bool Jit::defineSymbol(const std::string &symbol, void *address, std::string &error) {
  llvm::orc::LLJIT &jit = *impl_->jit;
  llvm::orc::SymbolMap symbols;
  symbols[jit.mangleAndIntern(symbol)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                          llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = jit.getMainJITDylib().define(llvm::orc::absoluteSymbols(symbols))) {
    error = "cannot define '" + symbol + "': " + llvm::toString(std::move(e));
    return false;
  }
  return true;
}

bool Jit::addModule(std::unique_ptr<llvm::Module> module,
                    std::unique_ptr<llvm::LLVMContext> context, std::string &error) {
  optimizeModule(*module, *impl_->machine, impl_->options);
  module->setDataLayout(impl_->jit->getDataLayout());
  if (llvm::Error e = impl_->jit->addIRModule(
          llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    error = "the JIT rejects the module: " + llvm::toString(std::move(e));
    return false;
  }
  return true;
}

bool Jit::addModule(const std::string &name, const ir::LoweredModule &lowered, std::string &error) {
  auto context = std::make_unique<llvm::LLVMContext>();
  CodeGenOptions codegen;
  codegen.fastMath = impl_->options.fastMath;
  codegen.fpContract = impl_->options.fpContract;
  codegen.threadLocalError = false;
  codegen.packedEntries = true;
  codegen.vectorMath = impl_->vectorMath;
  std::unique_ptr<llvm::Module> module = emitModule(*context, name, lowered, codegen);
  return addModule(std::move(module), std::move(context), error);
}

bool Jit::addObject(const std::string &bytes, const std::string &name,
                    const ir::LoweredModule &lowered, std::string &error) {
  if (llvm::Error e =
          impl_->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(bytes, name))) {
    error = "the JIT rejects the object: " + llvm::toString(std::move(e));
    return false;
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(name + ".packed", *context);
  addPackedEntries(*module, lowered);
  return addModule(std::move(module), std::move(context), error);
}

void *Jit::lookup(const std::string &symbol, std::string &error) {
  auto address = impl_->jit->lookup(symbol);
  if (!address) {
    error = "cannot link '" + symbol + "': " + llvm::toString(address.takeError());
    return nullptr;
  }
  return address->toPtr<void *>();
}

// --- Calls -------------------------------------------------------------------------------------

std::optional<JitFunction> JitFunction::find(Jit &jit, const ir::LoweredModule &lowered,
                                             const std::string &name, std::string &error) {
  std::vector<ir::Func> sources = lowered.sources();
  std::vector<std::string> cNames = abi::cFunctionNames(lowered);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].name() != name)
      continue;
    JitFunction f;
    f.jit_ = &jit;
    f.func_ = &lowered.funcs[i];
    void *entry = jit.lookup(packedEntryName(cNames[i]), error);
    void *lastError = entry ? jit.lookup("tdsl_last_error", error) : nullptr;
    if (!entry || !lastError)
      return std::nullopt;
    f.entry_ = reinterpret_cast<int32_t (*)(void **)>(entry);
    f.lastError_ = reinterpret_cast<const char *(*)()>(lastError);
    return f;
  }
  error = "no function named '" + name + "' was compiled";
  return std::nullopt;
}

namespace {

/// A scalar in its ABI type, in the low bytes of a slot (little endian).
uint64_t scalarBits(const runtime::Scalar &s) {
  ir::DType t = s.dtype;
  uint64_t bits = 0;
  if (t.isBool() || t.isInteger())
    return static_cast<uint64_t>(s.i);
  switch (t.code()) {
  case ir::DType::Code::F16:
    return runtime::f16FromDouble(s.f);
  case ir::DType::Code::BF16:
    return runtime::bf16FromDouble(s.f);
  case ir::DType::Code::F32: {
    float f = static_cast<float>(s.f);
    std::memcpy(&bits, &f, sizeof f);
    return bits;
  }
  default:
    std::memcpy(&bits, &s.f, sizeof s.f);
    return bits;
  }
}

} // namespace

void packArgs(const ir::PrimFunc &source, JitArgs &args, std::vector<void *> &slots,
              std::vector<uint64_t> &scalars) {
  for (const ir::FuncParam &p : source.inputs) {
    auto &v = args.at(p.name());
    if (p.isTensor()) {
      slots.push_back(std::get<runtime::Tensor>(v).bytes.data());
      continue;
    }
    scalars.push_back(scalarBits(std::get<runtime::Scalar>(v)));
    slots.push_back(&scalars.back());
  }
  for (const ir::Buffer &b : source.outputs)
    slots.push_back(std::get<runtime::Tensor>(args.at(b.name())).bytes.data());
}

std::unordered_map<ir::Var, int64_t> JitFunction::shapeValues(const JitArgs &args) const {
  const auto *source = func_->signature.as<ir::PrimFunc>();
  std::unordered_map<ir::Var, int64_t> values;
  auto bind = [&](const ir::Buffer &b) {
    auto it = args.find(b.name());
    if (it == args.end() || !std::holds_alternative<runtime::Tensor>(it->second))
      return;
    const runtime::Tensor &t = std::get<runtime::Tensor>(it->second);
    for (size_t d = 0; d < b.rank() && d < t.shape.size(); ++d)
      if (const auto *ref = b.shape()[d].as<ir::VarRef>())
        values.emplace(ref->var, t.shape[d]);
  };
  for (const ir::FuncParam &p : source->inputs)
    if (p.isTensor())
      bind(p.buffer);
  for (const ir::Buffer &b : source->outputs)
    bind(b);
  return values;
}

bool JitFunction::call(JitArgs &args, std::string &error) const {
  const auto *source = func_->signature.as<ir::PrimFunc>();
  const auto *lowered = func_->lowered.as<ir::PrimFunc>();
  std::vector<void *> slots;
  std::vector<uint64_t> scalars;
  scalars.reserve(source->inputs.size() + lowered->shapeVars.size());
  packArgs(*source, args, slots, scalars);
  std::unordered_map<ir::Var, int64_t> shapes = shapeValues(args);
  for (const ir::Var &v : lowered->shapeVars) {
    auto it = shapes.find(v);
    if (it == shapes.end()) {
      error = "shape variable " + v.name() + " is not bound by any argument";
      return false;
    }
    scalars.push_back(static_cast<uint64_t>(it->second));
    slots.push_back(&scalars.back());
  }
  // The raw entry does not clear the message buffer (only _dlpack does): clear it here (it is
  // the compiled code's own writable buffer), so that a failure's message is the one its
  // callee wrote. A library's message is read only when that buffer stays empty.
  const_cast<char *>(lastError_())[0] = '\0';
  if (int32_t status = entry_(slots.data())) {
    std::string message = lastError_();
    for (auto libraryError : jit_->impl_->libraryErrors)
      if (message.empty())
        message = libraryError();
    error = "'" + source->name + "' returned " + std::to_string(status) + ": " +
            (message.empty() ? "(no message in tdsl_last_error())" : message);
    return false;
  }
  return true;
}

} // namespace tdsl::llvmgen

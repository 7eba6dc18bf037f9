//===- backends/llvm/JIT.cpp - Running emitted code in-process (ORC LLJIT) ----------------===//
#include "backends/llvm/JIT.h"

#include "backends/llvm/LLVMBackend.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdlib>

namespace tdsl::llvmgen {

namespace {
/// LLVM's OpenMP runtime (Debian's libomp-19-dev); $TDSL_OMP_LIBRARY overrides it.
const char *kOpenMPLibrary = "/usr/lib/llvm-19/lib/libomp.so";
} // namespace

struct Jit::Impl {
  TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine; // for optimizeModule
  std::unique_ptr<llvm::orc::LLJIT> jit;
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

bool Jit::addFunctions(const std::string &name, const std::vector<ir::Func> &sources,
                       const std::vector<ir::Func> &lowered, std::string &error,
                       const std::vector<ir::Func> &externs) {
  auto context = std::make_unique<llvm::LLVMContext>();
  CodeGenOptions codegen;
  codegen.fastMath = impl_->options.fastMath;
  codegen.fpContract = impl_->options.fpContract;
  codegen.ownNames = impl_->options.ownNames;
  codegen.threadLocalError = false;
  codegen.packedEntries = true;
  std::unique_ptr<llvm::Module> module =
      emitModule(*context, name, sources, lowered, codegen, externs);
  return addModule(std::move(module), std::move(context), error);
}

bool Jit::addObject(const std::string &bytes, const std::string &name,
                    const std::vector<ir::Func> &sources, const std::vector<ir::Func> &lowered,
                    std::string &error) {
  if (llvm::Error e =
          impl_->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(bytes, name))) {
    error = "the JIT rejects the object: " + llvm::toString(std::move(e));
    return false;
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>(name + ".packed", *context);
  addPackedEntries(*module, sources, lowered, impl_->options.ownNames);
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

} // namespace tdsl::llvmgen

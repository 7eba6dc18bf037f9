//===- backends/llvm/Target.cpp - Target machine, optimisation, objects -------------------===//
#include "backends/llvm/Target.h"

#include "backends/llvm/LLVMBackend.h"

#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace tdsl::llvmgen {

namespace {

llvm::CodeGenOptLevel codeGenLevel(int optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 3:
    return llvm::CodeGenOptLevel::Aggressive;
  default:
    return llvm::CodeGenOptLevel::Default;
  }
}

/// Keeps the optimizer quiet: remarks ("loop not vectorized: ...", which the vectorizer
/// always prints for loops whose metadata asks for vectorization) and warnings of missed
/// transformations are dropped; errors still go to the default handler.
struct QuietDiagnostics : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override {
    return info.getSeverity() != llvm::DS_Error;
  }
};

} // namespace

void initialiseTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

std::string normaliseTriple(const std::string &triple) {
  return llvm::Triple::normalize(triple.empty() ? llvm::sys::getDefaultTargetTriple() : triple);
}

std::string checkTriple(const std::string &triple) {
  initialiseTargets();
  std::string normalised = normaliseTriple(triple), lookupError;
  if (llvm::Triple(normalised).getArch() == llvm::Triple::UnknownArch ||
      !llvm::TargetRegistry::lookupTarget(normalised, lookupError))
    return "unknown target triple '" + triple +
           "' for --triple (e.g. aarch64-linux-gnu, x86_64-linux-gnu)";
  return "";
}

bool resolveTarget(const TargetOptions &options, ResolvedTarget &out, std::string &error) {
  initialiseTargets();
  out.triple = normaliseTriple(options.triple);
  if (std::string bad = checkTriple(options.triple); !bad.empty()) {
    error = bad;
    return false;
  }
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(out.triple, lookupError);
  bool host = llvm::Triple(out.triple).getArch() ==
              llvm::Triple(llvm::sys::getDefaultTargetTriple()).getArch();
  if ((options.mcpu.empty() || options.mcpu == "native") && !host) {
    error = "--mcpu=native names this machine's CPU, not one of '" + out.triple +
            "' (omit --mcpu for its generic CPU, or name one: e.g. cortex-a72, neoverse-n1)";
    return false;
  }
  std::vector<std::string> features;
  if (options.mcpu.empty() || options.mcpu == "native") {
    out.cpu = llvm::sys::getHostCPUName().str();
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.push_back((feature.second ? "+" : "-") + feature.first().str());
    std::sort(features.begin(), features.end()); // a deterministic order
  } else {
    out.cpu = options.mcpu;
    std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(out.triple, "", ""));
    if (!info || !info->isCPUStringValid(out.cpu)) {
      error = "unknown CPU '" + out.cpu + "' for --mcpu" +
              (host ? " (LLVM's names, e.g. x86-64, x86-64-v3, skylake-avx512, native)"
                    : " with --triple=" + options.triple + " (LLVM's names for that target)");
      return false;
    }
  }
  if (!options.mattr.empty()) {
    // Each entry must be a feature of the target: LLVM would only warn and ignore it.
    std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(out.triple, "", ""));
    for (llvm::StringRef rest = options.mattr; !rest.empty();) {
      auto [entry, tail] = rest.split(',');
      rest = tail;
      llvm::StringRef name = entry.trim();
      if (name.empty())
        continue;
      if (name.front() == '+' || name.front() == '-')
        name = name.drop_front();
      bool known = false;
      for (const llvm::SubtargetFeatureKV &kv : info->getAllProcessorFeatures())
        known |= name == kv.Key;
      if (!known) {
        error = "unknown feature '" + name.str() + "' in --mattr" +
                (host ? " (LLVM's names, e.g. +avx2,-fma)"
                      : " for '" + out.triple + "' (LLVM's names for that target, e.g. +sve)");
        return false;
      }
    }
    features.push_back(options.mattr);
  }
  out.features.clear();
  for (const std::string &f : features)
    out.features += (out.features.empty() ? "" : ",") + f;
  return true;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetOptions &options,
                                                         std::string &error) {
  ResolvedTarget resolved;
  if (!resolveTarget(options, resolved, error))
    return nullptr;
  std::string lookupError;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(resolved.triple, lookupError);
  llvm::TargetOptions targetOptions;
  if (options.fastMath) {
    targetOptions.UnsafeFPMath = true;
    targetOptions.NoInfsFPMath = true;
    targetOptions.NoNaNsFPMath = true;
    targetOptions.NoSignedZerosFPMath = true;
    targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  }
  // --ffp-contract=off: not even llvm.fmuladd is fused (the backend emits none then anyway).
  if (!options.fpContract)
    targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(resolved.triple, resolved.cpu, resolved.features, targetOptions,
                                  llvm::Reloc::PIC_, std::nullopt, codeGenLevel(options.optLevel)));
  if (!machine)
    error = "LLVM cannot make a target machine for '" + resolved.triple +
            "' (--mcpu=" + resolved.cpu + ")";
  return machine;
}

std::string hostLacks(const TargetOptions &options) {
  initialiseTargets();
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(options, error);
  if (!machine)
    return error;
  const llvm::MCSubtargetInfo *info = machine->getMCSubtargetInfo();
  std::string missing;
  for (const auto &[feature, present] : llvm::sys::getHostCPUFeatures())
    if (!present && info->checkFeatures("+" + feature.str()))
      missing += (missing.empty() ? "'" : ", '") + feature.str() + "'";
  if (missing.empty())
    return "";
  return "--mcpu=" + options.mcpu + (options.mattr.empty() ? "" : " --mattr=" + options.mattr) +
         " needs " + missing + ", which this machine lacks (tdsl-run runs the code here)";
}

char vectorMathIsa(const llvm::TargetMachine &machine) {
  const llvm::Triple &triple = machine.getTargetTriple();
  if (triple.getArch() != llvm::Triple::x86_64 || !triple.isOSLinux() || !triple.isGNUEnvironment())
    return 0;
  // The subtarget knows what the CPU name implies (--mcpu=skylake-avx512 lists no feature).
  const llvm::MCSubtargetInfo *info = machine.getMCSubtargetInfo();
  if (info->checkFeatures("+avx512f"))
    return 'e';
  if (info->checkFeatures("+avx2"))
    return 'd';
  if (info->checkFeatures("+avx"))
    return 'c';
  return 'b';
}

namespace {

int hostLanes32(const TargetOptions &options) {
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(options, error);
  if (!machine)
    return 8;
  const llvm::Triple &triple = machine->getTargetTriple();
  const llvm::MCSubtargetInfo *info = machine->getMCSubtargetInfo();
  if (triple.getArch() == llvm::Triple::x86_64 || triple.getArch() == llvm::Triple::x86) {
    if (info->checkFeatures("+avx512f"))
      return 16;
    if (info->checkFeatures("+avx"))
      return 8;
  }
  return 4;
}

} // namespace

int simdLanes32(const TargetOptions &options) {
  // Every compilation asks (the built-in `simd_lanes`); a TargetMachine and the host's features
  // cost more than a small file's whole compile, so the answer is kept per CPU and features.
  static std::mutex mutex;
  static std::map<std::tuple<std::string, std::string, std::string>, int> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, fresh] = known.try_emplace({options.triple, options.mcpu, options.mattr}, 0);
  if (fresh)
    it->second = hostLanes32(options);
  return it->second;
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    const TargetOptions &options) {
  if (!options.remarks)
    module.getContext().setDiagnosticHandler(std::make_unique<QuietDiagnostics>());
  module.setTargetTriple(machine.getTargetTriple().str());
  module.setDataLayout(machine.createDataLayout());
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", machine.getTargetCPU());
    fn.addFnAttr("target-features", machine.getTargetFeatureString());
    if (options.fastMath)
      fn.addFnAttr("unsafe-fp-math", "true");
  }
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = options.optLevel >= 2;
  tuning.SLPVectorization = options.optLevel >= 2;
  tuning.LoopUnrolling = options.optLevel >= 1;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = options.optLevel <= 0   ? llvm::OptimizationLevel::O0
                                  : options.optLevel == 1 ? llvm::OptimizationLevel::O1
                                  : options.optLevel == 2 ? llvm::OptimizationLevel::O2
                                                          : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager passes = options.optLevel <= 0
                                       ? builder.buildO0DefaultPipeline(level)
                                       : builder.buildPerModuleDefaultPipeline(level);
  passes.run(module, mam);
}

bool emitObject(llvm::Module &module, llvm::TargetMachine &machine, bool assembly, std::string &out,
                std::string &error) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr,
                                  assembly ? llvm::CodeGenFileType::AssemblyFile
                                           : llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit this file type";
    return false;
  }
  passes.run(module);
  out.assign(buffer.begin(), buffer.end());
  return true;
}

bool compileModule(const std::string &name, const ir::LoweredModule &lowered,
                   const TargetOptions &options, OutputKind kind, std::string &out,
                   std::string &error) {
  std::unique_ptr<llvm::TargetMachine> machine = createTargetMachine(options, error);
  if (!machine)
    return false;
  llvm::LLVMContext context;
  CodeGenOptions codegen;
  codegen.fastMath = options.fastMath;
  codegen.fpContract = options.fpContract;
  // --ffp-contract=off promises the interpreter's results bit for bit: libm's scalar functions.
  codegen.vectorMath = options.fpContract ? vectorMathIsa(*machine) : 0;
  std::unique_ptr<llvm::Module> module = emitModule(context, name, lowered, codegen);
  optimizeModule(*module, *machine, options);
  switch (kind) {
  case OutputKind::IR: {
    llvm::raw_string_ostream os(out);
    module->print(os, nullptr);
    return true;
  }
  case OutputKind::Bitcode: {
    llvm::raw_string_ostream os(out);
    llvm::WriteBitcodeToFile(*module, os);
    return true;
  }
  case OutputKind::Assembly:
  case OutputKind::Object:
    return emitObject(*module, *machine, kind == OutputKind::Assembly, out, error);
  }
  return false;
}

} // namespace tdsl::llvmgen

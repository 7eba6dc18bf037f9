//===- backends/cpp/CompileCpp.cpp - Emitted C++ to an object, in-process -----------------===//
#include "backends/cpp/CompileCpp.h"

#include "backends/llvm/Target.h"

#include <clang/Basic/Diagnostic.h>
#include <clang/Basic/DiagnosticOptions.h>
#include <clang/CodeGen/CodeGenAction.h>
#include <clang/Driver/Compilation.h>
#include <clang/Driver/Driver.h>
#include <clang/Driver/Job.h>
#include <clang/Driver/Tool.h>
#include <clang/Frontend/CompilerInstance.h>
#include <clang/Frontend/CompilerInvocation.h>
#include <clang/Frontend/TextDiagnosticPrinter.h>
#include <clang/Lex/PreprocessorOptions.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <memory>
#include <mutex>
#include <vector>

namespace tdsl::cpp {

namespace {

/// The clang command line tdslc would run: the driver turns it into the -cc1 arguments for
/// the host (header search paths of the installed GCC, the resource directory, PIC level).
std::vector<std::string> driverArguments(const std::string &bufferName,
                                         const CompileOptions &options,
                                         const llvm::Triple &triple) {
  std::vector<std::string> args = {TDSL_CLANG_EXECUTABLE,
                                   options.assembly ? "-S" : "-c",
                                   "-x",
                                   "c++",
                                   "-std=c++17",
                                   "-O" + std::to_string(options.optLevel),
                                   "-fPIC",
                                   "-fopenmp=libomp",
                                   "-fno-ident",
                                   "-fno-math-errno",
                                   "-resource-dir",
                                   TDSL_CLANG_RESOURCE_DIR};
  // (-fno-math-errno: TDSL's intrinsics are pure, sqrt and the others never set errno, as the
  // LLVM route's llvm.sqrt; so Clang may vectorize them instead of guarding each lane's call.)

  // The optimizer's remarks ("loop not vectorized") and warnings only when asked for.
  if (options.remarks)
    args.insert(args.end(), {"-Rpass-missed=loop-vectorize", "-Rpass-analysis=loop-vectorize"});
  else
    args.push_back("-w");
  // ("generic", the default CPU of a --triple, is Clang's own default: no flag.)
  if (!options.mcpu.empty() && options.mcpu != "generic")
    args.push_back((triple.isX86() ? "-march=" : "-mcpu=") + options.mcpu);
  if (options.fastMath)
    args.push_back("-ffast-math");
  // Contraction within expressions (Clang's default; -ffast-math makes it fast); after
  // -ffast-math, so that --ffp-contract=off wins.
  if (!options.fpContract)
    args.push_back("-ffp-contract=off");
  else if (!options.fastMath)
    args.push_back("-ffp-contract=on");
  // --mattr=+avx512f,-fma: each feature as the target would write it.
  llvm::SmallVector<llvm::StringRef, 8> features;
  llvm::StringRef(options.mattr).split(features, ',', -1, false);
  for (llvm::StringRef f : features) {
    std::string feature = f.trim().str();
    if (feature.empty())
      continue;
    if (feature[0] != '+' && feature[0] != '-')
      feature = "+" + feature;
    for (const char *a : {"-Xclang", "-target-feature", "-Xclang"})
      args.push_back(a);
    args.push_back(feature);
  }
  args.insert(args.end(), {bufferName, "-o", "tdsl-output.o"});
  return args;
}

} // namespace

bool compileCpp(const std::string &code, const std::string &bufferName,
                const CompileOptions &options, std::string &output, std::string &errors) {
  llvmgen::initialiseTargets();
  llvm::raw_string_ostream diagStream(errors);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diagOptions(new clang::DiagnosticOptions());
  clang::DiagnosticsEngine diags(
      llvm::IntrusiveRefCntPtr<clang::DiagnosticIDs>(new clang::DiagnosticIDs()), diagOptions,
      new clang::TextDiagnosticPrinter(diagStream, diagOptions.get()));

  // Step 1. The driver builds the one -cc1 job (it looks at the file system for the GCC
  // installation and the headers, but not for the input, which lives in memory).
  llvm::Triple triple(llvmgen::normaliseTriple(options.triple));
  clang::driver::Driver driver(TDSL_CLANG_EXECUTABLE, triple.str(), diags, "tdslc --via=cpp");
  driver.setCheckInputsExist(false);
  std::vector<std::string> args = driverArguments(bufferName, options, triple);
  std::vector<const char *> argv;
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(argv));
  if (!compilation || diags.hasErrorOccurred()) {
    diagStream.flush();
    return false;
  }
  const clang::driver::JobList &jobs = compilation->getJobs();
  if (jobs.size() != 1 || !llvm::isa<clang::driver::Command>(*jobs.begin()) ||
      llvm::StringRef(jobs.begin()->getCreator().getName()) != "clang") {
    diagStream << "error: the Clang driver did not make exactly one -cc1 job\n";
    diagStream.flush();
    return false;
  }
  const llvm::opt::ArgStringList &cc1 = jobs.begin()->getArguments();

  // Step 2. The invocation, reading the source from memory.
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, cc1, diags, argv[0])) {
    diagStream.flush();
    return false;
  }
  // The source buffer stays ours: Clang takes ownership of a remapped buffer only when it sets
  // up the preprocessor, so a compilation that fails before (an unknown --mcpu) leaked it.
  std::unique_ptr<llvm::MemoryBuffer> source =
      llvm::MemoryBuffer::getMemBufferCopy(code, bufferName);
  invocation->getPreprocessorOpts().RetainRemappedFileBuffers = true;
  invocation->getPreprocessorOpts().addRemappedFile(bufferName, source.get());

  // Step 3. Compile into a memory buffer.
  clang::CompilerInstance instance;
  instance.setInvocation(std::move(invocation));
  instance.createDiagnostics(
      new clang::TextDiagnosticPrinter(diagStream, &instance.getDiagnosticOpts()), true);
  llvm::SmallString<0> bytes;
  instance.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(bytes));
  std::unique_ptr<clang::CodeGenAction> action;
  if (options.assembly)
    action = std::make_unique<clang::EmitAssemblyAction>();
  else
    action = std::make_unique<clang::EmitObjAction>();
  bool ok = instance.ExecuteAction(*action) && !instance.getDiagnostics().hasErrorOccurred();
  diagStream.flush();
  if (!ok)
    return false;
  if (options.remarks) { // the remarks asked for, on stderr as Clang prints them
    llvm::errs() << errors;
    errors.clear();
  }
  output.assign(bytes.begin(), bytes.end());
  return true;
}

} // namespace tdsl::cpp

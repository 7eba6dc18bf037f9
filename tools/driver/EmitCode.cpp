//===- tools/driver/EmitCode.cpp - The backend that tdslc's --emit names ------------------===//
#include "tools/driver/EmitCode.h"

#include "backends/cpp/CompileCpp.h"
#include "backends/cpp/CppEmitter.h"
#include "backends/cuda/CudaEmitter.h"
#include "backends/llvm/LLVMBackend.h"
#include "backends/llvm/Target.h"
#include "ir/IRPrinter.h"

#include <cctype>
#include <filesystem>

namespace fs = std::filesystem;

namespace tdsl {

namespace {

/// The include guard of --emit=header: TDSL_<FILE STEM>_H, upper case, C-safe.
std::string headerGuard(const std::string &file) {
  std::string guard = "TDSL_";
  for (char ch : fs::path(file).stem().string())
    guard += std::isalnum(static_cast<unsigned char>(ch))
                 ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch)))
                 : '_';
  return guard + "_H";
}

/// The code-generation options both CPU routes take (cpp::CompileOptions for --via=cpp,
/// llvmgen::TargetOptions for the LLVM backend): --triple, -O, --mcpu, --mattr, the float options
/// and --remarks.
template <typename Options> Options codeGenOptions(const DriverOptions &opts) {
  Options o;
  o.triple = opts.triple;
  o.optLevel = opts.optLevel;
  o.mcpu = opts.mcpu;
  o.mattr = opts.mattr;
  o.fastMath = opts.fastMath;
  o.fpContract = opts.fpContract;
  o.remarks = opts.remarks;
  return o;
}

/// Writes the data of the folded graph constants into files next to the output (`out.NAME.bin`
/// for -o out.cpp; in the current folder, after the input's stem, for stdout), which the C++
/// assembles with .incbin, and records them in `copts`. False after reporting an error.
bool writeCompanions(const DriverOptions &opts, const ir::LoweredModule &lowered,
                     cpp::CppOptions &copts, std::ostream &err) {
  bool toStdout = opts.output.empty() || opts.output == "-";
  fs::path base = toStdout ? fs::path(opts.input).stem()
                           : fs::path(opts.output).parent_path() / fs::path(opts.output).stem();
  std::string error;
  if (!cpp::writeConstantFiles(lowered, base.string() + ".", copts.constantFiles, error)) {
    err << "tdslc: error: " << error << "\n";
    return false;
  }
  return true;
}

} // namespace

/// Whether --emit makes its output with the LLVM backend (--emit=llvm|bc, and obj|asm unless
/// --via=cpp).
bool viaLLVM(const DriverOptions &opts) {
  return opts.emit == EmitKind::LLVM || opts.emit == EmitKind::Bitcode ||
         ((opts.emit == EmitKind::Obj || opts.emit == EmitKind::Asm) && opts.via == Via::LLVM);
}

/// The text of --emit=lowered|cpp|cuda|header|llvm|bc|asm|obj from the lowered module; the exit
/// status after an error (reported on `err`), or nullopt.
std::optional<int> emitCode(const DriverOptions &opts, const ir::LoweredModule &lowered,
                            std::ostream &text, std::ostream &err) {
  cpp::CppOptions copts;
  copts.fpContract = opts.fpContract;
  copts.headerGuard =
      headerGuard(opts.output.empty() || opts.output == "-" ? opts.input : opts.output);
  switch (opts.emit) {
  case EmitKind::Lowered:
    for (size_t i = 0; i < lowered.funcs.size(); ++i)
      text << (i ? "\n" : "") << ir::toString(lowered.funcs[i].lowered);
    return std::nullopt;
  case EmitKind::Cpp: {
    if (!writeCompanions(opts, lowered, copts, err))
      return 1;
    text << cpp::emitCpp(lowered, copts);
    return std::nullopt;
  }
  case EmitKind::Cuda:
    text << cuda::emitCuda(lowered);
    return std::nullopt;
  case EmitKind::Header: // one header for the C++, LLVM and CUDA entries (spec §10)
    text << cpp::emitHeader(lowered, copts);
    return std::nullopt;
  default:
    break;
  }
  std::string bytes, error, name = fs::path(opts.input).filename().string();
  if (!viaLLVM(opts)) {
    auto options = codeGenOptions<cpp::CompileOptions>(opts);
    options.assembly = opts.emit == EmitKind::Asm;
    // The folded constants' data, in a temporary folder while compiling (Clang's integrated
    // assembler reads it: its assembly output has the bytes, not the .incbin).
    cpp::TemporaryConstantFiles constantFiles;
    if (!constantFiles.write(lowered, copts.constantFiles, error)) {
      err << "tdslc: error: " << error << "\n";
      return 1;
    }
    copts.format = false; // compiled, not read: the formatter's time would be wasted
    if (!cpp::compileCpp(cpp::emitCpp(lowered, copts), name + ".cpp", options, bytes, error)) {
      err << error << "tdslc: error: the Clang libraries could not compile the C++ emitted for '"
          << opts.input << "'\n";
      return 1;
    }
    text << bytes;
    return std::nullopt;
  }
  // The LLVM backend (--via=llvm, the default; --emit=llvm|bc always).
  if (std::string clash = llvmgen::externSymbolClash(lowered); !clash.empty()) {
    err << "tdslc: error: " << clash << "\n";
    return 1;
  }
  auto options = codeGenOptions<llvmgen::TargetOptions>(opts);
  llvmgen::OutputKind kind = opts.emit == EmitKind::LLVM      ? llvmgen::OutputKind::IR
                             : opts.emit == EmitKind::Bitcode ? llvmgen::OutputKind::Bitcode
                             : opts.emit == EmitKind::Asm     ? llvmgen::OutputKind::Assembly
                                                              : llvmgen::OutputKind::Object;
  if (!llvmgen::compileModule(name, lowered, options, kind, bytes, error)) {
    err << "tdslc: error: " << error << "\n";
    return 2;
  }
  text << bytes;
  return std::nullopt;
}

} // namespace tdsl

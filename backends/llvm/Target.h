//===- backends/llvm/Target.h - Target machine, optimisation, objects ---------------------===//
//
// The CPU target: the host's triple, or another one (tdslc --triple, spec §9: AArch64,
// x86-64), configured from --mcpu/--mattr ("native": the host CPU and its features), the -O0..-O3
// pipelines of the new pass manager (PassBuilder::buildPerModuleDefaultPipeline, or
// buildO0DefaultPipeline), and ELF objects or assembly through the legacy code generation pass
// manager. Position independent code.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/LoweredModule.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace tdsl::llvmgen {

/// Registers every target LLVM was built with (the host's and the cross targets of --triple),
/// with its assembly printer and parser, once per process (the LLVM route and the C++ route's
/// in-process Clang both need them).
void initialiseTargets();

/// The normalised form of `triple` ("aarch64-linux-gnu" -> "aarch64-unknown-linux-gnu"); ""
/// stands for the host's triple.
std::string normaliseTriple(const std::string &triple);

/// Why LLVM cannot compile for `triple` (an unknown architecture, or one this LLVM was built
/// without), or "" when it can.
std::string checkTriple(const std::string &triple);

struct TargetOptions {
  /// The target triple ("": the host's); with another one, "native" is refused.
  std::string triple;
  std::string mcpu = "native"; ///< "native": the host CPU, with the host's features
  std::string mattr;           ///< "+avx2,-fma": added to the CPU's features
  int optLevel = 2;            ///< 0..3
  bool fastMath = false;
  /// --ffp-contract=on|off (spec §11): llvm.fmuladd where Clang would form it (CodeGenOptions),
  /// or none and AllowFPOpFusion=Strict.
  bool fpContract = true;
  /// Print the optimizer's remarks and missed-transformation warnings ("loop not vectorized");
  /// by default they are dropped (optimizeModule installs a diagnostic handler).
  bool remarks = false;
};

/// The CPU name and the feature string that `options` stand for.
struct ResolvedTarget {
  std::string triple, cpu, features;
};
/// Returns false with `error` set for an unknown triple, CPU or feature, or --mcpu=native with
/// another architecture.
bool resolveTarget(const TargetOptions &options, ResolvedTarget &out, std::string &error);

/// A TargetMachine for the triple of `options`; nullptr with `error` set when the CPU is unknown.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(const TargetOptions &options,
                                                         std::string &error);

/// Why code for `options` cannot run on this machine ("--mattr=+avx512f: this machine has no
/// 'avx512f'"; an unknown CPU), or "" when it can: tdsl-run's JIT runs what it compiles here.
std::string hostLacks(const TargetOptions &options);

/// The widest glibc libmvec variants `machine` runs (CodeGenOptions::vectorMath), as the x86-64
/// vector function ABI names them: 'e' with AVX-512F (512-bit), 'd' with AVX2, 'c' with AVX
/// (256-bit), 'b' on other x86-64 (SSE2, 128-bit), on GNU/Linux; 0 elsewhere.
char vectorMathIsa(const llvm::TargetMachine &machine);

/// How many 32-bit lanes the widest vector registers of the target of `options` hold: 16 with
/// AVX-512F, 8 with AVX, 4 otherwise (SSE2; AArch64's NEON, and SVE, whose vectors are at
/// least that wide); 8 when the options name no known CPU (the
/// compilation reports that itself). The schedules' built-in `simd_lanes` (docs/language.md).
int simdLanes32(const TargetOptions &options);

/// Sets the module's triple and data layout and the functions' target-cpu/target-features
/// (and fast-math) attributes, then runs the -O pipeline of `options.optLevel`. Unless
/// `options.remarks`, the module's context drops optimization remarks and warnings from then on.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine,
                    const TargetOptions &options);

/// The module as an ELF object (or textual assembly). Returns false with `error` set if the
/// target cannot emit that file type.
bool emitObject(llvm::Module &module, llvm::TargetMachine &machine, bool assembly, std::string &out,
                std::string &error);

/// What `tdslc --emit=llvm|bc|asm|obj` writes.
enum class OutputKind { IR, Bitcode, Assembly, Object };

/// The whole route of tdslc: emitModule (module `name`), the target of `options`, the -O
/// pipeline, then the output: textual IR or bitcode after optimisation, assembly or an
/// object. Deterministic. Returns false with `error` set for a bad --mcpu.
bool compileModule(const std::string &name, const ir::LoweredModule &lowered,
                   const TargetOptions &options, OutputKind kind, std::string &out,
                   std::string &error);

} // namespace tdsl::llvmgen

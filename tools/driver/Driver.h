//===- tools/driver/Driver.h ------------------------------------------------------------------===//
//
// The compiler driver behind `tdslc`: command line, phases, outputs (spec §9). A library so that
// tests and the other tools (tdsl-run) run whole compilations in-process: Compilation loads and
// checks the sources (frontend/) and runs the module pipeline (passes/Pipeline.h) on them.

#pragma once

#include "frontend/AST.h"
#include "ir/IR.h"
#include "ir/LoweredModule.h"
#include "passes/Pipeline.h"
#include "passes/schedule/Sample.h"
#include "tools/driver/ToolOptions.h"

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tdsl {

enum class EmitKind { AST, IR, Lowered, Cpp, Cuda, LLVM, Bitcode, Asm, Obj, Header, Dot };

struct DriverOptions : ToolOptions {
  EmitKind emit = EmitKind::Obj;
  std::string output;   // empty: stdout for text, <stem>.o for obj
  bool remarks = false; // --remarks
  bool printIRAfterAll = false;
  std::vector<std::string> printIRAfter, printIRBefore;
  bool listPasses = false;
  bool writeDeps = false; // -MD
  std::string depFile;    // -MF
  bool warningsAsErrors = false;
  unsigned errorLimit = 20;
  std::string color = "auto";
  bool graphPasses = true; // false: graphs as checked (tdsl-run --check's reference)
};

/// Parses a tdslc command line. Returns std::nullopt to go on compiling, or the exit status
/// to stop with (0 after --help/--version, 2 on a bad command line, message on `err`).
std::optional<int> parseCommandLine(int argc, const char *const *argv, DriverOptions &opts,
                                    std::ostream &out, std::ostream &err);

/// Runs a compilation. `sourceText`, when given, is used instead of reading `opts.input`.
/// Returns 0 on success, 1 on a compile error (diagnostics on `err`), 2 when an option asks
/// for a stage this build cannot do.
int runCompiler(const DriverOptions &opts, std::ostream &out, std::ostream &err,
                const std::string *sourceText = nullptr);

class DiagnosticEngine;

/// One compilation: owns the sources, the diagnostics engine and the modules. The phases run
/// in order; each reports every error it finds to the engine and says whether to go on.
class Compilation {
public:
  Compilation(const DriverOptions &opts, std::ostream &err);
  ~Compilation();

  /// Loads the input (from `sourceText` when given), its imports and the --schedule files, and
  /// resolves module-level names.
  bool parse(const std::string *sourceText = nullptr);
  /// Checks the modules, builds the IR of the main one (imported functions included) and runs
  /// the pipeline up to the scheduled module (passes/Pipeline.h: Pipeline::schedule).
  std::optional<ir::Module> buildIR();
  /// The rest of the pipeline: the functions the backends emit, lowered for the target.
  std::optional<ir::LoweredModule> lower(const ir::Module &scheduled);

  /// Spells a source location of this compilation ("f.tdsl:4:15"), for run-time messages.
  std::function<std::string(const SourceLoc &)> locationText() const;

  const ast::Module &mainModule() const;
  const std::vector<ast::Module *> &scheduleModules() const;
  /// The input and every file it imports, in load order.
  std::vector<std::string> dependencies() const;
  /// Writes them as a Makefile rule for `target` to `file` (default: target's stem + .d), with
  /// an empty rule per import (-MD, -MF). False after reporting that it cannot be written.
  bool writeDependencies(const std::string &target, std::string file);
  DiagnosticEngine &diags();
  /// How sample_* calls are decided (--seed, --tuning-db) and what they became; a tool may set
  /// its own `lookup` before buildIR (tdsl-tune does).
  schedule::SampleContext &sampling();

private:
  struct State;
  const DriverOptions &opts_;
  std::unique_ptr<State> state_;
};

const char *emitKindName(EmitKind kind);

} // namespace tdsl

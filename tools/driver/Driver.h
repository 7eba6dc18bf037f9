//===- tools/driver/Driver.h ------------------------------------------------------------------===//
//
// The compiler driver behind `tdslc`: command line, phases, outputs (spec §9).
// A library so that tests can run whole compilations in-process.

#pragma once

#include "frontend/AST.h"
#include "ir/IR.h"
#include "ir/Schedule.h"
#include "passes/graph/Graph.h"

#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tdsl {

enum class EmitKind { AST, IR, Lowered, Cpp, Cuda, LLVM, Bitcode, Asm, Obj, Header, Dot };

struct DriverOptions {
  std::string input;
  EmitKind emit = EmitKind::Obj;
  std::string output;                 // empty: stdout for text, <stem>.o for obj
  std::string target = "cpu";         // cpu | cuda
  std::string mcpu = "native", mattr; // --mcpu, --mattr
  int optLevel = 2;                   // -O0..-O3
  bool fastMath = false;
  bool fpContract = true;   // --ffp-contract=on|off
  bool remarks = false;     // --remarks
  std::string via = "llvm"; // --via=llvm|cpp
  std::vector<std::string> scheduleFiles;
  std::vector<std::pair<std::string, int64_t>> defines; // -D NAME=VALUE, in order
  bool noSchedule = false;
  std::vector<std::string> includeDirs;
  std::string func;
  bool printIRAfterAll = false;
  std::vector<std::string> printIRAfter, printIRBefore;
  bool listPasses = false;
  bool boundsCheck = false;
  bool writeDeps = false; // -MD
  std::string depFile;    // -MF
  bool warningsAsErrors = false;
  unsigned errorLimit = 20;
  std::string color = "auto";
  std::string stdlibDir;   // found from the executable unless set
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
  /// Checks the modules and builds the IR of the main one (imported functions included).
  std::optional<ir::Module> buildIR();

  const ast::Module &mainModule() const;
  const std::vector<ast::Module *> &scheduleModules() const;
  std::vector<std::string> dependencies() const;
  DiagnosticEngine &diags();

  /// Prints the IR after `step` when --print-ir-after(-all) asks for it (for the phases that
  /// run outside this class: lowering and the backends).
  void printAfter(const std::string &step, const ir::Module &m);
  void printAfter(const std::string &step, const ir::Func &f);
  /// The same for --print-ir-before.
  void printBefore(const std::string &step, const ir::Module &m);
  void printBefore(const std::string &step, const ir::Func &f);
  /// "file.tdsl:3:7" for a location in the loaded sources.
  std::string locationText(const SourceLoc &loc) const;

private:
  bool wantsPrint(const std::string &step) const;
  bool wantsPrintBefore(const std::string &step) const;
  void scheduleFused(ir::Module &m, const std::vector<graph::DerivedFunc> &fused,
                     const std::vector<ir::ScheduleScript> &scripts);

  struct State;
  const DriverOptions &opts_;
  std::ostream *printStream_;
  std::unique_ptr<State> state_;
};

/// The steps --print-ir-after and --list-passes know: `sema`, the graph passes before schedules
/// (`graph.fold-constants`, `graph.instantiate`, `graph.dce`, `graph.fuse`),
/// `schedule.<primitive>` (after each call of that primitive), `schedule` (after all
/// schedules), `graph.plan-memory`, then the lowering steps (`lower.blocks`, ...; see
/// passes/lower/Pipeline.h), run by --emit=lowered|cpp.
const std::vector<std::string> &passNames();

/// `--emit=ir`: the module's own items — its import lines, then its functions (imported ones,
/// named `prefix.name` in the IR module, are not inlined).
void printOwnItems(const ir::Module &m, std::ostream &os, const std::string &only = "");

/// The standard library folder: $TDSL_STDLIB, else `<exe>/../share/tdsl/stdlib`.
std::string defaultStdlibDir();

const char *emitKindName(EmitKind kind);

} // namespace tdsl

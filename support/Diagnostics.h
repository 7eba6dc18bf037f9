//===- support/Diagnostics.h ------------------------------------------------------------------===//
//
// Clang-style user diagnostics: `file:line:col: error: message`, the source
// line, a caret with a range underline, and `note:` lines. User errors live here; internal
// invariants are asserts.

#pragma once

#include "support/SourceLoc.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tdsl {

class SourceManager;

enum class Severity { Note, Warning, Error, Fatal };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::vector<Diagnostic> notes;

  /// Attaches a `note:` printed right after this diagnostic.
  Diagnostic &note(SourceRange at, std::string msg);
};

struct DiagnosticOptions {
  bool warningsAsErrors = false; // -Werror
  unsigned errorLimit = 20;      // --error-limit (0: no limit)
  bool color = false;            // --color
};

/// Collects diagnostics of a phase and prints them in the order they were reported.
/// `Diagnostic&` handles stay valid until the next flush().
class DiagnosticEngine {
public:
  DiagnosticEngine(const SourceManager &sm, std::ostream &os, DiagnosticOptions opts = {});
  ~DiagnosticEngine();

  Diagnostic &error(SourceRange at, std::string msg);
  Diagnostic &warning(SourceRange at, std::string msg);

  /// Prints every pending diagnostic (honouring -Werror and the error limit).
  void flush();

  /// Errors reported so far, pending ones included (a warning counts under -Werror).
  unsigned errorCount() const;
  unsigned warningCount() const { return warnings_; }
  bool hasErrors() const { return errorCount() != 0; }
  /// True once the error limit stopped the output: the phase should stop early.
  bool limitReached() const;

  const DiagnosticOptions &options() const { return opts_; }
  const SourceManager &sourceManager() const { return sm_; }

  /// With a consumer set, flush() hands each diagnostic (its notes attached) to it instead of
  /// printing it; the error limit's "too many errors" line arrives as a Fatal diagnostic without
  /// a location. The language server collects diagnostics this way.
  using Consumer = std::function<void(const Diagnostic &)>;
  void setConsumer(Consumer consumer) { consumer_ = std::move(consumer); }

private:
  void print(const Diagnostic &d, bool isNote);
  void printLocation(SourceRange r);
  void printSnippet(SourceRange r);
  /// "In file imported from FILE:LINE:COL:" for each import that led to `file`, outermost first.
  void printImportStack(uint32_t file);

  const SourceManager &sm_;
  std::ostream &os_;
  DiagnosticOptions opts_;
  Consumer consumer_;
  std::vector<Diagnostic> pending_;
  unsigned errors_ = 0, warnings_ = 0, printedErrors_ = 0;
  bool stopped_ = false;
  uint32_t lastFile_ = 0; // file of the last diagnostic printed (its import stack was shown)
};

} // namespace tdsl

//===- support/Diagnostics.cpp ----------------------------------------------------------------===//
//
// Implementation of support/Diagnostics.h.

#include "support/Diagnostics.h"

#include "support/SourceManager.h"

#include <algorithm>
#include <ostream>

namespace tdsl {

namespace {
const char *kBold = "\033[1m", *kRed = "\033[1;31m", *kMagenta = "\033[1;35m",
           *kCyan = "\033[1;36m", *kGreen = "\033[1;32m", *kReset = "\033[0m";
} // namespace

Diagnostic &Diagnostic::note(SourceRange at, std::string msg) {
  Diagnostic n;
  n.severity = Severity::Note;
  n.range = at;
  n.message = std::move(msg);
  notes.push_back(std::move(n));
  return *this;
}

DiagnosticEngine::DiagnosticEngine(const SourceManager &sm, std::ostream &os,
                                   DiagnosticOptions opts)
    : sm_(sm), os_(os), opts_(opts) {}

DiagnosticEngine::~DiagnosticEngine() { flush(); }

Diagnostic &DiagnosticEngine::error(SourceRange at, std::string msg) {
  ++errors_;
  pending_.push_back(Diagnostic{Severity::Error, at, std::move(msg), {}});
  return pending_.back();
}

Diagnostic &DiagnosticEngine::warning(SourceRange at, std::string msg) {
  ++warnings_;
  pending_.push_back(Diagnostic{Severity::Warning, at, std::move(msg), {}});
  return pending_.back();
}

unsigned DiagnosticEngine::errorCount() const {
  return errors_ + (opts_.warningsAsErrors ? warnings_ : 0);
}

bool DiagnosticEngine::limitReached() const {
  return opts_.errorLimit != 0 && errorCount() > opts_.errorLimit;
}

void DiagnosticEngine::flush() {
  for (Diagnostic &d : pending_) {
    if (stopped_)
      break;
    bool isError = d.severity == Severity::Error ||
                   (d.severity == Severity::Warning && opts_.warningsAsErrors);
    if (isError && opts_.errorLimit != 0 && printedErrors_ == opts_.errorLimit) {
      stopped_ = true;
      if (consumer_) {
        consumer_(Diagnostic{Severity::Fatal,
                             SourceRange(),
                             "too many errors emitted, stopping now [--error-limit]",
                             {}});
        break;
      }
      if (opts_.color)
        os_ << kBold;
      os_ << "fatal error: ";
      if (opts_.color)
        os_ << kReset << kBold;
      os_ << "too many errors emitted, stopping now [--error-limit]";
      if (opts_.color)
        os_ << kReset;
      os_ << "\n";
      break;
    }
    if (isError)
      ++printedErrors_;
    if (consumer_) {
      consumer_(d);
      continue;
    }
    print(d, false);
    for (const Diagnostic &n : d.notes)
      print(n, true);
  }
  pending_.clear();
  os_.flush();
}

void DiagnosticEngine::printLocation(SourceRange r) {
  if (!r.valid())
    return;
  if (opts_.color)
    os_ << kBold;
  os_ << sm_.path(r.begin.file) << ":" << r.begin.line << ":" << r.begin.col << ": ";
  if (opts_.color)
    os_ << kReset;
}

void DiagnosticEngine::printImportStack(uint32_t file) {
  std::vector<SourceLoc> stack;
  for (SourceLoc at = sm_.importedFrom(file); at.valid() && stack.size() < 64;
       at = sm_.importedFrom(at.file))
    stack.push_back(at);
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
    os_ << "In file imported from " << sm_.path(it->file) << ":" << it->line << ":" << it->col
        << ":\n";
}

void DiagnosticEngine::print(const Diagnostic &d, bool isNote) {
  // As Clang does for includes: the import stack precedes the first diagnostic of each run of
  // diagnostics in an imported file.
  if (!isNote && d.range.valid()) {
    if (d.range.begin.file != lastFile_)
      printImportStack(d.range.begin.file);
    lastFile_ = d.range.begin.file;
  }
  printLocation(d.range);
  const char *label = "error: ", *color = kRed;
  std::string suffix;
  if (isNote || d.severity == Severity::Note) {
    label = "note: ";
    color = kCyan;
  } else if (d.severity == Severity::Warning) {
    if (opts_.warningsAsErrors) {
      suffix = " [-Werror]";
    } else {
      label = "warning: ";
      color = kMagenta;
    }
  } else if (d.severity == Severity::Fatal) {
    label = "fatal error: ";
  }
  if (opts_.color)
    os_ << color;
  os_ << label;
  if (opts_.color)
    os_ << kReset << kBold;
  os_ << d.message << suffix;
  if (opts_.color)
    os_ << kReset;
  os_ << "\n";
  printSnippet(d.range);
}

void DiagnosticEngine::printSnippet(SourceRange r) {
  if (!r.valid())
    return;
  std::string_view line = sm_.lineText(r.begin.file, r.begin.line);
  // A location one past the end of the line (a missing token at end of line) is still shown.
  if (r.begin.col > line.size() + 1)
    return;
  os_ << line << "\n";
  std::string marks;
  size_t caret = r.begin.col - 1;
  for (size_t i = 0; i < caret && i < line.size(); ++i)
    marks += line[i] == '\t' ? '\t' : ' ';
  marks += '^';
  // Underline the rest of the range when it stays on the same line.
  if (r.end.valid() && r.end.file == r.begin.file && r.end.line == r.begin.line &&
      r.end.col > r.begin.col + 1) {
    size_t endCol = std::min<size_t>(r.end.col - 1, line.size());
    for (size_t i = caret + 1; i < endCol; ++i)
      marks += '~';
  }
  if (opts_.color)
    os_ << kGreen;
  os_ << marks;
  if (opts_.color)
    os_ << kReset;
  os_ << "\n";
}

} // namespace tdsl

//===- tools/tdsl-lsp/Analysis.h - One compilation of an editor buffer -----------------------===//
//
// Runs the compiler's front half on the text of an open document — parse, imports (read from
// disk), name resolution, the checker, graph instantiation and the schedules for every target
// the file names — collecting its diagnostics instead of printing them, then indexes the main
// module: every name written in it, with its declaration and what hovering it shows.

#pragma once

#include "frontend/AST.h"
#include "frontend/ModuleLoader.h"
#include "ir/IR.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "tools/tdsl-lsp/Protocol.h"

#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tdsl::lsp {

/// A name written in the main file: where it is, where it was declared, what hover shows.
struct Occurrence {
  SourceRange range;    ///< in the main file
  uint32_t defFile = 0; ///< 0: no declaration to go to
  SourceRange defRange; ///< the declared name
  std::string hover;    ///< Markdown; empty: nothing to show
};

/// The names a schedule argument may use: the scheduled function's blocks and buffers.
struct FuncNames {
  std::vector<std::pair<std::string, std::string>> blocks;  ///< name, `block Y(…)`
  std::vector<std::pair<std::string, std::string>> buffers; ///< name, `A: f32[…]`
};

class Analysis {
public:
  /// `uri` names the document in LSP messages; `path` is where it is (imports are relative to
  /// its folder); `text` is the editor's buffer.
  Analysis(std::string uri, std::string path, const std::string &text, ImportOptions imports);
  ~Analysis();
  Analysis(const Analysis &) = delete;
  Analysis &operator=(const Analysis &) = delete;

  /// True when the main file parsed (hover, definitions and symbols are available).
  bool parsed() const { return main_ != nullptr; }

  /// LSP `Diagnostic[]` for the main file. A diagnostic in an imported file is shown at the
  /// import that brings the file in, with its real place as related information.
  json diagnostics() const;
  /// LSP `DocumentSymbol[]`: funcs (with their blocks), graphs, externs, schedules.
  json documentSymbols() const;
  /// The innermost name at `at` (main file), or null.
  const Occurrence *occurrenceAt(SourceLoc at) const;
  /// LSP `Location` of a declaration.
  json location(uint32_t file, SourceRange range) const;
  /// The blocks and buffers of the function `name` (as a schedule names it), if known.
  std::optional<FuncNames> funcNames(const std::string &name) const;

  /// LSP position → compiler location in the main file, and back.
  SourceLoc fromLsp(const json &position) const;
  json toLsp(uint32_t file, SourceRange range) const;

  /// What the index holds (tests and debugging).
  const std::vector<Occurrence> &occurrences() const { return occurrences_; }

private:
  friend class Indexer;
  void compile();
  void collect(const Diagnostic &d);
  json diagnostic(const Diagnostic &d) const;
  /// A point location (a diagnostic at a call or a block) widened to the word that starts there.
  SourceRange wordAt(SourceRange r) const;
  const ast::ImportDecl *importLeadingTo(uint32_t file) const;

  std::string uri_, path_;
  SourceManager sm_;
  std::ostringstream sink_;
  std::unique_ptr<DiagnosticEngine> diags_;
  std::unique_ptr<ModuleLoader> loader_;
  ast::Module *main_ = nullptr;
  uint32_t mainFile_ = 1; // the loader registers the main buffer first
  std::optional<ir::Module> ir_;
  std::vector<Diagnostic> diagnostics_;
  std::vector<Occurrence> occurrences_;
  /// Types the checker inferred, by the declaration's location: `let` values and graph values.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, std::string> inferred_;
};

} // namespace tdsl::lsp

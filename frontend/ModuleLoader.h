//===- frontend/ModuleLoader.h ----------------------------------------------------------------===//
//
// Reads a file and, transitively, everything it imports (spec §3).

#pragma once

#include "frontend/AST.h"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tdsl {

class SourceManager;
class DiagnosticEngine;

struct ImportOptions {
  std::vector<std::string> includeDirs; // -I, searched after the importing file's folder
  std::string stdlibDir;                // where `import "nn";` finds nn.tdsl
};

/// The standard library folder of the running tool: $TDSL_STDLIB, else
/// `<exe>/../share/tdsl/stdlib` (where the build and `cmake --install` put it).
std::string defaultStdlibDir();

/// Owns every module of a compilation. `import "nn";` loads `<stdlib>/nn.tdsl`;
/// `import "path/x.tdsl";` a file relative to the importer, then each -I folder. A file
/// imported twice is loaded once; an import cycle is an error at the import that closes it.
class ModuleLoader {
public:
  ModuleLoader(SourceManager &sm, DiagnosticEngine &diags, ImportOptions opts);
  ~ModuleLoader();

  /// Loads the main file from disk (`text` == nullptr) or from `*text` under the name `path`.
  /// Returns null if the main file could not be read or parsed; import errors are reported
  /// to the diagnostics engine and leave the import unresolved.
  ast::Module *loadMain(const std::string &path, const std::string *text = nullptr);

  /// Every module loaded, the main one first.
  const std::vector<ast::Module *> &modules() const { return order_; }
  /// Paths of every file read, the main file first, then the constants' .npy files (what a
  /// -MD dependency file lists).
  std::vector<std::string> dependencies() const;

private:
  ast::Module *load(const std::string &displayPath, const std::string &key, const std::string *text,
                    const ast::ImportDecl *from);
  void loadImports(ast::Module &m);
  /// Finds the file of each `const … = load("FILE")` of `m` (relative to `m`, then the -I
  /// folders) and records it in the declaration; a file not found is an error at the string.
  void findConstFiles(ast::Module &m);
  std::string findImport(const ast::Module &importer, const ast::ImportDecl &imp, std::string &key);
  /// Where a file named by `from` may be, in order: `request` itself when absolute, else next to
  /// `from`, then in each -I folder.
  std::vector<std::filesystem::path> fileCandidates(const std::filesystem::path &request,
                                                    const ast::Module &from) const;

  SourceManager &sm_;
  DiagnosticEngine &diags_;
  ImportOptions opts_;
  std::vector<std::unique_ptr<ast::Module>> owned_;
  std::vector<ast::Module *> order_;
  std::map<std::string, ast::Module *> byKey_; // canonical path → module
  std::vector<std::string> stack_;             // canonical paths being loaded (cycle check)
  std::vector<std::string> stackDisplay_;
  std::vector<std::string> constFiles_; // the constants' files, in load order, once each
};

/// Resolves the module-level names of every loaded module: graph callees (`nn.linear`,
/// `linear`) and schedule targets. Reports redefinitions, unknown names and duplicate
/// schedules. Names inside function bodies are left to the semantic checker.
void resolveNames(const std::vector<ast::Module *> &modules, DiagnosticEngine &diags);

} // namespace tdsl

//===- frontend/ModuleLoader.cpp --------------------------------------------------------------===//
//
// Implementation of frontend/ModuleLoader.h.

#include "frontend/ModuleLoader.h"

#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>

namespace fs = std::filesystem;

namespace tdsl {

std::string defaultStdlibDir() {
  if (const char *env = std::getenv("TDSL_STDLIB"))
    return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "stdlib";
  return (exe.parent_path().parent_path() / "share" / "tdsl" / "stdlib")
      .lexically_normal()
      .string();
}

ModuleLoader::ModuleLoader(SourceManager &sm, DiagnosticEngine &diags, ImportOptions opts)
    : sm_(sm), diags_(diags), opts_(std::move(opts)) {}

ModuleLoader::~ModuleLoader() = default;

static std::string canonicalKey(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::path(path), ec);
  return ec ? fs::path(path).lexically_normal().string() : p.string();
}

static bool isFile(const fs::path &p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

namespace {

/// Imported files this process has parsed, by path and text, as the parser made them: the
/// standard library is parsed once per process rather than once per compilation (the language
/// server's, tdsl-tune's and the fuzz harnesses' compilations). Only a file parsed without a
/// diagnostic is kept; a hit is copied (ast::cloneModule), since the loader and name resolution
/// write into the module they are given.
class ParsedImports {
public:
  std::unique_ptr<ast::Module> parse(const SourceManager &sm, uint32_t file,
                                     DiagnosticEngine &diags) {
    const std::string &path = sm.path(file), &text = sm.text(file);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const Entry &e : entries_)
        if (e.path == path && e.text == text)
          return ast::cloneModule(*e.module, file);
    }
    unsigned errors = diags.errorCount(), warnings = diags.warningCount();
    std::unique_ptr<ast::Module> m = parseModule(sm, file, diags);
    if (m && diags.errorCount() == errors && diags.warningCount() == warnings) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (entries_.size() == kCapacity)
        entries_.pop_front();
      entries_.push_back({path, text, ast::cloneModule(*m, file)});
    }
    return m;
  }

private:
  struct Entry {
    std::string path, text;
    std::unique_ptr<ast::Module> module;
  };
  static constexpr size_t kCapacity = 16; // the standard library and a few files of the user
  std::mutex mutex_;
  std::deque<Entry> entries_;
};

ParsedImports &parsedImports() {
  static ParsedImports *cache = new ParsedImports; // never destroyed: used until exit
  return *cache;
}

} // namespace

ast::Module *ModuleLoader::loadMain(const std::string &path, const std::string *text) {
  ast::Module *m = load(path, canonicalKey(path), text, nullptr);
  return m;
}

ast::Module *ModuleLoader::load(const std::string &displayPath, const std::string &key,
                                const std::string *text, const ast::ImportDecl *from) {
  uint32_t file;
  if (text) {
    file = sm_.addBuffer(displayPath, *text);
  } else {
    std::string error;
    std::optional<uint32_t> id = sm_.addFile(displayPath, error);
    if (!id) {
      if (from)
        diags_.error(from->pathRange, "cannot read imported file '" + displayPath + "': " + error);
      else
        diags_.error(SourceRange(), "cannot open '" + displayPath + "': " + error);
      return nullptr;
    }
    file = *id;
  }
  // Diagnostics in an imported file are preceded by the import stack ("In file imported from").
  if (from)
    sm_.setImportedFrom(file, from->pathRange.begin);
  std::unique_ptr<ast::Module> module =
      from ? parsedImports().parse(sm_, file, diags_) : parseModule(sm_, file, diags_);
  if (!module)
    return nullptr;
  module->name = fs::path(displayPath).stem().string();
  ast::Module *m = module.get();
  owned_.push_back(std::move(module));
  order_.push_back(m);
  byKey_[key] = m;
  findConstFiles(*m);
  stack_.push_back(key);
  stackDisplay_.push_back(displayPath);
  loadImports(*m);
  stack_.pop_back();
  stackDisplay_.pop_back();
  return m;
}

std::vector<fs::path> ModuleLoader::fileCandidates(const fs::path &request,
                                                   const ast::Module &from) const {
  if (request.is_absolute())
    return {request};
  std::vector<fs::path> candidates = {fs::path(from.path).parent_path() / request};
  for (const std::string &dir : opts_.includeDirs)
    candidates.push_back(fs::path(dir) / request);
  return candidates;
}

std::string ModuleLoader::findImport(const ast::Module &importer, const ast::ImportDecl &imp,
                                     std::string &key) {
  fs::path request(imp.path);
  std::vector<fs::path> candidates;
  if (request.extension() != ".tdsl") {
    // A library name: the standard library first, then the -I folders.
    if (!opts_.stdlibDir.empty())
      candidates.push_back(fs::path(opts_.stdlibDir) / (imp.path + ".tdsl"));
    for (const std::string &dir : opts_.includeDirs)
      candidates.push_back(fs::path(dir) / (imp.path + ".tdsl"));
  } else {
    candidates = fileCandidates(request, importer);
  }
  for (const fs::path &c : candidates) {
    if (!isFile(c))
      continue;
    std::string display = c.lexically_normal().string();
    key = canonicalKey(display);
    return display;
  }
  // No regular file: a directory of that name is reported as such when it is read.
  for (const fs::path &c : candidates) {
    std::error_code ec;
    if (!fs::is_directory(c, ec))
      continue;
    std::string display = c.lexically_normal().string();
    key = canonicalKey(display);
    return display;
  }
  return {};
}

void ModuleLoader::loadImports(ast::Module &m) {
  std::map<std::string, const ast::ImportDecl *> prefixes;
  for (ast::ItemPtr &item : m.items) {
    auto *imp = item->as<ast::ImportDecl>();
    if (!imp || imp->path.empty())
      continue;
    std::string key;
    std::string display = findImport(m, *imp, key);
    if (display.empty()) {
      bool library = fs::path(imp->path).extension() != ".tdsl";
      diags_.error(imp->pathRange,
                   std::string(library ? "library" : "file") + " '" + imp->path + "' not found" +
                       (library ? " in the standard library or -I folders"
                                : " relative to the importing file or in -I folders"));
      continue;
    }
    // The cycle is reported at the import that closes it, naming every file on it.
    auto onStack = std::find(stack_.begin(), stack_.end(), key);
    if (onStack != stack_.end()) {
      std::string cycle;
      for (size_t i = onStack - stack_.begin(); i < stack_.size(); ++i)
        cycle += stackDisplay_[i] + " -> ";
      cycle += display;
      diags_.error(imp->pathRange, "import cycle: " + cycle);
      continue;
    }
    ast::Module *target = nullptr;
    auto it = byKey_.find(key);
    if (it != byKey_.end())
      target = it->second;
    else
      target = load(display, key, nullptr, imp);
    if (!target)
      continue;
    imp->prefix = target->name;
    imp->resolved = target;
    auto [prev, inserted] = prefixes.emplace(imp->prefix, imp);
    if (!inserted && prev->second->resolved != target) {
      diags_
          .error(imp->pathRange, "import prefix '" + imp->prefix + "' is already used by '" +
                                     prev->second->path + "'")
          .note(prev->second->pathRange, "first imported here");
    }
  }
}

void ModuleLoader::findConstFiles(ast::Module &m) {
  for (ast::ItemPtr &item : m.items) {
    auto *c = item->as<ast::ConstDecl>();
    if (!c || c->source != ast::ConstDecl::Source::Load || c->text.empty())
      continue;
    fs::path request(c->text);
    for (const fs::path &p : fileCandidates(request, m)) {
      if (!isFile(p))
        continue;
      // Absolute, so that the IR printed with it (--emit=ir) reads the same file from anywhere.
      std::error_code ec;
      fs::path abs = fs::absolute(p, ec);
      c->resolvedPath = (ec ? p : abs).lexically_normal().string();
      break;
    }
    if (c->resolvedPath.empty()) {
      diags_.error(c->textRange, "constant file '" + c->text + "' not found" +
                                     (request.is_absolute()
                                          ? std::string()
                                          : " relative to the declaring file or in -I folders"));
      continue;
    }
    if (std::find(constFiles_.begin(), constFiles_.end(), c->resolvedPath) == constFiles_.end())
      constFiles_.push_back(c->resolvedPath);
  }
}

std::vector<std::string> ModuleLoader::dependencies() const {
  std::vector<std::string> out;
  for (const ast::Module *m : order_)
    out.push_back(m->path);
  out.insert(out.end(), constFiles_.begin(), constFiles_.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// Module-level name resolution
// ---------------------------------------------------------------------------------------------

namespace {

SourceRange nameRange(const ast::Item &item) {
  if (auto *f = item.as<ast::FuncDecl>())
    return f->name.range;
  if (auto *g = item.as<ast::GraphDecl>())
    return g->name.range;
  if (auto *e = item.as<ast::ExternDecl>())
    return e->name.range;
  if (auto *c = item.as<ast::ConstDecl>())
    return c->name.range;
  if (auto *d = item.as<ast::GradDecl>())
    return d->name.range;
  return item.range;
}

/// Looks `name` up from module `m`: `x` in `m` itself, `prefix.x` in an import of `m`.
const ast::Item *lookup(const ast::Module &m, const ast::QualifiedName &name,
                        DiagnosticEngine &diags, const char *what) {
  if (name.parts.size() == 1) {
    if (const ast::Item *item = m.findCallable(name.parts[0]))
      return item;
    if (const ast::ConstDecl *c = m.findConst(name.parts[0])) {
      diags.error(name.range, "'" + name.str() + "' is a constant, not a " + what)
          .note(c->name.range, "constant declared here");
      return nullptr;
    }
    diags.error(name.range, std::string("unknown ") + what + " '" + name.str() + "'");
    return nullptr;
  }
  if (name.parts.size() != 2) {
    diags.error(name.range,
                "'" + name.str() + "' is not a valid name; expected 'name' or 'module.name'");
    return nullptr;
  }
  for (const ast::ImportDecl *imp : m.imports()) {
    if (imp->prefix != name.parts[0] || !imp->resolved)
      continue;
    if (const ast::Item *item = imp->resolved->findCallable(name.parts[1]))
      return item;
    diags.error(name.range, std::string("unknown ") + what + " '" + name.str() + "': module '" +
                                name.parts[0] + "' declares no '" + name.parts[1] + "'");
    return nullptr;
  }
  bool anyUnresolved = false;
  for (const ast::ImportDecl *imp : m.imports())
    anyUnresolved |= imp->resolved == nullptr;
  // An import that failed has already been reported; do not pile a second error on it.
  if (!anyUnresolved)
    diags.error(name.range, "unknown module '" + name.parts[0] + "' in '" + name.str() +
                                "'; is an import missing?");
  return nullptr;
}

bool hasGradItems(const ast::Module &m) {
  for (const ast::ItemPtr &item : m.items)
    if (item->kind == ast::ItemKind::Grad)
      return true;
  return false;
}

void resolveGraphStmts(const ast::Module &m, std::vector<ast::GraphStmtPtr> &body,
                       DiagnosticEngine &diags) {
  for (ast::GraphStmtPtr &s : body) {
    ast::CallValue *call = nullptr;
    if (s->kind == ast::GraphStmtKind::Dataflow)
      resolveGraphStmts(m, static_cast<ast::DataflowStmt &>(*s).body, diags);
    else if (s->kind == ast::GraphStmtKind::Bind)
      call = &static_cast<ast::BindStmt &>(*s).call;
    else if (s->kind == ast::GraphStmtKind::Call)
      call = &static_cast<ast::CallStmt &>(*s).call;
    if (call)
      call->resolved = lookup(m, call->callee, diags, "function");
  }
}

/// Spec §10: every func and graph defines the C symbols NAME and NAME_dlpack, next to the
/// runtime's own `tdsl_last_error`. A name whose symbols meet another item's is an error at the
/// later declaration; names beginning with `tdsl_` belong to the runtime; an extern's symbol
/// may not be `tdsl_last_error` nor a DLPack entry this module defines.
void checkSymbols(const ast::Module &m, DiagnosticEngine &diags) {
  std::map<std::string, const ast::Item *> defined; // C symbol → the item defining it
  for (const ast::ItemPtr &item : m.items) {
    if (item->kind != ast::ItemKind::Func && item->kind != ast::ItemKind::Graph &&
        item->kind != ast::ItemKind::Grad)
      continue;
    const std::string &name = declaredName(*item);
    std::string what = std::string(ast::noun(item->kind)) + " '" + name + "'";
    if (name.rfind("tdsl_", 0) == 0) {
      diags.error(nameRange(*item), what + ": names beginning with 'tdsl_' are reserved for the "
                                           "runtime's symbols (tdsl_last_error)");
      continue;
    }
    for (const std::string &symbol : {name, name + "_dlpack"}) {
      auto [prev, inserted] = defined.emplace(symbol, item.get());
      if (inserted || prev->second == item.get())
        continue;
      if (declaredName(*prev->second) == name)
        break; // a redefinition, reported as such
      std::string other =
          std::string(ast::noun(prev->second->kind)) + " '" + declaredName(*prev->second) + "'";
      bool entry = symbol != name; // this item's DLPack entry meets the other's name
      diags
          .error(nameRange(*item),
                 entry ? "the DLPack entry of " + what + " would be named '" + symbol +
                             "', which is the name of " + other + " (spec §10)"
                       : what + " has the name of the DLPack entry of " + other + " (spec §10)")
          .note(nameRange(*prev->second), other + " is declared here");
      break;
    }
  }
  for (const ast::ItemPtr &item : m.items) {
    auto *e = item->as<ast::ExternDecl>();
    if (!e)
      continue;
    if (e->symbol == "tdsl_last_error") {
      diags.error(e->symbolRange, "extern symbol 'tdsl_last_error' is the runtime's own");
      continue;
    }
    // An extern of an own function's name is the backends' error (they see what is emitted);
    // a DLPack entry is not theirs to compare.
    auto it = defined.find(e->symbol);
    if (it == defined.end() || e->symbol == declaredName(*it->second))
      continue;
    std::string other =
        std::string(ast::noun(it->second->kind)) + " '" + declaredName(*it->second) + "'";
    bool entry = e->symbol != declaredName(*it->second);
    diags
        .error(e->symbolRange, "extern symbol '" + e->symbol + "' is defined by this module's " +
                                   other + (entry ? " (its DLPack entry)" : ""))
        .note(nameRange(*it->second), other + " is declared here");
  }
}

} // namespace

void resolveNames(const std::vector<ast::Module *> &modules, DiagnosticEngine &diags) {
  for (ast::Module *m : modules) {
    std::map<std::string, const ast::Item *> defined;
    // `grad` items last, so that a name a grad item takes is reported at the grad item (spec §13).
    std::vector<const ast::Item *> items;
    for (bool grads : {false, true})
      for (const ast::ItemPtr &item : m->items)
        if ((item->kind == ast::ItemKind::Grad) == grads)
          items.push_back(item.get());
    for (const ast::Item *item : items) {
      const std::string &name = declaredName(*item);
      if (name.empty())
        continue;
      auto [prev, inserted] = defined.emplace(name, item);
      if (!inserted)
        diags.error(nameRange(*item), "redefinition of '" + name + "'")
            .note(nameRange(*prev->second), std::string("previous definition of ") +
                                                ast::noun(prev->second->kind) + " '" + name +
                                                "' is here");
    }
    checkSymbols(*m, diags);
    std::map<std::pair<std::string, std::string>, const ast::ScheduleDecl *> schedules;
    for (ast::ItemPtr &item : m->items) {
      if (auto *g = item->as<ast::GraphDecl>())
        resolveGraphStmts(*m, g->body, diags);
      if (auto *g = item->as<ast::GradDecl>()) {
        // Spec §13: F is a graph or a func (of this module or an import).
        g->resolved = lookup(*m, g->func, diags, "graph or func");
        if (g->resolved && g->resolved->kind != ast::ItemKind::Func &&
            g->resolved->kind != ast::ItemKind::Graph && g->resolved->kind != ast::ItemKind::Grad) {
          diags
              .error(g->func.range, std::string("cannot differentiate ") +
                                        ast::noun(g->resolved->kind) + " '" + g->func.str() +
                                        "'; grad takes a graph or a func")
              .note(nameRange(*g->resolved), "declared here");
          g->resolved = nullptr;
        }
      }
      auto *s = item->as<ast::ScheduleDecl>();
      if (!s)
        continue;
      if (m->scheduleHost && s->func.parts.size() == 1 &&
          !m->scheduleHost->findCallable(s->func.parts[0]) &&
          !m->scheduleHost->findConst(s->func.parts[0])) {
        s->deferred = true;
        continue;
      }
      // A func a `grad` item derives (`f_adjoint`, spec §13) exists once the pipeline's grad step
      // has run: looked up then, like a --schedule file's function the graph passes make.
      const ast::Module &host = m->scheduleHost ? *m->scheduleHost : *m;
      if (s->func.parts.size() == 1 && !host.findCallable(s->func.parts[0]) &&
          !host.findConst(s->func.parts[0]) && hasGradItems(host) &&
          s->func.parts[0].find("_adjoint") != std::string::npos) {
        s->deferred = true;
        continue;
      }
      const ast::Item *target =
          lookup(m->scheduleHost ? *m->scheduleHost : *m, s->func, diags, "function");
      if (!target)
        continue;
      if (target->kind != ast::ItemKind::Func) {
        diags
            .error(s->func.range, std::string("cannot schedule ") + ast::noun(target->kind) + " '" +
                                      s->func.str() + "'; schedules apply to funcs")
            .note(nameRange(*target), "declared here");
        continue;
      }
      s->resolved = target->as<ast::FuncDecl>();
      std::string targetName = s->target ? s->target->name : "";
      auto [prev, inserted] = schedules.emplace(std::make_pair(s->func.str(), targetName), s);
      if (!inserted)
        diags
            .error(s->func.range, "second schedule for '" + s->func.str() + "'" +
                                      (targetName.empty() ? "" : " for " + targetName))
            .note(prev->second->func.range, "first schedule is here");
    }
  }
}

} // namespace tdsl

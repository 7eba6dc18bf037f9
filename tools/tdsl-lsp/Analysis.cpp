//===- tools/tdsl-lsp/Analysis.cpp - One compilation of an editor buffer ----------------------===//
//
// Implementation of tools/tdsl-lsp/Analysis.h.

#include "tools/tdsl-lsp/Analysis.h"

#include "frontend/Sema.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/graph/Graph.h"
#include "passes/schedule/Apply.h"
#include "tools/tdsl-lsp/Primitives.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>

namespace fs = std::filesystem;

namespace tdsl::lsp {

namespace {

using Key = std::tuple<uint32_t, uint32_t, uint32_t>;
Key keyOf(SourceLoc l) { return {l.file, l.line, l.col}; }

bool before(SourceLoc a, SourceLoc b) { return a.line != b.line ? a.line < b.line : a.col < b.col; }

std::string code(const std::string &text) { return "```tdsl\n" + text + "\n```\n"; }

std::string typeString(const ir::Buffer &b) {
  std::string s = b.dtype().name() + "[";
  for (size_t i = 0; i < b.shape().size(); ++i)
    s += (i ? ", " : "") + ir::toString(b.shape()[i]);
  return s + "]";
}

/// Records the types the checker inferred: each `let`'s dtype and each graph value's type,
/// keyed by where the declaration starts.
class InferredTypes : public ir::IRVisitor {
public:
  explicit InferredTypes(std::map<Key, std::string> &out) : out_(out) {}
  using ir::IRVisitor::visit;
  void visit(const ir::LetStmt *op) override {
    if (op->loc.valid())
      out_[keyOf(op->loc)] = op->var.dtype().name();
    ir::IRVisitor::visit(op);
  }
  void binding(const ir::GraphBinding &b) {
    if (auto *c = std::get_if<ir::CallBinding>(&b)) {
      for (const ir::Buffer &t : c->targets)
        value(t);
    } else {
      value(std::get<ir::ReshapeBinding>(b).target);
    }
  }
  void value(const ir::Buffer &b) {
    if (b.defined() && b->loc.valid())
      out_[keyOf(b->loc)] = typeString(b);
  }

private:
  std::map<Key, std::string> &out_;
};

} // namespace

// ---------------------------------------------------------------------------------------------
// The index: every name of the main module, resolved with the language's scopes
// ---------------------------------------------------------------------------------------------

class Indexer {
public:
  explicit Indexer(Analysis &a) : a_(a), sm_(a.sm_) {
    for (const ast::Module *m : a.loader_->modules())
      for (const ast::ItemPtr &item : m->items)
        owner_[item.get()] = m;
  }

  void run() {
    for (const ast::ItemPtr &item : a_.main_->items) {
      scopes_.clear();
      scopes_.emplace_back();
      if (auto *imp = item->as<ast::ImportDecl>())
        import(*imp);
      else if (auto *f = item->as<ast::FuncDecl>())
        func(*f);
      else if (auto *g = item->as<ast::GraphDecl>())
        graph(*g);
      else if (auto *e = item->as<ast::ExternDecl>())
        externDecl(*e);
      else if (auto *s = item->as<ast::ScheduleDecl>())
        schedule(*s);
    }
  }

  // -- text of the sources ---------------------------------------------------------------------

  /// The source text of `r`, whitespace runs (line breaks included) collapsed to one space.
  std::string text(SourceRange r) const {
    if (!r.valid())
      return "";
    uint32_t f = r.begin.file;
    const std::string &all = sm_.text(f);
    auto offset = [&](SourceLoc l) -> size_t {
      if (l.line == 0 || l.line > sm_.lineCount(f))
        return all.size();
      std::string_view line = sm_.lineText(f, l.line);
      return static_cast<size_t>(line.data() - all.data()) +
             std::min<size_t>(l.col - 1, line.size());
    };
    size_t b = offset(r.begin), e = r.end.valid() ? offset(r.end) : b;
    std::string out;
    bool space = false;
    for (size_t i = b; i < e && i < all.size(); ++i) {
      char c = all[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        space = !out.empty();
        continue;
      }
      if (space)
        out += ' ';
      space = false;
      out += c;
    }
    return out;
  }

  /// The `//` comment lines right above `at`, as written.
  std::string docComment(SourceLoc at) const {
    std::vector<std::string> lines;
    for (uint32_t l = at.line; l-- > 1;) {
      std::string_view t = sm_.lineText(at.file, l);
      size_t b = t.find_first_not_of(" \t");
      if (b == std::string_view::npos || t.substr(b, 2) != "//")
        break;
      size_t e = t.find_last_not_of(" \t");
      lines.emplace_back(t.substr(b, e - b + 1));
    }
    std::string out;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
      out += *it + "\n";
    return out;
  }

  // -- what hover shows --------------------------------------------------------------------------

  std::string params(const std::vector<ast::Param> &ps) const {
    std::string s;
    for (size_t i = 0; i < ps.size(); ++i)
      s += (i ? ", " : "") + ps[i].name.name + ": " + text(ps[i].type.range);
    return s;
  }

  static std::string generics(const std::vector<ast::GenericParam> &gs) {
    if (gs.empty())
      return "";
    std::string s = "<";
    for (size_t i = 0; i < gs.size(); ++i)
      s += (i ? ", " : "") + gs[i].name.name + ": " + gs[i].dtype.name;
    return s + ">";
  }

  std::string signature(const ast::Item &item) const {
    if (auto *f = item.as<ast::FuncDecl>())
      return "func " + f->name.name + generics(f->generics) + "(" + params(f->inputs) + ") -> (" +
             params(f->outputs) + ")";
    if (auto *e = item.as<ast::ExternDecl>())
      return std::string("extern ") + (e->pure ? "pure " : "") + "func " + e->name.name + "(" +
             params(e->inputs) + ") -> (" + params(e->outputs) + ") = \"" + e->symbol + "\"";
    if (auto *g = item.as<ast::GraphDecl>()) {
      std::string results;
      for (size_t i = 0; i < g->results.size(); ++i)
        results += (i ? ", " : "") + text(g->results[i].range);
      return "graph " + g->name.name + generics(g->generics) + "(" + params(g->inputs) + ") -> " +
             (g->tupleResult ? "(" + results + ")" : results);
    }
    return "";
  }

  struct Sym {
    uint32_t file = 0;
    SourceRange decl;
    std::string hover;
  };

  Sym itemSym(const ast::Item &item) const {
    const ast::Module *m = owner_.count(&item) ? owner_.at(&item) : a_.main_;
    SourceRange name = item.range;
    if (auto *f = item.as<ast::FuncDecl>())
      name = f->name.range;
    else if (auto *g = item.as<ast::GraphDecl>())
      name = g->name.range;
    else if (auto *e = item.as<ast::ExternDecl>())
      name = e->name.range;
    std::string hover = code(docComment(item.range.begin) + signature(item));
    if (m != a_.main_)
      hover += "from module `" + m->name + "`\n";
    return Sym{name.begin.file, name, hover};
  }

  std::string paramHover(const ast::Param &p, bool input, const std::string &of) const {
    if (!p.type.isTensor)
      return code(p.name.name + ": " + p.type.dtype.name) + "scalar input of " + of + "\n";
    return code(p.name.name + ": " + text(p.type.range)) + (input ? "input of " : "output of ") +
           of + "\n";
  }

  std::string allocHover(const ast::AllocStmt &a, const std::string &of) const {
    std::string t = text(a.range);
    while (!t.empty() && (t.back() == ';' || t.back() == ' '))
      t.pop_back();
    return code(t) + "intermediate buffer of " + of + "\n";
  }

  std::string blockHover(const ast::BlockStmt &b, const std::string &of) const {
    std::string s = "block " + b.name.name + "(";
    for (size_t i = 0; i < b.axes.size(); ++i)
      s += (i ? ", " : "") + text(b.axes[i].range);
    s += ")";
    if (b.where)
      s += " where " + text(b.where->range);
    return code(s) + "block of " + of + "\n";
  }

  // -- scopes ------------------------------------------------------------------------------------

  void add(SourceRange r, const Sym &s) {
    if (!r.valid() || r.begin.file != a_.mainFile_)
      return;
    a_.occurrences_.push_back(Occurrence{r, s.decl.valid() ? s.file : 0, s.decl, s.hover});
  }

  void declare(const std::string &name, SourceRange at, std::string hover) {
    Sym s{at.begin.file, at, std::move(hover)};
    scopes_.back()[name] = s;
    add(at, s);
  }
  void declare(const ast::Ident &id, std::string hover) {
    declare(id.name, id.range, std::move(hover));
  }

  const Sym *lookup(const std::string &name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(name); f != it->end())
        return &f->second;
    return nullptr;
  }

  void ref(const std::string &name, SourceRange at) {
    if (const Sym *s = lookup(name))
      add(at, *s);
  }

  // -- expressions and statements ----------------------------------------------------------------

  void expr(const ast::Expr &e) {
    switch (e.kind) {
    case ast::ExprKind::Name:
      ref(static_cast<const ast::NameExpr &>(e).name, e.range);
      break;
    case ast::ExprKind::Load: {
      auto &l = static_cast<const ast::LoadExpr &>(e);
      ref(l.buffer.name, l.buffer.range);
      for (const ast::ExprPtr &i : l.indices)
        expr(*i);
      break;
    }
    case ast::ExprKind::Call:
      for (const ast::ExprPtr &arg : static_cast<const ast::CallExpr &>(e).args)
        expr(*arg);
      break;
    case ast::ExprKind::Unary:
      expr(*static_cast<const ast::UnaryExpr &>(e).operand);
      break;
    case ast::ExprKind::Binary: {
      auto &b = static_cast<const ast::BinaryExpr &>(e);
      expr(*b.lhs);
      expr(*b.rhs);
      break;
    }
    default:
      break;
    }
  }

  void params(const std::vector<ast::Param> &ps, bool input, const std::string &of) {
    for (const ast::Param &p : ps) {
      for (const ast::ExprPtr &d : p.type.dims) {
        auto *n = d->as<ast::NameExpr>();
        // A shape variable is declared where it first appears as a whole input dimension.
        if (input && n && !lookup(n->name))
          declare(n->name, n->range, code(n->name + ": i64") + "shape variable of " + of + "\n");
        else
          expr(*d);
      }
      declare(p.name, paramHover(p, input, of));
    }
  }

  void genericParams(const std::vector<ast::GenericParam> &gs, const std::string &of) {
    for (const ast::GenericParam &g : gs)
      declare(g.name,
              code(g.name.name + ": " + g.dtype.name) + "compile-time constant of " + of + "\n");
  }

  void stmts(const std::vector<ast::StmtPtr> &list, const std::string &of) {
    for (const ast::StmtPtr &s : list)
      stmt(*s, of);
  }

  void stmt(const ast::Stmt &s, const std::string &of) {
    switch (s.kind) {
    case ast::StmtKind::Store: {
      auto &st = static_cast<const ast::StoreStmt &>(s);
      ref(st.buffer.name, st.buffer.range);
      for (const ast::ExprPtr &i : st.indices)
        expr(*i);
      expr(*st.value);
      break;
    }
    case ast::StmtKind::Let: {
      auto &l = static_cast<const ast::LetStmt &>(s);
      expr(*l.value);
      auto t = a_.inferred_.find(keyOf(l.range.begin));
      std::string type = t == a_.inferred_.end() ? "" : ": " + t->second;
      declare(l.name, code("let " + l.name.name + type + " = " + text(l.value->range)) +
                          "block-local scalar\n");
      break;
    }
    case ast::StmtKind::If: {
      auto &i = static_cast<const ast::IfStmt &>(s);
      expr(*i.cond);
      scopes_.emplace_back();
      stmts(i.thenBody, of);
      scopes_.back().clear();
      stmts(i.elseBody, of);
      scopes_.pop_back();
      break;
    }
    case ast::StmtKind::Init:
      scopes_.emplace_back();
      stmts(static_cast<const ast::InitStmt &>(s).body, of);
      scopes_.pop_back();
      break;
    case ast::StmtKind::Alloc: {
      auto &al = static_cast<const ast::AllocStmt &>(s);
      for (const ast::ExprPtr &d : al.type.dims)
        expr(*d);
      declare(al.name, allocHover(al, of));
      break;
    }
    case ast::StmtKind::For: {
      auto &f = static_cast<const ast::ForStmt &>(s);
      expr(*f.lo);
      expr(*f.hi);
      scopes_.emplace_back();
      std::string kind;
      if (f.loopKind == ast::LoopKind::Thread)
        kind = " thread(\"" + f.threadTag + "\")";
      else if (f.loopKind != ast::LoopKind::Serial || f.kindWritten)
        kind = std::string(" ") + ast::spelling(f.loopKind);
      declare(f.var, code("for " + f.var.name + " in " + text(f.lo->range) + ".." +
                          text(f.hi->range) + kind) +
                         "loop variable (i64)\n");
      stmts(f.body, of);
      scopes_.pop_back();
      break;
    }
    case ast::StmtKind::Block: {
      auto &b = static_cast<const ast::BlockStmt &>(s);
      add(b.name.range, Sym{b.name.range.begin.file, b.name.range, blockHover(b, of)});
      // Extents and bindings see the enclosing loops; the axes are visible in the block.
      for (const ast::Axis &ax : b.axes) {
        if (ax.extent)
          expr(*ax.extent);
        if (ax.binding)
          expr(*ax.binding);
      }
      scopes_.emplace_back();
      for (const ast::Axis &ax : b.axes)
        declare(ax.name, code(text(ax.range)) + "axis of block `" + b.name.name + "` (i64)\n");
      if (b.where)
        expr(*b.where);
      stmts(b.body, of);
      scopes_.pop_back();
      break;
    }
    }
  }

  // -- items -------------------------------------------------------------------------------------

  void import(const ast::ImportDecl &imp) {
    if (!imp.resolved)
      return;
    SourceLoc top{imp.resolved->fileId, 1, 1};
    add(imp.pathRange, Sym{imp.resolved->fileId, SourceRange(top, top),
                           code("import \"" + imp.path + "\"") + "module `" + imp.resolved->name +
                               "` (`" + fs::path(imp.resolved->path).filename().string() + "`)\n"});
  }

  void func(const ast::FuncDecl &f) {
    add(f.name.range, itemSym(f));
    std::string of = "func `" + f.name.name + "`";
    genericParams(f.generics, of);
    params(f.inputs, true, of);
    params(f.outputs, false, of);
    stmts(f.body, of);
  }

  void externDecl(const ast::ExternDecl &e) {
    add(e.name.range, itemSym(e));
    std::string of = "extern func `" + e.name.name + "`";
    params(e.inputs, true, of);
    params(e.outputs, false, of);
  }

  void graph(const ast::GraphDecl &g) {
    add(g.name.range, itemSym(g));
    std::string of = "graph `" + g.name.name + "`";
    genericParams(g.generics, of);
    params(g.inputs, true, of);
    for (const ast::Type &t : g.results)
      for (const ast::ExprPtr &d : t.dims)
        expr(*d);
    graphStmts(g.body, of);
  }

  void callValue(const ast::CallValue &cv) {
    if (cv.resolved)
      add(cv.callee.range, itemSym(*cv.resolved));
    for (const ast::ExprPtr &c : cv.constArgs)
      expr(*c);
    for (const ast::ExprPtr &arg : cv.args)
      expr(*arg);
    if (cv.declaredType)
      for (const ast::ExprPtr &d : cv.declaredType->dims)
        expr(*d);
  }

  std::string valueHover(const ast::Ident &target, const std::string &type, const std::string &what,
                         const std::string &of) const {
    auto t = a_.inferred_.find(keyOf(target.range.begin));
    std::string shown = t != a_.inferred_.end() ? t->second : type;
    return code(target.name + (shown.empty() ? "" : ": " + shown)) + what + " in " + of + "\n";
  }

  void graphStmts(const std::vector<ast::GraphStmtPtr> &body, const std::string &of) {
    for (const ast::GraphStmtPtr &s : body) {
      switch (s->kind) {
      case ast::GraphStmtKind::Dataflow:
        graphStmts(static_cast<const ast::DataflowStmt &>(*s).body, of);
        break;
      case ast::GraphStmtKind::Output:
        for (const ast::Ident &n : static_cast<const ast::OutputStmt &>(*s).names)
          ref(n.name, n.range);
        break;
      case ast::GraphStmtKind::Return:
        for (const ast::Ident &n : static_cast<const ast::ReturnStmt &>(*s).names)
          ref(n.name, n.range);
        break;
      case ast::GraphStmtKind::Bind: {
        auto &b = static_cast<const ast::BindStmt &>(*s);
        callValue(b.call);
        for (size_t i = 0; i < b.targets.size(); ++i) {
          std::string declared =
              i == 0 && b.call.declaredType ? text(b.call.declaredType->range) : std::string();
          std::string what = b.targets.size() == 1 ? "result of `" + b.call.callee.str() + "`"
                                                   : "result " + std::to_string(i + 1) + " of `" +
                                                         b.call.callee.str() + "`";
          declare(b.targets[i], valueHover(b.targets[i], declared, what, of));
        }
        break;
      }
      case ast::GraphStmtKind::Call:
        callValue(static_cast<const ast::CallStmt &>(*s).call);
        break;
      case ast::GraphStmtKind::Reshape: {
        auto &r = static_cast<const ast::ReshapeStmt &>(*s);
        ref(r.source.name, r.source.range);
        for (const ast::ExprPtr &d : r.shape)
          expr(*d);
        declare(r.target, valueHover(r.target, "", "reshape of `" + r.source.name + "`", of));
        break;
      }
      }
    }
  }

  // -- schedules ---------------------------------------------------------------------------------

  struct Names {
    std::map<std::string, Sym> blocks, buffers;
  };

  /// The blocks and buffers of `f`, with what hovering them shows.
  Names namesOf(const ast::FuncDecl &f) const {
    Names n;
    std::string of = "func `" + f.name.name + "`";
    for (const ast::Param &p : f.inputs)
      if (p.type.isTensor)
        n.buffers[p.name.name] =
            Sym{p.name.range.begin.file, p.name.range, paramHover(p, true, of)};
    for (const ast::Param &p : f.outputs)
      n.buffers[p.name.name] = Sym{p.name.range.begin.file, p.name.range, paramHover(p, false, of)};
    std::function<void(const std::vector<ast::StmtPtr> &)> walk =
        [&](const std::vector<ast::StmtPtr> &list) {
          for (const ast::StmtPtr &s : list) {
            if (auto *a = s->as<ast::AllocStmt>())
              n.buffers.emplace(a->name.name,
                                Sym{a->name.range.begin.file, a->name.range, allocHover(*a, of)});
            else if (auto *fo = s->as<ast::ForStmt>())
              walk(fo->body);
            else if (auto *b = s->as<ast::BlockStmt>()) {
              n.blocks.emplace(b->name.name,
                               Sym{b->name.range.begin.file, b->name.range, blockHover(*b, of)});
              walk(b->body);
            }
          }
        };
    walk(f.body);
    return n;
  }

  void schedArg(const ast::SchedArg &arg, char kind, const Names &names) {
    switch (arg.kind) {
    case ast::SchedArgKind::Expr: {
      auto *n = arg.expr ? arg.expr->as<ast::NameExpr>() : nullptr;
      if (!n) {
        if (arg.expr)
          expr(*arg.expr);
        return;
      }
      if (const Sym *s = lookup(n->name)) {
        add(n->range, *s);
        return;
      }
      const std::map<std::string, Sym> *first = &names.blocks, *second = &names.buffers;
      if (kind == 'f')
        std::swap(first, second);
      for (const auto *table : {first, second})
        if (auto it = table->find(n->name); it != table->end()) {
          add(n->range, it->second);
          return;
        }
      return;
    }
    case ast::SchedArgKind::List:
      for (const ast::SchedArg &item : arg.list)
        schedArg(item, '*', names);
      return;
    case ast::SchedArgKind::Lambda:
      scopes_.emplace_back();
      for (const ast::Ident &p : arg.lambdaParams)
        declare(p, code(p.name + ": i64") + "index of the buffer's current layout\n");
      for (const ast::SchedArg &r : arg.list)
        schedArg(r, '*', names);
      scopes_.pop_back();
      return;
    case ast::SchedArgKind::String:
      return;
    }
  }

  void schedule(const ast::ScheduleDecl &s) {
    Names names;
    if (s.resolved) {
      add(s.func.range, itemSym(*s.resolved));
      names = namesOf(*s.resolved);
    }
    std::string fn = s.func.str();
    for (const ast::SchedParam &p : s.params) {
      if (p.value)
        expr(*p.value);
      declare(p.name, code(text(p.range)) + "schedule parameter of `" + fn + "` (`-D " +
                          p.name.name + "=…` or `-D " + fn + "." + p.name.name + "=…`)\n");
    }
    scopes_.emplace_back(); // handles
    for (const ast::SchedStmt &st : s.body) {
      const PrimitiveInfo *prim = findPrimitive(st.primitive.name);
      if (prim) {
        std::string hover =
            code(prim->signature + (prim->result.empty() ? "" : " -> " + prim->result)) +
            prim->doc + "\n";
        if (!primitiveImplemented(prim->name))
          hover += "\nNot implemented yet.\n";
        add(st.primitive.range, Sym{0, SourceRange(), hover});
      }
      for (size_t i = 0; i < st.args.size(); ++i) {
        char kind = '*';
        if (prim && !prim->args.empty())
          kind = prim->args[std::min(i, prim->args.size() - 1)];
        schedArg(st.args[i], kind, names);
      }
      for (size_t i = 0; i < st.targets.size(); ++i) {
        const ast::Ident &t = st.targets[i];
        if (t.name == "_")
          continue;
        std::string handle = prim && !prim->handle.empty() ? prim->handle : "handle";
        declare(t, code(t.name + ": " + handle) + "result " + std::to_string(i + 1) + " of `" +
                       st.primitive.name + "` in the schedule of `" + fn + "`\n");
      }
    }
  }

private:
  Analysis &a_;
  const SourceManager &sm_;
  std::map<const ast::Item *, const ast::Module *> owner_;
  std::vector<std::map<std::string, Sym>> scopes_;
};

// ---------------------------------------------------------------------------------------------
// Analysis
// ---------------------------------------------------------------------------------------------

Analysis::Analysis(std::string uri, std::string path, const std::string &text,
                   ImportOptions imports)
    : uri_(std::move(uri)), path_(std::move(path)) {
  DiagnosticOptions opts;
  opts.errorLimit = 0; // the editor shows every error
  diags_ = std::make_unique<DiagnosticEngine>(sm_, sink_, opts);
  diags_->setConsumer([this](const Diagnostic &d) { collect(d); });
  loader_ = std::make_unique<ModuleLoader>(sm_, *diags_, std::move(imports));
  main_ = loader_->loadMain(path_, &text);
  diags_->flush();
  if (!main_)
    return;
  compile();
  if (ir_) {
    InferredTypes types(inferred_);
    for (const ir::Func &f : ir_->functions()) {
      if (auto *p = f.as<ir::PrimFunc>()) {
        types.visitStmt(p->body);
      } else if (auto *g = f.as<ir::GraphFunc>()) {
        for (const ir::GraphItem &item : g->body) {
          if (auto *df = std::get_if<ir::DataflowBlock>(&item)) {
            for (const ir::GraphBinding &b : df->bindings)
              types.binding(b);
          } else if (auto *c = std::get_if<ir::CallBinding>(&item)) {
            types.binding(*c);
          } else {
            types.binding(std::get<ir::ReshapeBinding>(item));
          }
        }
      }
    }
  }
  Indexer(*this).run();
}

Analysis::~Analysis() = default;

void Analysis::collect(const Diagnostic &d) {
  // The schedules run once per target: an untargeted schedule's refusal comes once.
  for (const Diagnostic &seen : diagnostics_)
    if (seen.message == d.message && seen.range.begin == d.range.begin &&
        seen.severity == d.severity)
      return;
  diagnostics_.push_back(d);
}

/// The compiler's checks, in the order and with the stops of `tdslc` (tools/driver): name
/// resolution, the checker, generic callees instantiated and checked, then the schedules of
/// each target the module names (cpu always, cuda when a schedule is `for cuda`).
void Analysis::compile() {
  const std::vector<ast::Module *> &modules = loader_->modules();
  resolveNames(modules, *diags_);
  diags_->flush();
  if (diags_->hasErrors())
    return;
  ir_ = buildIR(modules, *diags_);
  diags_->flush();
  if (!ir_ || diags_->hasErrors()) {
    ir_.reset();
    return;
  }
  ir::Module m = *ir_;
  graph::foldConstants(m);
  std::vector<graph::DerivedFunc> instances = graph::instantiateCallees(m);
  for (const graph::DerivedFunc &d : instances)
    checkFunctionAccesses(m.lookup(d.name), *diags_);
  diags_->flush();
  if (diags_->hasErrors())
    return;
  std::vector<Target> targets = {Target::CPU};
  for (const ast::Module *mod : modules)
    for (const ast::ItemPtr &item : mod->items)
      if (auto *s = item->as<ast::ScheduleDecl>();
          s && s->target && parseTarget(s->target->name) == Target::CUDA)
        targets = {Target::CPU, Target::CUDA};
  for (Target target : targets) {
    std::set<std::string> used;
    std::vector<ir::ScheduleScript> scripts =
        buildSchedules(modules, {}, target, {}, used, *diags_);
    graph::addInstanceScripts(scripts, instances);
    ir::Module scheduled = m;
    applySchedules(scheduled, scripts, targetName(target), *diags_);
    diags_->flush();
  }
}

const ast::ImportDecl *Analysis::importLeadingTo(uint32_t file) const {
  std::function<bool(const ast::Module *, std::set<const ast::Module *> &)> reaches =
      [&](const ast::Module *m, std::set<const ast::Module *> &seen) {
        if (!m || !seen.insert(m).second)
          return false;
        if (m->fileId == file)
          return true;
        for (const ast::ImportDecl *imp : m->imports())
          if (reaches(imp->resolved, seen))
            return true;
        return false;
      };
  if (!main_)
    return nullptr;
  for (const ast::ImportDecl *imp : main_->imports()) {
    std::set<const ast::Module *> seen = {main_};
    if (reaches(imp->resolved, seen))
      return imp;
  }
  return nullptr;
}

SourceLoc Analysis::fromLsp(const json &position) const {
  uint32_t line = position.at("line").get<uint32_t>() + 1;
  uint32_t units = position.at("character").get<uint32_t>();
  std::string_view text = line <= sm_.lineCount(mainFile_) ? sm_.lineText(mainFile_, line) : "";
  return SourceLoc{mainFile_, line, utf16ToBytes(text, units) + 1};
}

json Analysis::toLsp(uint32_t file, SourceRange r) const {
  auto pos = [&](SourceLoc l) {
    if (!l.valid())
      return json{{"line", 0}, {"character", 0}};
    std::string_view text = l.line <= sm_.lineCount(file) ? sm_.lineText(file, l.line) : "";
    return json{{"line", l.line - 1}, {"character", bytesToUtf16(text, l.col - 1)}};
  };
  SourceLoc b = r.begin, e = r.end;
  if (!e.valid() || before(e, b))
    e = b;
  if (b.valid() && e == b) {
    // A point: underline the character there (nothing at the end of a line).
    std::string_view text = b.line <= sm_.lineCount(file) ? sm_.lineText(file, b.line) : "";
    if (b.col <= text.size()) {
      size_t i = b.col; // past the character's lead byte and its continuation bytes
      while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80)
        ++i;
      e.col = static_cast<uint32_t>(i) + 1;
    }
  }
  return json{{"start", pos(b)}, {"end", pos(e)}};
}

json Analysis::location(uint32_t file, SourceRange range) const {
  std::string uri;
  if (file == mainFile_) {
    uri = uri_;
  } else {
    std::error_code ec;
    fs::path p = fs::absolute(sm_.path(file), ec);
    uri = pathToUri((ec ? fs::path(sm_.path(file)) : p).lexically_normal().string());
  }
  return json{{"uri", uri}, {"range", toLsp(file, range)}};
}

SourceRange Analysis::wordAt(SourceRange r) const {
  if (!r.valid() || (r.end.valid() && before(r.begin, r.end)))
    return r;
  uint32_t file = r.begin.file;
  if (r.begin.line > sm_.lineCount(file))
    return r;
  std::string_view line = sm_.lineText(file, r.begin.line);
  size_t b = r.begin.col - 1, e = b;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (e < line.size() && ident(line[e]))
    ++e;
  if (e == b)
    return r;
  SourceLoc end = r.begin;
  end.col += static_cast<uint32_t>(e - b);
  return SourceRange(r.begin, end);
}

json Analysis::diagnostic(const Diagnostic &d) const {
  json out;
  out["severity"] = d.severity == Severity::Warning ? 2 : d.severity == Severity::Note ? 3 : 1;
  out["source"] = "tdsl";
  std::string message = d.message;
  json related = json::array();
  SourceRange where = d.range;
  if (d.range.valid() && d.range.begin.file != mainFile_) {
    uint32_t file = d.range.begin.file;
    const ast::ImportDecl *imp = importLeadingTo(file);
    message =
        "in imported file '" + fs::path(sm_.path(file)).filename().string() + "': " + d.message;
    related.push_back({{"location", location(file, wordAt(d.range))}, {"message", d.message}});
    where = imp ? imp->pathRange : SourceRange();
  }
  for (const Diagnostic &n : d.notes) {
    if (n.range.valid())
      related.push_back(
          {{"location", location(n.range.begin.file, wordAt(n.range))}, {"message", n.message}});
    else
      message += "\nnote: " + n.message;
  }
  out["range"] = toLsp(mainFile_, wordAt(where));
  out["message"] = message;
  if (!related.empty())
    out["relatedInformation"] = related;
  return out;
}

json Analysis::diagnostics() const {
  json out = json::array();
  for (const Diagnostic &d : diagnostics_)
    out.push_back(diagnostic(d));
  return out;
}

const Occurrence *Analysis::occurrenceAt(SourceLoc at) const {
  const Occurrence *best = nullptr;
  auto within = [&](const Occurrence &o, bool endInclusive) {
    SourceLoc b = o.range.begin, e = o.range.end;
    return b.line == at.line && e.line == at.line && b.col <= at.col &&
           (at.col < e.col || (endInclusive && at.col == e.col));
  };
  for (bool endInclusive : {false, true}) {
    for (const Occurrence &o : occurrences_)
      if (within(o, endInclusive) && (!best || o.range.end.col - o.range.begin.col <
                                                   best->range.end.col - best->range.begin.col))
        best = &o;
    if (best)
      return best;
  }
  return nullptr;
}

json Analysis::documentSymbols() const {
  json out = json::array();
  if (!main_)
    return out;
  // A symbol; `children` (the blocks under it) only where there are some.
  auto symbol = [&](const std::string &name, const std::string &detail, int kind, SourceRange range,
                    SourceRange selection, json children = json::array()) {
    json s{{"name", name},
           {"detail", detail},
           {"kind", kind},
           {"range", toLsp(mainFile_, range)},
           {"selectionRange", toLsp(mainFile_, selection)}};
    if (!children.empty())
      s["children"] = std::move(children);
    return s;
  };
  // The blocks of `list` (through its loops), each with the blocks under it.
  std::function<json(const std::vector<ast::StmtPtr> &)> blocks =
      [&](const std::vector<ast::StmtPtr> &list) {
        json found = json::array();
        for (const ast::StmtPtr &s : list) {
          if (auto *f = s->as<ast::ForStmt>()) {
            for (json &sym : blocks(f->body))
              found.push_back(std::move(sym));
          } else if (auto *b = s->as<ast::BlockStmt>()) {
            found.push_back(
                symbol(b->name.name, "block", 23, b->range, b->name.range, blocks(b->body)));
          }
        }
        return found;
      };
  for (const ast::ItemPtr &item : main_->items) {
    if (auto *f = item->as<ast::FuncDecl>()) {
      out.push_back(symbol(f->name.name, "func", 12, f->range, f->name.range, blocks(f->body)));
    } else if (auto *g = item->as<ast::GraphDecl>()) {
      out.push_back(symbol(g->name.name, "graph", 12, g->range, g->name.range));
    } else if (auto *e = item->as<ast::ExternDecl>()) {
      out.push_back(symbol(e->name.name, "extern func", 12, e->range, e->name.range));
    } else if (auto *s = item->as<ast::ScheduleDecl>()) {
      std::string name = "schedule " + s->func.str();
      if (s->target)
        name += " for " + s->target->name;
      out.push_back(symbol(name, "schedule", 3, s->range, s->func.range));
    }
  }
  return out;
}

std::optional<FuncNames> Analysis::funcNames(const std::string &name) const {
  if (!main_)
    return std::nullopt;
  const ast::Item *item = nullptr;
  size_t dot = name.find('.');
  if (dot == std::string::npos) {
    item = main_->findCallable(name);
  } else {
    for (const ast::ImportDecl *imp : main_->imports())
      if (imp->resolved && imp->prefix == name.substr(0, dot))
        item = imp->resolved->findCallable(name.substr(dot + 1));
  }
  auto *f = item ? item->as<ast::FuncDecl>() : nullptr;
  if (!f)
    return std::nullopt;
  Indexer ix(const_cast<Analysis &>(*this));
  Indexer::Names n = ix.namesOf(*f);
  FuncNames out;
  for (auto &[k, s] : n.blocks)
    out.blocks.emplace_back(k, s.hover);
  for (auto &[k, s] : n.buffers)
    out.buffers.emplace_back(k, s.hover);
  return out;
}

} // namespace tdsl::lsp

//===- test/unit/FrontendTest.cpp -------------------------------------------------------------===//
//
// Unit tests of the frontend: parsing into the AST, diagnostics format, imports and the cache of
// parsed imported files.

#include "frontend/ASTPrinter.h"
#include "frontend/ModuleLoader.h"
#include "frontend/Parser.h"
#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "tools/driver/Driver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace tdsl;

namespace {

struct Parsed {
  SourceManager sm;
  std::ostringstream errs;
  std::unique_ptr<ast::Module> module;
  unsigned errors = 0;
};

std::unique_ptr<Parsed> parse(const std::string &text) {
  auto p = std::make_unique<Parsed>();
  uint32_t file = p->sm.addBuffer("t.tdsl", text);
  DiagnosticEngine diags(p->sm, p->errs);
  p->module = parseModule(p->sm, file, diags);
  diags.flush();
  p->errors = diags.errorCount();
  return p;
}

} // namespace

TEST(Parser, ShortFormBlock) {
  auto p = parse("func f(A: f32[4, 8]) -> (B: f32[4]) {\n"
                 "  block B(i: spatial 4, k: reduce 8) {\n"
                 "    init { B[i] = 0.0; }\n"
                 "    B[i] += A[i, k] * 2.0;\n"
                 "  }\n"
                 "}\n");
  ASSERT_TRUE(p->module) << p->errs.str();
  ASSERT_EQ(p->module->items.size(), 1u);
  auto *f = p->module->items[0]->as<ast::FuncDecl>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name.name, "f");
  ASSERT_EQ(f->inputs.size(), 1u);
  EXPECT_EQ(f->inputs[0].type.dims.size(), 2u);
  auto *b = f->body[0]->as<ast::BlockStmt>();
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->axes.size(), 2u);
  EXPECT_EQ(b->axes[1].kind, ast::AxisKind::Reduce);
  EXPECT_EQ(b->range.begin.line, 2u);
  EXPECT_EQ(b->range.begin.col, 3u);
  auto *store = b->body[1]->as<ast::StoreStmt>();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->op, ast::AssignOp::Add);
  EXPECT_EQ(exprToString(*store->value), "(A[i, k] * 2.0)");
}

TEST(Parser, Precedence) {
  auto p = parse(
      "func f(a: i64) -> (B: i64[]) { block B() { B[] = -a * 2 + 3 % 4 < 5 && !true || false; } }");
  ASSERT_TRUE(p->module) << p->errs.str();
  auto *f = p->module->items[0]->as<ast::FuncDecl>();
  auto *store = f->body[0]->as<ast::BlockStmt>()->body[0]->as<ast::StoreStmt>();
  EXPECT_EQ(exprToString(*store->value), "(((((-a * 2) + (3 % 4)) < 5) && !true) || false)");
}

TEST(Parser, IntegerLiterals) {
  auto p = parse("func f() -> (B: i64[3]) { block B(i: spatial 3) { B[i] = 1_000 + 0x1F; } }");
  ASSERT_TRUE(p->module) << p->errs.str();
  auto *store = p->module->items[0]
                    ->as<ast::FuncDecl>()
                    ->body[0]
                    ->as<ast::BlockStmt>()
                    ->body[0]
                    ->as<ast::StoreStmt>();
  auto *add = store->value->as<ast::BinaryExpr>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->lhs->as<ast::IntLit>()->value, 1000u);
  EXPECT_EQ(add->rhs->as<ast::IntLit>()->value, 31u);
}

TEST(Parser, MissingSemicolonPointsAfterPreviousToken) {
  auto p = parse("func f() -> (B: f32[1]) {\n  block B(i: spatial 1) {\n    B[i] = 1.0\n  }\n}\n");
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->errors, 1u);
  EXPECT_NE(p->errs.str().find("t.tdsl:3:15: error: expected ';' after statement"),
            std::string::npos)
      << p->errs.str();
}

TEST(Parser, ReportsEverySyntaxError) {
  auto p = parse("func f() -> (B: f32[1]) {\n"
                 "  block B(i: spatial 1) {\n"
                 "    B[i] = 1.0\n"
                 "    B[i] = 2.0 +;\n"
                 "  }\n"
                 "}\n");
  EXPECT_FALSE(p->module);
  EXPECT_EQ(p->errors, 2u) << p->errs.str();
}

TEST(Parser, InvalidCharacter) {
  auto p = parse("func f() -> (B: f32[1]) { block B(i: spatial 1) { B[i] = 1.0 $ 2.0; } }");
  EXPECT_FALSE(p->module);
  EXPECT_NE(p->errs.str().find("t.tdsl:1:62: error: invalid character '$'"), std::string::npos)
      << p->errs.str();
}

TEST(Parser, DeepNestingIsRefused) {
  std::string e(5000, '(');
  auto p = parse("func f() -> (B: f32[1]) { block B(i: spatial 1) { B[i] = " + e + "1.0; } }");
  EXPECT_FALSE(p->module);
  EXPECT_NE(p->errs.str().find("nesting is too deep"), std::string::npos);
}

TEST(Diagnostics, CaretAndRange) {
  SourceManager sm;
  uint32_t f = sm.addBuffer("x.tdsl", "let abc = 1;\n");
  std::ostringstream os;
  DiagnosticEngine d(sm, os);
  d.error(SourceRange({f, 1, 5}, {f, 1, 8}), "bad name").note(SourceRange({f, 1, 1}), "here");
  d.flush();
  EXPECT_EQ(os.str(), "x.tdsl:1:5: error: bad name\nlet abc = 1;\n    ^~~\nx.tdsl:1:1: note: "
                      "here\nlet abc = 1;\n^\n");
}

TEST(Diagnostics, WerrorAndLimit) {
  SourceManager sm;
  uint32_t f = sm.addBuffer("x.tdsl", "a\n");
  std::ostringstream os;
  DiagnosticOptions o;
  o.warningsAsErrors = true;
  o.errorLimit = 2;
  DiagnosticEngine d(sm, os, o);
  d.warning(SourceRange({f, 1, 1}), "w1");
  d.error(SourceRange({f, 1, 1}), "e1");
  d.error(SourceRange({f, 1, 1}), "e2");
  d.flush();
  EXPECT_NE(os.str().find("error: w1 [-Werror]"), std::string::npos);
  EXPECT_NE(os.str().find("error: e1"), std::string::npos);
  EXPECT_EQ(os.str().find("error: e2"), std::string::npos);
  EXPECT_NE(os.str().find("fatal error: too many errors emitted"), std::string::npos);
  EXPECT_EQ(d.errorCount(), 3u);
}

TEST(Driver, BadOptionsExitTwo) {
  std::ostringstream out, err;
  DriverOptions o;
  const char *argv1[] = {"tdslc", "--emit=bogus", "x.tdsl"};
  EXPECT_EQ(parseCommandLine(3, argv1, o, out, err), std::optional<int>(2));
  EXPECT_NE(err.str().find("invalid value 'bogus' for --emit"), std::string::npos);
  const char *argv2[] = {"tdslc", "-O7", "x.tdsl"};
  DriverOptions o2;
  EXPECT_EQ(parseCommandLine(3, argv2, o2, out, err), std::optional<int>(2));
  const char *argv3[] = {"tdslc", "-O3", "-MD", "-MF", "x.d", "-D", "T=4", "--emit=ast", "x.tdsl"};
  DriverOptions o3;
  EXPECT_EQ(parseCommandLine(9, argv3, o3, out, err), std::nullopt) << err.str();
  EXPECT_EQ(o3.optLevel, 3);
  EXPECT_TRUE(o3.writeDeps);
  EXPECT_EQ(o3.depFile, "x.d");
  ASSERT_EQ(o3.defines.entries().size(), 1u);
  EXPECT_EQ(o3.defines.entries()[0].second, 4);
}

namespace {

/// Compiles `path` in-process to IR: the printed module (imported functions included) and the
/// diagnostics.
std::pair<std::string, std::string> compileToIR(const std::string &path) {
  DriverOptions opts;
  opts.input = path;
  opts.emit = EmitKind::IR;
  opts.stdlibDir = defaultStdlibDir();
  opts.errorLimit = 0;
  std::ostringstream err;
  Compilation c(opts, err);
  std::string ir;
  if (c.parse())
    if (std::optional<ir::Module> m = c.buildIR())
      ir = ir::toString(*m);
  c.diags().flush();
  return {ir, err.str()};
}

void writeFile(const std::filesystem::path &p, const std::string &text) {
  std::ofstream(p) << text;
}

} // namespace

// cloneModule (the module loader's cache of imported files) copies every node: the dump of a
// copy is the dump of the original, for each module of the standard library.
TEST(AST, CloneOfEachStdlibModuleDumpsTheSame) {
  int modules = 0;
  for (const auto &entry : std::filesystem::directory_iterator(defaultStdlibDir())) {
    if (entry.path().extension() != ".tdsl")
      continue;
    ++modules;
    SourceManager sm;
    std::string error;
    std::optional<uint32_t> file = sm.addFile(entry.path().string(), error);
    ASSERT_TRUE(file) << error;
    std::ostringstream errs;
    DiagnosticEngine diags(sm, errs);
    std::unique_ptr<ast::Module> m = parseModule(sm, *file, diags);
    ASSERT_TRUE(m) << errs.str();
    std::unique_ptr<ast::Module> copy = ast::cloneModule(*m, *file + 7);
    EXPECT_EQ(copy->fileId, *file + 7);
    EXPECT_EQ(copy->path, m->path);
    std::ostringstream a, b;
    dumpAST(*m, a);
    dumpAST(*copy, b);
    EXPECT_EQ(a.str(), b.str()) << entry.path();
    EXPECT_GT(a.str().size(), 1000u) << entry.path();
  }
  EXPECT_GE(modules, 1);
}

// A file imported again in the same process comes from the cache: the same IR and the same
// diagnostics (locations inside the imported file, its import stack, the caret's range) as the
// first time; an imported file whose text changed is parsed again.
TEST(ModuleLoader, ImportsParsedOnceGiveTheSameResults) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tdsl-import-cache-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string lib = "func twice(X: f32[2, 8]) -> (Y: f32[2, 8]) {\n"
                    "  block Y(i: spatial 2, j: spatial 8) { Y[i, j] = X[i, j] * 2.0; }\n"
                    "}\n"
                    "func shifted<S: i64>(X: f32[8]) -> (Y: f32[8]) {\n"
                    "  block Y(i: spatial 8) { Y[i] = X[i + S]; }\n"
                    "}\n"
                    "schedule twice { i, j = loops(Y); jo, ji = split(j, [2, 4]); }\n";
  writeFile(dir / "lib.tdsl", lib);
  writeFile(dir / "good.tdsl", "import \"lib.tdsl\";\n"
                               "import \"nn\";\n"
                               "graph g(x: f32[2, 8]) -> f32[2, 8] {\n"
                               "  dataflow {\n"
                               "    a = call lib.twice(x) -> f32[2, 8];\n"
                               "    b = call nn.relu(a) -> f32[2, 8];\n"
                               "    output b;\n"
                               "  }\n"
                               "  return b;\n"
                               "}\n");
  writeFile(dir / "bad.tdsl", "import \"lib.tdsl\";\n"
                              "graph g(x: f32[8]) -> f32[8] {\n"
                              "  dataflow {\n"
                              "    a = call lib.shifted<1>(x) -> f32[8];\n"
                              "    output a;\n"
                              "  }\n"
                              "  return a;\n"
                              "}\n");
  auto [ir1, err1] = compileToIR((dir / "good.tdsl").string());
  auto [ir2, err2] = compileToIR((dir / "good.tdsl").string());
  EXPECT_EQ(err1, "");
  EXPECT_NE(ir1.find("for j_1 in 0..4"), std::string::npos) << ir1; // the split, applied
  EXPECT_NE(ir1.find("call fused_twice_relu"), std::string::npos) << ir1;
  EXPECT_EQ(ir1, ir2);
  EXPECT_EQ(err1, err2);

  auto [badIr1, bad1] = compileToIR((dir / "bad.tdsl").string());
  auto [badIr2, bad2] = compileToIR((dir / "bad.tdsl").string());
  EXPECT_EQ(badIr1, "");
  EXPECT_NE(bad1.find("lib.tdsl:5:34: error: out-of-bounds access to 'X'"), std::string::npos)
      << bad1;
  EXPECT_NE(bad1.find("bad.tdsl:1:8"), std::string::npos) << bad1; // the import stack
  EXPECT_EQ(bad1, bad2);

  // The library changes between compilations: the new text is parsed.
  std::string changed = lib;
  changed.replace(changed.find("* 2.0"), 5, "* 3.0");
  writeFile(dir / "lib.tdsl", changed);
  auto [ir3, err3] = compileToIR((dir / "good.tdsl").string());
  EXPECT_EQ(err3, "");
  EXPECT_NE(ir3.find("* 3.0"), std::string::npos) << ir3;
  EXPECT_EQ(ir3.find("* 2.0"), std::string::npos) << ir3;
  fs::remove_all(dir);
}

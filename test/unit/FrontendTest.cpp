//===- test/unit/FrontendTest.cpp -------------------------------------------------------------===//
//
// Unit tests of the frontend: parsing into the AST, diagnostics format, imports.

#include "frontend/ASTPrinter.h"
#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#include "tools/driver/Driver.h"

#include <gtest/gtest.h>

#include <sstream>

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

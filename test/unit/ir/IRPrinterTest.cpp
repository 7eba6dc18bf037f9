//===- test/unit/ir/IRPrinterTest.cpp - The explicit form printer -------------------------===//
#include "ir/IRPrinter.h"

#include "MmRelu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

using namespace tdsl::ir;

namespace {
Expr c(int64_t v) { return intImm(v); }
Stmt nop() { return Evaluate::make(c(0)); }
} // namespace

TEST(IRPrinter, MmReluMatchesSpec) { EXPECT_EQ(toString(test::buildMmRelu()), test::kMmReluText); }

TEST(IRPrinter, PrintingIsDeterministic) {
  Func f = test::buildMmRelu();
  EXPECT_EQ(toString(f), toString(f));
  // Printing does not depend on the hints' spelling of other functions.
  EXPECT_EQ(toString(test::buildMmRelu()), toString(f));
}

TEST(IRPrinter, NestedVarsWithOneHintAreUniquified) {
  Var outer("i"), inner("i");
  Buffer a("A", DType::i64(), {c(4), c(4)}, BufferRole::Output);
  Stmt store = BufferStore::make(a, outer + inner, {outer, inner});
  Stmt loops = For::make(outer, c(0), c(4), ForKind::Serial,
                         For::make(inner, c(0), c(4), ForKind::Serial, store));
  EXPECT_EQ(toString(loops), "for i in 0..4 {\n"
                             "  for i_1 in 0..4 {\n"
                             "    A[i, i_1] = i + i_1;\n"
                             "  }\n"
                             "}\n");
}

TEST(IRPrinter, SiblingScopesReuseNames) {
  Var first("i"), second("i");
  Stmt loops = seq({For::make(first, c(0), c(2), ForKind::Serial, Evaluate::make(first)),
                    For::make(second, c(0), c(3), ForKind::Serial, Evaluate::make(second))});
  EXPECT_EQ(toString(loops), "for i in 0..2 {\n"
                             "  evaluate(i);\n"
                             "}\n"
                             "for i in 0..3 {\n"
                             "  evaluate(i);\n"
                             "}\n");
}

TEST(IRPrinter, KeywordsAndBadHintsAreRenamed) {
  Var kw("for"), dtype("f32"), empty(""), digit("0x"), sym("a.b");
  EXPECT_EQ(toString(Expr(kw) + dtype), "for_1 + f32_1");
  EXPECT_EQ(toString(Expr(empty) + digit + sym), "v + _0x + a_b");
  // A hint that looks like a generated name does not collide with one.
  Var i("i"), i1("i_1"), i2("i");
  EXPECT_EQ(toString(Expr(i) + i1 + i2), "i + i_1 + i_2");
}

TEST(IRPrinter, BlockNamesAreUniquifiedSeparately) {
  Buffer y("Y", DType::f32(), {}, BufferRole::Output);
  Stmt store = BufferStore::make(y, floatImm(1.0), {});
  Stmt blocks = seq(
      {Block::make("Y", {}, Expr(), Stmt(), store), Block::make("Y", {}, Expr(), Stmt(), store)});
  Func f = PrimFunc::make("f", {}, {}, {y}, {}, {}, blocks);
  EXPECT_EQ(toString(f), "func f() -> (Y: f32[]) {\n"
                         "  block Y() {\n"
                         "    Y[] = 1.0;\n"
                         "  }\n"
                         "  block Y_1() {\n"
                         "    Y[] = 1.0;\n"
                         "  }\n"
                         "}\n");
}

TEST(IRPrinter, MinimalParentheses) {
  Var a("a"), b("b"), d("d");
  EXPECT_EQ(toString((a + b) * d), "(a + b) * d");
  EXPECT_EQ(toString(a + b * d), "a + b * d");
  EXPECT_EQ(toString(a - b - d), "a - b - d");
  EXPECT_EQ(toString(a - (b - d)), "a - (b - d)");
  EXPECT_EQ(toString(a / (b * d)), "a / (b * d)");
  EXPECT_EQ(toString(a * b % d), "a * b % d");
  EXPECT_EQ(toString(-(a + b)), "-(a + b)");
  EXPECT_EQ(toString(-Expr(a) * b), "-a * b");
  EXPECT_EQ(toString(-(-Expr(a))), "-(-a)");
  EXPECT_EQ(toString(Neg::make(c(5))), "-(5)");
  EXPECT_EQ(toString(a - c(-5)), "a - -5");
  EXPECT_EQ(toString(c(-5) * a), "-5 * a");
  Expr p = lt(a, b), q = ge(d, c(0));
  EXPECT_EQ(toString(logicalOr(logicalAnd(p, q), p)), "a < b && d >= 0 || a < b");
  EXPECT_EQ(toString(logicalAnd(logicalOr(p, q), p)), "(a < b || d >= 0) && a < b");
  EXPECT_EQ(toString(logicalAnd(p, logicalAnd(q, p))), "a < b && (d >= 0 && a < b)");
  EXPECT_EQ(toString(eq(p, q)), "(a < b) == (d >= 0)");
  EXPECT_EQ(toString(logicalNot(p)), "!(a < b)");
  EXPECT_EQ(toString(lt(a + b, d * c(2))), "a + b < d * 2");
}

TEST(IRPrinter, CallsCastsSelects) {
  Var x("x", DType::f32()), h("h");
  Buffer xs("X", DType::f32(), {c(8)}, BufferRole::Input);
  Expr guarded = select(ge(h, c(1)), BufferLoad::make(xs, {h - 1}), floatImm(0.0));
  EXPECT_EQ(toString(guarded), "select(h >= 1, X[h - 1], 0.0)");
  EXPECT_EQ(toString(call(Intrinsic::Exp, {x * 2.0})), "exp(x * 2.0)");
  EXPECT_EQ(toString(call(Intrinsic::Fma, {x, x, x})), "fma(x, x, x)");
  EXPECT_EQ(toString(cast(DType::f16(), x)), "f16(x)");
  EXPECT_EQ(toString(min(Expr(h), c(3))), "min(h, 3)");
  EXPECT_EQ(toString(Call::make(DType::f32(), Intrinsic::MinValue, {})), "min_value(f32)");
  EXPECT_EQ(toString(boolImm(true)), "true");
  EXPECT_EQ(toString(floatImm(-INFINITY)), "-inf");
  EXPECT_EQ(toString(x + floatImm(INFINITY)), "x + inf");
  EXPECT_EQ(toString(floatImm(NAN)), "(inf - inf)");
}

TEST(IRPrinter, FloatsRoundTrip) {
  EXPECT_EQ(formatFloat(0.1, DType::f32()), "0.1");
  EXPECT_EQ(formatFloat(0.1, DType::f64()), "0.1");
  EXPECT_EQ(formatFloat(3.0, DType::f32()), "3.0");
  EXPECT_EQ(formatFloat(1e-5, DType::f32()), "1e-05");
  EXPECT_EQ(formatFloat(INFINITY, DType::f32()), "inf");
  EXPECT_EQ(formatFloat(-0.0, DType::f32()), "-0.0");

  const double values[] = {0.1,
                           1e-5,
                           3.0,
                           1.0 / 3.0,
                           2.5e3,
                           1e20,
                           123456789.0,
                           5e-324,
                           1.7976931348623157e308,
                           0.30000000000000004,
                           100.0,
                           1e16};
  for (double v : values) {
    std::string f64Text = formatFloat(v, DType::f64());
    EXPECT_NE(f64Text.find_first_of(".e"), std::string::npos) << f64Text;
    EXPECT_EQ(std::strtod(f64Text.c_str(), nullptr), v) << f64Text;

    float narrowed = static_cast<float>(v);
    if (std::isinf(narrowed) || narrowed == 0.0f)
      continue;
    std::string f32Text = formatFloat(v, DType::f32());
    EXPECT_NE(f32Text.find_first_of(".e"), std::string::npos) << f32Text;
    EXPECT_EQ(std::strtof(f32Text.c_str(), nullptr), narrowed) << f32Text;
    // An f32 FloatImm prints a literal that, read as an f32, is the node's value.
    Expr imm = floatImm(v);
    EXPECT_EQ(std::strtof(toString(imm).c_str(), nullptr), imm.as<FloatImm>()->value);
  }
}

TEST(IRPrinter, IntegerCornerCases) {
  EXPECT_EQ(toString(c(INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(toString(IntImm::make(DType::u8(), 255)), "255");
  Var x("x");
  EXPECT_EQ(toString(x * c(-3)), "x * -3");
}

TEST(IRPrinter, LoopBoundsKindsAndWhere) {
  Var n("n"), i("i"), t("t"), v("v");
  Buffer out("O", DType::f32(), {Expr(n)}, BufferRole::Output);
  Stmt block = Block::make("O", {{v, IterKind::Spatial, n, i * 32 + t, {}}}, lt(i * 32 + t, n),
                           Stmt(), BufferStore::make(out, floatImm(0.0), {v}));
  Stmt inner = For::make(t, c(0), c(32), ForKind::ThreadBinding, block, "threadIdx.x");
  Stmt outer = For::make(i, c(2), (n + 31) / 32, ForKind::Unrolled, inner);
  Stmt shifted = For::make(Var("j"), c(2), c(5), ForKind::Serial, nop());
  Func f = PrimFunc::make("g", {}, {}, {out}, {n}, {}, seq({outer, shifted}));
  EXPECT_EQ(toString(f), "func g() -> (O: f32[n]) {\n"
                         "  for i in 2..2 + (n + 31) / 32 unrolled {\n"
                         "    for t in 0..32 thread(\"threadIdx.x\") {\n"
                         "      block O(v: spatial n = i * 32 + t) where i * 32 + t < n {\n"
                         "        O[v] = 0.0;\n"
                         "      }\n"
                         "    }\n"
                         "  }\n"
                         "  for j in 2..7 {\n"
                         "    evaluate(0);\n"
                         "  }\n"
                         "}\n");
}

TEST(IRPrinter, BlockBodyStatements) {
  DType f32 = DType::f32();
  Var m("M"), s("S"), eps("eps", f32), x("x"), r("r"), t("t", f32);
  Buffer in("A", f32, {Expr(m)}, BufferRole::Input);
  Buffer out("B", f32, {Expr(m)}, BufferRole::Output);
  Buffer tmp("T", f32, {c(4)}, BufferRole::Alloc, MemScope::Local);
  Buffer acc("acc", f32, {}, BufferRole::Alloc, MemScope::Shared);
  Stmt body = LetStmt::make(
      t, BufferLoad::make(in, {x}) * eps,
      IfThenElse::make(lt(Expr(x), s), BufferStore::make(out, t, {x}),
                       IfThenElse::make(lt(Expr(x), s * 2), BufferStore::make(out, -Expr(t), {x}),
                                        BufferStore::make(out, floatImm(0.0), {x}))));
  Stmt init = seq(
      {BufferStore::make(tmp, floatImm(0.0), {c(0)}), BufferStore::make(acc, floatImm(0.0), {})});
  Stmt block =
      Block::make("B", {{x, IterKind::Spatial, m, {}, {}}, {r, IterKind::Reduce, c(4), {}, {}}},
                  Expr(), init, body, {}, {}, {tmp});
  Func f = PrimFunc::make("h", {s}, {FuncParam::tensor(in), FuncParam::scalarVar(eps)}, {out}, {m},
                          {acc}, block);
  EXPECT_EQ(toString(f), "func h<S: i64>(A: f32[M], eps: f32) -> (B: f32[M]) {\n"
                         "  alloc acc: f32[] scope(shared);\n"
                         "  block B(x: spatial M, r: reduce 4) {\n"
                         "    alloc T: f32[4] scope(local);\n"
                         "    init {\n"
                         "      T[0] = 0.0;\n"
                         "      acc[] = 0.0;\n"
                         "    }\n"
                         "    let t = A[x] * eps;\n"
                         "    if x < S {\n"
                         "      B[x] = t;\n"
                         "    } else if x < S * 2 {\n"
                         "      B[x] = -t;\n"
                         "    } else {\n"
                         "      B[x] = 0.0;\n"
                         "    }\n"
                         "  }\n"
                         "}\n");
}

TEST(IRPrinter, ModuleWithGraphAndExtern) {
  DType f32 = DType::f32();
  Var b("B");
  Buffer x("x", f32, {Expr(b), c(784)}, BufferRole::Input);
  Buffer w("w", f32, {c(10), c(784)}, BufferRole::Input);
  Buffer h("h", f32, {Expr(b), c(10)}, BufferRole::Alloc);
  Buffer r("r", f32, {Expr(b), c(10)}, BufferRole::Alloc);
  Buffer flat("flat", f32, {Expr(b) * 10}, BufferRole::Alloc);
  CallBinding linear{{h}, "nn.linear", {}, {x, w}, false, {}};
  CallBinding relu{{r}, "nn.relu", {c(1), c(2)}, {h, floatImm(0.5)}, true, {}};
  CallBinding log{{}, "log_tensor", {}, {r}, false, {}};
  DataflowBlock dataflow{{linear, relu}, {r}, {}};
  Func graph = GraphFunc::make("mlp", {}, {FuncParam::tensor(x), FuncParam::tensor(w)}, {b},
                               {dataflow, log, ReshapeBinding{flat, r, {}}}, {r, flat});

  Var n("N");
  Buffer ein("a", f32, {Expr(n)}, BufferRole::Input);
  Buffer eout("o", f32, {Expr(n)}, BufferRole::Output);
  Func ext =
      ExternFunc::make("scale", true, {FuncParam::tensor(ein)}, {eout}, {n}, "my_scale\"v2\"");
  Module module;
  module.imports = {"nn"};
  module.add(ext);
  module.add(graph);
  EXPECT_EQ(toString(module),
            "import \"nn\";\n"
            "\n"
            "extern pure func scale(a: f32[N]) -> (o: f32[N]) = \"my_scale\\\"v2\\\"\";\n"
            "\n"
            "graph mlp(x: f32[B, 784], w: f32[10, 784]) -> (f32[B, 10], f32[B * 10]) {\n"
            "  dataflow {\n"
            "    h = call nn.linear(x, w);\n"
            "    r = call nn.relu<1, 2>(h, 0.5) -> f32[B, 10];\n"
            "    output r;\n"
            "  }\n"
            "  call log_tensor(r);\n"
            "  flat = reshape(r, [B * 10]);\n"
            "  return r, flat;\n"
            "}\n");
}

//===- test/unit/ir/StructuralEqualTest.cpp - Alpha-equivalence ---------------------------===//
#include "ir/StructuralEqual.h"

#include "MmRelu.h"

#include <gtest/gtest.h>

using namespace tdsl::ir;

TEST(StructuralEqual, AlphaRenamedCopiesAreEqual) {
  Func f = test::buildMmRelu();
  Func renamed = test::buildMmRelu({.suffix = "_renamed"});
  EXPECT_TRUE(structuralEqual(f, renamed));
  EXPECT_TRUE(structuralEqual(f, f));
}

TEST(StructuralEqual, AChangedConstantIsNotEqual) {
  Func f = test::buildMmRelu();
  test::MmReluOptions changed;
  changed.initValue = 1.0;
  EXPECT_FALSE(structuralEqual(f, test::buildMmRelu(changed)));
  EXPECT_FALSE(structuralEqual(floatImm(0.0), floatImm(-0.0)));
  EXPECT_FALSE(structuralEqual(intImm(1), intImm(1, DType::i32())));
}

TEST(StructuralEqual, VarsMustCorrespondOneToOne) {
  Var a("a"), b("b"), p("p"), q("q");
  EXPECT_TRUE(structuralEqual(Expr(a) + b, Expr(p) + q));
  EXPECT_TRUE(structuralEqual(Expr(a) + a, Expr(p) + p));
  EXPECT_FALSE(structuralEqual(Expr(a) + a, Expr(p) + q));
  EXPECT_FALSE(structuralEqual(Expr(a) + b, Expr(p) + p));
  EXPECT_FALSE(structuralEqual(Expr(a), Expr(Var("x", DType::i32()))));
}

TEST(StructuralEqual, SwappedIndicesAreNotEqual) {
  Buffer buf("A", DType::f32(), {intImm(4), intImm(4)}, BufferRole::Input);
  Var i("i"), j("j"), x("x"), y("y");
  auto nest = [&](const Var &outer, const Var &inner, bool swapped) {
    Expr load =
        swapped ? BufferLoad::make(buf, {inner, outer}) : BufferLoad::make(buf, {outer, inner});
    return For::make(outer, intImm(0), intImm(4), ForKind::Serial,
                     For::make(inner, intImm(0), intImm(4), ForKind::Serial, Evaluate::make(load)));
  };
  EXPECT_TRUE(structuralEqual(nest(i, j, false), nest(x, y, false)));
  EXPECT_FALSE(structuralEqual(nest(i, j, false), nest(x, y, true)));
}

TEST(StructuralEqual, ReusedLoopVarMatchesDistinctOnes) {
  Var i("i"), p("p"), q("q");
  auto loop = [](const Var &v) {
    return For::make(v, intImm(0), intImm(4), ForKind::Serial, Evaluate::make(v));
  };
  EXPECT_TRUE(structuralEqual(seq({loop(i), loop(i)}), seq({loop(p), loop(q)})));
}

TEST(StructuralEqual, LoopKindsAndBlockNamesMatter) {
  Func f = test::buildMmRelu();
  const auto *op = f.as<PrimFunc>();
  const auto *outer = op->body.as<For>();
  Stmt serial = For::make(outer->loopVar, outer->min, outer->extent, ForKind::Serial, outer->body);
  EXPECT_FALSE(structuralEqual(op->body, serial));

  Stmt b1 = Block::make("X", {}, Expr(), Stmt(), Evaluate::make(intImm(0)));
  Stmt b2 = Block::make("Z", {}, Expr(), Stmt(), Evaluate::make(intImm(0)));
  EXPECT_FALSE(structuralEqual(b1, b2));
}

TEST(StructuralEqual, Modules) {
  Module a, b;
  a.add(test::buildMmRelu());
  b.add(test::buildMmRelu({.suffix = "2"}));
  EXPECT_TRUE(structuralEqual(a, b));
  b.imports.push_back("nn");
  EXPECT_FALSE(structuralEqual(a, b));
}

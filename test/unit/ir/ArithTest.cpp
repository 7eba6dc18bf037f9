//===- test/unit/ir/ArithTest.cpp - Floor division, affine forms, intervals ---------------===//
#include "ir/Arith.h"

#include "ir/IRPrinter.h"
#include "ir/StructuralEqual.h"

#include <gtest/gtest.h>

#include <climits>

using namespace tdsl::ir;

TEST(Arith, FloorDivisionRoundsDown) {
  EXPECT_EQ(floorDiv(7, 2), 3);
  EXPECT_EQ(floorDiv(-7, 2), -4);
  EXPECT_EQ(floorDiv(7, -2), -4);
  EXPECT_EQ(floorDiv(-7, -2), 3);
  EXPECT_EQ(floorDiv(-8, 2), -4);
  EXPECT_EQ(floorMod(-7, 2), 1);
  EXPECT_EQ(floorMod(7, -2), -1);
  EXPECT_EQ(floorMod(-8, 2), 0);
  EXPECT_EQ(floorMod(5, 3), 2);
}

TEST(Arith, FloorDivisionWrapsInsteadOfOverflowing) {
  EXPECT_EQ(floorDiv(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(floorMod(INT64_MIN, -1), 0);
  EXPECT_EQ(floorDiv(INT64_MIN, 1), INT64_MIN);
  EXPECT_EQ(floorDiv(INT64_MIN, 2), INT64_MIN / 2);
  EXPECT_EQ(floorMod(INT64_MAX, INT64_MIN), -1);
  for (int64_t a = -20; a <= 20; ++a)
    for (int64_t b : {-7, -3, -1, 1, 2, 5}) {
      EXPECT_EQ(floorDiv(a, b) * b + floorMod(a, b), a) << a << " " << b;
      EXPECT_TRUE(floorMod(a, b) == 0 || (floorMod(a, b) < 0) == (b < 0)) << a << " " << b;
    }
}

TEST(Arith, AffineFormOfSumsAndProducts) {
  Var i("i"), j("j");
  std::optional<AffineForm> f = affineForm(Expr(i) * 4 + (Expr(j) - 3) * 2 - Expr(i) + 1);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->terms.size(), 2u);
  EXPECT_TRUE(f->terms[0].first == i);
  EXPECT_EQ(f->coeff(i), 3);
  EXPECT_EQ(f->coeff(j), 2);
  EXPECT_EQ(f->constant, -5);
  EXPECT_EQ(f->coeff(Var("k")), 0);
  EXPECT_TRUE(f->opaque.empty());
}

TEST(Arith, AffineFormDropsCancelledTerms) {
  Var i("i");
  std::optional<AffineForm> f = affineForm(Expr(i) - Expr(i) + 7);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->terms.empty());
  EXPECT_EQ(f->constant, 7);
}

TEST(Arith, NonAffinePartsFailOrStayOpaque) {
  Var i("i"), j("j");
  Expr e = Expr(i) * Expr(j) + Expr(i) / 2 + 3;
  EXPECT_FALSE(affineForm(e));
  std::optional<AffineForm> f = affineForm(e, NonAffine::Opaque);
  ASSERT_TRUE(f);
  EXPECT_TRUE(f->terms.empty());
  ASSERT_EQ(f->opaque.size(), 2u);
  EXPECT_EQ(toString(f->opaque[1]), toString(Expr(i) / 2));
  EXPECT_EQ(f->constant, 3);
}

TEST(Arith, AffineFormRefusesOverflow) {
  Var i("i");
  EXPECT_FALSE(affineForm(Expr(i) * INT64_MAX * 2));
  EXPECT_FALSE(affineForm(intImm(INT64_MAX) + 1));
}

TEST(Arith, CanonicalFormsCompare) {
  Var i("i"), j("j");
  EXPECT_EQ(toString(canonical(4 * Expr(j) + (Expr(i) + 0))), toString(Expr(j) * 4 + Expr(i)));
  EXPECT_EQ(toString(canonical((Expr(j) * 4 + 3) / 4)), toString(Expr(j)));
  EXPECT_EQ(asConstInt(canonical((Expr(j) * 4 + 3) % 4)), 3);
  EXPECT_EQ(constDiff(Expr(i) + 5, Expr(i) - 2), 7);
  EXPECT_FALSE(constDiff(Expr(i), Expr(j)));
  EXPECT_FALSE(constDiff(Expr(i), Expr()));
}

TEST(Arith, AxisPlusOffset) {
  Var vi("vi"), vj("vj"), n("n");
  std::vector<Var> axes = {vi, vj};
  auto r = axisPlusOffset(axes, Expr(vj) + Expr(n) + 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 1u);
  EXPECT_EQ(toString(r->second), toString(Expr(n) + 1));
  EXPECT_FALSE(axisPlusOffset(axes, Expr(vj) * 2));
  EXPECT_FALSE(axisPlusOffset(axes, Expr(vj) + Expr(vi)));
  EXPECT_FALSE(axisPlusOffset(axes, Expr(vj) + Expr(vi) / 2));
  EXPECT_FALSE(axisPlusOffset(axes, Expr(n)));
}

TEST(Arith, BoundOverConstantDomain) {
  Var i("i"), j("j");
  Domain dom = {{i, Interval::ofRange(intImm(0), intImm(16))},
                {j, Interval::ofRange(intImm(2), intImm(4))}};
  Interval r = bound(Expr(i) * 4 + Expr(j) - 1, dom);
  EXPECT_EQ(asConstInt(r.min), 1);
  EXPECT_EQ(asConstInt(r.max), 64);
  Interval d = bound(Expr(i) / 4, dom);
  EXPECT_EQ(asConstInt(d.min), 0);
  EXPECT_EQ(asConstInt(d.max), 3);
  Interval m = bound(Expr(i) % 4, dom);
  EXPECT_EQ(asConstInt(m.min), 0);
  EXPECT_EQ(asConstInt(m.max), 3);
  Interval neg = bound(-Expr(j), dom);
  EXPECT_EQ(asConstInt(neg.min), -5);
  EXPECT_EQ(asConstInt(neg.max), -2);
  Interval mn = bound(min(Expr(i), intImm(8)), dom);
  EXPECT_EQ(asConstInt(mn.min), 0);
  EXPECT_EQ(asConstInt(mn.max), 8);
  EXPECT_FALSE(bound(Expr(i) * Expr(j), dom).bounded());
}

TEST(Arith, BoundIsSymbolicOverFreeVariables) {
  Var i("i"), n("n");
  Domain dom = {{i, Interval::ofRange(intImm(0), Expr(n))}};
  Interval r = bound(Expr(i) + 1, dom);
  EXPECT_EQ(asConstInt(r.min), 1);
  EXPECT_EQ(toString(r.max), toString(Expr(n)));
  EXPECT_EQ(toString(r.extent()), toString(Expr(n)));
  Interval p = bound(Expr(n) * 2, dom);
  EXPECT_TRUE(equalExpr(p.min, p.max));
}

TEST(Arith, HullOfIntervals) {
  Var n("n");
  Interval a{intImm(0), intImm(3)}, b{intImm(2), intImm(9)};
  Interval h = hull(a, b);
  EXPECT_EQ(asConstInt(h.min), 0);
  EXPECT_EQ(asConstInt(h.max), 9);
  Interval s = hull(a, Interval{intImm(1), Expr(n)});
  EXPECT_EQ(toString(s.max), toString(max(intImm(3), Expr(n))));
  EXPECT_FALSE(hull(a, Interval{intImm(0), Expr()}).bounded());
}

TEST(Arith, ProveLessOrEqual) {
  Var i("i"), j("j"), n("n");
  Stmt inner = For::make(j, Expr(i), intImm(4), ForKind::Serial, Evaluate::make(intImm(0)));
  Domain dom = {{i, Interval::ofRange(intImm(0), intImm(8))}};
  addLoop(dom, inner.as<For>());
  ASSERT_EQ(dom.size(), 2u);
  EXPECT_EQ(asConstInt(dom[1].second.min), 0);
  EXPECT_EQ(asConstInt(dom[1].second.max), 10);
  EXPECT_TRUE(proveLE(intImm(0), Expr(j), dom));
  EXPECT_TRUE(proveLE(Expr(j), intImm(10), dom));
  EXPECT_FALSE(proveLE(Expr(j), intImm(9), dom));
  EXPECT_TRUE(proveLE(Expr(i), Expr(i) + 1, dom));
  EXPECT_FALSE(proveLE(Expr(n), intImm(0), dom));
  EXPECT_FALSE(proveLE(Expr(), intImm(0), dom));
}

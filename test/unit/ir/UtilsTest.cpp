//===- test/unit/ir/UtilsTest.cpp - Substitution, uses, graph callees, with… helpers ------===//
#include "ir/Utils.h"

#include "ir/IRPrinter.h"
#include "ir/StructuralEqual.h"

#include <gtest/gtest.h>

using namespace tdsl::ir;

TEST(Utils, SubstituteReplacesUsesOnly) {
  Var i("i"), j("j"), k("k");
  Expr e = Expr(i) * 2 + Expr(j);
  Expr r = substitute(e, {{i, Expr(k) + 1}});
  EXPECT_EQ(toString(r), toString((Expr(k) + 1) * 2 + Expr(j)));
  // The replacement is inserted as it is, not substituted again.
  Expr swapped = substitute(Expr(i) + Expr(j), {{i, Expr(j)}, {j, Expr(i)}});
  EXPECT_TRUE(equalExpr(swapped, Expr(j) + Expr(i)));
  // The loop variable is a definition: kept.
  Stmt loop = For::make(i, intImm(0), Expr(j), ForKind::Serial, Evaluate::make(Expr(i)));
  Stmt s = substitute(loop, {{j, intImm(8)}});
  ASSERT_TRUE(s.as<For>());
  EXPECT_TRUE(s.as<For>()->loopVar == i);
  EXPECT_EQ(asConstInt(s.as<For>()->extent), 8);
}

TEST(Utils, SubstituteSharesUnchangedNodes) {
  Var i("i"), j("j");
  Expr e = Expr(i) + 1;
  EXPECT_TRUE(substitute(e, {{j, intImm(0)}}).sameAs(e));
  EXPECT_TRUE(substitute(e, std::unordered_map<Var, Expr>{}).sameAs(e));
  VarPairs pairs = {{i, intImm(3)}, {i, intImm(4)}};
  EXPECT_EQ(toString(substitute(e, pairs)), toString(intImm(3) + 1)); // the first pair counts
  EXPECT_TRUE(substitute(e, VarPairs{}).sameAs(e));
}

TEST(Utils, SubstituteLetsFollowsChains) {
  Var a("a"), b("b"), x("x");
  std::unordered_map<Var, Expr> lets = {{a, Expr(b) + 1}, {b, Expr(x) * 2}};
  EXPECT_EQ(toString(substituteLets(Expr(a), lets)), toString(Expr(x) * 2 + 1));
}

TEST(Utils, UsesVarAndUsedVars) {
  Var i("i"), j("j"), k("k");
  Expr e = Expr(j) * Expr(i) + Expr(j);
  EXPECT_TRUE(usesVar(e, i));
  EXPECT_FALSE(usesVar(e, k));
  std::vector<Var> vars = usedVars(e);
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_TRUE(vars[0] == j);
  EXPECT_TRUE(vars[1] == i);
  Stmt s = For::make(k, intImm(0), intImm(4), ForKind::Serial, Evaluate::make(Expr(i)));
  EXPECT_TRUE(usesVar(s, i));
  EXPECT_FALSE(usesVar(s, k)); // a definition is not a use
}

TEST(Utils, GraphCalleesInOrderOnce) {
  Buffer x("x", DType::f32(), {intImm(4)}, BufferRole::Input);
  Buffer y("y", DType::f32(), {intImm(4)}, BufferRole::Alloc);
  Buffer z("z", DType::f32(), {intImm(4)}, BufferRole::Alloc);
  CallBinding first{{y}, "nn.relu", {}, {x}, false, {}};
  CallBinding second{{z}, "nn.add", {}, {y, y}, false, {}};
  CallBinding again{{z}, "nn.relu", {}, {y}, false, {}};
  DataflowBlock df{{second, ReshapeBinding{z, y, {}}, again}, {z}, {}};
  Func g = GraphFunc::make("g", {}, {FuncParam::tensor(x)}, {}, {first, df}, {z});
  std::vector<std::string> callees = graphCallees(*g.as<GraphFunc>());
  EXPECT_EQ(callees, (std::vector<std::string>{"nn.relu", "nn.add"}));
}

TEST(Utils, WithHelpersReturnTheSameNodeWhenUnchanged) {
  Var i("i"), v("v");
  Buffer a("A", DType::f32(), {intImm(8)}, BufferRole::Output);
  Stmt store = BufferStore::make(a, floatImm(1.0), {Expr(v)});
  Stmt block = Block::make("B", {{v, IterKind::Spatial, intImm(8), Expr(i), {}}}, Expr(), Stmt(),
                           store, {}, {{a, {{Expr(v), intImm(1)}}}});
  const auto *b = block.as<Block>();
  EXPECT_TRUE(withBody(b, b->body).sameAs(block));
  EXPECT_TRUE(withPredicate(b, b->predicate).sameAs(block));
  EXPECT_TRUE(withIterVars(b, b->iterVars).sameAs(block));
  EXPECT_TRUE(withInit(b, b->init).sameAs(block));
  EXPECT_TRUE(withRegions(b, b->reads, b->writes).sameAs(block));
  EXPECT_TRUE(withAllocs(b, b->allocBuffers).sameAs(block));
  Stmt loop = For::make(i, intImm(0), intImm(8), ForKind::Serial, block);
  EXPECT_TRUE(withBody(loop.as<For>(), block).sameAs(loop));
}

TEST(Utils, WithHelpersChangeOnePart) {
  Var i("i"), v("v");
  Buffer a("A", DType::f32(), {intImm(8)}, BufferRole::Output);
  Buffer tmp("T", DType::f32(), {intImm(8)}, BufferRole::Alloc);
  Stmt store = BufferStore::make(a, floatImm(1.0), {Expr(v)});
  Stmt block = Block::make("B", {{v, IterKind::Spatial, intImm(8), Expr(i), {}}}, Expr(), Stmt(),
                           store, {}, {{a, {{Expr(v), intImm(1)}}}});
  const auto *b = block.as<Block>();
  Stmt p = withPredicate(b, lt(Expr(v), intImm(4)));
  ASSERT_TRUE(p.as<Block>());
  EXPECT_EQ(p.as<Block>()->name, "B");
  EXPECT_TRUE(p.as<Block>()->body.sameAs(store));
  EXPECT_EQ(toString(p.as<Block>()->predicate), toString(lt(Expr(v), intImm(4))));
  Stmt al = withAllocs(b, {tmp});
  ASSERT_EQ(al.as<Block>()->allocBuffers.size(), 1u);
  EXPECT_TRUE(al.as<Block>()->allocBuffers[0] == tmp);
  EXPECT_EQ(al.as<Block>()->writes.size(), 1u);
  Stmt rw = withRegions(b, {{a, {{intImm(0), intImm(8)}}}}, {});
  EXPECT_EQ(rw.as<Block>()->reads.size(), 1u);
  EXPECT_TRUE(rw.as<Block>()->writes.empty());
  std::vector<IterVar> ivs = b->iterVars;
  ivs[0].binding = Expr(i) + 1;
  EXPECT_FALSE(withIterVars(b, ivs).sameAs(block));
  Stmt loop = For::make(i, intImm(0), intImm(8), ForKind::Parallel, block);
  Stmt other = withBody(loop.as<For>(), store);
  EXPECT_EQ(other.as<For>()->forKind, ForKind::Parallel);
  EXPECT_TRUE(other.as<For>()->body.sameAs(store));
}

TEST(Utils, FunctionBodyHelpers) {
  Buffer a("A", DType::f32(), {intImm(8)}, BufferRole::Output);
  Buffer tmp("T", DType::f32(), {intImm(8)}, BufferRole::Alloc);
  Stmt body = Evaluate::make(intImm(0));
  Func f = PrimFunc::make("f", {}, {}, {a}, {}, {tmp}, body);
  EXPECT_TRUE(withBody(f, body).sameAs(f));
  EXPECT_TRUE(withAllocs(f, {tmp}).sameAs(f));
  EXPECT_TRUE(mapBody(f, "test takes a PrimFunc", [](const Stmt &s) { return s; }).sameAs(f));
  Func g =
      mapBody(f, "test takes a PrimFunc", [](const Stmt &) { return Evaluate::make(intImm(1)); });
  EXPECT_EQ(g.name(), "f");
  EXPECT_EQ(asConstInt(g.as<PrimFunc>()->body.as<Evaluate>()->value), 1);
  EXPECT_TRUE(withAllocs(f, {}).as<PrimFunc>()->allocBuffers.empty());
}

TEST(Utils, EqualExprComparesByIdentity) {
  Var i("i"), j("j"), t0("t0"), t1("t1");
  EXPECT_TRUE(equalExpr(Expr(i) + 1, Expr(i) + 1));
  EXPECT_FALSE(equalExpr(Expr(i) + 1, Expr(j) + 1)); // structurally equal, not the same vars
  EXPECT_TRUE(structuralEqual(Expr(i) + 1, Expr(j) + 1));
  EXPECT_FALSE(equalExpr(Expr(i), Expr()));
  EXPECT_TRUE(equalExpr(Expr(), Expr()));
  EXPECT_TRUE(equalExpr(Expr(t1) * 2, Expr(t0) * 2, {{t1, t0}}));
  Buffer a("A", DType::f32(), {intImm(8)}, BufferRole::Input);
  Buffer b("A", DType::f32(), {intImm(8)}, BufferRole::Input);
  EXPECT_TRUE(equalExpr(BufferLoad::make(a, {Expr(i)}), BufferLoad::make(a, {Expr(i)})));
  EXPECT_FALSE(equalExpr(BufferLoad::make(a, {Expr(i)}), BufferLoad::make(b, {Expr(i)})));
}

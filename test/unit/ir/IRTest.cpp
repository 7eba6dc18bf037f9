//===- test/unit/ir/IRTest.cpp - Node construction, helpers, visitor ----------------------===//
#include "ir/IR.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "MmRelu.h"

#include <gtest/gtest.h>

#include <map>

using namespace tdsl::ir;

TEST(IR, AsIsACheckedDowncast) {
  Var x("x");
  Expr sum = x + 1;
  ASSERT_NE(sum.as<Add>(), nullptr);
  EXPECT_EQ(sum.as<Sub>(), nullptr);
  EXPECT_EQ(sum.as<Add>()->a.as<VarRef>()->var, x);
  EXPECT_EQ(Expr().as<Add>(), nullptr);
  Stmt store = Evaluate::make(sum);
  EXPECT_NE(store.as<Evaluate>(), nullptr);
  EXPECT_EQ(store.as<For>(), nullptr);
  EXPECT_EQ(std::string(kindName(sum.kind())), "Add");
}

TEST(IR, IntImmWrapsToItsDType) {
  EXPECT_EQ(IntImm::make(DType::i8(), 200).as<IntImm>()->value, -56);
  EXPECT_EQ(IntImm::make(DType::u8(), -1).as<IntImm>()->value, 255);
  EXPECT_EQ(IntImm::make(DType::i32(), int64_t(1) << 31).as<IntImm>()->value, INT32_MIN);
  EXPECT_EQ(IntImm::make(DType::boolean(), 5).as<IntImm>()->value, 1);
  EXPECT_EQ(IntImm::make(DType::u64(), -1).as<IntImm>()->value, -1); // Raw bits.
  EXPECT_EQ(toString(IntImm::make(DType::u64(), -1)), "18446744073709551615");
}

TEST(IR, FloatImmRoundsToF32) {
  EXPECT_EQ(FloatImm::make(DType::f32(), 0.1).as<FloatImm>()->value, double(0.1f));
  EXPECT_EQ(FloatImm::make(DType::f64(), 0.1).as<FloatImm>()->value, 0.1);
}

TEST(IR, LiteralsTakeTheOtherOperandsDType) {
  Var x("x", DType::f32());
  Expr e = x * 2;
  ASSERT_TRUE(e.as<Mul>());
  EXPECT_EQ(e.dtype(), DType::f32());
  EXPECT_TRUE(e.as<Mul>()->b.as<FloatImm>());
  Var n("n", DType::i32());
  Expr m = 3 - Expr(n);
  EXPECT_EQ(m.dtype(), DType::i32());
  EXPECT_TRUE(isConstInt(m.as<Sub>()->a, 3));
  EXPECT_EQ(lt(n, Expr(n)).dtype(), DType::boolean());
  EXPECT_EQ(lt(Ramp::make(intImm(0), intImm(1), 4), Broadcast::make(intImm(2), 4)).dtype(),
            DType::boolean().withLanes(4));
}

TEST(IR, SeqFlattens) {
  Stmt a = Evaluate::make(intImm(1)), b = Evaluate::make(intImm(2));
  Stmt c = Evaluate::make(intImm(3));
  Stmt s = seq({a, SeqStmt::make({b, c})});
  ASSERT_TRUE(s.as<SeqStmt>());
  EXPECT_EQ(s.as<SeqStmt>()->seq.size(), 3u);
  EXPECT_TRUE(seq({a}).sameAs(a));
}

TEST(IR, VarsAndBuffersHaveIdentity) {
  Var a("i"), b("i");
  EXPECT_FALSE(a == b);
  Var copy = a;
  EXPECT_TRUE(copy == a);
  EXPECT_NE(std::hash<Var>()(a), std::hash<Var>()(b));
}

TEST(IR, BlockPredicateDefaultsToTrue) {
  Stmt block = Block::make("B", {}, Expr(), Stmt(), Evaluate::make(intImm(0)));
  EXPECT_TRUE(isConstInt(block.as<Block>()->predicate, 1));
  EXPECT_EQ(block.as<Block>()->predicate.dtype(), DType::boolean());
}

TEST(IR, ModuleLookupAndReplace) {
  Module module;
  Func f = test::buildMmRelu();
  module.add(f);
  EXPECT_TRUE(module.lookup("mm_relu").sameAs(f));
  EXPECT_FALSE(module.lookup("nope").defined());
  Func g = test::buildMmRelu();
  module.replace(g);
  EXPECT_TRUE(module.lookup("mm_relu").sameAs(g));
  EXPECT_EQ(module.functions().size(), 1u);
}

TEST(IRDeathTest, MismatchedOperandsAreInternalErrors) {
  Var x("x", DType::f32()), n("n");
  EXPECT_DEATH(add(x, n), "binary operands must have the same dtype");
  EXPECT_DEATH(IfThenElse::make(Expr(n), Evaluate::make(intImm(0))),
               "if condition must be a scalar bool");
  Buffer buf("A", DType::f32(), {intImm(4)}, BufferRole::Input);
  EXPECT_DEATH(BufferLoad::make(buf, {}), "load needs one index per dimension");
}

namespace {
/// Counts loads per buffer name, and blocks.
class LoadCounter : public IRVisitor {
public:
  std::map<std::string, int> loads;
  int blocks = 0;

  void visit(const BufferLoad *op) override {
    ++loads[op->buffer.name()];
    IRVisitor::visit(op);
  }
  void visit(const Block *op) override {
    ++blocks;
    IRVisitor::visit(op);
  }
};
} // namespace

TEST(IRVisitor, VisitsEveryLoad) {
  Func f = test::buildMmRelu();
  LoadCounter counter;
  counter.visitStmt(f.as<PrimFunc>()->body);
  EXPECT_EQ(counter.blocks, 2);
  EXPECT_EQ(counter.loads["Y"], 2);
  EXPECT_EQ(counter.loads["A"], 1);
  EXPECT_EQ(counter.loads["B"], 1);
  EXPECT_EQ(counter.loads.count("C"), 0u);
}

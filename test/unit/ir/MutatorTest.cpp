//===- test/unit/ir/MutatorTest.cpp - IRMutator shares unchanged subtrees -----------------===//
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"

#include "MmRelu.h"

#include <gtest/gtest.h>

using namespace tdsl::ir;

namespace {

/// Replaces float constant `from` by `to`.
class ReplaceFloat : public IRMutator {
public:
  ReplaceFloat(double from, double to) : from_(from), to_(to) {}

protected:
  Expr visit(const FloatImm *op) override {
    if (op->value != from_)
      return op;
    return FloatImm::make(op->type, to_, op->loc);
  }

private:
  double from_, to_;
};

/// The loops of a perfect nest of Fors, outermost first, down to the first non-For.
std::vector<const For *> loopNest(const Stmt &s) {
  std::vector<const For *> loops;
  for (const For *loop = s.as<For>(); loop; loop = loop->body.as<For>())
    loops.push_back(loop);
  return loops;
}

} // namespace

TEST(IRMutator, IdentityReturnsTheSameNodes) {
  Func f = test::buildMmRelu();
  IRMutator identity;
  EXPECT_TRUE(identity.mutate(f.as<PrimFunc>()->body).sameAs(f.as<PrimFunc>()->body));
  EXPECT_TRUE(identity.mutateFunc(f).sameAs(f));
  ReplaceFloat absent(42.0, 1.0);
  EXPECT_TRUE(absent.mutateFunc(f).sameAs(f));
}

TEST(IRMutator, RebuildsOnlyThePathToAChange) {
  Func f = test::buildMmRelu();
  const auto *op = f.as<PrimFunc>();
  // Both blocks contain 0.0 (init of Y, relu of C); replace only via a mutator on C's nest.
  const For *jLoop = loopNest(op->body)[1];
  const auto *seq = jLoop->body.as<SeqStmt>();
  ASSERT_TRUE(seq);
  Stmt producer = seq->seq[0], consumer = seq->seq[1];

  ReplaceFloat mutator(0.0, 1.0);
  Stmt newConsumer = mutator.mutate(consumer);
  EXPECT_FALSE(newConsumer.sameAs(consumer));

  // Rebuild the j_0 loop with the new consumer through a mutator that swaps one statement.
  class Swap : public IRMutator {
  public:
    Swap(Stmt from, Stmt to) : from_(std::move(from)), to_(std::move(to)) {}
    Stmt visit(const For *loop) override {
      if (Stmt(loop).sameAs(from_))
        return to_;
      return IRMutator::visit(loop);
    }

  private:
    Stmt from_, to_;
  } swap(consumer, newConsumer);
  Func g = swap.mutateFunc(f);
  ASSERT_FALSE(g.sameAs(f));

  const auto *gop = g.as<PrimFunc>();
  const auto *gSeq = loopNest(gop->body)[1]->body.as<SeqStmt>();
  ASSERT_TRUE(gSeq);
  EXPECT_TRUE(gSeq->seq[0].sameAs(producer)) << "the untouched producer nest must be shared";
  EXPECT_TRUE(gSeq->seq[1].sameAs(newConsumer));
  EXPECT_TRUE(gop->allocBuffers[0].sameAs(op->allocBuffers[0]));
  EXPECT_NE(toString(g).find("C[vi, vj] = max(Y[vi, vj], 1.0);"), std::string::npos);
  EXPECT_NE(toString(g).find("init { Y[vi, vj] = 0.0; }"), std::string::npos);
}

TEST(IRMutator, SubstitutesVariables) {
  Var x("x"), y("y");
  class Subst : public IRMutator {
  public:
    Subst(Var from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}
    Expr visit(const VarRef *op) override { return op->var == from_ ? to_ : Expr(op); }

  private:
    Var from_;
    Expr to_;
  } subst(x, y * 2);
  Expr untouched = Expr(y) + 1;
  Expr e = (Expr(x) + 1) * untouched;
  Expr result = subst.mutate(e);
  EXPECT_EQ(toString(result), "(y * 2 + 1) * (y + 1)");
  EXPECT_TRUE(result.as<Mul>()->b.sameAs(untouched));
}

TEST(IRMutator, SubstitutesBuffers) {
  Func f = test::buildMmRelu();
  const auto *op = f.as<PrimFunc>();
  Buffer y = op->allocBuffers[0];
  Buffer local("Y_local", y.dtype(), y.shape(), BufferRole::Alloc, MemScope::Local);
  class Rename : public IRMutator {
  public:
    Rename(Buffer from, Buffer to) : from_(std::move(from)), to_(std::move(to)) {}
    Buffer mutateBuffer(const Buffer &b) override { return b == from_ ? to_ : b; }

  private:
    Buffer from_, to_;
  } rename(y, local);
  std::string text = toString(rename.mutateFunc(f));
  EXPECT_NE(text.find("alloc Y_local: f32[128, 128] scope(local);"), std::string::npos) << text;
  EXPECT_NE(text.find("C[vi, vj] = max(Y_local[vi, vj], 0.0);"), std::string::npos) << text;
  EXPECT_EQ(text.find(" Y["), std::string::npos) << text;
}

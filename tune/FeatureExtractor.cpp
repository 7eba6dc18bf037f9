//===- tune/FeatureExtractor.cpp - What the cost model sees of a candidate -------------------===//

#include "tune/FeatureExtractor.h"

#include "ir/IRVisitor.h"

#include <algorithm>
#include <cmath>

namespace tdsl::tune {

namespace {

struct LoopStats : ir::IRVisitor {
  double parallel = 1, vector = 1, unrolled = 1, innermost = 1, localBytes = 0, loops = 0;
  double depth = 0, maxDepth = 0;
  void visit(const ir::For *op) override {
    int64_t e = 1;
    if (auto *c = op->extent.as<ir::IntImm>())
      e = c->value;
    loops += 1;
    if (op->forKind == ir::ForKind::Parallel)
      parallel *= double(e);
    if (op->forKind == ir::ForKind::Vectorized)
      vector *= double(e);
    if (op->forKind == ir::ForKind::Unrolled)
      unrolled *= double(e);
    if (!op->body.as<ir::For>())
      innermost = double(e);
    depth += 1;
    maxDepth = std::max(maxDepth, depth);
    ir::IRVisitor::visit(op);
    depth -= 1;
  }
  void visit(const ir::Block *op) override {
    for (const ir::Buffer &b : op->allocBuffers)
      addBuffer(b);
    ir::IRVisitor::visit(op);
  }
  void addBuffer(const ir::Buffer &b) {
    if (b->scope != ir::MemScope::Local)
      return;
    double n = b->dtype.storageBytes();
    for (const ir::Expr &e : b->shape)
      if (auto *c = e.as<ir::IntImm>())
        n *= double(c->value);
    localBytes += n;
  }
};

} // namespace

std::vector<float> extractFeatures(const std::vector<schedule::Decision> &decisions,
                                   const ir::Func &scheduled) {
  std::vector<float> out;
  for (const schedule::Decision &d : decisions)
    for (int64_t x : d)
      out.push_back(float(std::log2(double(std::max<int64_t>(x, 1)))));
  LoopStats stats;
  if (auto *p = scheduled.as<ir::PrimFunc>()) {
    for (const ir::Buffer &b : p->allocBuffers)
      stats.addBuffer(b);
    stats.visitStmt(p->body);
  }
  for (double v : {stats.parallel, stats.vector, stats.unrolled, stats.innermost,
                   stats.localBytes + 1, stats.loops, stats.maxDepth})
    out.push_back(float(std::log2(std::max(v, 1.0))));
  return out;
}

} // namespace tdsl::tune

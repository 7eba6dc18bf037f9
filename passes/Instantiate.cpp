//===- passes/Instantiate.cpp -----------------------------------------------------------------===//
//
// Implementation of passes/Instantiate.h.

#include "passes/Instantiate.h"

#include "ir/IRMutator.h"
#include "ir/Simplify.h"

#include <map>

namespace tdsl {

using namespace ir;

namespace {

class ConstSubstituter : public IRMutator {
public:
  explicit ConstSubstituter(std::map<const VarNode *, int64_t> values)
      : values_(std::move(values)) {}

  Buffer mutateBuffer(const Buffer &b) override {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end())
      return it->second;
    bool changed = false;
    std::vector<Expr> shape;
    for (const Expr &d : b.shape()) {
      shape.push_back(simplify(mutate(d)));
      changed |= !shape.back().sameAs(d);
    }
    Buffer out =
        changed ? Buffer(b.name(), b.dtype(), shape, b.role(), b.scope(), b->align, b->loc) : b;
    buffers_[b.get()] = out;
    return out;
  }

protected:
  Expr visit(const VarRef *op) override {
    auto it = values_.find(op->var.get());
    if (it == values_.end())
      return op;
    return IntImm::make(op->var.dtype(), it->second, op->loc);
  }

private:
  std::map<const VarNode *, int64_t> values_;
  std::map<const BufferNode *, Buffer> buffers_;
};

} // namespace

Func instantiate(const Func &f, const std::vector<int64_t> &values) {
  const PrimFunc *p = f.as<PrimFunc>();
  TDSL_IR_CHECK(p && p->constVars.size() == values.size(),
                "instantiate needs one value per constant");
  std::map<const VarNode *, int64_t> map;
  for (size_t i = 0; i < values.size(); ++i)
    map[p->constVars[i].get()] = values[i];
  ConstSubstituter sub(map);
  Func g = sub.mutateFunc(f);
  const PrimFunc *q = g.as<PrimFunc>();
  return PrimFunc::make(q->name, {}, q->inputs, q->outputs, q->shapeVars, q->allocBuffers,
                        simplify(q->body), q->loc);
}

} // namespace tdsl

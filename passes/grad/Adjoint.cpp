//===- passes/grad/Adjoint.cpp - The adjoint of a func, block by block ----------------------===//
//
// deriveAdjoint (passes/grad/Grad.h). The func is read as a list of blocks in the short form
// (each an iteration domain of axes and a body of stores); its adjoint is, in order:
//
//   1. the blocks of f that write the intermediates the adjoint reads (recomputed);
//   2. for each max/min reduction, a block recording the first step whose operand equals the
//      result (`Y_arg`): the one step that receives the reduction's gradient;
//   3. the outputs' cotangents copied where the adjoint adds to them;
//   4. f's blocks in reverse, each giving its contributions: a contribution `seed · ∂v/∂X` of a
//      read X[idx] becomes a gather block over X's indices when every index is affine in the
//      axes with an axis of its own to solve for (the other axes reduced over), else an
//      accumulation block over the reading block's axes (all spatial, the store under `if`).
//
// Every value is read in the version the block read: a block's contributions may read only what
// no block at or after it overwrites; a buffer written again by a later block has its adjoint
// reset (or, for an in-place update `Y[i] = g(Y[i], …)`, replaced) where the later block wrote.
//
//===------------------------------------------------------------------------------------------===//

#include "passes/grad/Grad.h"

#include "ir/Arith.h"
#include "ir/FreshVarCopier.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/StructuralEqual.h"
#include "ir/Utils.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

namespace tdsl::grad {

using namespace ir;

namespace {

/// The dtype an adjoint of a value of dtype `t` has: f16 and bf16 are storage types (spec §4),
/// their adjoints f32.
DType adjointType(DType t) { return t == DType::f16() || t == DType::bf16() ? DType::f32() : t; }

Expr andOf(const Expr &a, const Expr &b) {
  if (!a.defined())
    return b;
  if (!b.defined())
    return a;
  return logicalAnd(a, b);
}

Expr orOf(const Expr &a, const Expr &b) {
  if (!a.defined() || !b.defined())
    return Expr(); // one side always holds
  return logicalOr(a, b);
}

/// `value` where `guard` holds, else zero (`value` evaluated only there).
Expr guarded(const Expr &guard, const Expr &value) {
  if (!guard.defined())
    return value;
  return select(guard, value, constant(value.dtype(), 0.0));
}

/// One term of an adjoint: `value` added to the adjoint of `buffer` at `indices`, where `guard`
/// holds (undefined: everywhere). Indices, value and guard are expressions of the reading
/// block's axes.
struct Contribution {
  Buffer buffer;
  std::vector<Expr> indices;
  Expr value;
  Expr guard;
};

/// Reverse mode through one expression: `run(e, seed, guard)` adds the contribution of every
/// float load `e` reaches, the chain rule applied on the way (spec §13).
class Backprop {
public:
  std::vector<Contribution> out;

  void run(const Expr &e, Expr seed, const Expr &guard) {
    if (!e.dtype().isFloat())
      return; // integers and bools carry no gradient
    switch (e.kind()) {
    case ExprKind::BufferLoad: {
      auto *l = e.as<BufferLoad>();
      out.push_back({l->buffer, l->indices, seed, guard});
      return;
    }
    case ExprKind::Cast: {
      const Expr &v = e.as<Cast>()->value;
      if (v.dtype().isFloat())
        run(v, retype(seed, adjointType(v.dtype())), guard);
      return;
    }
    case ExprKind::Neg:
      run(e.as<Neg>()->a, Neg::make(seed), guard);
      return;
    case ExprKind::Add:
      run(e.as<Add>()->a, seed, guard);
      run(e.as<Add>()->b, seed, guard);
      return;
    case ExprKind::Sub:
      run(e.as<Sub>()->a, seed, guard);
      run(e.as<Sub>()->b, Neg::make(seed), guard);
      return;
    case ExprKind::Mul: {
      auto *m = e.as<Mul>();
      run(m->a, seed * m->b, guard);
      run(m->b, seed * m->a, guard);
      return;
    }
    case ExprKind::Div: {
      auto *d = e.as<Div>();
      run(d->a, seed / d->b, guard);
      run(d->b, Neg::make(seed * d->a / (d->b * d->b)), guard);
      return;
    }
    case ExprKind::Mod: {
      // a % b = a - floor(a / b) * b: the floor is piecewise constant.
      auto *m = e.as<Mod>();
      run(m->a, seed, guard);
      run(m->b, Neg::make(seed * call(Intrinsic::Floor, {m->a / m->b})), guard);
      return;
    }
    case ExprKind::Max:
    case ExprKind::Min: {
      // The selected operand; on a tie the second (`max(x, 0.0)` passes nothing at 0, as
      // PyTorch's relu).
      auto [a, b] = binaryOperands(e);
      Expr first = e.kind() == ExprKind::Max ? gt(*a, *b) : lt(*a, *b);
      Expr zero = constant(seed.dtype(), 0.0);
      run(*a, select(first, seed, zero), guard);
      run(*b, select(first, zero, seed), guard);
      return;
    }
    case ExprKind::Select: {
      auto *s = e.as<Select>();
      run(s->trueValue, seed, andOf(guard, s->condition));
      run(s->falseValue, seed, andOf(guard, logicalNot(s->condition)));
      return;
    }
    case ExprKind::Call:
      intrinsic(e, *e.as<Call>(), seed, guard);
      return;
    default:
      return; // constants, variables (scalar inputs carry no gradient)
    }
  }

private:
  static Expr retype(const Expr &e, DType t) { return e.dtype() == t ? e : cast(t, e); }

  void intrinsic(const Expr &e, const Call &c, const Expr &seed, const Expr &guard) {
    auto arg = [&](size_t i) { return c.args[i]; };
    auto fc = [&](double v) { return constant(e.dtype(), v); };
    switch (c.op) {
    case Intrinsic::Exp:
      run(arg(0), seed * e, guard);
      return;
    case Intrinsic::Exp2:
      run(arg(0), seed * e * fc(std::log(2.0)), guard);
      return;
    case Intrinsic::Log:
      run(arg(0), seed / arg(0), guard);
      return;
    case Intrinsic::Log2:
      run(arg(0), seed / (arg(0) * fc(std::log(2.0))), guard);
      return;
    case Intrinsic::Sqrt:
      run(arg(0), seed / (fc(2.0) * e), guard);
      return;
    case Intrinsic::Rsqrt:
      run(arg(0), Neg::make(seed * fc(0.5) * e / arg(0)), guard);
      return;
    case Intrinsic::Tanh:
      run(arg(0), seed * (fc(1.0) - e * e), guard);
      return;
    case Intrinsic::Sigmoid:
      run(arg(0), seed * e * (fc(1.0) - e), guard);
      return;
    case Intrinsic::Erf:
      run(arg(0),
          seed * fc(2.0 / std::sqrt(M_PI)) * call(Intrinsic::Exp, {Neg::make(arg(0) * arg(0))}),
          guard);
      return;
    case Intrinsic::Abs:
      run(arg(0),
          seed *
              select(gt(arg(0), fc(0.0)), fc(1.0), select(lt(arg(0), fc(0.0)), fc(-1.0), fc(0.0))),
          guard);
      return;
    case Intrinsic::Sin:
      run(arg(0), seed * call(Intrinsic::Cos, {arg(0)}), guard);
      return;
    case Intrinsic::Cos:
      run(arg(0), Neg::make(seed * call(Intrinsic::Sin, {arg(0)})), guard);
      return;
    case Intrinsic::Pow:
      // x^y: y·x^(y-1) for x, x^y·log(x) for y (where x > 0: log is not defined elsewhere).
      run(arg(0), seed * arg(1) * call(Intrinsic::Pow, {arg(0), arg(1) - fc(1.0)}), guard);
      run(arg(1), select(gt(arg(0), fc(0.0)), seed * e * call(Intrinsic::Log, {arg(0)}), fc(0.0)),
          guard);
      return;
    case Intrinsic::Fma:
      run(arg(0), seed * arg(1), guard);
      run(arg(1), seed * arg(0), guard);
      run(arg(2), seed, guard);
      return;
    default:
      return; // floor, ceil, round, trunc: piecewise constant; min_value, max_value: constants
    }
  }
};

/// How a store of a block combines with what the buffer held.
enum class StoreKind { Plain, Sum, Max, Min };

/// One store of a block, its lets substituted: `buffer[indices]` gets `value` (Plain), or
/// accumulates `value` (Sum: `+ value`, a `-` turned into `+ -value`; Max, Min), where `guard`
/// holds (the `if`s around it).
struct Store {
  Buffer buffer;
  std::vector<Expr> indices;
  StoreKind kind = StoreKind::Plain;
  Expr value;
  Expr guard;
  bool init = false;
  SourceLoc loc;
};

/// A block of f as the short form reads it.
struct BlockInfo {
  std::string name;
  std::vector<IterVar> axes; ///< no bindings
  Stmt stmt;                 ///< the block in the short form (what a recomputation runs)
  std::vector<Store> stores;
  SourceLoc loc;
};

bool sameIndices(const std::vector<Expr> &a, const std::vector<Expr> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structuralEqual(a[i], b[i]) && constDiff(a[i], b[i]) != std::optional<int64_t>(0))
      return false;
  return true;
}

bool isLoadOf(const Expr &e, const Buffer &b, const std::vector<Expr> &indices) {
  auto *l = e.as<BufferLoad>();
  return l && l->buffer.sameAs(b) && sameIndices(l->indices, indices);
}

/// The loads of buffer `b` in `e`.
std::vector<const BufferLoad *> loadsOf(const Expr &e, const Buffer &b) {
  struct V : IRVisitor {
    const Buffer *b;
    std::vector<const BufferLoad *> out;
    void visit(const BufferLoad *op) override {
      if (op->buffer.sameAs(*b))
        out.push_back(op);
      IRVisitor::visit(op);
    }
  } v;
  v.b = &b;
  v.visitExpr(e);
  return v.out;
}

/// The buffers `e` (or statement `s`) loads.
std::vector<Buffer> loadedBuffers(const Expr &e) {
  struct V : IRVisitor {
    std::vector<Buffer> out;
    void visit(const BufferLoad *op) override {
      if (std::none_of(out.begin(), out.end(),
                       [&](const Buffer &b) { return b.sameAs(op->buffer); }))
        out.push_back(op->buffer);
      IRVisitor::visit(op);
    }
  } v;
  v.visitExpr(e);
  return v.out;
}

class Deriver {
public:
  Deriver(const PrimFunc &f, const std::vector<size_t> &wrt, const std::vector<size_t> &cotangents)
      : f_(f), wrt_(wrt), cotangents_(cotangents) {}

  std::optional<Adjoint> run(const std::string &name, GradError &error) {
    try {
      return derive(name);
    } catch (const GradError &e) {
      error = e;
      return std::nullopt;
    }
  }

private:
  [[noreturn]] void fail(SourceLoc at, std::string message) {
    throw GradError{at.valid() ? at : f_.loc, std::move(message), {}, {}};
  }

  // -------------------------------------------------------------------------------------------
  // Reading f
  // -------------------------------------------------------------------------------------------

  /// f's blocks in order, each in the short form: a block under loops must bind each axis to a
  /// loop of its own over the axis's whole extent, as the explicit form of the short form does.
  void readBlocks(const Stmt &s, std::vector<const For *> &loops) {
    if (auto *seq = s.as<SeqStmt>()) {
      for (const Stmt &c : seq->seq)
        readBlocks(c, loops);
      return;
    }
    if (auto *loop = s.as<For>()) {
      loops.push_back(loop);
      readBlocks(loop->body, loops);
      loops.pop_back();
      return;
    }
    auto *b = s.as<Block>();
    if (!b)
      fail(s->loc, "grad derives funcs made of blocks; this statement of func '" + f_.name +
                       "' is not one");
    BlockInfo info;
    info.name = b->name;
    info.loc = b->loc;
    std::unordered_map<Var, Expr> loopToAxis;
    std::set<const VarNode *> boundLoops;
    for (const IterVar &iv : b->iterVars) {
      IterVar axis = iv;
      axis.binding = Expr();
      info.axes.push_back(axis);
      if (!iv.binding.defined())
        continue;
      auto *ref = iv.binding.as<VarRef>();
      const For *loop = nullptr;
      for (const For *l : loops)
        if (ref && l->loopVar.sameAs(ref->var))
          loop = l;
      if (!loop || !boundLoops.insert(ref->var.get()).second || !isConstInt(loop->min, 0) ||
          constDiff(loop->extent, iv.extent) != std::optional<int64_t>(0))
        fail(iv.loc.valid() ? iv.loc : b->loc,
             "grad derives funcs in the short form (or its explicit form, each axis bound to a "
             "loop of its own): axis '" +
                 iv.var.name() + "' of block '" + b->name +
                 "' is not; derive the func before "
                 "scheduling it");
      loopToAxis[ref->var] = VarRef::make(iv.var);
    }
    if (boundLoops.size() != loops.size())
      fail(b->loc, "block '" + b->name + "' of func '" + f_.name +
                       "' is under loops that bind none of its axes (a scheduled form); grad "
                       "derives the func before scheduling it");
    Expr predicate = substitute(b->predicate, loopToAxis);
    Expr guard = isConstInt(predicate, 1) ? Expr() : predicate;
    if (!b->allocBuffers.empty())
      fail(b->loc, "block '" + b->name + "' allocates buffers; grad derives blocks without them");
    bool reduces = std::any_of(info.axes.begin(), info.axes.end(),
                               [](const IterVar &iv) { return iv.kind == IterKind::Reduce; });
    std::unordered_map<Var, Expr> lets;
    if (b->init.defined())
      readStores(b->init, guard, lets, /*init=*/true, reduces, info);
    readStores(b->body, guard, lets, /*init=*/false, reduces, info);
    info.stmt = Block::make(b->name, info.axes, predicate, b->init, b->body, {}, {}, {}, b->loc);
    blocks_.push_back(std::move(info));
  }

  void readStores(const Stmt &s, const Expr &guard, std::unordered_map<Var, Expr> lets, bool init,
                  bool reduces, BlockInfo &info) {
    if (auto *seq = s.as<SeqStmt>()) {
      for (const Stmt &c : seq->seq)
        readStores(c, guard, lets, init, reduces, info);
    } else if (auto *let = s.as<LetStmt>()) {
      lets[let->var] = substituteLets(let->value, lets);
      readStores(let->body, guard, lets, init, reduces, info);
    } else if (auto *ite = s.as<IfThenElse>()) {
      Expr c = substituteLets(ite->condition, lets);
      readStores(ite->thenCase, andOf(guard, c), lets, init, reduces, info);
      if (ite->elseCase.defined())
        readStores(ite->elseCase, andOf(guard, logicalNot(c)), lets, init, reduces, info);
    } else if (auto *st = s.as<BufferStore>()) {
      Store out;
      out.buffer = st->buffer;
      out.indices = st->indices;
      out.guard = guard;
      out.init = init;
      out.loc = st->loc;
      Expr v = substituteLets(st->value, lets);
      out.value = v;
      if (reduces && !init) {
        auto [a, b] = binaryOperands(v);
        bool selfA = a && isLoadOf(*a, st->buffer, st->indices);
        bool selfB = b && isLoadOf(*b, st->buffer, st->indices);
        if (v.kind() == ExprKind::Add && (selfA || selfB)) {
          out.kind = StoreKind::Sum;
          out.value = selfA ? *b : *a;
        } else if (v.kind() == ExprKind::Sub && selfA) {
          out.kind = StoreKind::Sum;
          out.value = Neg::make(*b);
        } else if ((v.kind() == ExprKind::Max || v.kind() == ExprKind::Min) && (selfA || selfB)) {
          out.kind = v.kind() == ExprKind::Max ? StoreKind::Max : StoreKind::Min;
          out.value = selfA ? *b : *a;
        } else if (st->buffer.dtype().isFloat()) {
          fail(st->loc, "grad cannot derive this update of '" + st->buffer.name() + "' in block '" +
                            info.name +
                            "': a reduction must add to, subtract from, or take the max or min "
                            "with what it writes");
        }
        if (out.kind != StoreKind::Plain && !loadsOf(out.value, st->buffer).empty())
          fail(st->loc, "grad cannot derive this update of '" + st->buffer.name() +
                            "': its operand reads '" + st->buffer.name() + "' again");
      }
      info.stores.push_back(out);
    } else if (s.defined()) {
      fail(s->loc, "grad derives blocks of stores, lets and ifs; block '" + info.name + "' has a " +
                       kindName(s.kind()) + " statement");
    }
  }

  // -------------------------------------------------------------------------------------------
  // Activity
  // -------------------------------------------------------------------------------------------

  bool isOutput(const Buffer &b) const {
    return std::any_of(f_.outputs.begin(), f_.outputs.end(),
                       [&](const Buffer &o) { return o.sameAs(b); });
  }
  bool isAlloc(const Buffer &b) const {
    return std::any_of(f_.allocBuffers.begin(), f_.allocBuffers.end(),
                       [&](const Buffer &o) { return o.sameAs(b); });
  }
  /// The indices of the blocks that write `b`.
  std::vector<size_t> writers(const Buffer &b) const {
    std::vector<size_t> out;
    for (size_t k = 0; k < blocks_.size(); ++k)
      for (const Store &s : blocks_[k].stores)
        if (s.buffer.sameAs(b)) {
          out.push_back(k);
          break;
        }
    return out;
  }

  /// Buffers that depend on a wrt input (varied) and reach an output with a cotangent (useful).
  void findActive() {
    std::set<const BufferNode *> varied, useful;
    for (size_t i : wrt_)
      varied.insert(f_.inputs[i].buffer.get());
    for (size_t o : cotangents_)
      useful.insert(f_.outputs[o].get());
    for (bool grew = true; grew;) {
      grew = false;
      for (const BlockInfo &b : blocks_)
        for (const Store &s : b.stores) {
          if (!s.buffer.dtype().isFloat())
            continue;
          for (const Buffer &r : loadedBuffers(s.value))
            if (varied.count(r.get()) && r.dtype().isFloat())
              grew |= varied.insert(s.buffer.get()).second;
          if (useful.count(s.buffer.get()))
            for (const Buffer &r : loadedBuffers(s.value))
              if (r.dtype().isFloat())
                grew |= useful.insert(r.get()).second;
        }
    }
    for (const BufferNode *b : varied)
      if (useful.count(b))
        active_.insert(b);
  }
  bool isActive(const Buffer &b) const { return active_.count(b.get()) > 0; }

  // -------------------------------------------------------------------------------------------
  // Adjoint buffers
  // -------------------------------------------------------------------------------------------

  /// The adjoint of `b`, made on first use. Inputs: the gradient output; outputs: the cotangent
  /// input, or a copy of it (`d_y` accumulated into) when the adjoint adds to it or resets it.
  Buffer adjointOf(const Buffer &b) {
    auto it = adjoints_.find(b.get());
    if (it != adjoints_.end())
      return it->second;
    DType t = adjointType(b.dtype());
    Buffer d;
    for (size_t k = 0; k < wrt_.size(); ++k)
      if (f_.inputs[wrt_[k]].buffer.sameAs(b))
        d = gradOutputs_[k];
    for (size_t k = 0; k < cotangents_.size(); ++k)
      if (f_.outputs[cotangents_[k]].sameAs(b)) {
        d = cotangentInputs_[k]; // read in place until something adds to it (writableAdjointOf)
        initialized_.insert(d.get());
      }
    if (!d.defined())
      d = Buffer("d_" + b.name(), t, b.shape(), BufferRole::Alloc, MemScope::Global, {}, b->loc);
    if (d.role() == BufferRole::Alloc)
      allocs_.push_back(d);
    adjoints_[b.get()] = d;
    return d;
  }

  /// The adjoint of `b` for a block that writes it: a cotangent input is copied first (the
  /// blocks before read the input itself, which holds what the copy would then).
  Buffer writableAdjointOf(const Buffer &b) {
    Buffer d = adjointOf(b);
    if (d.role() != BufferRole::Input)
      return d;
    Buffer copy("d_" + b.name(), d.dtype(), b.shape(), BufferRole::Alloc, MemScope::Global, {},
                b->loc);
    copies_.push_back({d, copy});
    allocs_.push_back(copy);
    initialized_.insert(copy.get());
    adjoints_[b.get()] = copy;
    return copy;
  }

  /// What a block writing `b` at `indices` passes back: the adjoint of b there.
  Expr seedOf(const Buffer &b, const std::vector<Expr> &indices) {
    Buffer d = adjointOf(b);
    ensureInitialized(d);
    return BufferLoad::make(d, indices);
  }

  // -------------------------------------------------------------------------------------------
  // Emitting blocks
  // -------------------------------------------------------------------------------------------

  std::string blockName(const std::string &base) {
    std::string name = base;
    for (int k = 1; !blockNames_.insert(name).second; ++k)
      name = base + "_" + std::to_string(k);
    return name;
  }

  static IterVar axis(const std::string &name, IterKind kind, const Expr &extent) {
    IterVar iv;
    iv.var = Var(name);
    iv.kind = kind;
    iv.extent = extent;
    return iv;
  }

  /// A block over `d`'s whole shape storing `value(indices)`.
  Stmt fill(const std::string &name, const Buffer &d,
            const std::function<Expr(const std::vector<Expr> &)> &value) {
    std::vector<IterVar> axes;
    std::vector<Expr> idx;
    for (size_t i = 0; i < d.rank(); ++i) {
      axes.push_back(axis("i" + std::to_string(i), IterKind::Spatial, d.shape()[i]));
      idx.push_back(VarRef::make(axes.back().var));
    }
    return Block::make(blockName(name), axes, Expr(), Stmt(),
                       BufferStore::make(d, value(idx), idx));
  }

  /// Before the first contribution to `d` that does not set all of it: a block setting it to 0.
  void ensureInitialized(const Buffer &d) {
    if (!initialized_.insert(d.get()).second)
      return;
    emit(fill(d.name() + "_zero", d,
              [&](const std::vector<Expr> &) { return constant(d.dtype(), 0.0); }));
  }

  void emit(Stmt s) { body_.push_back(std::move(s)); }

  /// The contributions of one group (same buffer, same indices) as one block.
  void emitContribution(const std::string &name, const Buffer &x, const std::vector<Expr> &indices,
                        Expr value, Expr guard, const std::vector<IterVar> &domain) {
    Buffer d = writableAdjointOf(x);
    value = simplify(value);
    if (value.dtype() != d.dtype())
      value = cast(d.dtype(), value);
    if (!tryGather(name, d, indices, value, guard, domain))
      scatter(name, d, indices, value, guard, domain);
  }

  /// The gather form: a block over d's indices (fixed where an index uses no axis), each other
  /// index solved for an axis of its own, the remaining axes reduced over.
  bool tryGather(const std::string &name, const Buffer &d, const std::vector<Expr> &indices,
                 const Expr &value, const Expr &guard, const std::vector<IterVar> &domain) {
    std::set<const VarNode *> axisVars;
    for (const IterVar &iv : domain)
      axisVars.insert(iv.var.get());
    struct Dim {
      std::optional<AffineForm> form;
      std::set<const VarNode *> termAxes, opaqueAxes;
    };
    std::vector<Dim> dims(indices.size());
    std::map<const VarNode *, int> uses; // dims whose index uses the axis
    for (size_t i = 0; i < indices.size(); ++i) {
      dims[i].form = affineForm(indices[i], NonAffine::Opaque);
      if (!dims[i].form)
        return false;
      for (const auto &[v, c] : dims[i].form->terms)
        if (axisVars.count(v.get()))
          dims[i].termAxes.insert(v.get());
      for (const Expr &o : dims[i].form->opaque)
        for (const Var &v : usedVars(o))
          if (axisVars.count(v.get()))
            dims[i].opaqueAxes.insert(v.get());
      for (const VarNode *v : dims[i].termAxes)
        ++uses[v];
      for (const VarNode *v : dims[i].opaqueAxes)
        uses[v] += 2; // never a pivot
    }
    auto extentOf = [&](const VarNode *v) -> const IterVar & {
      for (const IterVar &iv : domain)
        if (iv.var.get() == v)
          return iv;
      __builtin_unreachable();
    };
    // The pivot of each dimension: an axis only it uses, with a constant coefficient; the
    // original block's spatial axes first, then the longest.
    std::vector<const VarNode *> pivot(indices.size(), nullptr);
    for (size_t i = 0; i < indices.size(); ++i) {
      if (dims[i].termAxes.empty() && dims[i].opaqueAxes.empty())
        continue; // a fixed index
      auto better = [&](const VarNode *a, const VarNode *b) {
        const IterVar &ia = extentOf(a), &ib = extentOf(b);
        if ((ia.kind == IterKind::Spatial) != (ib.kind == IterKind::Spatial))
          return ia.kind == IterKind::Spatial;
        auto ca = asConstInt(ia.extent), cb = asConstInt(ib.extent);
        if (ca && cb)
          return *ca > *cb;
        return !ca && cb; // a symbolic extent is taken as the longer
      };
      for (const VarNode *v : dims[i].termAxes)
        if (uses[v] == 1 && (!pivot[i] || better(v, pivot[i])))
          pivot[i] = v;
      if (!pivot[i])
        return false;
    }
    // The block: a spatial axis per solved dimension, the other axes reduced over.
    std::vector<IterVar> axes;
    std::vector<Expr> store;
    std::unordered_map<Var, Expr> solved;
    Expr inRange;
    for (size_t i = 0; i < indices.size(); ++i) {
      if (!pivot[i]) {
        store.push_back(indices[i]);
        continue;
      }
      IterVar x = axis("x" + std::to_string(i), IterKind::Spatial, d.shape()[i]);
      axes.push_back(x);
      Expr xi = VarRef::make(x.var);
      store.push_back(xi);
      const IterVar &p = extentOf(pivot[i]);
      int64_t a = dims[i].form->coeff(p.var);
      Expr rest = simplify(substitute(indices[i], {{p.var, intImm(0)}}));
      Expr diff = xi - rest;
      Expr v;
      if (a == 1)
        v = diff;
      else if (a == -1)
        v = Neg::make(diff);
      else {
        inRange = andOf(inRange, eq(diff % intImm(a), intImm(0)));
        v = diff / intImm(a);
      }
      v = simplify(v);
      // x_i itself over the pivot's whole extent needs no test.
      bool whole = (a == 1 && v.as<VarRef>() && v.as<VarRef>()->var.sameAs(x.var) &&
                    (structuralEqual(p.extent, d.shape()[i]) ||
                     constDiff(p.extent, d.shape()[i]) == std::optional<int64_t>(0)));
      if (!whole)
        inRange = andOf(inRange, logicalAnd(ge(v, intImm(0)), lt(v, p.extent)));
      solved[p.var] = v;
    }
    for (const IterVar &iv : domain)
      if (!solved.count(iv.var)) {
        IterVar r = iv;
        r.kind = IterKind::Reduce;
        axes.push_back(r);
      }
    Expr term =
        guarded(guard.defined() ? substitute(guard, solved) : Expr(), substitute(value, solved));
    if (inRange.defined())
      term = select(simplify(inRange), term, constant(term.dtype(), 0.0));
    bool reduces = std::any_of(axes.begin(), axes.end(),
                               [](const IterVar &iv) { return iv.kind == IterKind::Reduce; });
    bool covers = std::none_of(pivot.begin(), pivot.end(), [](const VarNode *p) { return !p; });
    bool first = covers && !initialized_.count(d.get());
    if (!first)
      ensureInitialized(d);
    initialized_.insert(d.get());
    Expr old = BufferLoad::make(d, store);
    Stmt init;
    Stmt body;
    if (reduces) {
      if (first)
        init = BufferStore::make(d, constant(d.dtype(), 0.0), store);
      body = BufferStore::make(d, old + term, store);
    } else {
      body = BufferStore::make(d, first ? term : old + term, store);
    }
    emit(Block::make(blockName(name), axes, Expr(), init, body));
    return true;
  }

  /// The accumulation form: the reading block's axes, all spatial, each instance adding to the
  /// element it read (under `if` where the read was guarded).
  void scatter(const std::string &name, const Buffer &d, const std::vector<Expr> &indices,
               const Expr &value, const Expr &guard, const std::vector<IterVar> &domain) {
    ensureInitialized(d);
    std::vector<IterVar> axes;
    for (IterVar iv : domain) {
      iv.kind = IterKind::Spatial;
      axes.push_back(iv);
    }
    Stmt store = BufferStore::make(d, BufferLoad::make(d, indices) + value, indices);
    if (guard.defined())
      store = IfThenElse::make(guard, store);
    emit(Block::make(blockName(name), axes, Expr(), Stmt(), store));
  }

  // -------------------------------------------------------------------------------------------
  // One block in reverse
  // -------------------------------------------------------------------------------------------

  /// The spatial axes of a block.
  static std::vector<IterVar> spatialAxes(const BlockInfo &b) {
    std::vector<IterVar> out;
    for (const IterVar &iv : b.axes)
      if (iv.kind == IterKind::Spatial)
        out.push_back(iv);
    return out;
  }

  static std::vector<Expr> spatialIndices(const BlockInfo &b) {
    std::vector<Expr> out;
    for (const IterVar &iv : spatialAxes(b))
      out.push_back(VarRef::make(iv.var));
    return out;
  }

  /// The linear number of a block's reduction step (row-major over its reduce axes).
  static Expr stepNumber(const BlockInfo &b) {
    Expr n = intImm(0);
    for (const IterVar &iv : b.axes)
      if (iv.kind == IterKind::Reduce)
        n = n * iv.extent + VarRef::make(iv.var);
    return simplify(n);
  }

  /// A block (before the reverse pass) that records, per spatial point of a max/min reduction,
  /// the first step whose operand equals the result (-1: the initial value's), in `arg`.
  Buffer argBlock(const BlockInfo &b, const Store &s) {
    std::vector<IterVar> spatial = spatialAxes(b);
    std::vector<Expr> shape, at;
    for (const IterVar &iv : spatial) {
      shape.push_back(iv.extent);
      at.push_back(VarRef::make(iv.var));
    }
    Buffer arg(s.buffer.name() + "_arg", DType::i64(), shape, BufferRole::Alloc, MemScope::Global,
               {}, s.loc);
    allocs_.push_back(arg);
    Expr cur = BufferLoad::make(arg, at);
    Expr hit = logicalAnd(lt(cur, intImm(0)), eq(s.value, BufferLoad::make(s.buffer, s.indices)));
    Expr next = select(hit, stepNumber(b), cur);
    if (s.guard.defined())
      next = select(s.guard, next, cur);
    pre_.push_back(Block::make(blockName(b.name + "_arg"), b.axes, Expr(),
                               BufferStore::make(arg, intImm(-1), at),
                               BufferStore::make(arg, next, at)));
    return arg;
  }

  void reverseBlock(size_t k) {
    const BlockInfo &b = blocks_[k];
    std::vector<std::pair<size_t, std::vector<Contribution>>> self; // in-place updates
    for (size_t si = 0; si < b.stores.size(); ++si) {
      const Store &s = b.stores[si];
      if (!isActive(s.buffer))
        continue;
      Expr seed = seedOf(s.buffer, s.indices);
      std::vector<IterVar> domain = s.init ? spatialAxes(b) : b.axes;
      Backprop one;
      if (s.kind == StoreKind::Max || s.kind == StoreKind::Min) {
        Expr arg = BufferLoad::make(args_.at({k, si}), spatialIndices(b));
        one.run(s.value, seed, andOf(s.guard, eq(arg, stepNumber(b))));
      } else if (s.init && maxInit_.count({k, si})) {
        Expr arg = BufferLoad::make(maxInit_.at({k, si}), spatialIndices(b));
        one.run(s.value, seed, andOf(s.guard, lt(arg, intImm(0))));
      } else {
        one.run(s.value, seed, s.guard);
      }
      // Reads of the buffer the store writes: in a plain store, the value before it (at the same
      // indices only); kept apart, they replace the adjoint after the other contributions.
      std::vector<Contribution> own, others;
      for (Contribution &c : one.out) {
        if (!c.buffer.sameAs(s.buffer)) {
          others.push_back(c);
          continue;
        }
        if (!sameIndices(c.indices, s.indices))
          fail(s.loc, "grad cannot derive block '" + b.name + "': it reads '" + s.buffer.name() +
                          "' at other indices than it writes (a recurrence)");
        own.push_back(c);
      }
      for (Contribution &c : others) {
        if (!isActive(c.buffer))
          continue;
        checkReads(k, c);
        contributions_.push_back({c, domain});
      }
      self.push_back({si, own});
    }
    flushContributions(b);
    // Where a later version of a buffer begins, its adjoint restarts.
    for (auto &[si, own] : self) {
      const Store &s = b.stores[si];
      std::vector<size_t> w = writers(s.buffer);
      bool earlier = std::any_of(w.begin(), w.end(), [&](size_t j) { return j < k; });
      if (!earlier)
        continue;
      Buffer d = writableAdjointOf(s.buffer);
      std::vector<IterVar> domain = spatialAxes(b);
      Expr next;
      if (s.kind == StoreKind::Sum && !hasInit(b))
        continue; // the earlier value is the sum's start: its adjoint is the sum's
      if (s.kind == StoreKind::Plain && !s.init) {
        next = constant(d.dtype(), 0.0);
        for (const Contribution &c : own) {
          checkReads(k, c);
          next = next + guarded(c.guard, c.value);
        }
      } else if ((s.kind == StoreKind::Max || s.kind == StoreKind::Min) && !hasInit(b)) {
        Expr arg = BufferLoad::make(args_.at({k, si}), spatialIndices(b));
        next = select(lt(arg, intImm(0)), BufferLoad::make(d, s.indices), constant(d.dtype(), 0.0));
      } else if (s.init || s.kind == StoreKind::Plain) {
        next = constant(d.dtype(), 0.0);
      } else {
        continue; // reset by the init's store
      }
      ensureInitialized(d);
      Stmt st = BufferStore::make(d, simplify(next), s.indices);
      if (s.guard.defined())
        st = IfThenElse::make(s.guard, st);
      emit(Block::make(blockName(d.name() + "_reset"), domain, Expr(), Stmt(), st));
    }
  }

  static bool hasInit(const BlockInfo &b) {
    return std::any_of(b.stores.begin(), b.stores.end(), [](const Store &s) { return s.init; });
  }

  /// A contribution of block k may read only values no block at or after k overwrites (their
  /// final versions are what the adjoint has).
  void checkReads(size_t k, const Contribution &c) {
    std::vector<Buffer> read = loadedBuffers(c.value);
    if (c.guard.defined())
      for (const Buffer &r : loadedBuffers(c.guard))
        read.push_back(r);
    for (const Expr &i : c.indices)
      for (const Buffer &r : loadedBuffers(i))
        read.push_back(r);
    for (const Buffer &r : read) {
      if (adjointBuffer(r) || isArg(r))
        continue;
      for (size_t j : writers(r))
        if (j >= k)
          fail(blocks_[k].loc,
               "grad cannot derive block '" + blocks_[k].name +
                   "': its derivative "
                   "reads '" +
                   r.name() + "', which " +
                   (j == k ? "the block itself" : "block '" + blocks_[j].name + "'") +
                   " then overwrites");
      read_.insert(r.get());
    }
  }

  bool adjointBuffer(const Buffer &b) const {
    for (const auto &[x, d] : adjoints_)
      if (d.sameAs(b))
        return true;
    return std::any_of(cotangentInputs_.begin(), cotangentInputs_.end(),
                       [&](const Buffer &c) { return c.sameAs(b); });
  }
  bool isArg(const Buffer &b) const {
    for (const auto &[k, a] : args_)
      if (a.sameAs(b))
        return true;
    for (const auto &[k, a] : maxInit_)
      if (a.sameAs(b))
        return true;
    return false;
  }

  /// Emits the contributions gathered for one block: those to the same buffer at the same
  /// indices over the same domain summed into one block.
  void flushContributions(const BlockInfo &b) {
    std::vector<bool> done(contributions_.size(), false);
    for (size_t i = 0; i < contributions_.size(); ++i) {
      if (done[i])
        continue;
      const auto &[c, domain] = contributions_[i];
      Expr value = c.value;
      Expr guard = c.guard;
      for (size_t j = i + 1; j < contributions_.size(); ++j) {
        const auto &[c2, domain2] = contributions_[j];
        if (done[j] || !c2.buffer.sameAs(c.buffer) || !sameIndices(c2.indices, c.indices) ||
            domain2.size() != domain.size())
          continue;
        if (j != i && value.sameAs(c.value))
          value = guarded(c.guard, c.value); // each term under its own guard once there are two
        value = value + guarded(c2.guard, c2.value);
        guard = orOf(guard, c2.guard);
        done[j] = true;
      }
      // The guard stays (as `if` or select) so that an index read only under it is used only
      // there; summed terms each keep their own.
      emitContribution("d_" + c.buffer.name() + "_" + b.name, c.buffer, c.indices, value, guard,
                       domain);
    }
    contributions_.clear();
  }

  // -------------------------------------------------------------------------------------------
  // The whole adjoint
  // -------------------------------------------------------------------------------------------

  std::optional<Adjoint> derive(const std::string &name) {
    if (!f_.constVars.empty())
      fail(f_.loc, "grad derives instances of generic funcs; '" + f_.name + "' has constants");
    std::vector<const For *> loops;
    readBlocks(f_.body, loops);
    for (const BlockInfo &b : blocks_)
      blockNames_.insert(b.name);
    findActive();
    for (size_t k = 0; k < wrt_.size(); ++k) {
      const Buffer &x = f_.inputs[wrt_[k]].buffer;
      gradOutputs_.push_back(Buffer("grad_" + x.name(), x.dtype(), x.shape(), BufferRole::Output,
                                    MemScope::Global, {}, x->loc));
    }
    for (size_t o : cotangents_) {
      const Buffer &y = f_.outputs[o];
      cotangentInputs_.push_back(Buffer("d_" + y.name(), adjointType(y.dtype()), y.shape(),
                                        BufferRole::Input, MemScope::Global, {}, y->loc));
    }
    // Max and min reductions: the step each spatial point's gradient goes to.
    for (size_t k = 0; k < blocks_.size(); ++k)
      for (const Store &s : blocks_[k].stores)
        if ((s.kind == StoreKind::Max || s.kind == StoreKind::Min) && isActive(s.buffer)) {
          for (size_t j : writers(s.buffer))
            if (j > k)
              fail(blocks_[k].loc, "grad cannot derive block '" + blocks_[k].name + "': block '" +
                                       blocks_[j].name + "' overwrites the result '" +
                                       s.buffer.name() + "' its gradient selects by");
          Contribution reads{s.buffer, {}, s.value, s.guard};
          checkReads(k, reads);
          Buffer arg = argBlock(blocks_[k], s);
          size_t si = &s - blocks_[k].stores.data();
          args_[{k, si}] = arg;
          read_.insert(s.buffer.get());
          for (size_t i = 0; i < blocks_[k].stores.size(); ++i)
            if (blocks_[k].stores[i].init && blocks_[k].stores[i].buffer.sameAs(s.buffer))
              maxInit_[{k, i}] = arg;
        }
    // The gradients of the wrt inputs exist even where nothing reaches them (zero).
    for (size_t k = 0; k < wrt_.size(); ++k)
      adjoints_[f_.inputs[wrt_[k]].buffer.get()] = gradOutputs_[k];
    for (size_t k = blocks_.size(); k-- > 0;)
      reverseBlock(k);
    for (const Buffer &g : gradOutputs_)
      ensureInitialized(g);
    // Intermediates the adjoint reads, recomputed (with what their writers read).
    std::set<const StmtNode *> recompute;
    auto writesRead = [&](const BlockInfo &b) {
      return std::any_of(b.stores.begin(), b.stores.end(), [&](const Store &s) {
        return isAlloc(s.buffer) && read_.count(s.buffer.get());
      });
    };
    for (bool grew = true; grew;) {
      grew = false;
      for (const BlockInfo &b : blocks_) {
        if (recompute.count(b.stmt.get()) || !writesRead(b))
          continue;
        recompute.insert(b.stmt.get());
        grew = true;
        for (const Store &t : b.stores) {
          std::vector<Buffer> reads = loadedBuffers(t.value);
          for (const Expr &i : t.indices)
            for (const Buffer &r : loadedBuffers(i))
              reads.push_back(r);
          if (t.guard.defined())
            for (const Buffer &r : loadedBuffers(t.guard))
              reads.push_back(r);
          for (const Buffer &r : reads)
            read_.insert(r.get());
        }
      }
    }
    std::vector<Stmt> forward;
    std::vector<Buffer> forwardAllocs;
    for (size_t k = 0; k < blocks_.size(); ++k) {
      const BlockInfo &b = blocks_[k];
      if (!recompute.count(b.stmt.get()))
        continue;
      for (const Store &s : b.stores) {
        if (isOutput(s.buffer))
          fail(b.loc, "grad cannot derive block '" + b.name + "': the adjoint recomputes it for '" +
                          "an intermediate, and it also writes output '" + s.buffer.name() + "'");
        if (std::none_of(forwardAllocs.begin(), forwardAllocs.end(),
                         [&](const Buffer &a) { return a.sameAs(s.buffer); }))
          forwardAllocs.push_back(s.buffer);
      }
      // An output it reads must hold the version it read: written by no later block.
      for (const Store &s : b.stores)
        for (const Buffer &r : loadedBuffers(s.value))
          if (isOutput(r))
            for (size_t j : writers(r))
              if (j > k)
                fail(b.loc, "grad cannot derive block '" + b.name + "': it reads output '" +
                                r.name() + "', which block '" + blocks_[j].name +
                                "' then overwrites");
      forward.push_back(b.stmt);
    }
    // The signature and the body.
    Adjoint out;
    out.wrt = wrt_;
    out.cotangents = cotangents_;
    std::vector<FuncParam> inputs = f_.inputs;
    for (size_t o = 0; o < f_.outputs.size(); ++o)
      if (read_.count(f_.outputs[o].get())) {
        out.outputsRead.push_back(o);
        inputs.push_back(FuncParam::tensor(f_.outputs[o]));
      }
    for (const Buffer &c : cotangentInputs_)
      inputs.push_back(FuncParam::tensor(c));
    std::vector<Stmt> body = forward;
    body.insert(body.end(), pre_.begin(), pre_.end());
    for (const auto &[from, to] : copies_)
      body.push_back(fill(to.name() + "_init", to, [&, from = from](const std::vector<Expr> &i) {
        return BufferLoad::make(from, i);
      }));
    body.insert(body.end(), body_.begin(), body_.end());
    std::vector<Buffer> allocs = forwardAllocs;
    allocs.insert(allocs.end(), allocs_.begin(), allocs_.end());
    // A deep copy: the adjoint shares no Var or Buffer with f. The outputs f reads become inputs.
    DeepCopier copier;
    for (const Var &v : f_.shapeVars)
      copier.vars[v.get()] = VarRef::make(Var(v.name(), v.dtype(), v->loc));
    std::vector<FuncParam> newInputs;
    for (const FuncParam &p : inputs) {
      if (!p.isTensor()) {
        Var v(p.scalar.name(), p.scalar.dtype(), p.scalar->loc);
        copier.vars[p.scalar.get()] = VarRef::make(v);
        newInputs.push_back(FuncParam::scalarVar(v));
        continue;
      }
      std::vector<Expr> shape;
      for (const Expr &d : p.buffer.shape())
        shape.push_back(copier.mutate(d));
      Buffer b(p.buffer.name(), p.buffer.dtype(), shape, BufferRole::Input, MemScope::Global, {},
               p.buffer->loc);
      copier.buffers[p.buffer.get()] = b;
      newInputs.push_back(FuncParam::tensor(b));
    }
    std::vector<Buffer> newOutputs, newAllocs;
    for (const Buffer &g : gradOutputs_)
      newOutputs.push_back(copier.mutateBuffer(g));
    for (const Buffer &a : allocs)
      newAllocs.push_back(copier.mutateBuffer(a));
    std::vector<Stmt> newBody;
    for (const Stmt &s : body)
      newBody.push_back(copier.mutate(explicitForm(s)));
    std::vector<Var> shapeVars;
    for (const Var &v : f_.shapeVars)
      shapeVars.push_back(copier.vars[v.get()].as<VarRef>()->var);
    out.func =
        PrimFunc::make(name, {}, newInputs, newOutputs, shapeVars, newAllocs, seq(newBody), f_.loc);
    return out;
  }

  const PrimFunc &f_;
  std::vector<size_t> wrt_, cotangents_;
  std::vector<BlockInfo> blocks_;
  std::set<const BufferNode *> active_;
  std::vector<Buffer> gradOutputs_, cotangentInputs_;
  std::map<const BufferNode *, Buffer> adjoints_;
  std::set<const BufferNode *> initialized_;
  std::vector<std::pair<Buffer, Buffer>> copies_; ///< cotangent input → the adjoint it starts
  std::vector<Buffer> allocs_;
  std::vector<Stmt> pre_, body_;
  std::set<std::string> blockNames_;
  using StoreId = std::pair<size_t, size_t>; ///< (block, store)
  std::map<StoreId, Buffer> args_;           ///< a max/min store → its step record
  std::map<StoreId, Buffer> maxInit_;        ///< the init of a max/min reduction → the same
  std::set<const BufferNode *> read_;        ///< primal buffers the adjoint reads
  std::vector<std::pair<Contribution, std::vector<IterVar>>> contributions_;
};

} // namespace

std::optional<Adjoint> deriveAdjoint(const PrimFunc &f, const std::string &name,
                                     const std::vector<size_t> &wrt,
                                     const std::vector<size_t> &cotangents, GradError &error) {
  return Deriver(f, wrt, cotangents).run(name, error);
}

} // namespace tdsl::grad

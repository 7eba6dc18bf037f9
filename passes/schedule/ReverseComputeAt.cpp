//===- passes/schedule/ReverseComputeAt.cpp ---------------------------------------------------===//
//
// reverse_compute_at(block, loop): move a consumer under a loop of its
// producers, computing what they have just produced (TVM's tir.Schedule.reverse_compute_at).

#include "passes/schedule/Primitives.h"

#include "ir/Arith.h"
#include "ir/IRPrinter.h"
#include "passes/schedule/Regions.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <unordered_map>

namespace tdsl::schedule {

using namespace ir;

namespace {

/// A lower bound of `e` that interval arithmetic can compare: each term `k * (X / c)` (c > 0 a
/// constant, k a multiple of it) of the sum `e` becomes `(k / c) * (X - (c - 1))` where it adds
/// and `(k / c) * X` where it subtracts (c * (X / c) lies in [X - c + 1, X]): what makes
/// `4 * ((B + 3) / 4) >= B`, the extent a split's outer loop covers, provable.
Expr lowerBound(const Expr &e, bool negated = false) {
  if (const auto *add = e.as<Add>())
    return lowerBound(add->a, negated) + lowerBound(add->b, negated);
  if (const auto *sub = e.as<Sub>())
    return lowerBound(sub->a, negated) - lowerBound(sub->b, !negated);
  if (const auto *mul = e.as<Mul>()) {
    std::optional<int64_t> k = asConstInt(mul->b);
    const Expr *other = &mul->a;
    if (!k) {
      k = asConstInt(mul->a);
      other = &mul->b;
    }
    const auto *div = other->as<Div>();
    std::optional<int64_t> c = div ? asConstInt(div->b) : std::nullopt;
    if (k && c && *k > 0 && *c > 0 && *k % *c == 0)
      return intImm(*k / *c) * (negated ? div->a : div->a - intImm(*c - 1));
  }
  return e;
}

/// Whether the iterations of the loops `nest` (outermost first, `loop` last) together cover
/// every value of each spatial axis of `block` when, in one iteration, axis k takes
/// `domains[k]`. The proof handles the usual forms: each bound affine in the loop variables with
/// the same coefficients on both sides, each loop variable in the bounds of one axis at most,
/// loops whose range uses no other loop; the steps of an axis, smallest coefficient first, must
/// not leave gaps, and the hull must reach 0 and extent - 1. Returns the first axis it cannot
/// prove covered, or nullopt.
std::optional<size_t> uncoveredAxis(const Block *block, const std::vector<Interval> &domains,
                                    const std::vector<const For *> &nest) {
  std::unordered_set<const VarNode *> loopVars, claimed;
  for (const For *f : nest)
    loopVars.insert(f->loopVar.get());
  auto usesLoop = [&](const Expr &e) {
    return std::any_of(nest.begin(), nest.end(), [&](const For *f) { return uses(e, f->loopVar); });
  };
  for (size_t k = 0; k < block->iterVars.size(); ++k) {
    const IterVar &iv = block->iterVars[k];
    if (iv.kind != IterKind::Spatial)
      continue;
    const Interval &d = domains[k];
    std::optional<AffineForm> lo = affineForm(d.min), hi = affineForm(d.max);
    if (!d.bounded() || !lo || !hi)
      return k;
    // The part of the bounds free of loop variables: `first` (the lower bound where every loop
    // is at the end that gives the smallest value) and `width`; the loop terms, sorted by step.
    Expr first = intImm(lo->constant), width = canonical(d.max - d.min + 1);
    if (usesLoop(width))
      return k;
    std::vector<std::pair<int64_t, const For *>> steps;
    for (const auto &[v, c] : lo->terms) {
      if (!loopVars.count(v.get())) {
        first = first + VarRef::make(v) * intImm(c);
        continue;
      }
      if (hi->coeff(v) != c || !claimed.insert(v.get()).second)
        return k;
      const For *f =
          *std::find_if(nest.begin(), nest.end(), [&](const For *g) { return g->loopVar == v; });
      if (usesLoop(f->min) || usesLoop(f->extent))
        return k;
      steps.emplace_back(c, f);
    }
    std::sort(steps.begin(), steps.end(), [](const auto &a, const auto &b) {
      return std::llabs(a.first) < std::llabs(b.first);
    });
    for (const auto &[c, f] : steps) {
      Expr step = intImm(std::llabs(c)), last = f->min + f->extent - 1;
      // A loop of one iteration only shifts the values (a split by 1): no step to fit.
      if (isConstInt(f->extent, 1)) {
        first = first + intImm(c) * f->min;
        continue;
      }
      if (!proveLE(step, lowerBound(width), {}))
        return k;
      first = first + intImm(c) * (c > 0 ? f->min : last);
      width = canonical(width + step * (f->extent - 1));
    }
    if (!proveLE(intImm(0), lowerBound(canonical(-first)), {}) ||
        !proveLE(canonical(iv.extent - 1), lowerBound(canonical(first + width - 1)), {}))
      return k;
  }
  return std::nullopt;
}

/// The exact form of uncoveredAxis's question for small constant nests (a loop made by `fuse`
/// binds `f / 16` and `f % 16`, which the proof does not handle): every point of the loops of
/// `nest` is run, and the boxes of spatial-axis values it computes must cover every point of the
/// block's spatial domain. nullopt when the nest is not constant or too large; otherwise whether
/// it covers.
std::optional<bool> coveredByEnumeration(const Block *block, const std::vector<Interval> &domains,
                                         const std::vector<const For *> &nest) {
  constexpr int64_t kMaxPoints = 1 << 16, kMaxElements = 1 << 22, kMaxMarks = 1 << 24;
  std::vector<size_t> axes;
  std::vector<int64_t> extent;
  int64_t elements = 1;
  for (size_t k = 0; k < block->iterVars.size(); ++k) {
    if (block->iterVars[k].kind != IterKind::Spatial)
      continue;
    std::optional<int64_t> e = asConstInt(block->iterVars[k].extent);
    if (!e || *e < 0 || __builtin_mul_overflow(elements, *e, &elements) ||
        elements > kMaxElements || !domains[k].bounded())
      return std::nullopt;
    axes.push_back(k);
    extent.push_back(*e);
  }
  std::vector<bool> covered(static_cast<size_t>(elements), false);
  std::unordered_map<const VarNode *, int64_t> env;
  auto lookup = [&](const Var &v) -> std::optional<int64_t> {
    auto it = env.find(v.get());
    return it == env.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  int64_t points = 0, marks = 0;
  std::function<bool(size_t)> run = [&](size_t depth) -> bool {
    if (depth < nest.size()) {
      std::optional<int64_t> lo = evaluateInt(nest[depth]->min, lookup),
                             n = evaluateInt(nest[depth]->extent, lookup);
      if (!lo || !n)
        return false;
      for (int64_t i = *lo; i < *lo + *n; ++i) {
        env[nest[depth]->loopVar.get()] = i;
        if (!run(depth + 1))
          return false;
      }
      return true;
    }
    if (++points > kMaxPoints)
      return false;
    std::vector<int64_t> from, to;
    for (size_t a = 0; a < axes.size(); ++a) {
      std::optional<int64_t> lo = evaluateInt(domains[axes[a]].min, lookup),
                             hi = evaluateInt(domains[axes[a]].max, lookup);
      if (!lo || !hi)
        return false;
      from.push_back(std::max<int64_t>(*lo, 0));
      to.push_back(std::min<int64_t>(*hi, extent[a] - 1));
      if (from.back() > to.back())
        return true; // nothing computed in this iteration
    }
    std::vector<int64_t> at = from;
    for (;;) {
      int64_t flat = 0;
      for (size_t a = 0; a < axes.size(); ++a)
        flat = flat * extent[a] + at[a];
      covered[static_cast<size_t>(flat)] = true;
      if (++marks > kMaxMarks)
        return false;
      size_t a = axes.size();
      while (a-- > 0 && ++at[a] > to[a])
        at[a] = from[a];
      if (a == size_t(-1))
        return true;
    }
  };
  if (!run(0))
    return std::nullopt;
  return std::all_of(covered.begin(), covered.end(), [](bool c) { return c; });
}

} // namespace

/// reverse_compute_at(C, j0) — before (spec §1 after split and reorder):
///   for i in 0..128 { for j_0 in 0..32 { for k in 0..128 { for j_1 in 0..4 {
///     block Y(vi = i, vj = j_0 * 4 + j_1, vk = k) { … Y[vi, vj] = Y[vi, vj] + … } } } } }
///   for i in 0..128 { for j in 0..128 {
///     block C(vi = i, vj = j) { C[vi, vj] = max(Y[vi, vj], 0.0); } } }
/// after: C computes, in each iteration of j_0, what Y has produced there (Y[i, j_0*4 .. +3]):
///   for i in 0..128 { for j_0 in 0..32 {
///     for k in 0..128 { for j_1 in 0..4 { block Y(…) { … } } }
///     for ax0 in 0..4 { block C(vi = i, vj = j_0 * 4 + ax0) { C[vi, vj] = max(Y[vi, vj], 0.0); } }
///     } }
/// An axis whose region has one element gets no loop (unless "preserve_unit_loops"); a `where`
/// keeps each axis in its domain
/// when the region can overshoot it.
///
/// Preconditions: the block is complete (spatial axes only, does not read what it writes) and
/// the only writer of its buffers; every block that writes what it reads is under `loop` (at
/// least one is), before it in program order, finishes its reduction inside one iteration of
/// `loop` and has no `where` on its axes other than their bounds; in one iteration the block reads
/// only elements produced in that iteration; no block it moves past touches what it writes.
void reverseComputeAt(ScheduleState &s, const std::string &name, const Var &loopVar,
                      bool preserveUnitLoops) {
  const Func before = s.func();
  // Step 1: check. A reduction block moves whole: init and every reduction step of its
  // spatial points.
  MovedBlock m = checkMovedBlock(s, "reverse_compute_at", name, loopVar);
  const auto &[block, loop, b, l, blockNote, reduction, read, written] = m;
  checkOnlyWriter(s, block, written);

  std::vector<const Block *> producers;
  std::unordered_set<Buffer> produced;
  for (const Block *other : s.blocks()) {
    std::unordered_set<Buffer> feeds = common(buffersWritten(Stmt(other)), read);
    if (isWithin(s, other, block) || feeds.empty())
      continue;
    if (!isWithin(s, other, loop))
      throw ScheduleError("block " + quoted(other->name) + " writes " + bufferNames(feeds) +
                              ", which block " + b + " reads, but is not under loop " + l +
                              "; every producer must be",
                          other->loc, "producer " + quoted(other->name) + " is here");
    producers.push_back(other);
    produced.insert(feeds.begin(), feeds.end());
  }
  if (producers.empty())
    throw ScheduleError("block " + b + " has no producer under loop " + l +
                            ": no block there writes " +
                            (read.empty() ? std::string("what it reads") : bufferNames(read)),
                        loopVar->loc, "loop " + l + " declared here");

  std::vector<const Block *> all = s.blocks(), under = blocksIn(Stmt(loop));
  size_t at = programIndex(s, block), lastUnder = programIndex(s, under.back());
  if (at < lastUnder)
    throw ScheduleError("block " + b + " comes before loop " + l +
                            "; a consumer must come after its producers",
                        block->loc, blockNote);

  std::vector<const For *> fixed = s.loopsAbove(loop);
  fixed.push_back(loop);
  for (const Block *p : producers) {
    for (const IterVar &iv : p->iterVars)
      for (const For *f : fixed)
        if (iv.kind == IterKind::Reduce && iv.binding.defined() && uses(iv.binding, f->loopVar))
          throw ScheduleError("loop '" + f->loopVar.name() + "' is bound to reduce axis " +
                                  quoted(iv.var.name()) + " of block " + quoted(p->name) +
                                  ", so one iteration of loop " + l +
                                  " does not finish that reduction",
                              p->loc, "producer " + quoted(p->name) + " is here");
    // A condition on its axes other than their bounds makes the region unknown. One that uses
    // neither its axes nor a loop (`K > 0`, decompose_reduction's guard of an empty
    // reduction) holds in every iteration or in none: where it fails, the producer writes
    // nothing anywhere, so where the block reads changes nothing.
    std::vector<Expr> conditions =
        predicateInAxes(s, p, "the region it produces under loop " + l + " is unknown");
    bool onAxes = std::any_of(conditions.begin(), conditions.end(), [&](const Expr &c) {
      return std::any_of(p->iterVars.begin(), p->iterVars.end(),
                         [&](const IterVar &iv) { return uses(c, iv.var); });
    });
    if (onAxes)
      throw ScheduleError("block " + quoted(p->name) +
                              " has a 'where' condition other than bounds of its axes, so the "
                              "region it produces under loop " +
                              l + " is unknown",
                          p->loc, "producer " + quoted(p->name) + " is here");
  }

  // The blocks the move puts `block` before: every block under the loop after the producers
  // (other iterations run after it) and those between the loop and it.
  for (size_t i = programIndex(s, under.front()); i < at; ++i) {
    const Block *other = all[i];
    if (std::find(producers.begin(), producers.end(), other) != producers.end())
      continue;
    std::unordered_set<Buffer> clash = common(buffersWritten(Stmt(other)), written);
    for (const Buffer &buf : common(buffersRead(Stmt(other)), written))
      clash.insert(buf);
    if (!clash.empty())
      m.refusePast(other, clash, "uses", "writes", "what it sees");
  }
  std::vector<Expr> extra = predicateInAxes(s, block, "it cannot move under loop " + l);

  // Step 2: the region the producers write in one iteration of `loop`, then the axis domains
  // that read it.
  // A reduce axis keeps its whole domain: the block's whole reduction (init included) then
  // runs in one iteration, so running it again elsewhere recomputes the same values.
  std::unordered_map<Buffer, std::vector<Interval>> region =
      regionInOneIteration(s, loop, producers, produced, true);
  std::vector<Access> accesses = accessesOf(block);
  std::vector<Interval> domains = domainsCovering(block, accesses, region, false);
  Domain axes;
  for (size_t k = 0; k < domains.size(); ++k)
    axes.emplace_back(block->iterVars[k].var, domains[k]);
  // Every element the block then reads must have been produced in the same iteration.
  Domain outer = loopsAroundAndAt(s, loop);
  for (const Access &a : accesses) {
    auto it = region.find(a.buffer);
    if (a.write || it == region.end())
      continue;
    // A read under a guard happens only where the guard holds.
    Domain where = a.guards.empty() ? axes : narrowedByGuards(axes, a.guards);
    for (size_t d = 0; d < a.indices.size() && d < it->second.size(); ++d) {
      Interval need = bound(a.indices[d], where);
      const Interval &have = it->second[d];
      if (proveLE(have.min, need.min, outer) && proveLE(need.max, have.max, outer))
        continue;
      auto show = [](const Interval &r) {
        return r.bounded() ? "[" + toString(r.min) + ", " + toString(r.max) + "]"
                           : std::string("an unknown range");
      };
      throw ScheduleError("block " + b + " reads elements of " + quoted(a.buffer.name()) +
                              " that the blocks under loop " + l +
                              " do not produce in the same iteration (dimension " +
                              std::to_string(d) + ": reads " + show(need) + ", produced " +
                              show(have) + ")",
                          block->loc, blockNote);
    }
  }

  // The iterations of the loops around and at `loop` must together compute every element the
  // block computed before; a consumer that reads the producer at an offset (`O1[i2 - 1]`) would
  // otherwise lose the iterations that read nothing produced there (`i2 = 0`).
  std::optional<size_t> k = uncoveredAxis(block, domains, fixed);
  if (k && coveredByEnumeration(block, domains, fixed) == std::optional<bool>(true))
    k.reset();
  if (k) {
    const Interval &d = domains[*k];
    throw ScheduleError("under loop " + l + ", block " + b + " would not compute every value of" +
                            " its axis " + quoted(block->iterVars[*k].var.name()) + " (0 to " +
                            toString(canonical(block->iterVars[*k].extent - 1)) +
                            "): one iteration computes [" + toString(d.min) + ", " +
                            toString(d.max) + "], and the iterations together do not cover " +
                            "the axis (or that cannot be proven)",
                        block->loc, blockNote);
  }

  // Step 3: rebuild the block under new loops, at the end of the loop's body.
  Stmt nest = makeLoopNest(block, domains, extra, outer, preserveUnitLoops);
  removeAndInsert(s, subtreeOf(s, block), loop, bodyItems(loop).size(), nest);
  requireNoRacingCopies(s, before, name);
}

} // namespace tdsl::schedule

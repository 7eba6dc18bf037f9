//===- passes/schedule/Regions.h --------------------------------------------------------------===//
//
// The analysis shared by compute_at, reverse_compute_at, compute_inline and
// reverse_compute_inline (TVM's block and region analysis, in small): canonical affine forms of
// index expressions, interval bounds over loop domains, the accesses of a block, the `where`
// conditions a block can carry when it moves, and the surgery that moves or removes a block.

#pragma once

#include "ir/Arith.h"
#include "ir/StructuralEqual.h"
#include "passes/schedule/State.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tdsl::schedule {

// ---------------------------------------------------------------------------------------------
// Affine forms and intervals: ir/Arith.h's (canonical forms, constant differences, symbolic
// intervals over loop domains) and ir/StructuralEqual.h's identity comparison.
// ---------------------------------------------------------------------------------------------

using ir::addLoop;
using ir::bound;
using ir::canonical;
using ir::constDiff;
using ir::Domain;
using ir::equalExpr;
using ir::hull;
using ir::Interval;
using ir::proveLE;

// ---------------------------------------------------------------------------------------------
// Accesses
// ---------------------------------------------------------------------------------------------

/// A load or store of a block (`let` names substituted by their values).
struct Access {
  ir::Buffer buffer;
  std::vector<ir::Expr> indices; ///< In terms of the block's iter vars.
  bool write = false;
  /// The conditions under which it runs: of the `select` branches and `if`s around it
  /// (`select(j >= 1, Q[i, j - 1], 0.0)` reads Q where j >= 1).
  std::vector<ir::Expr> guards;
};

/// `dom` narrowed by the conjuncts of `guards` that bound one of its variables by a value the
/// interval arithmetic can compare with its range (`j >= 1` makes [0, N - 1] into [1, N - 1]).
ir::Domain narrowedByGuards(const ir::Domain &dom, const std::vector<ir::Expr> &guards);

/// The loads and stores of `block`'s init and body, not those of blocks nested in it.
std::vector<Access> accessesOf(const ir::Block *block);
/// Buffers read / written anywhere in `s`, nested blocks included.
std::unordered_set<ir::Buffer> buffersRead(const ir::Stmt &s);
std::unordered_set<ir::Buffer> buffersWritten(const ir::Stmt &s);

/// The region of `buffer` that `block` reads (or writes) when the loops of `dom` range and
/// every other loop is fixed: `indices` with the block's bindings substituted, bounded over
/// `dom`. An iter var without a binding ranges over its whole extent. nullopt when `block`
/// has no such access.
std::optional<std::vector<Interval>> accessRegion(const ScheduleState &s, const ir::Block *block,
                                                  const ir::Buffer &buffer, bool write,
                                                  const Domain &dom);

/// The domain of the loops strictly between `outer` (or the root when null) and `node`.
Domain loopsBetween(const ScheduleState &s, const ir::For *outer, const ir::StmtNode *node);
/// The domain of `loop` and every loop around it.
Domain loopsAroundAndAt(const ScheduleState &s, const ir::For *loop);

/// The iter var `e` is, plus an offset free of iter vars: `vj + 1` → (vj, 1). nullopt when `e`
/// is not of that form (or the iter var is not one of `block`'s).
std::optional<std::pair<size_t, ir::Expr>> axisPlusOffset(const ir::Block *block,
                                                          const ir::Expr &e);

/// For an access of `block` at `indices` whose dimensions lie in `region`, the domain each iter
/// var then covers: from an index `axis + offset` or `offset - axis` (offset free of iter vars),
/// or from the two digits `axis / c` and `axis % c` (c a positive constant) in two dimensions.
/// Unset where no index tells.
std::vector<std::optional<Interval>> axisDomains(const ir::Block *block,
                                                 const std::vector<ir::Expr> &indices,
                                                 const std::vector<Interval> &region);

/// The index of the iter var that `e` is exactly, if any.
std::optional<size_t> plainAxis(const ir::Block *block, const ir::Expr &e);

// ---------------------------------------------------------------------------------------------
// `where` conditions
// ---------------------------------------------------------------------------------------------

/// The conjuncts of `block`'s predicate rewritten in terms of its iter vars (a side equal to a
/// binding becomes that iter var), leaving out the bounds the domain implies (`vj < 128` for
/// an axis of extent 128, `vj >= 0`). Throws ScheduleError (its message ending with `why`) when
/// a conjunct still depends on loop variables: it cannot move with the block.
std::vector<ir::Expr> predicateInAxes(const ScheduleState &s, const ir::Block *block,
                                      const std::string &why);

// ---------------------------------------------------------------------------------------------
// Moving blocks
// ---------------------------------------------------------------------------------------------

/// `block` under fresh loops `ax0, ax1, …` over `domains` (one per iter var, in order; a
/// domain of extent 1 gets no loop unless `preserveUnitLoops`), each iter var bound to
/// `min + axK`. The `where` condition
/// is `extra` and, where `outer` (the loops around the new place) cannot prove it, that each
/// iter var stays in [0, extent).
ir::Stmt makeLoopNest(const ir::Block *block, const std::vector<Interval> &domains,
                      const std::vector<ir::Expr> &extra, const Domain &outer,
                      bool preserveUnitLoops);

/// What compute_at and reverse_compute_at know of the block they move once the checks they
/// share pass: the block and the loop exist, the loop is outside the block, and the block is
/// complete (spatial axes, does not read what it writes) or a reduction block with an init.
struct MovedBlock {
  const ir::Block *block = nullptr;
  const ir::For *loop = nullptr;
  std::string blockName, loopName; ///< Quoted, for messages.
  std::string note;                ///< "block 'B' is here"
  bool reduction = false;
  std::unordered_set<ir::Buffer> read, written;

  /// Refuses the move past `other`, which `otherUses` ("writes") the buffers `clash` that the
  /// moved block `blockUses` ("uses"): the move would change `what` ("what it computes").
  [[noreturn]] void refusePast(const ir::Block *other, const std::unordered_set<ir::Buffer> &clash,
                               const char *otherUses, const char *blockUses,
                               const char *what) const;
};
MovedBlock checkMovedBlock(ScheduleState &s, const std::string &primitive, const std::string &name,
                           const ir::Var &loopVar);

/// The hull of the regions of `buffers` that `blocks` write (`write`) or read in one iteration
/// of `loop`: the loops above and at `loop` fixed, those inside it ranging.
std::unordered_map<ir::Buffer, std::vector<Interval>>
regionInOneIteration(const ScheduleState &s, const ir::For *loop,
                     const std::vector<const ir::Block *> &blocks,
                     const std::unordered_set<ir::Buffer> &buffers, bool write);

/// The domain of each of `block`'s iter vars that covers `region` through the block's
/// `accesses` that write it (`write`) or read it, hulled over them. A reduce axis, and an axis
/// no access bounds, keeps its whole domain [0, extent).
std::vector<Interval>
domainsCovering(const ir::Block *block, const std::vector<Access> &accesses,
                const std::unordered_map<ir::Buffer, std::vector<Interval>> &region, bool write);

/// The statement `block` stands in, with the loops around it that hold nothing else: what
/// disappears when the block moves away.
const ir::StmtNode *subtreeOf(const ScheduleState &s, const ir::Block *block);

/// The subtrees of `loop`'s body: the statements of its SeqStmt, or the body itself.
std::vector<ir::Stmt> bodyItems(const ir::For *loop);

/// Replaces the function body: `remove` (a statement, see subtreeOf) disappears, and when
/// `loop` is given, `insert` becomes item `position` of its body.
void removeAndInsert(ScheduleState &s, const ir::StmtNode *remove, const ir::For *loop,
                     size_t position, const ir::Stmt &insert);

/// The block's body when it is one store `BUF[…] = value;`, else nullptr.
const ir::BufferStore *singleStore(const ir::Block *block);

/// The block's first reduce axis, or nullptr when it has none.
const ir::IterVar *firstReduceAxis(const ir::Block *block);

/// Appends to `iters` a copy of each spatial axis of `block` (a fresh variable, the same extent
/// and binding), and to `axisMap` the old variable to the new one.
void copySpatialAxes(const ir::Block *block, std::vector<ir::IterVar> &iters,
                     std::vector<std::pair<ir::Var, ir::Expr>> &axisMap);

/// Removes `buffer` from the function's allocations (at the root or in a block), and the
/// regions of blocks that mention it.
void dropAllocation(ScheduleState &s, const ir::Buffer &buffer);

/// The position of `block` in program order.
size_t programIndex(const ScheduleState &s, const ir::Block *block);

// ---------------------------------------------------------------------------------------------
// Checks shared by the primitives
// ---------------------------------------------------------------------------------------------

/// Refuses when `loop` encloses `block` already, or lies inside it.
void checkLoopOutsideBlock(const ScheduleState &s, const ir::Block *block, const ir::For *loop);
/// Refuses when a block other than `block` (and the blocks nested in it) writes one of
/// `buffers`: `block` must be their only producer (TVM's "dominant" block).
void checkOnlyWriter(const ScheduleState &s, const ir::Block *block,
                     const std::unordered_set<ir::Buffer> &buffers);
/// Whether `inner` is `outer` or nested in it.
bool isWithin(const ScheduleState &s, const ir::StmtNode *inner, const ir::StmtNode *outer);
/// The names of `buffers`, sorted, for messages: 'A', 'B'.
std::string bufferNames(const std::unordered_set<ir::Buffer> &buffers);
/// The buffers in both sets.
std::unordered_set<ir::Buffer> common(const std::unordered_set<ir::Buffer> &a,
                                      const std::unordered_set<ir::Buffer> &b);

/// `'name'` quoted for messages.
std::string quoted(const std::string &name);

} // namespace tdsl::schedule

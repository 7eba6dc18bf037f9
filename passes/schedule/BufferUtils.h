//===- passes/schedule/BufferUtils.h ----------------------------------------------------------===//
//
// Helpers shared by the buffer primitives (cache_read, cache_write,
// decompose_reduction, rfactor, set_scope, storage_align, transform_layout): who reads and
// writes a buffer, buffer substitution over a function, inserting a statement next to
// another, and the region of a buffer that a set of accesses touches while some loops run.

#pragma once

#include "passes/schedule/State.h"

#include <optional>
#include <string>
#include <vector>

namespace tdsl::schedule {

// ---------------------------------------------------------------------------------------------
// Accesses
// ---------------------------------------------------------------------------------------------

/// One load or store of a buffer inside a block; `indices` are in the block's axes.
struct BufferAccess {
  std::vector<ir::Expr> indices;
  bool write = false;
};

/// The loads and stores of `buffer` in `block` (init included).
std::vector<BufferAccess> accessesOf(const ir::Block *block, const ir::Buffer &buffer);
bool blockReads(const ir::Block *block, const ir::Buffer &buffer);
bool blockWrites(const ir::Block *block, const ir::Buffer &buffer);
/// The blocks of the function that store to `buffer`, in program order.
std::vector<const ir::Block *> writersOf(const ScheduleState &s, const ir::Buffer &buffer);

/// `e` with each axis of `block` replaced by its binding (so in terms of loop variables).
ir::Expr bindAxes(const ir::Block *block, const ir::Expr &e);

// ---------------------------------------------------------------------------------------------
// Buffers of the function
// ---------------------------------------------------------------------------------------------

/// Refuses unless `buffer` is an `alloc` of the function (not an input or an output).
void requireAlloc(const ScheduleState &s, const ir::Buffer &buffer, const std::string &what);
/// Refuses unless `block` stores to `buffer`.
void requireWrites(const ir::Block *block, const ir::Buffer &buffer);

/// A copy of `buffer`'s description (a new Buffer object: buffers compare by identity).
struct BufferSpec {
  std::string name;
  ir::DType dtype;
  std::vector<ir::Expr> shape;
  ir::BufferRole role;
  ir::MemScope scope;
  std::vector<ir::StorageAlign> align;
  SourceLoc loc;
  explicit BufferSpec(const ir::Buffer &b)
      : name(b.name()), dtype(b.dtype()), shape(b.shape()), role(b.role()), scope(b.scope()),
        align(b->align), loc(b->loc) {}
  ir::Buffer make() const { return ir::Buffer(name, dtype, shape, role, scope, align, loc); }
};

/// Replaces `old` by `replacement` everywhere in the function: signature, allocations, loads,
/// stores and block allocations.
void replaceBuffer(ScheduleState &s, const ir::Buffer &old, const ir::Buffer &replacement);
/// `stmt` with every use of `old` replaced by `replacement`.
ir::Stmt replaceBufferIn(const ir::Stmt &stmt, const ir::Buffer &old,
                         const ir::Buffer &replacement);
/// A new allocation `<buffer>_<scope>` (made unique) of `buffer`'s dtype and shape, the cache
/// that cache_read and cache_write create.
ir::Buffer makeCacheBuffer(const ScheduleState &s, const ir::Buffer &buffer, ir::MemScope scope);
/// Appends `buffer` to the function's root allocations.
void addRootAlloc(ScheduleState &s, const ir::Buffer &buffer);

/// `base`, or `base_1`, `base_2`, … : a block name not used in the function.
std::string freshBlockName(const ScheduleState &s, const std::string &base);
/// `base`, or `base_1`, … : a buffer name not used by the function's buffers.
std::string freshBufferName(const ScheduleState &s, const std::string &base);

// ---------------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------------

/// Inserts `stmt` just before (or after) `anchor`, flattening into the enclosing sequence.
void insertBefore(ScheduleState &s, const ir::StmtNode *anchor, ir::Stmt stmt);
void insertAfter(ScheduleState &s, const ir::StmtNode *anchor, ir::Stmt stmt);

/// Where a stage between `producer` and `consumer` goes (TVM's CacheLocDetector): in the
/// innermost sequence holding both, just before the child holding `consumer`. `anchor` is that
/// child; `outer` are the loops above the sequence and `inner` those between the sequence and
/// `consumer`, outermost first.
struct StagePoint {
  const ir::StmtNode *anchor = nullptr;
  std::vector<const ir::For *> outer, inner;
};
StagePoint stageBetween(const ScheduleState &s, const ir::Block *producer,
                        const ir::Block *consumer);

// ---------------------------------------------------------------------------------------------
// Regions
// ---------------------------------------------------------------------------------------------

/// A box of a buffer: per dimension the start and the extent, over the loops that enclose the
/// place where the region is used. `guards` hold the conditions an index must meet to stay in
/// the buffer when the analysis could not prove it (empty when it could).
struct Region {
  std::vector<ir::Expr> min, extent;
  std::vector<bool> guardLow, guardHigh;
};

/// The variables an expression placed under the loops `outer` may use: those loops, the shape
/// variables and the generic constants.
std::vector<ir::Var> varsInScope(const ScheduleState &s, const std::vector<const ir::For *> &outer);

/// The region that `indices` (each a list of per-dimension indices in loop variables) cover
/// while the loops `relaxed` run over their ranges, clamped to `buffer`'s shape; the result
/// uses only the variables in scope under the loops `outer`. A dimension the analysis cannot bound
/// (a data-dependent index, a non-affine form over a symbolic range, a variable not in scope such
/// as a `let`) covers the whole dimension.
Region relaxRegion(const ScheduleState &s, const ir::Buffer &buffer,
                   const std::vector<std::vector<ir::Expr>> &indices,
                   const std::vector<const ir::For *> &relaxed,
                   const std::vector<const ir::For *> &outer);

/// The range [min, min + extent) of `e` while each variable of `ranges` runs from 0 to its
/// extent (other variables: the function's shape variables and constants), when `e` is affine
/// enough for the analysis; nothing otherwise.
std::optional<ir::Range> rangeOf(const ScheduleState &s, const ir::Expr &e,
                                 const std::vector<std::pair<ir::Var, ir::Expr>> &ranges);

/// The loop nest and block copying `region` of `src` into `dst` (same shape):
///   for ax0 in 0..e0 { … block NAME(v0: spatial S0 = m0 + ax0, …) { dst[v0, …] = src[v0, …]; } }
ir::Stmt copyNest(const std::string &blockName, const ir::Buffer &src, const ir::Buffer &dst,
                  const Region &region, SourceLoc loc);

} // namespace tdsl::schedule

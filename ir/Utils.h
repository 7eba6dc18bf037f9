//===- ir/Utils.h - Small IR utilities shared by every pass -------------------------------===//
//
// Substitution of variables, which variables an expression uses, the callees of a graph, and
// `with…` helpers that rebuild a node with one part changed. Like IRMutator, every helper that
// returns a node returns the very same node when nothing changed (Halide's `with` style), so
// untouched IR stays shared and callers may test for change with sameAs().
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <functional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tdsl::ir {

// ---------------------------------------------------------------------------------------------
// Variables
// ---------------------------------------------------------------------------------------------

/// `e` (or `s`) with every use (VarRef) of a key variable replaced by its expression. The
/// replacements are inserted as they are (not substituted again); defining occurrences (loop
/// variables, iter vars, let variables) are kept. With the vector form, the first pair of a
/// variable counts.
Expr substitute(const Expr &e, const std::unordered_map<Var, Expr> &map);
Stmt substitute(const Stmt &s, const std::unordered_map<Var, Expr> &map);
/// The general form: `replace(var)` returns the replacement, or an undefined Expr to keep it.
Expr substitute(const Expr &e, const std::function<Expr(const Var &)> &replace);
Stmt substitute(const Stmt &s, const std::function<Expr(const Var &)> &replace);

/// Pairs in order (the first pair of a variable counts). A template, so that a braced list
/// `substitute(e, {{v, x}})` picks the map form above instead of being ambiguous.
using VarPairs = std::vector<std::pair<Var, Expr>>;
template <typename Node, typename Pairs, std::enable_if_t<std::is_same_v<Pairs, VarPairs>, int> = 0>
Node substitute(const Node &node, const Pairs &pairs) {
  if (pairs.empty())
    return node;
  return substitute(node, std::function<Expr(const Var &)>([&pairs](const Var &v) {
                      for (const auto &[var, e] : pairs)
                        if (var == v)
                          return e;
                      return Expr();
                    }));
}

/// `e` with the `let` values of `lets` substituted until none is left (a value may refer to
/// earlier lets; lets are acyclic).
Expr substituteLets(const Expr &e, const std::unordered_map<Var, Expr> &lets);

/// Whether `e` (or `s`) refers to `var` (uses only, not definitions).
bool usesVar(const Expr &e, const Var &var);
bool usesVar(const Stmt &s, const Var &var);

/// The variables `e` uses, each once, in order of first use.
std::vector<Var> usedVars(const Expr &e);

/// The operands of a chain of `&&` (conjuncts) or of `||` (disjuncts), left to right; a single
/// condition is one conjunct (disjunct).
std::vector<Expr> conjuncts(const Expr &e);
std::vector<Expr> disjuncts(const Expr &e);

/// The operands `a` and `b` of a binary node (TDSL_FOR_EACH_BINARY_NODE); null for any other.
std::pair<const Expr *, const Expr *> binaryOperands(const Expr &e);

// ---------------------------------------------------------------------------------------------
// Graphs
// ---------------------------------------------------------------------------------------------

/// The callees of the calls of `g` (dataflow blocks included), each once, in order of first
/// call.
std::vector<std::string> graphCallees(const GraphFunc &g);

/// A block of the short form (axes without bindings, spec §5) in the explicit form the checker
/// makes of it (§6): one serial loop per axis from 0, outermost first, each axis bound to its
/// loop (the `where` condition rewritten over the loops). Other statements come back as they are.
Stmt explicitForm(const Stmt &block);

/// The inputs, outputs and shape variables of what a graph calls: a func, an extern, or a graph
/// (whose outputs are its results).
const std::vector<FuncParam> &calleeInputs(const Func &f);
const std::vector<Buffer> &calleeOutputs(const Func &f);
const std::vector<Var> &calleeShapeVars(const Func &f);

// ---------------------------------------------------------------------------------------------
// Rebuilding with one part changed
// ---------------------------------------------------------------------------------------------

/// The loop `op` with another body.
Stmt withBody(const For *op, Stmt body);

/// The block `op` with another body, predicate, iter vars, regions or allocations. Vectors
/// count as unchanged when they hold the same handles.
Stmt withBody(const Block *op, Stmt body);
Stmt withPredicate(const Block *op, Expr predicate);
Stmt withIterVars(const Block *op, std::vector<IterVar> iterVars);
Stmt withInit(const Block *op, Stmt init);
Stmt withRegions(const Block *op, std::vector<BufferRegion> reads,
                 std::vector<BufferRegion> writes);
Stmt withAllocs(const Block *op, std::vector<Buffer> allocBuffers);

/// The PrimFunc `func` with another body or root allocations (an internal error for other
/// kinds of functions).
Func withBody(const Func &func, Stmt body);
Func withAllocs(const Func &func, std::vector<Buffer> allocBuffers);

/// The PrimFunc `func` with `rewrite` applied to its body: what a pass over one function's
/// body runs. `what` is the message of the internal error for other kinds of functions
/// ("unrollLoops takes a PrimFunc").
Func mapBody(const Func &func, const char *what, const std::function<Stmt(const Stmt &)> &rewrite);

/// Whether every run of `s` stores to `buffer`: a store, a sequence with one such item, an `if`
/// whose two branches both do, a `let` whose body does, a loop of constant positive extent whose
/// body does.
bool storesOnEveryPath(const Stmt &s, const Buffer &buffer);

/// The first statement of `s` that may read `buffer` before `s` has stored to it on every path
/// (nullptr when none): `B[i] = B[i] * 2.0 + A[i]`, the update of a reduction without `init`.
/// With `written`, every path has stored to it already.
const StmtNode *readBeforeWrite(const Stmt &s, const Buffer &buffer, bool written = false);

/// The first block of `func` (a PrimFunc) that may read the initial contents of `buffer` (an
/// output): a block that reads it before it stores to it, when no earlier block writes it and its
/// own `init` does not. Nullptr when none. Destination passing gives such an output the caller's
/// bytes; a graph zero-fills them first (spec §8, docs/decisions.md).
const Block *readsInitialContents(const Func &func, const Buffer &buffer);

/// Loops of kind Unrolled with a constant extent up to this are copied out (lower.unroll).
constexpr int64_t kUnrollLimit = 16;

/// The most statements that unrolling may make of a function: the unroll primitive refuses to
/// go beyond, and lower.unroll leaves an Unrolled loop whose copies would go beyond a plain
/// serial loop (so no backend unrolls it either): a 256×256 nest once took minutes and GBs.
constexpr int64_t kMaxUnrolledStatements = 4096;

/// The number of statements `s` becomes once its Unrolled loops of constant extent are copied
/// out (each loop, block, if, let and store counts one; saturates at INT64_MAX).
int64_t unrolledSize(const Stmt &s);

} // namespace tdsl::ir

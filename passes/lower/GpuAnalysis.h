//===- passes/lower/GpuAnalysis.h - Index analysis shared by the GPU lowering steps -------===//
//
// Small helpers of lower.cuda_compact and lower.cuda_syncs: identity-based expression equality,
// thread variables identified by their tag, and affine forms of index expressions.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tdsl::lower {

/// True when `a` and `b` are the same expression, variables compared by identity (unlike
/// ir::structuralEqual, which matches free variables at their first use). `alias` maps a
/// variable to the one it stands for (e.g. every threadIdx.x loop variable to one canonical
/// variable). Conservative: kinds it does not know compare unequal.
bool sameExpr(const ir::Expr &a, const ir::Expr &b,
              const std::unordered_map<ir::Var, ir::Var> &alias = {});

/// `e` as `sum(coef * var) + sum(opaque terms) + constant`: products by constants are
/// distributed, everything else (div, mod, min, products of variables ...) is an opaque term.
struct AffineForm {
  std::vector<std::pair<ir::Var, int64_t>> terms; ///< In order of appearance, merged.
  std::vector<ir::Expr> opaque;
  int64_t constant = 0;
};
std::optional<AffineForm> affineForm(const ir::Expr &e);

/// The variables `e` uses.
std::vector<ir::Var> usedVars(const ir::Expr &e);

/// Interval [lo, hi] of an i64 expression, given intervals of variables; nullopt when unknown.
struct Interval {
  int64_t lo = 0, hi = 0;
};
std::optional<Interval> intervalOf(const ir::Expr &e,
                                   const std::unordered_map<ir::Var, Interval> &vars);

/// True for the tags "threadIdx.*"; false for "blockIdx.*".
bool isThreadIdxTag(const std::string &tag);

} // namespace tdsl::lower

//===- ir/Arith.h - Integer arithmetic: floor division, affine forms, intervals -----------===//
//
// The arithmetic every analysis of the compiler shares (TVM's `arith`, Halide's Bounds, in
// small):
// - floorDiv/floorMod on int64_t with the IR's semantics (ir/IR.h): floor rounding, wrapping
//   instead of undefined behaviour;
// - affine forms `Σ coeff·var + constant` of i64 expressions;
// - canonical forms of i64 index expressions and the constant difference of two of them;
// - symbolic intervals [min, max] bounded over a Domain (variables that range over an
//   interval), their hull, and proofs of `a <= b`.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

namespace tdsl::ir {

// ---------------------------------------------------------------------------------------------
// Floor division
// ---------------------------------------------------------------------------------------------

/// floor(a / b), Python and TVM style: floorDiv(-7, 2) == -4. Requires b != 0.
/// floorDiv(INT64_MIN, -1) wraps to INT64_MIN (two's complement) instead of overflowing.
int64_t floorDiv(int64_t a, int64_t b);

/// a - floorDiv(a, b) * b: the result has the sign of b, floorMod(-7, 2) == 1. Requires b != 0;
/// floorMod(a, -1) == 0 for every a.
int64_t floorMod(int64_t a, int64_t b);

// ---------------------------------------------------------------------------------------------
// Affine forms
// ---------------------------------------------------------------------------------------------

/// An integer expression as `Σ coeff·var + Σ opaque + constant`.
struct AffineForm {
  /// Variables with their (non-zero) coefficients, in order of first appearance.
  std::vector<std::pair<Var, int64_t>> terms;
  /// Sub-expressions that are not affine (each already scaled); only with NonAffine::Opaque.
  std::vector<Expr> opaque;
  int64_t constant = 0;

  /// The coefficient of `v` (0 when it does not appear).
  int64_t coeff(const Var &v) const;
};

/// What affineForm() does with a part that is not affine (a div, a mod, a product of two
/// variables, a load ...).
enum class NonAffine : uint8_t {
  Fail,   ///< the whole form is nullopt
  Opaque, ///< the part (an i64 expression) becomes an opaque term
};

/// `e` in affine form: constants, variables, +, -, unary -, products by a constant operand
/// (`x * 4`, `4 * x`) and casts of i64 values are understood. nullopt when a coefficient or the
/// constant would overflow int64_t, or a part is not affine under NonAffine::Fail (or not an
/// i64 expression under NonAffine::Opaque).
std::optional<AffineForm> affineForm(const Expr &e, NonAffine nonAffine = NonAffine::Fail);

// ---------------------------------------------------------------------------------------------
// Canonical forms
// ---------------------------------------------------------------------------------------------

/// `e` (an i64 expression) simplified, as a sum of terms with constant coefficients plus a
/// constant, terms in order of first appearance: `4 * j_0 + (ax0 + 0)` → `j_0 * 4 + ax0`. Floor
/// division and modulo by a constant c fold when every coefficient is a multiple of c:
/// `(j_0 * 4 + 3) / 4` → `j_0`, `(j_0 * 4 + 3) % 4` → `3` (exact, floor semantics). Other
/// expressions are kept as opaque terms. Never changes the value of `e`; other dtypes are only
/// simplified (ir/Simplify.h), an undefined `e` comes back undefined.
Expr canonical(const Expr &e);

/// The value of `a - b` when canonical() makes it a constant; nullopt when it does not, or
/// either side is undefined.
std::optional<int64_t> constDiff(const Expr &a, const Expr &b);

/// The iter var `e` is, plus an offset free of `axes`: `vj + 1` → (index of vj, 1). nullopt when
/// `e` is not of that form (an axis with a coefficient other than 1, two axes, an axis inside
/// an opaque term).
std::optional<std::pair<size_t, Expr>> axisPlusOffset(const std::vector<Var> &axes, const Expr &e);

// ---------------------------------------------------------------------------------------------
// Symbolic intervals
// ---------------------------------------------------------------------------------------------

/// The inclusive integer interval [min, max] of i64 expressions (canonical forms); an
/// undefined bound is unbounded on that side.
struct Interval {
  Expr min, max;
  bool bounded() const { return min.defined() && max.defined(); }
  static Interval point(const Expr &e) { return {e, e}; }
  /// [min, min + extent - 1] (a loop's range, ir/IR.h).
  static Interval ofRange(const Expr &min, const Expr &extent);
  /// max - min + 1 (canonical); undefined when unbounded.
  Expr extent() const;
};

/// Variables that range over an interval, looked up in order (the first entry of a variable
/// counts); every other variable is a fixed, unknown point.
using Domain = std::vector<std::pair<Var, Interval>>;

/// Bounds of `e` for every value of the variables of `dom`, by interval arithmetic on +, -,
/// unary -, products by constants, floor division and modulo by positive constants, min and
/// max. An expression that uses no variable of `dom` is its own (canonical) point; a part the
/// analysis cannot bound makes the result unbounded on the side it affects.
Interval bound(const Expr &e, const Domain &dom);

/// The smallest interval holding both: bounds whose difference is not constant become
/// `min(...)` / `max(...)`; an unbounded side stays unbounded.
Interval hull(const Interval &a, const Interval &b);

/// Appends `loop`'s variable to `dom`, its range [min, min + extent - 1] bounded over `dom` as
/// it is (so a loop may depend on the loops before it).
void addLoop(Domain &dom, const For *loop);

/// Whether `a <= b` holds for every point of `dom` (the lower bound of `b - a` is a constant
/// >= 0). False means "not proven", not "false".
bool proveLE(const Expr &a, const Expr &b, const Domain &dom);

/// `s` with each floor division and modulo of an i64 expression by a positive constant c
/// resolved where the loops around it keep the dividend's terms that are not multiples of c
/// within one multiple: `(j0 * 16 + j1) / 16` → `j0` and `% 16` → `j1` under `for j1 in 0..16`
/// (the index arithmetic of a transform_layout by a split). Others are left as they are.
Stmt resolveDivMod(const Stmt &s);

/// `e` evaluated on integers (i64 index arithmetic with floor division and modulo, min, max,
/// comparisons, logic, select, integer casts), each variable's value from `var`; nullopt for
/// anything else (a load, a float, an unknown variable, a division by zero, an overflow).
std::optional<int64_t> evaluateInt(const Expr &e,
                                   const std::function<std::optional<int64_t>(const Var &)> &var);

} // namespace tdsl::ir

//===- ir/IRPrinter.h - Print IR in the explicit form of spec §6 --------------------------===//
//
// Prints functions and modules as TDSL source in the explicit form (loops, blocks with
// bindings), which the frontend parses back to an alpha-equivalent module:
//
//   func mm_relu(A: f32[128, 128], B: f32[128, 128]) -> (C: f32[128, 128]) {
//     alloc Y: f32[128, 128];
//     for i in 0..128 parallel {
//       block Y(vi: spatial 128 = i, ...) {
//         init { Y[vi, vj] = 0.0; }
//         Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj];
//       }
//     }
//   }
//
// Conventions the parser relies on:
// - Names are chosen here, deterministically: each Var or Buffer gets its hint, or `hint_1`,
//   `hint_2`, ... when a name in scope (or a keyword) already has it. A name is in scope from
//   its definition to the end of the enclosing braces, so sibling blocks may both use `vi`.
//   Block names are uniquified separately, over the whole function.
// - A loop prints as `for v in LO..HI`, HI being `LO + EXTENT` (folded when LO is 0 or both
//   are constants), so the extent is HI - LO.
// - Literals carry no dtype: they take it from context (spec §4). Floats print the shortest
//   text that reads back to the same value of their dtype and always contain '.' or 'e';
//   infinities print as `inf` and `-inf`, NaN as `(inf - inf)`. A negative constant prints as
//   `-5`; unary minus applied to a constant prints as `-(5)`, so a parser that folds `-5`
//   into one constant keeps the two apart.
// - Parentheses are minimal under the precedence || < && < comparisons < + - < * / % < unary;
//   binary operators are left-associative and comparisons do not chain.
// - Forms with no surface syntax (Evaluate, Ramp, Broadcast, vector casts, Allocate in lowered
//   code) print readably (`evaluate(x);`, `ramp(b, s, 4)`) but are not meant to be parsed.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <iosfwd>
#include <string>

namespace tdsl::ir {

std::string toString(const Expr &expr);
/// Statements at indentation 0, one per line (each line ends with '\n').
std::string toString(const Stmt &stmt);
std::string toString(const Func &func);
/// `const NAME: TYPE = load("/absolute/path.npy");\n`, or `= hex("…");` (the bytes, two
/// lower-case hex digits each, in storage order) for a constant without a file (folded).
std::string toString(const Constant &constant);
/// Imports, constants, then each function, separated by blank lines.
std::string toString(const Module &module);

std::ostream &operator<<(std::ostream &os, const Expr &expr);
std::ostream &operator<<(std::ostream &os, const Stmt &stmt);
std::ostream &operator<<(std::ostream &os, const Func &func);
std::ostream &operator<<(std::ostream &os, const Module &module);

/// The literal for a float constant of `type` (see above): "0.1", "1e-05", "3.0", "inf".
std::string formatFloat(double value, DType type);

/// `text` as the inside of a string literal of TDSL (also valid C, C++ and dot): `"` and `\`
/// escaped, each newline written as `newline`.
std::string escapeString(const std::string &text, const char *newline = "\\n");
/// `text` as a string literal, between double quotes.
std::string quoteString(const std::string &text);

} // namespace tdsl::ir

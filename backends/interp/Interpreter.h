//===- backends/interp/Interpreter.h - The reference interpreter --------------------------===//
//
// Runs funcs, graphs and extern calls of a checked module directly on the IR, with the exact
// semantics of ir/IR.h and spec §11: every loop runs serially, blocks run where their predicate
// holds, `init` runs when every reduce axis is at 0, integers wrap, `/` and `%` floor, select
// evaluates one branch, f16/bf16 round to nearest even. It is the reference the compiled
// backends are checked against, so it is written for clarity, not speed.
//
// Decisions where the spec leaves a value unspecified:
// - integer division by zero gives 0, and `x % 0` gives x (no error, no trap);
// - a float→int cast saturates to the dtype's range (NaN gives 0);
// - min/max of floats ignore a NaN operand (IEEE minNum/maxNum);
// - arithmetic on f16/bf16 values, if the IR has any, is done in f32 and rounded back.
// Run-time errors (an out-of-bounds access, an axis outside its domain, shapes that disagree
// with the signature, a failing extern) stop the run with a message naming the function,
// block and buffer; nothing crashes.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "runtime/Tensor.h"
#include "support/Defines.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tdsl::interp {

/// An argument: a tensor, or a scalar for a scalar input.
using Value = std::variant<runtime::Tensor, runtime::Scalar>;
/// Arguments by parameter name: inputs, and outputs (graph results) by their names.
using ArgMap = std::map<std::string, Value>;

/// A parameter of a function as a caller sees it.
struct ParamInfo {
  std::string name;
  ir::DType dtype;
  bool isTensor = true;
  bool isOutput = false;
  /// The shape, when the tensors given so far and the constants determine it.
  std::optional<std::vector<int64_t>> shape;
};

class Interpreter {
public:
  /// `module` must outlive the interpreter.
  explicit Interpreter(const ir::Module &module);
  ~Interpreter();
  Interpreter(const Interpreter &) = delete;
  Interpreter &operator=(const Interpreter &) = delete;

  /// Opens a shared library whose symbols resolve extern functions (searched in the order
  /// loaded). Returns false with `error` set if it cannot be opened.
  bool loadLibrary(const std::string &path, std::string &error);

  /// Spells a source location in run-time errors ("f.tdsl:4:15"); unset: "line 4, column 15".
  void setLocationText(std::function<std::string(const SourceLoc &)> locationText);

  /// The inputs then outputs of `func`, with the shapes that the tensors of `given` and the
  /// constants determine. Returns nullopt with `error` set if the given tensors disagree with
  /// the signature (dtype, rank, or a dimension) or a constant is missing.
  std::optional<std::vector<ParamInfo>> describe(const ir::Func &func, const ArgMap &given,
                                                 const Defines &consts, std::string &error);

  /// Runs `func`. `args` must hold every input; an output present in `args` gives the
  /// output's initial contents, a missing one starts zero-filled. On success `args` holds
  /// the outputs' final contents; on failure returns false with `error` set.
  bool run(const ir::Func &func, ArgMap &args, const Defines &consts, std::string &error);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tdsl::interp

//===- backends/abi/Abi.h - What every CPU backend shares (spec §10) ----------------------===//
//
// The C++ and LLVM backends emit the same functions under the same C names, each lowered by
// the same pipeline, so that one header (`tdslc --emit=header`) serves the objects of both:
// which functions a module emits, their lowering, their C names, and DLPack's dtype codes.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "passes/lower/Pipeline.h"

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tdsl::abi {

/// The functions a backend emits: the PrimFuncs of the module with no open generic constant
/// (all of them, or only the one named `onlyFunc` when it is not empty), in module order.
std::vector<ir::Func> emittedFunctions(const ir::Module &module, const std::string &onlyFunc);

/// Lowers every emitted function (lower::lowerPrimFunc with `options`: bounds checks, the
/// before/after-step callbacks): what the backends consume and what `--emit=lowered` prints.
std::vector<ir::Func> lowerModule(const ir::Module &module, const std::string &onlyFunc,
                                  const lower::LowerOptions &options = {});

/// The names of a file's own items (its funcs, graphs and externs, not those of the modules it
/// imports nor the functions graph passes derive): what its object exports (spec §10). When not
/// given, every function whose name has no '.' counts as one (imported ones are `nn.relu`).
using OwnNames = std::optional<std::set<std::string>>;

/// Whether the object exports `f` (external linkage, both entries, in the header): one of the
/// file's own items. Every other function an object defines (an imported function, an instance
/// or a fused function that a graph calls) is private to it (internal linkage), so that objects
/// that import the same module link together.
bool isExported(const ir::Func &f, const OwnNames &own);

/// The callees of a graph's calls (module names), in order, without repeats.
std::vector<std::string> graphCallees(const ir::GraphFunc &g);

/// The functions an object of `module` defines: the exported PrimFuncs and graphs without open
/// generic constants (all of them, or the one named `onlyFunc`), and every function that an
/// emitted graph calls, transitively (externs excepted: their library defines them). PrimFuncs
/// first, then graphs, each in module order (a graph comes after the funcs it calls).
std::vector<ir::Func> definedFunctions(const ir::Module &module, const std::string &onlyFunc,
                                       const OwnNames &own);

/// The C names of `funcs` (source functions), unique over the list: a function's name with
/// every character that is not a letter, digit or '_' replaced by '_' ("nn.relu" → nn_relu),
/// suffixed `_1`, `_2`, ... when it is taken (as a function's name or as the `NAME_dlpack`
/// entry of an exported one), a C/C++ keyword or starts with `tdsl_`. Exported functions
/// (isExported with `own`) are named first, so that their names do not depend on the private
/// functions beside them: the header (which declares only exported functions) agrees.
std::vector<std::string> cFunctionNames(const std::vector<ir::Func> &funcs,
                                        const OwnNames &own = std::nullopt);

/// A C identifier for a name hint: non-identifier characters become '_', and a hint that
/// starts with a digit or '_' (or is empty) gets a leading 'v'.
std::string cIdentifier(const std::string &hint);

/// C/C++ keywords and names of the C library that generated names avoid.
bool isReservedWord(const std::string &name);

/// DLPack's type code and bits of a dtype's elements: bool is {kDLUInt (1), 8} (kDLBool, 6,
/// is accepted too), bf16 {kDLBfloat (4), 16}.
std::pair<int, int> dlpackType(ir::DType t);

/// DLPack's spelling of a type code: "kDLInt", "kDLUInt", "kDLFloat", "kDLBfloat".
const char *dlpackCodeName(int code);

} // namespace tdsl::abi

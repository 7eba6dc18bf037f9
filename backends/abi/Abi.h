//===- backends/abi/Abi.h - What every CPU backend shares (spec §10) ----------------------===//
//
// The C++ and LLVM backends emit the same functions (the module pipeline's result,
// ir/LoweredModule.h) under the same C names, so that one header (`tdslc --emit=header`)
// serves the objects of both: their C names, and DLPack's dtype codes.
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"
#include "ir/LoweredModule.h"

#include <string>
#include <utility>
#include <vector>

namespace tdsl::abi {

/// The C names of `funcs` (source functions), unique over the list: a function's name with
/// every character that is not a letter, digit or '_' replaced by '_' ("nn.relu" → nn_relu),
/// suffixed `_1`, `_2`, ... when it is taken (as a function's name or as the `NAME_dlpack`
/// entry of an exported one), a C/C++ keyword or starts with `tdsl_`. `exported[i]` says
/// whether funcs[i] is exported (ir::LoweredFunc::exported; empty: every one is). Exported
/// functions are named first, so that their names do not depend on the private functions
/// beside them: the header (which declares only exported functions) agrees.
std::vector<std::string> cFunctionNames(const std::vector<ir::Func> &funcs,
                                        const std::vector<bool> &exported = {});

/// cFunctionNames of a lowered module's functions, in its order.
std::vector<std::string> cFunctionNames(const ir::LoweredModule &module);

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

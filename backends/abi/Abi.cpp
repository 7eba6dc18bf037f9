//===- backends/abi/Abi.cpp - What every CPU backend shares (spec §10) --------------------===//
#include "backends/abi/Abi.h"

#include <cctype>
#include <set>

namespace tdsl::abi {

using namespace ir;

bool isReservedWord(const std::string &name) {
  static const std::set<std::string> words = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class",
      "const", "constexpr", "continue", "default", "delete", "do", "double", "else", "enum",
      "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if", "inline",
      "int", "long", "main", "mutable", "namespace", "new", "not", "operator", "or", "private",
      "protected", "public", "register", "return", "short", "signed", "sizeof", "static", "struct",
      "switch", "template", "this", "throw", "true", "try", "typedef", "typename", "union",
      "unsigned", "using", "virtual", "void", "volatile", "while", "xor", "std", "errno", "assert",
      "NULL", "INFINITY", "NAN", "free", "malloc", "abs", "exp", "log", "sqrt", "floor", "ceil",
      "round", "pow", "fma", "min", "max", "select", "data", "int8_t", "int16_t", "int32_t",
      "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "DLTensor", "kDLCPU",
      // C library functions the emitted C++ includes (<cmath>, <cstdlib>, <cstring>,
      // <cstdio>): an extern "C" function of that name would clash with them.
      "fmod", "fmin", "fmax", "fabs", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
      "cosh", "tanh", "asinh", "acosh", "atanh", "exp2", "expm1", "log2", "log10", "log1p", "logb",
      "cbrt", "hypot", "erf", "erfc", "tgamma", "lgamma", "trunc", "rint", "lrint", "llrint",
      "lround", "llround", "nearbyint", "remainder", "remquo", "copysign", "nan", "nextafter",
      "fdim", "ldexp", "frexp", "modf", "scalbn", "ilogb", "signbit", "isnan", "isinf", "isfinite",
      "isnormal", "fpclassify", "sqrtf", "expf", "logf", "powf", "div", "ldiv", "labs", "llabs",
      "atoi", "atol", "atof", "strtol", "strtod", "rand", "srand", "calloc", "realloc", "exit",
      "abort", "atexit", "getenv", "system", "qsort", "bsearch", "memcpy", "memmove", "memset",
      "memcmp", "memchr", "strlen", "strcpy", "strncpy", "strcmp", "strncmp", "strcat", "strchr",
      "strstr", "printf", "fprintf", "sprintf", "snprintf", "vsnprintf", "puts", "putchar", "fopen",
      "fclose", "fread", "fwrite", "remove", "rename", "stdin", "stdout", "stderr", "va_list",
      "size_t"};
  return words.count(name) != 0;
}

std::string cIdentifier(const std::string &hint) {
  std::string out;
  for (char c : hint)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || out[0] == '_')
    out = "v" + out;
  return out;
}

std::vector<std::string> cFunctionNames(const std::vector<Func> &funcs,
                                        const std::vector<bool> &exported) {
  std::set<std::string> taken = {"tdsl_last_error", "tdsl_generated"};
  std::vector<std::string> names(funcs.size());
  auto isExported = [&](size_t i) { return exported.empty() || exported[i]; };
  auto assign = [&](size_t i) {
    // An exported function also defines NAME_dlpack: neither may be another's name.
    bool withEntry = isExported(i);
    auto free = [&](const std::string &name) {
      return !taken.count(name) && !isReservedWord(name) && name.rfind("tdsl_", 0) != 0 &&
             (!withEntry || !taken.count(name + "_dlpack"));
    };
    std::string base = cIdentifier(funcs[i].name());
    // The runtime's prefix (an imported module named `tdsl_x.tdsl`): no suffix would free it.
    if (base.rfind("tdsl_", 0) == 0)
      base = "v" + base;
    std::string name = base;
    for (int k = 1; !free(name); ++k)
      name = base + "_" + std::to_string(k);
    taken.insert(name);
    if (withEntry)
      taken.insert(name + "_dlpack");
    names[i] = name;
  };
  for (size_t i = 0; i < funcs.size(); ++i)
    if (isExported(i))
      assign(i);
  for (size_t i = 0; i < funcs.size(); ++i)
    if (!isExported(i))
      assign(i);
  return names;
}

std::vector<std::string> cFunctionNames(const LoweredModule &module) {
  std::vector<bool> exported;
  for (const LoweredFunc &f : module.funcs)
    exported.push_back(f.exported);
  return cFunctionNames(module.sources(), exported);
}

std::pair<int, int> dlpackType(DType t) {
  if (t.isBool())
    return {1, 8};
  if (t.isInt())
    return {0, t.bits()};
  if (t.isUInt())
    return {1, t.bits()};
  if (t.code() == DType::Code::BF16)
    return {4, 16};
  return {2, t.bits()};
}

const char *dlpackCodeName(int code) {
  switch (code) {
  case 0:
    return "kDLInt";
  case 1:
    return "kDLUInt";
  case 2:
    return "kDLFloat";
  case 4:
    return "kDLBfloat";
  default:
    return "?";
  }
}

} // namespace tdsl::abi

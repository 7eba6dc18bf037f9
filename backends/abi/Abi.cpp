//===- backends/abi/Abi.cpp - What every CPU backend shares (spec §10) --------------------===//
#include "backends/abi/Abi.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

namespace tdsl::abi {

using namespace ir;

std::vector<Func> emittedFunctions(const Module &module, const std::string &onlyFunc) {
  std::vector<Func> out;
  for (const Func &f : module.functions()) {
    const auto *p = f.as<PrimFunc>();
    if (!p || !p->constVars.empty())
      continue;
    if (!onlyFunc.empty() && f.name() != onlyFunc)
      continue;
    out.push_back(f);
  }
  return out;
}

std::vector<Func> lowerModule(const Module &module, const std::string &onlyFunc,
                              const lower::LowerOptions &options) {
  std::vector<Func> out;
  for (const Func &f : emittedFunctions(module, onlyFunc))
    out.push_back(lower::lowerPrimFunc(f, options));
  return out;
}

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

std::vector<std::string> cFunctionNames(const std::vector<Func> &funcs, const OwnNames &own) {
  std::set<std::string> taken = {"tdsl_last_error", "tdsl_generated"};
  std::unordered_map<const void *, std::string> names;
  auto assign = [&](const Func &f) {
    if (names.count(f.get()))
      return;
    // An exported function also defines NAME_dlpack: neither may be another's name.
    bool exported = isExported(f, own);
    auto free = [&](const std::string &name) {
      return !taken.count(name) && !isReservedWord(name) && name.rfind("tdsl_", 0) != 0 &&
             (!exported || !taken.count(name + "_dlpack"));
    };
    std::string base = cIdentifier(f.name()), name = base;
    for (int i = 1; !free(name); ++i)
      name = base + "_" + std::to_string(i);
    taken.insert(name);
    if (exported)
      taken.insert(name + "_dlpack");
    names.emplace(f.get(), name);
  };
  for (const Func &f : funcs)
    if (isExported(f, own))
      assign(f);
  for (const Func &f : funcs)
    assign(f);
  std::vector<std::string> out;
  for (const Func &f : funcs)
    out.push_back(names.at(f.get()));
  return out;
}

bool isExported(const Func &f, const OwnNames &own) {
  return own ? own->count(f.name()) != 0 : f.name().find('.') == std::string::npos;
}

std::vector<std::string> graphCallees(const GraphFunc &g) {
  std::vector<std::string> out;
  auto add = [&](const GraphBinding &b) {
    if (const auto *c = std::get_if<CallBinding>(&b))
      if (std::find(out.begin(), out.end(), c->callee) == out.end())
        out.push_back(c->callee);
  };
  for (const GraphItem &item : g.body) {
    if (const auto *c = std::get_if<CallBinding>(&item))
      add(*c);
    if (const auto *df = std::get_if<DataflowBlock>(&item))
      for (const GraphBinding &b : df->bindings)
        add(b);
  }
  return out;
}

std::vector<Func> definedFunctions(const Module &module, const std::string &onlyFunc,
                                   const OwnNames &own) {
  auto closed = [](const Func &f) {
    if (const auto *p = f.as<PrimFunc>())
      return p->constVars.empty();
    if (const auto *g = f.as<GraphFunc>())
      return g->constVars.empty();
    return false; // externs are defined by their library
  };
  // The exported roots, then what their graphs call, transitively.
  std::vector<std::string> work;
  for (const Func &f : module.functions())
    if (closed(f) && isExported(f, own) && (onlyFunc.empty() || f.name() == onlyFunc))
      work.push_back(f.name());
  std::set<std::string> wanted;
  while (!work.empty()) {
    std::string name = work.back();
    work.pop_back();
    if (!wanted.insert(name).second)
      continue;
    if (const auto *g = module.lookup(name).as<GraphFunc>())
      for (const std::string &callee : graphCallees(*g))
        work.push_back(callee);
  }
  std::vector<Func> prims, graphs;
  for (const Func &f : module.functions()) {
    if (!wanted.count(f.name()) || !closed(f))
      continue;
    (f.as<GraphFunc>() ? graphs : prims).push_back(f);
  }
  prims.insert(prims.end(), graphs.begin(), graphs.end());
  return prims;
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

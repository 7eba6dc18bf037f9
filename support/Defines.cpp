//===- support/Defines.cpp - The -D NAME=VALUE definitions of a command line -----------------===//
#include "support/Defines.h"

namespace tdsl {

bool parseInteger(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  size_t pos = 0;
  try {
    value = std::stoll(text, &pos, 0);
  } catch (...) {
    return false;
  }
  return pos == text.size();
}

std::string Defines::parse(const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return "-D expects NAME=VALUE, got '" + text + "'";
  std::string name = text.substr(0, eq), value = text.substr(eq + 1);
  int64_t v;
  if (!parseInteger(value, v))
    return "-D " + name + ": value '" + value + "' is not an integer";
  add(name, v);
  return "";
}

std::optional<int64_t> Defines::lookup(const std::string &name,
                                       const std::vector<std::string> &funcs,
                                       std::set<std::string> *used) const {
  std::optional<int64_t> plain, qualified;
  for (const auto &[n, value] : entries_) {
    bool isQualified = false;
    for (const std::string &f : funcs)
      isQualified = isQualified || n == f + "." + name;
    if (n != name && !isQualified)
      continue;
    (isQualified ? qualified : plain) = value;
    if (used)
      used->insert(n);
  }
  return qualified ? qualified : plain;
}

} // namespace tdsl

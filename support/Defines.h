//===- support/Defines.h - The -D NAME=VALUE definitions of a command line -------------------===//
//
// `-D NAME=VALUE` gives a schedule parameter or a generic constant of every function that has
// one of that name; `-D FUNC.NAME=VALUE` gives it for function FUNC only and wins over the plain
// form. Of two definitions of one name, the later wins. One lookup serves the checker
// (schedule parameters), the pipeline (generic constants) and the interpreter.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tdsl {

class Defines {
public:
  /// Adds `-D name=value` (after the earlier ones).
  void add(const std::string &name, int64_t value) { entries_.emplace_back(name, value); }

  /// Parses the text of one `-D` ("NAME=VALUE", the value an integer in C syntax: 12, 0x10).
  /// Returns the message for a bad one ("-D expects NAME=VALUE, got 'X'"), or "" after adding it.
  std::string parse(const std::string &text);

  /// The value of `name` for a function spelled as any of `funcs` (none: the plain form only):
  /// the last `-D FUNC.NAME` for one of them, else the last `-D NAME`. Every definition that
  /// matches, plain or qualified, is added to `used` when given.
  std::optional<int64_t> lookup(const std::string &name, const std::vector<std::string> &funcs = {},
                                std::set<std::string> *used = nullptr) const;

  /// Every definition, in command-line order.
  const std::vector<std::pair<std::string, int64_t>> &entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }

private:
  std::vector<std::pair<std::string, int64_t>> entries_;
};

/// An integer in C syntax (decimal, 0x hexadecimal, 0 octal) filling all of `text`.
bool parseInteger(const std::string &text, int64_t &value);

} // namespace tdsl

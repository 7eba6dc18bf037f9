//===- support/Join.h - Items joined into one string with a separator -------------------------===//
//
// join(items, ", ", toText): the text of each item, separated; what messages, printers and
// the DOT backend write for shapes, index lists and parameter lists ("[M, 4]", "A[i, j]").
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tdsl {

/// `text(item)` for each item of `items`, with `separator` between them.
template <typename Range, typename Text>
std::string join(const Range &items, const std::string &separator, Text text) {
  std::string out;
  bool first = true;
  for (const auto &item : items) {
    if (!first)
      out += separator;
    first = false;
    out += text(item);
  }
  return out;
}

} // namespace tdsl

//===- test/fuzzers/ArgReader.h - The command line of the fuzzing tools -----------------------===//
//
// ArgReader walks the arguments of tdsl-progfuzz and tdsl-schedule-fuzz: next() gives each in
// turn, value(option) the one after an option, and a missing value ends the tool with
// "TOOL: error: OPTION needs a value" and exit status 2.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include <cstdlib>
#include <iostream>
#include <string>

namespace tdsl::fuzz {

class ArgReader {
public:
  ArgReader(const char *tool, int argc, char **argv) : tool_(tool), argc_(argc), argv_(argv) {}

  bool more() const { return i_ + 1 < argc_; }
  std::string next() { return argv_[++i_]; }
  /// The value that follows `option`.
  std::string value(const std::string &option) {
    if (!more()) {
      std::cerr << tool_ << ": error: " << option << " needs a value\n";
      std::exit(2);
    }
    return next();
  }

private:
  const char *tool_;
  int argc_;
  char **argv_;
  int i_ = 0;
};

} // namespace tdsl::fuzz

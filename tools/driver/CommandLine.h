//===- tools/driver/CommandLine.h - What every tool's command line shares --------------------===//
//
// tdslc, tdsl-run and the tools to come read their command lines with Boost.Program_options
// the same way: GCC-style spellings normalised first (-O2, -MD), no abbreviated long options,
// a repeated scalar option's last value wins, and the options every tool has (-D, -I, --stdlib,
// --target, --via, -O, --ffp-contract, --func, --no-schedule) read and validated by one function.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include "tools/driver/ToolOptions.h"

#include <boost/program_options.hpp>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace tdsl {

namespace cl {

/// A parsed command line.
struct Parsed {
  boost::program_options::variables_map vm;

  bool has(const char *name) const { return vm.count(name) != 0; }
  /// Every value of a repeatable option, in order.
  std::vector<std::string> all(const char *name) const;
  /// The last value of a scalar option, or nullopt.
  std::optional<std::string> last(const char *name) const;
};

/// A repeatable option taking a value (a scalar one keeps its last value: Parsed::last).
boost::program_options::typed_value<std::vector<std::string>> *value();

/// Adds the options of ToolOptions: -D/--define, -I/--include, --stdlib, --target, --via,
/// --opt-level (-O0..-O3), --ffp-contract, --func, --no-schedule, --seed, --tuning-db, and
/// -h/--help.
void addToolOptions(boost::program_options::options_description &options);

/// Adds what tdslc and tdsl-run take alike to make code (spec §9): --mcpu, --mattr,
/// --ffast-math, --schedule FILE (repeatable) and --bounds-check.
void addCompileOptions(boost::program_options::options_description &options);
/// Reads the options addCompileOptions added into `opts`.
void readCompileOptions(const Parsed &parsed, ToolOptions &opts);

/// Parses argv[1..] against `options`, the other arguments going to the option `positional`.
/// -O<digit> becomes --opt-level=<digit>, and each spelling of `gccStyle` ("-MD") its long form
/// ("--MD"). Returns the error message, or "" on success.
std::string parse(int argc, const char *const *argv,
                  const boost::program_options::options_description &options,
                  const char *positional, std::initializer_list<const char *> gccStyle,
                  Parsed &out);

/// Reads the options addToolOptions added into `opts` (not the input): the first invalid
/// value's message, or "". The standard library folder defaults to defaultStdlibDir().
std::string readToolOptions(const Parsed &parsed, ToolOptions &opts);

/// The input file: the one positional argument named `positional`. The message of none or
/// more than one, or "".
std::string readInput(const Parsed &parsed, const char *positional, std::string &input);

/// Prints "TOOL: error: MESSAGE" and "TOOL: see 'TOOL --help'" on stderr; returns 2, the exit
/// status of a bad command line.
int usageError(const char *tool, const std::string &message);

/// The start of a tool's main (tdsl-run, tdsl-tune): parse() with the positional option
/// "file", `help` printed for -h/--help, the input file, then readToolOptions(), and --func
/// required. Returns nullopt to go on, else the exit status (0 after --help, 2 after a
/// usageError()).
std::optional<int> parseToolCommandLine(const char *tool, int argc, const char *const *argv,
                                        const boost::program_options::options_description &options,
                                        const char *help, Parsed &out, ToolOptions &opts);

} // namespace cl

} // namespace tdsl

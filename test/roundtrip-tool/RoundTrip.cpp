//===- test/roundtrip-tool/RoundTrip.cpp ------------------------------------------------------===//
//
// tdsl-roundtrip — the round-trip property of spec §6 over a corpus: for every .tdsl file that
// compiles, the printed IR (--emit=ir) re-parses, prints to identical text, and rebuilds a
// structurally equal module. Files that do not compile (error tests) are counted and skipped.

#include "ir/StructuralEqual.h"
#include "tools/driver/Driver.h"

#include <filesystem>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using namespace tdsl;

namespace {

std::string ownText(const ir::Module &m) {
  std::ostringstream os;
  printOwnItems(m, os);
  return os.str();
}

/// The module's own functions (imported ones have a `prefix.` name).
std::vector<ir::Func> ownFuncs(const ir::Module &m) {
  std::vector<ir::Func> out;
  for (const ir::Func &f : m.functions())
    if (f.name().find('.') == std::string::npos)
      out.push_back(f);
  return out;
}

std::optional<ir::Module> compile(const std::string &path, const std::string *text,
                                  std::ostream &err) {
  DriverOptions opts;
  opts.input = path;
  opts.emit = EmitKind::IR;
  opts.stdlibDir = defaultStdlibDir();
  opts.errorLimit = 0;
  Compilation c(opts, err);
  if (!c.parse(text))
    return std::nullopt;
  return c.buildIR();
}

/// Returns an empty string on success, else what went wrong.
std::string check(const std::string &path, bool &skipped) {
  std::ostringstream sink;
  skipped = false;
  std::optional<ir::Module> first = compile(path, nullptr, sink);
  if (!first) {
    skipped = true;
    return {};
  }
  std::string text1 = ownText(*first);
  std::ostringstream errs;
  std::optional<ir::Module> second = compile(path, &text1, errs);
  if (!second)
    return "printed IR does not compile again:\n" + errs.str() + "--- printed IR:\n" + text1;
  std::string text2 = ownText(*second);
  if (text1 != text2)
    return "second print differs:\n--- first\n" + text1 + "--- second\n" + text2;
  // Graph constants: the same names, types and bytes (the printed file path or hex data).
  if (first->constants.size() != second->constants.size())
    return "constant count differs after the round trip";
  for (size_t i = 0; i < first->constants.size(); ++i) {
    const ir::Constant &x = first->constants[i], &y = second->constants[i];
    if (x.name != y.name || x.buffer.dtype() != y.buffer.dtype() ||
        x.numElements() != y.numElements() || *x.data != *y.data)
      return "constant '" + x.name + "' differs after the round trip";
  }
  std::vector<ir::Func> a = ownFuncs(*first), b = ownFuncs(*second);
  if (a.size() != b.size())
    return "function count differs after the round trip";
  for (size_t i = 0; i < a.size(); ++i)
    if (!ir::structuralEqual(a[i], b[i]))
      return "function '" + a[i].name() + "' is not structurally equal after the round trip";
  return {};
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    fs::path p(argv[i]);
    if (fs::is_regular_file(p)) {
      files.push_back(p.string());
      continue;
    }
    if (!fs::is_directory(p)) {
      std::cerr << "tdsl-roundtrip: error: no such file or folder '" << p.string() << "'\n";
      return 2;
    }
    for (auto &e : fs::recursive_directory_iterator(p))
      if (e.is_regular_file() && e.path().extension() == ".tdsl")
        files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  unsigned checked = 0, skipped = 0, failed = 0;
  for (const std::string &f : files) {
    bool skip;
    std::string problem = check(f, skip);
    if (skip) {
      ++skipped;
      continue;
    }
    ++checked;
    if (!problem.empty()) {
      ++failed;
      std::cout << "FAIL " << f << ": " << problem << "\n";
    }
  }
  std::cout << "roundtrip: " << files.size() << " files, " << checked << " checked, " << skipped
            << " skipped (compile errors), " << failed << " failures\n";
  return failed ? 1 : 0;
}

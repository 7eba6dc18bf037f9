//===- test/fuzzers/FuzzParse.cpp - libFuzzer harness: parse, check, IR, print round trip -----===//
//
// Any bytes as the text of a .tdsl file: parsed, name-resolved, checked and built into IR with
// its schedules applied (tdslc --emit=ir in-process). Spec §9: a compile error is reported as
// an `error:` diagnostic, never a crash. When it compiles, the printed IR (spec §6) must compile
// again and print to the same text. Anything else aborts (a finding).

#include "test/fuzzers/FuzzUtil.h"

#include <cstdlib>
#include <iostream>
#include <sstream>

using namespace tdsl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::ostringstream err;
  std::optional<ir::Module> m = fuzz::compileText("fuzz.tdsl", text, false, err);
  if (!m) {
    if (err.str().find("error:") == std::string::npos) {
      std::cerr << "fuzz-parse: FAILURE: refused without an error diagnostic:\n" << err.str();
      std::abort();
    }
    return 0;
  }
  std::ostringstream printed;
  printOwnItems(*m, printed);
  std::string text1 = printed.str();
  std::ostringstream err2;
  std::optional<ir::Module> again = fuzz::compileText("fuzz.tdsl", text1, false, err2);
  if (!again) {
    std::cerr << "fuzz-parse: FAILURE: the printed IR does not compile again:\n"
              << err2.str() << "--- printed IR\n"
              << text1;
    std::abort();
  }
  std::ostringstream printed2;
  printOwnItems(*again, printed2);
  if (printed2.str() != text1) {
    std::cerr << "fuzz-parse: FAILURE: the printed IR prints differently once re-parsed:\n--- "
                 "first\n"
              << text1 << "--- second\n"
              << printed2.str();
    std::abort();
  }
  return 0;
}

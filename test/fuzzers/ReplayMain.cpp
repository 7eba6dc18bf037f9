//===- test/fuzzers/ReplayMain.cpp ------------------------------------------------------------===//
//
// ===- test/fuzzers/ReplayMain.cpp - The fuzz harnesses on given inputs, without libFuzzer
// ===//
//
// tdsl-fuzz-replay parse|schedule|npy PATH…
//
// Built in every build (no clang or sanitizer needed): runs the chosen harness's
// LLVMFuzzerTestOneInput once on each file (a folder: on each file in it, recursively, in sorted
// order), as libFuzzer would. A harness aborts on a finding; otherwise it prints the count. Used
// by test/Fuzz/harnesses.test on the seed inputs, and by hand to replay an artifact of
// scripts/fuzz.sh with an ordinary build.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int tdslFuzzParse(const uint8_t *data, size_t size);
extern "C" int tdslFuzzSchedule(const uint8_t *data, size_t size);
extern "C" int tdslFuzzNpy(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  if (argc < 3) {
    std::cerr << "usage: tdsl-fuzz-replay parse|schedule|npy PATH...\n";
    return 2;
  }
  std::string harness = argv[1];
  int (*entry)(const uint8_t *, size_t) = harness == "parse"      ? tdslFuzzParse
                                          : harness == "schedule" ? tdslFuzzSchedule
                                          : harness == "npy"      ? tdslFuzzNpy
                                                                  : nullptr;
  if (!entry) {
    std::cerr << "tdsl-fuzz-replay: error: unknown harness '" << harness
              << "'; expected parse, schedule or npy\n";
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    fs::path p = argv[i];
    if (fs::is_directory(p)) {
      for (const auto &e : fs::recursive_directory_iterator(p))
        if (e.is_regular_file())
          files.push_back(e.path());
    } else if (fs::exists(p)) {
      files.push_back(p);
    } else {
      std::cerr << "tdsl-fuzz-replay: error: no such file '" << p.string() << "'\n";
      return 2;
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path &f : files) {
    std::ifstream in(f, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    entry(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
  }
  std::cout << "fuzz-replay: " << harness << ": " << files.size() << " inputs, no finding\n";
  return 0;
}

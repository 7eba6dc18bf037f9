//===- tools/tdsl-run/BenchJson.cpp - Machine-readable results of tdsl-run --bench -----------===//

#include "tools/tdsl-run/BenchJson.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>

namespace tdsl {

std::string benchJson(const BenchRecord &r) {
  nlohmann::ordered_json j;
  j["tool"] = "tdsl-run";
  j["file"] = r.file;
  j["func"] = r.func;
  j["via"] = r.via;
  j["opt_level"] = r.optLevel;
  int64_t threads = r.threads;
  if (threads == 0)
    if (const char *env = std::getenv("OMP_NUM_THREADS"))
      threads = std::atoll(env);
  if (threads > 0)
    j["threads"] = threads;
  else
    j["threads"] = nullptr;
  j["repeat"] = r.seconds.size();
  nlohmann::ordered_json shapes = nlohmann::ordered_json::object();
  for (const auto &[name, value] : r.shapes)
    shapes[name] = value;
  j["shapes"] = shapes;
  nlohmann::ordered_json defines = nlohmann::ordered_json::object();
  for (const auto &[name, value] : r.defines)
    defines[name] = value;
  j["defines"] = defines;
  j["median_ms"] = r.medianSeconds * 1e3;
  std::vector<double> ms;
  for (double s : r.seconds)
    ms.push_back(s * 1e3);
  j["times_ms"] = ms;
  j["flop"] = r.flops;
  j["gflops"] = r.medianSeconds > 0 ? r.flops / r.medianSeconds * 1e-9 : 0.0;
  return j.dump();
}

bool writeBenchJson(const BenchRecord &record, const std::string &path, std::string &error) {
  std::string line = benchJson(record) + "\n";
  if (path == "-") {
    std::cout << line << std::flush;
    return true;
  }
  // Appending to a file that is not such a record file (a source given by mistake) would
  // damage it: every line there must be a record of tdsl-run --json.
  if (std::ifstream existing(path); existing) {
    std::string text;
    for (int64_t number = 1; std::getline(existing, text); ++number) {
      if (text.find_first_not_of(" \t\r") == std::string::npos)
        continue;
      nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (!j.is_object() || !j.contains("tool") || j["tool"] != "tdsl-run") {
        error = "'" + path + "' is not a file of tdsl-run --json records (line " +
                std::to_string(number) + "): left as it is";
        return false;
      }
    }
  }
  std::ofstream out(path, std::ios::app);
  if (out << line && out.flush())
    return true;
  error = "cannot write '" + path + "'";
  return false;
}

} // namespace tdsl

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
  std::ofstream out(path, std::ios::app);
  if (out << line && out.flush())
    return true;
  error = "cannot write '" + path + "'";
  return false;
}

} // namespace tdsl

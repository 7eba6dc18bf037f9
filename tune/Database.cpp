//===- tune/Database.cpp - The tuning database ------------------------------------------------===//
//
// Implementation of tune/Database.h.

#include "tune/Database.h"

#include "ir/IRPrinter.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace tdsl::tuning {

std::string functionKey(const ir::Func &func) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : ir::toString(func))
    h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string targetKey(int threads) {
  std::string model = "unknown";
  std::set<std::string> flags;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    auto value = [&] {
      size_t colon = line.find(':');
      std::string v = colon == std::string::npos ? "" : line.substr(colon + 1);
      size_t b = v.find_first_not_of(" \t");
      return b == std::string::npos ? std::string() : v.substr(b);
    };
    if (line.rfind("model name", 0) == 0 && model == "unknown")
      model = value();
    else if ((line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0) && flags.empty()) {
      std::istringstream is(value());
      std::string f;
      while (is >> f)
        flags.insert(f);
    }
  }
  std::string isa;
  for (const char *f : {"sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl",
                        "avx512_vnni", "avx512_bf16", "amx_tile", "asimd", "sve"})
    if (flags.count(f))
      isa += (isa.empty() ? "" : ",") + std::string(f);
  if (threads <= 0) {
    const char *env = std::getenv("OMP_NUM_THREADS");
    threads = env ? std::atoi(env) : 0;
    if (threads <= 0)
      threads = std::max(1u, std::thread::hardware_concurrency());
  }
  return "cpu=" + model + ";isa=" + isa + ";threads=" + std::to_string(threads);
}

bool readRecords(const std::string &file, std::vector<Record> &out, std::string &error) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    error = "'" + file + "' is a directory";
    return false;
  }
  std::ifstream in(file);
  if (!in) {
    error = "cannot open '" + file + "'";
    return false;
  }
  std::vector<Record> records;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto notRecord = [&] {
      error = "'" + file + "' is not a tuning database: line " + std::to_string(number) +
              " is not a tuning record";
      return false;
    };
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("key") || !j.contains("target") || !j.contains("func"))
      return notRecord();
    try {
      Record r;
      r.func = j.at("func").get<std::string>();
      r.key = j.at("key").get<std::string>();
      r.target = j.at("target").get<std::string>();
      r.generated = j.value("generated", -1);
      r.decisions = j.value("decisions", std::vector<schedule::Decision>());
      r.schedule = j.value("schedule", "");
      r.ok = j.value("ok", false);
      r.seconds = j.value("seconds", 0.0);
      r.error = j.value("error", "");
      records.push_back(std::move(r));
    } catch (const nlohmann::json::exception &) {
      return notRecord();
    }
  }
  if (in.bad()) {
    error = "cannot read '" + file + "'";
    return false;
  }
  out.insert(out.end(), std::make_move_iterator(records.begin()),
             std::make_move_iterator(records.end()));
  return true;
}

std::string targetDifference(const std::string &recorded, const std::string &here) {
  auto fields = [](const std::string &key) {
    std::vector<std::pair<std::string, std::string>> out;
    std::istringstream is(key);
    std::string part;
    while (std::getline(is, part, ';')) {
      size_t eq = part.find('=');
      out.emplace_back(part.substr(0, eq), eq == std::string::npos ? "" : part.substr(eq + 1));
    }
    return out;
  };
  std::vector<std::pair<std::string, std::string>> a = fields(recorded), b = fields(here);
  std::string out;
  for (const auto &[name, value] : a) {
    auto it = std::find_if(b.begin(), b.end(), [&](const auto &f) { return f.first == name; });
    std::string other = it == b.end() ? "" : it->second;
    if (other != value)
      out += (out.empty() ? "" : ", ") + name + "=" + value + " (here " + name + "=" + other + ")";
  }
  if (out.empty() && recorded != here)
    out = "'" + recorded + "' (here '" + here + "')";
  return out;
}

std::string toJson(const Record &r) {
  nlohmann::ordered_json j;
  j["func"] = r.func;
  j["key"] = r.key;
  j["target"] = r.target;
  j["generated"] = r.generated;
  j["decisions"] = r.decisions;
  j["ok"] = r.ok;
  if (r.ok)
    j["seconds"] = r.seconds;
  else
    j["error"] = r.error;
  j["schedule"] = r.schedule;
  return j.dump();
}

bool appendRecord(const std::string &file, const Record &r) {
  std::ofstream out(file, std::ios::app);
  out << toJson(r) << "\n";
  return bool(out);
}

std::vector<Measured> measuredCandidates(const std::vector<Record> &records, const std::string &key,
                                         const std::string &target) {
  std::map<std::pair<int, std::string>, std::vector<const Record *>> groups;
  std::vector<std::pair<int, std::string>> order; // first measurement first
  for (const Record &r : records)
    if (r.ok && r.key == key && r.target == target) {
      std::pair<int, std::string> id{r.generated, nlohmann::json(r.decisions).dump()};
      auto [it, fresh] = groups.try_emplace(id);
      if (fresh)
        order.push_back(id);
      it->second.push_back(&r);
    }
  std::vector<Measured> out;
  for (const auto &id : order) {
    std::vector<const Record *> g = groups[id];
    std::stable_sort(g.begin(), g.end(),
                     [](const Record *a, const Record *b) { return a->seconds < b->seconds; });
    size_t n = g.size();
    out.push_back({g[(n - 1) / 2], (g[(n - 1) / 2]->seconds + g[n / 2]->seconds) / 2, n});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Measured &a, const Measured &b) { return a.seconds < b.seconds; });
  return out;
}

const Record *best(const std::vector<Record> &records, const std::string &key,
                   const std::string &target) {
  std::vector<Measured> m = measuredCandidates(records, key, target);
  return m.empty() ? nullptr : m[0].median;
}

bool MemoryDatabase::commit(const Record &r) {
  records_.push_back(r);
  return true;
}

bool JsonDatabase::open(const std::string &file, std::string &error) {
  file_ = file;
  records_.clear();
  std::error_code ec;
  return !std::filesystem::exists(file, ec) || readRecords(file, records_, error);
}

bool JsonDatabase::commit(const Record &r) {
  if (!appendRecord(file_, r))
    return false;
  records_.push_back(r);
  return true;
}

} // namespace tdsl::tuning

//===- tools/tdsl-run/Profile.cpp - tdsl-run --profile ------------------------------------===//
#include "tools/tdsl-run/Profile.h"

#include "ir/Arith.h"
#include "ir/IRVisitor.h"
#include "runtime/Profile.h"
#include "runtime/Tensor.h"
#include "tools/tdsl-run/FlopCount.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace tdsl {

using namespace ir;

namespace {

/// One timed region of the compiled function.
struct Region {
  int32_t id = 0;
  std::string label;
  std::string output; ///< a call's output type ("f32[1, 64, 56, 56]"); empty for a loop nest
  double flops = 0;
  std::vector<double> ms; ///< per profiled call
};

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string format(const char *spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

/// The types of the outputs `call` passes to its callee, their shapes evaluated with the
/// callee's shape variables bound to the call's arguments (the graph's shapes in `shapes`).
std::string outputTypes(const FuncCall *call, const LoweredModule &module,
                        const std::unordered_map<Var, int64_t> &shapes) {
  const PrimFunc *signature = nullptr;
  for (const LoweredFunc &f : module.funcs)
    if (f.source.name() == call->callee)
      signature = f.signature.as<PrimFunc>();
  if (!signature)
    return "";
  auto value = [&](const Var &v) -> std::optional<int64_t> {
    auto it = shapes.find(v);
    return it == shapes.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  std::unordered_map<Var, int64_t> callee;
  size_t first = call->args.size() - signature->shapeVars.size();
  for (size_t k = 0; k < signature->shapeVars.size(); ++k)
    if (const auto *e = std::get_if<Expr>(&call->args[first + k]))
      if (std::optional<int64_t> v = evaluateInt(*e, value))
        callee[signature->shapeVars[k]] = *v;
  std::string out;
  for (const Buffer &b : signature->outputs) {
    std::vector<int64_t> dims;
    for (const Expr &d : b.shape()) {
      std::optional<int64_t> v = evaluateInt(d, [&](const Var &var) -> std::optional<int64_t> {
        auto it = callee.find(var);
        return it == callee.end() ? std::nullopt : std::optional<int64_t>(it->second);
      });
      dims.push_back(v.value_or(-1));
    }
    out += (out.empty() ? "" : ", ") + runtime::typeString(b.dtype(), dims);
  }
  return out;
}

/// The regions of `lowered`, by id, with their labels, outputs and flop counts.
std::vector<Region> regionsOf(const PrimFunc &lowered, const LoweredModule &module,
                              const std::map<std::string, Func> &callees,
                              const std::unordered_map<Var, int64_t> &shapes) {
  struct Collect : IRVisitor {
    std::vector<const ProfileRegion *> found;
    void visit(const ProfileRegion *op) override { found.push_back(op); }
  } collect;
  collect.visitStmt(lowered.body);
  std::vector<Region> out;
  for (const ProfileRegion *op : collect.found) {
    Region r;
    r.id = op->id;
    r.label = op->label;
    r.flops = countFlops(op->body, shapes, callees);
    struct FirstCall : IRVisitor {
      const FuncCall *call = nullptr;
      void visit(const FuncCall *op) override { call = call ? call : op; }
    } first;
    first.visitStmt(op->body);
    if (first.call)
      r.output = outputTypes(first.call, module, shapes);
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const Region &a, const Region &b) { return a.id < b.id; });
  return out;
}

} // namespace

bool profile(const ProfileOptions &options, const llvmgen::JitFunction &func,
             const LoweredModule &module, const std::map<std::string, Func> &lowered,
             llvmgen::JitArgs args, std::ostream &out, std::string &error) {
  const LoweredFunc &f = func.func();
  const auto *body = f.lowered.as<PrimFunc>();
  std::unordered_map<Var, int64_t> shapes = func.shapeValues(args);
  std::vector<Region> regions = regionsOf(*body, module, lowered, shapes);
  std::map<int32_t, size_t> index;
  for (size_t i = 0; i < regions.size(); ++i)
    index[regions[i].id] = i;

  for (int i = 0; i < 2; ++i)
    if (!func.call(args, error))
      return false;
  struct Call {
    int64_t begin, end;
    std::vector<runtime::ProfileEvent> events;
  };
  std::vector<Call> calls;
  for (int64_t i = 0; i < options.repeat; ++i) {
    runtime::profileStart();
    int64_t begin = runtime::profileNow();
    bool ok = func.call(args, error);
    int64_t end = runtime::profileNow();
    std::vector<runtime::ProfileEvent> events = runtime::profileStop();
    if (!ok)
      return false;
    calls.push_back({begin, end, std::move(events)});
  }

  std::vector<double> total, outside;
  for (const Call &c : calls) {
    double callMs = static_cast<double>(c.end - c.begin) * 1e-6, inside = 0;
    std::vector<double> ms(regions.size(), 0.0);
    for (const runtime::ProfileEvent &e : c.events)
      if (auto it = index.find(e.region); it != index.end())
        ms[it->second] += static_cast<double>(e.end - e.begin) * 1e-6;
    for (size_t r = 0; r < regions.size(); ++r) {
      regions[r].ms.push_back(ms[r]);
      inside += ms[r];
    }
    total.push_back(callMs);
    outside.push_back(std::max(0.0, callMs - inside));
  }
  double totalMs = median(total);
  bool graph = f.isGraph();
  double flops = countFlops(f.lowered, shapes, lowered);

  out << "profile: '" << options.func << "' (" << (graph ? "graph" : "func") << ", "
      << options.route << "): " << format("%.6g", totalMs) << " ms per call (median of "
      << calls.size() << "), " << format("%.6g", totalMs > 0 ? flops / totalMs * 1e-6 : 0)
      << " GFLOP/s\n";
  size_t width = 20; // "(outside loop nests)"
  for (const Region &r : regions)
    width = std::max(width, r.label.size());
  size_t outWidth = 6;
  for (const Region &r : regions)
    outWidth = std::max(outWidth, r.output.size());
  auto pad = [](std::string s, size_t n) {
    s.resize(std::max(s.size(), n), ' ');
    return s;
  };
  out << "  " << pad("#", 4) << pad(graph ? "callee" : "loop nest", width + 2)
      << (graph ? pad("output", outWidth + 2) : "") << "      ms/call   share   GFLOP/s\n";
  double sum = 0;
  auto row = [&](const std::string &number, const std::string &label, const std::string &output,
                 double ms, double rowFlops) {
    sum += ms;
    out << "  " << pad(number, 4) << pad(label, width + 2)
        << (graph ? pad(output, outWidth + 2) : "") << format("%13.4f", ms)
        << format("%7.1f%%", totalMs > 0 ? 100 * ms / totalMs : 0)
        << (rowFlops > 0 && ms > 0 ? format("%10.2f", rowFlops / ms * 1e-6) : "") << "\n";
  };
  for (const Region &r : regions)
    row(std::to_string(r.id), r.label, r.output, median(r.ms), r.flops);
  row("", graph ? "(outside calls)" : "(outside loop nests)", "", median(outside), 0);
  out << "  " << pad("", 4) << pad("(sum of rows)", width + 2)
      << (graph ? pad("", outWidth + 2) : "") << format("%13.4f", sum)
      << format("%7.1f%%", totalMs > 0 ? 100 * sum / totalMs : 0) << "\n";

  if (options.tracePath.empty())
    return true;
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  int64_t origin = calls.empty() ? 0 : calls.front().begin;
  // One complete event ("ph": "X"), in microseconds from the first call.
  auto event = [&](const std::string &name, const char *category, int64_t begin, int64_t end,
                   nlohmann::ordered_json args) {
    nlohmann::ordered_json e;
    e["name"] = name;
    e["cat"] = category;
    e["ph"] = "X";
    e["ts"] = static_cast<double>(begin - origin) * 1e-3;
    e["dur"] = static_cast<double>(end - begin) * 1e-3;
    e["pid"] = 1;
    e["tid"] = 1;
    e["args"] = std::move(args);
    events.push_back(std::move(e));
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call &c = calls[i];
    event(options.func, graph ? "graph" : "func", c.begin, c.end, {{"call", i}});
    for (const runtime::ProfileEvent &p : c.events) {
      auto it = index.find(p.region);
      if (it == index.end())
        continue;
      const Region &r = regions[it->second];
      nlohmann::ordered_json a = {{"call", i}, {"region", r.id}};
      if (!r.output.empty())
        a["output"] = r.output;
      if (r.flops > 0)
        a["flop"] = r.flops;
      event(r.label, graph ? "call" : "loop nest", p.begin, p.end, std::move(a));
    }
  }
  nlohmann::ordered_json trace;
  trace["traceEvents"] = events;
  trace["displayTimeUnit"] = "ms";
  trace["otherData"] = {{"tool", "tdsl-run"},
                        {"func", options.func},
                        {"route", options.route},
                        {"calls", calls.size()},
                        {"median_ms", totalMs}};
  std::ofstream file(options.tracePath, std::ios::trunc);
  if (!(file << trace.dump(1) << "\n") || !file.flush()) {
    error = "cannot write '" + options.tracePath + "'";
    return false;
  }
  return true;
}

} // namespace tdsl

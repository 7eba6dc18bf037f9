//===- test/schedfuzz-tool/ScheduleFuzz.cpp ---------------------------------------------------===//
//
// tdsl-schedule-fuzz — applies random sequences of schedule primitives to a set of programs and
// checks, with the reference interpreter, that every sequence the primitives accept computes
// what the unscheduled function computes (spec §7: a schedule never changes results).
//
// tdsl-schedule-fuzz [--seed S] [--cases N] [--steps K] [--seconds T] FILE.tdsl …
//
// Each case picks a program and a function, then tries K random primitives with random
// arguments drawn from the current IR (test/fuzzers/RandomSchedule.h, shared with the libFuzzer
// harness and tdsl-progfuzz; a failure prints the schedule as script text). Refused ones are
// skipped (they must be refused with a ScheduleError, never crash). The scheduled function must
// also survive the round trip (print, re-parse, print). Parallel, vectorized and thread-bound
// loops must not depend on the order of their iterations: the scheduled function also runs with
// each of them reversed and must give the same outputs (the interpreter runs them in order, so
// a race would hide). Floats compare with a relative tolerance of 1e-4 (rfactor and decomposed
// reductions may reassociate sums); integers and bools compare exactly.

#include "backends/interp/Interpreter.h"
#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/schedule/Primitives.h"
#include "test/fuzzers/ArgReader.h"
#include "test/fuzzers/RandomSchedule.h"
#include "tools/driver/Driver.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <random>
#include <set>
#include <sstream>

using namespace tdsl;
using namespace tdsl::ir;

namespace {

struct Program {
  std::string path;
  Module module;
};

std::optional<Module> load(const std::string &path, const std::string *text, std::ostream &err) {
  DriverOptions opts;
  opts.input = path;
  opts.emit = EmitKind::IR;
  opts.stdlibDir = defaultStdlibDir();
  opts.noSchedule = true;
  Compilation c(opts, err);
  if (!c.parse(text))
    return std::nullopt;
  return c.buildIR();
}

/// `f` with every parallel, vectorized or thread-bound loop running its iterations backwards
/// (serially): `for i in lo..lo+n parallel { S(i) }` becomes `for i' in 0..n { S(lo + n-1 - i') }`.
Func reverseParallelLoops(const Func &f) {
  struct R : IRMutator {
    Stmt visit(const For *op) override {
      Stmt s = IRMutator::visit(op);
      const auto *loop = s.as<For>();
      if (loop->forKind != ForKind::Parallel && loop->forKind != ForKind::Vectorized &&
          loop->forKind != ForKind::ThreadBinding)
        return s;
      Var r(loop->loopVar.name() + "_rev", loop->loopVar.dtype());
      Expr value = loop->min + loop->extent - intImm(1) - VarRef::make(r);
      Stmt body = schedule::substitute(loop->body, {{loop->loopVar, value}});
      return For::make(r, intImm(0), loop->extent, ForKind::Serial, body, {}, loop->loc);
    }
  } r;
  const auto *p = f.as<PrimFunc>();
  return PrimFunc::make(p->name, p->constVars, p->inputs, p->outputs, p->shapeVars, p->allocBuffers,
                        r.mutate(p->body), p->loc);
}

interp::ArgMap randomInputs(interp::Interpreter &in, const Func &f, std::mt19937_64 &rng,
                            std::string &error) {
  interp::ArgMap args;
  std::optional<std::vector<interp::ParamInfo>> params = in.describe(f, args, {}, error);
  if (!params)
    return {};
  for (const interp::ParamInfo &p : *params) {
    if (p.isOutput)
      continue;
    if (!p.isTensor) {
      args[p.name] = p.dtype.isFloat() ? runtime::Scalar::ofFloat(p.dtype, 0.5)
                                       : runtime::Scalar::ofInt(p.dtype, 3);
      continue;
    }
    if (!p.shape) {
      error = "input '" + p.name + "' has a symbolic shape";
      return {};
    }
    runtime::Tensor t(p.dtype, *p.shape);
    std::uniform_real_distribution<double> uf(-1, 1);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      if (p.dtype.isFloat())
        t.store(i, runtime::Scalar::ofFloat(p.dtype, runtime::roundToFloat(p.dtype, uf(rng))));
      else if (p.dtype.isBool())
        t.store(i, runtime::Scalar::ofBool(rng() % 2));
      else
        t.store(i, runtime::Scalar::ofInt(p.dtype, int64_t(rng() % 17) - 8));
    }
    args[p.name] = t;
  }
  return args;
}

/// Empty when the outputs agree.
std::string compare(const interp::ArgMap &a, const interp::ArgMap &b, const Func &f) {
  for (const Buffer &out : f.as<PrimFunc>()->outputs) {
    const auto &x = std::get<runtime::Tensor>(a.at(out.name()));
    const auto &y = std::get<runtime::Tensor>(b.at(out.name()));
    for (int64_t i = 0; i < x.numElements(); ++i) {
      runtime::Scalar p = x.load(i), q = y.load(i);
      bool same = out.dtype().isFloat()
                      ? (std::isnan(p.f) && std::isnan(q.f)) ||
                            std::fabs(p.f - q.f) <=
                                1e-4 * std::max(1.0, std::max(std::fabs(p.f), std::fabs(q.f)))
                      : p.i == q.i;
      if (!same) {
        std::ostringstream os;
        os << "output '" << out.name() << "' differs at element " << i << ": " << p.toDouble()
           << " vs " << q.toDouble();
        return os.str();
      }
    }
  }
  return {};
}

} // namespace

int main(int argc, char **argv) {
  uint64_t seed = 1;
  int cases = 1000, steps = 4;
  double seconds = 1e9;
  std::vector<std::string> files;
  fuzz::ArgReader args("tdsl-schedule-fuzz", argc, argv);
  while (args.more()) {
    std::string a = args.next();
    auto next = [&] { return args.value(a); };
    if (a == "--seed")
      seed = std::stoull(next());
    else if (a == "--cases")
      cases = std::stoi(next());
    else if (a == "--steps")
      steps = std::stoi(next());
    else if (a == "--seconds")
      seconds = std::stod(next());
    else
      files.push_back(a);
  }
  std::vector<Program> programs;
  for (const std::string &f : files) {
    std::optional<Module> m = load(f, nullptr, std::cerr);
    if (!m) {
      std::cerr << "tdsl-schedule-fuzz: error: '" << f << "' does not compile\n";
      return 2;
    }
    programs.push_back({f, *m});
  }
  if (programs.empty()) {
    std::cerr << "tdsl-schedule-fuzz: error: no programs\n";
    return 2;
  }
  std::mt19937_64 rng(seed);
  auto start = std::chrono::steady_clock::now();
  int ran = 0, failures = 0, applied = 0, refused = 0;
  for (int c = 0; c < cases; ++c) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
      break;
    Program &prog = programs[rng() % programs.size()];
    std::vector<Func> funcs;
    for (const Func &f : prog.module.functions())
      if (f.as<PrimFunc>() && f.name().find('.') == std::string::npos)
        funcs.push_back(f);
    if (funcs.empty())
      continue;
    Func original = funcs[rng() % funcs.size()];
    schedule::ScheduleState state(original, "cpu");
    fuzz::RandomScheduler scheduler(state, [&](uint64_t n) { return rng() % n; });
    std::vector<std::string> trace;
    for (int k = 0; k < steps; ++k) {
      try {
        std::string d = scheduler.step();
        if (!d.empty()) {
          trace.push_back(d);
          ++applied;
        }
      } catch (const schedule::ScheduleError &) {
        ++refused;
      }
    }
    ++ran;
    auto fail = [&](const std::string &what) {
      ++failures;
      std::cout << "FAIL case " << c << " (" << prog.path << ", func " << original.name()
                << "): " << what << "\n  schedule:";
      for (const std::string &t : trace)
        std::cout << " " << t;
      std::cout << "\n--- scheduled IR\n" << toString(state.func()) << "\n";
    };
    // Round trip of the scheduled function.
    Module m2 = prog.module;
    m2.replace(state.func());
    std::ostringstream text, errs;
    printOwnItems(m2, text);
    std::string printed = text.str();
    std::optional<Module> again = load(prog.path, &printed, errs);
    if (!again) {
      fail("the scheduled IR does not compile again:\n" + errs.str());
      continue;
    }
    // Numerical comparison.
    interp::Interpreter in1(prog.module), in2(m2);
    std::string error;
    interp::ArgMap inputs = randomInputs(in1, original, rng, error);
    if (!error.empty()) {
      fail("cannot make inputs: " + error);
      continue;
    }
    interp::ArgMap a = inputs, b = inputs;
    if (!in1.run(original, a, {}, error)) {
      fail("the unscheduled function fails: " + error);
      continue;
    }
    if (!in2.run(state.func(), b, {}, error)) {
      fail("the scheduled function fails: " + error);
      continue;
    }
    if (std::string d = compare(a, b, original); !d.empty()) {
      fail(d);
      continue;
    }
    // The same with the parallel loops' iterations reversed.
    Func reversed = reverseParallelLoops(state.func());
    Module m3 = prog.module;
    m3.replace(reversed);
    interp::Interpreter in3(m3);
    interp::ArgMap r = inputs;
    if (!in3.run(reversed, r, {}, error)) {
      fail("the scheduled function with reversed parallel loops fails: " + error);
      continue;
    }
    if (std::string d = compare(a, r, original); !d.empty())
      fail("with its parallel loops reversed, " + d);
  }
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "schedule-fuzz: " << ran << " cases, " << applied << " primitives applied, "
            << refused << " refused, " << failures << " mismatches (seed " << seed << ", "
            << int(took * 1000) << " ms)\n";
  return failures ? 1 : 0;
}

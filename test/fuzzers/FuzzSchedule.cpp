//===- test/fuzzers/FuzzSchedule.cpp - libFuzzer harness: schedule primitives keep results ----===//
//
// The fuzzer's bytes choose a function of a fixed set of small programs and up to eight schedule
// primitives with their arguments (RandomSchedule.h), applied through passes/schedule. Every
// primitive either refuses with a ScheduleError or rewrites; then (spec §7: a schedule never
// changes results) the scheduled function, run by the reference interpreter on fixed random
// inputs, must give what the unscheduled one gives (unless its loops run more than
// kMaxIterations times: tiles of tiles, see loopIterations), its printed IR must compile again, and
// the same steps written as a schedule script must compile to the same IR. Anything else aborts (a
// finding). Unit: any bytes; a choice past the end reads 0.

#include "backends/interp/Interpreter.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "test/fuzzers/FuzzUtil.h"
#include "test/fuzzers/RandomSchedule.h"
#include "tools/driver/Driver.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>

using namespace tdsl;

namespace {

// Small programs: a reduction with alloc, element-wise chains with extents that splits do not
// divide, guards (select, if, where), integer arithmetic, a symbolic shape and an explicit form.
// One text each (none calls another), so that the script check parses only the chosen one.
const char *const kPrograms[] = {
    R"(
func mm_relu(A: f32[8, 6], B: f32[6, 8]) -> (C: f32[8, 8]) {
  alloc Y: f32[8, 8];
  block Y(i: spatial 8, j: spatial 8, k: reduce 6) {
    init { Y[i, j] = 0.0; }
    Y[i, j] += A[i, k] * B[k, j];
  }
  block C(i: spatial 8, j: spatial 8) { C[i, j] = max(Y[i, j], 0.0); }
}
)",
    R"(
func chain(A: f32[6, 10]) -> (C: f32[6, 10]) {
  alloc B: f32[6, 10];
  alloc D: f32[10, 6];
  block B(i: spatial 6, j: spatial 10) { B[i, j] = A[i, j] * 2.0 + 1.0; }
  block D(j: spatial 10, i: spatial 6) { D[j, i] = B[i, j] - A[i, 9 - j]; }
  block C(i: spatial 6, j: spatial 10) {
    if i > 2 { C[i, j] = D[j, i]; } else { C[i, j] = -D[j, i]; }
  }
}
)",
    R"(
func conv1d(X: f32[11], W: f32[3]) -> (Y: f32[11]) {
  block Y(i: spatial 11, r: reduce 3) {
    init { Y[i] = 0.0; }
    Y[i] += select(i + r >= 1 && i + r - 1 < 11, X[i + r - 1], 0.0) * W[r];
  }
}
)",
    R"(
func rowmax(x: f32[5, 7]) -> (m: f32[5], s: f32[]) {
  alloc t: f32[5, 7];
  block t(i: spatial 5, j: spatial 7) { t[i, j] = x[i, j] * x[i, j]; }
  block m(i: spatial 5, j: reduce 7) {
    init { m[i] = min_value(f32); }
    m[i] = max(m[i], t[i, j]);
  }
  block s(i: reduce 5, j: reduce 7) {
    init { s[] = 1.0; }
    s[] += t[i, j];
  }
}
)",
    R"(
func intops(A: i32[4, 9], B: i32[9]) -> (C: i32[4, 9], D: i64[9]) {
  alloc T: i32[4, 9];
  block T(i: spatial 4, j: spatial 9) { T[i, j] = A[i, j] / 3 + B[j] % 4; }
  block C(i: spatial 4, j: spatial 9) { C[i, j] = T[i, j] * T[i, j] - 7; }
  block D(j: spatial 9, i: reduce 4) {
    init { D[j] = 0; }
    D[j] += i64(T[i, j]);
  }
}
)",
    R"(
func sym(A: f32[n, 4], b: f32) -> (B: f32[n, 4], S: f32[4]) {
  alloc T: f32[n, 4];
  block T(i: spatial n, j: spatial 4) { T[i, j] = A[i, j] + b; }
  block B(i: spatial n, j: spatial 4) { B[i, j] = T[n - 1 - i, j]; }
  block S(j: spatial 4, i: reduce n) {
    init { S[j] = 0.0; }
    S[j] += T[i, j];
  }
}
)",
    R"(
func explicit(A: f32[10]) -> (B: f32[10], S: f32[]) {
  for i0 in 0..4 {
    for i1 in 0..3 {
      block B(vi: spatial 10 = i0 * 3 + i1) where i0 * 3 + i1 < 10 {
        B[vi] = A[vi] * 2.0;
      }
    }
  }
  for k0 in 0..3 {
    for k1 in 0..4 {
      block S(vk: reduce 10 = k0 * 4 + k1) where k0 * 4 + k1 < 10 {
        init { S[] = 100.0; }
        S[] = S[] + A[vk];
      }
    }
  }
}
)",
    R"(
func lets(A: f16[6], B: bf16[6]) -> (C: f16[6], D: f32[3, 6]) {
  block C(i: spatial 6) {
    let x = f32(A[i]);
    let y = f32(B[i]);
    C[i] = f16(x * y + 0.5);
  }
  block D(r: spatial 3, i: spatial 6, k: reduce 2) {
    init { D[r, i] = f32(r); }
    D[r, i] += f32(C[i]) * f32(k + 1);
  }
}
)",
};

struct Entry {
  std::string text;
  ir::Func func;
  interp::ArgMap inputs, reference;
};

struct Fixture {
  ir::Module module;
  std::vector<Entry> entries;
};

Fixture &fixture() {
  static Fixture *f = [] {
    auto *fx = new Fixture;
    std::string all;
    for (const char *text : kPrograms)
      all += text;
    std::ostringstream err;
    std::optional<ir::Module> m = fuzz::compileText("programs.tdsl", all, true, err);
    if (!m) {
      std::cerr << "fuzz-schedule: the fixed programs do not compile:\n" << err.str();
      std::abort();
    }
    fx->module = *m;
    uint64_t seed = 1;
    for (const ir::Func &f : m->functions()) {
      if (!f.as<ir::PrimFunc>())
        continue;
      Entry e;
      for (const char *text : kPrograms)
        if (std::string(text).find("\nfunc " + f.name() + "(") != std::string::npos)
          e.text = text;
      if (e.text.empty()) {
        std::cerr << "fuzz-schedule: no text of its own for " << f.name() << "\n";
        std::abort();
      }
      e.func = f;
      std::string error;
      interp::Interpreter in(fx->module);
      e.inputs = fuzz::randomInputs(in, f, {{"n", 5}}, seed++, error);
      e.reference = e.inputs;
      if (!error.empty() || !in.run(f, e.reference, {}, error)) {
        std::cerr << "fuzz-schedule: " << f.name() << ": " << error << "\n";
        std::abort();
      }
      fx->entries.push_back(std::move(e));
    }
    return fx;
  }();
  return *f;
}

/// How many loop iterations running `func` takes: the sum over its loops of the product of the
/// extents around and including each (a symbolic extent counts as 64). Tiles of tiles multiply
/// predicated iterations: seven `tile(…, [4, 4])` of loops of extent 1 make 4^14 of them, minutes
/// in the instrumented interpreter for a legal script.
double loopIterations(const ir::Func &func) {
  struct Count : ir::IRVisitor {
    double total = 0, scale = 1;
    void visit(const ir::For *op) override {
      const auto *imm = op->extent.as<ir::IntImm>();
      double saved = scale;
      scale *= imm ? std::max<double>(double(imm->value), 1.0) : 64.0;
      total += scale;
      ir::IRVisitor::visit(op);
      scale = saved;
    }
  } count;
  count.visitStmt(func.as<ir::PrimFunc>()->body);
  return count.total;
}

/// Above this many iterations the results are not compared (the rest still is): the programs
/// run a few hundred unscheduled, so only tiles of tiles of extent-1 loops come near it.
constexpr double kMaxIterations = 200000;

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Fixture &fx = fixture();
  fuzz::ByteChooser bytes(data, size);
  fuzz::Chooser choose = [&](uint64_t n) { return bytes.pick(n); };
  const Entry &entry = fx.entries[choose(fx.entries.size())];
  schedule::ScheduleState state(entry.func, "cpu");
  fuzz::RandomScheduler scheduler(state, choose);
  std::string script;
  size_t steps = 1 + choose(8);
  for (size_t k = 0; k < steps && !bytes.empty(); ++k) {
    // A refusal may come after part of the rewrite (tile refuses in its reorder after
    // splitting): start again from the state before the step, as a refused script does.
    schedule::ScheduleState before = state;
    try {
      script += scheduler.step();
    } catch (const schedule::ScheduleError &) {
      state = before;
    }
  }
  if (script.empty())
    return 0;
  auto fail = [&](const std::string &what) {
    std::cerr << "fuzz-schedule: FAILURE in '" << entry.func.name() << "': " << what
              << "\n  schedule " << entry.func.name() << " { " << script << " }\n--- scheduled IR\n"
              << ir::toString(state.func()) << "\n";
    std::abort();
  };
  // TDSL_FUZZ_PRINT=1 (with tdsl-fuzz-replay): the function and its script, before they run.
  if (std::getenv("TDSL_FUZZ_PRINT"))
    std::cerr << "schedule " << entry.func.name() << " { " << script << " }\n";
  // The results.
  ir::Module scheduled = fx.module;
  scheduled.replace(state.func());
  if (loopIterations(state.func()) <= kMaxIterations) {
    interp::Interpreter in(scheduled);
    interp::ArgMap args = entry.inputs;
    std::string error;
    if (!in.run(state.func(), args, {}, error))
      fail("the scheduled function fails in the interpreter: " + error);
    if (std::string d = fuzz::compareOutputs(entry.reference, args, entry.func, 1e-4); !d.empty())
      fail("results change: " + d);
  }
  // The printed IR compiles again and prints the same.
  std::ostringstream printed, err;
  printOwnItems(scheduled, printed, entry.func.name());
  std::string text = printed.str();
  std::optional<ir::Module> again = fuzz::compileText("printed.tdsl", text, true, err);
  if (!again)
    fail("the printed IR does not compile again:\n" + err.str() + text);
  std::ostringstream printed2;
  printOwnItems(*again, printed2, entry.func.name());
  if (printed2.str() != text)
    fail("the printed IR prints differently once re-parsed:\n" + printed2.str());
  // The script does what the primitives did.
  std::string program = entry.text + "\nschedule " + entry.func.name() + " { " + script + " }\n";
  std::ostringstream err2;
  std::optional<ir::Module> viaScript = fuzz::compileText("programs.tdsl", program, false, err2);
  if (!viaScript)
    fail("the schedule script is refused:\n" + err2.str());
  std::ostringstream printed3;
  printOwnItems(*viaScript, printed3, entry.func.name());
  if (printed3.str() != text)
    fail("the schedule script gives other IR:\n" + printed3.str());
  return 0;
}

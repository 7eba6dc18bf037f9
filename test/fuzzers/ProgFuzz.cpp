//===- test/fuzzers/ProgFuzz.cpp - Random programs through every route, Csmith-style ----------===//
//
// tdsl-progfuzz — generates random well-typed programs with a random schedule each
// (RandomSchedule.h: only primitives that accept are kept), then runs each program on random
// inputs through
//   the reference interpreter on the unscheduled program (the reference),
//   the interpreter on the scheduled program,
//   the LLVM backend in the ORC JIT (tdsl-run's route),
//   the LLVM backend's object file (tdslc -o x.o) loaded into a JIT,
//   the C++ backend compiled by the Clang libraries (tdslc --via=cpp) loaded into a JIT,
// and checks that all agree. Inputs are multiples of 1/8, and the generator tracks which float
// values every route must compute bit for bit (exact arithmetic, no transcendental): those
// outputs compare exactly, the others with a relative tolerance (FMA contraction and
// reassociated sums are allowed, spec §11). Comparisons, float→int casts, floor and `%` only
// see exact values, so that an allowed rounding difference never changes control flow.
//
// Families of programs (--families, default all; each program draws one by weight):
//   classic   one func of 1-4 stages: spatial and reduce axes, init, lets, if/else, where,
//             select, casts, every dtype, constant and symbolic shapes; read-modify-write
//             blocks (an output updated from its zeros, a reduction without init, a second
//             block updating a written buffer in place), often cache_write's first target;
//   parallel  explicit-form loops marked parallel or vectorized by hand around blocks; 30 %
//             illegal (a block reading an element another iteration writes, a binding such as
//             `v = i / 2`), which the compiler must refuse ("refusals");
//   graph     a graph whose dataflow chains generated funcs (transposes, funcs that read their
//             output before writing it, row sums without init, products, element-wise funcs),
//             so that memory planning reuses dead values' storage; one callee is scheduled;
//   shapes    symbolic shapes with offsets (`A[vi + 1]` over `n - 1`, `W[vr, vi]` with
//             `W: f32[r, m]`), run with shapes that fit or, 35 %, not (m too small): every route
//             must then report an out-of-bounds access of W ("shape errors");
//   gather    `G[v] = A[I[v]]` with an index input in range or, 30 %, with one element out of
//             range: every route must then report it ("index errors").
// An expected error that a route does not report is a `missed-error` finding; a compiled route
// must return 1 with a message naming the function and the buffer.
//
//   tdsl-progfuzz [--seed S] [--count N] [--jobs J] [--batch B] [--max-steps K] [--seconds T]
//                 [--repro-dir DIR] [--routes interp,jit,obj,cpp] [--print N]
//                 [--families classic,parallel,graph,shapes,gather]
//   tdsl-progfuzz --replay FILE.tdsl        (re-runs a reproducer written by an earlier run)
//
// Program i of seed S is the same whatever --jobs and --batch are (it depends on --families).
// Programs run in batches (one module per batch and route, so that a Clang or LLVM compilation
// serves B programs) in forked workers; a worker that crashes or hangs has its batch re-run one
// program per worker to find the culprit. Every mismatch, crash, time-out, missed error,
// refused program or refused schedule script is written to DIR as a self-contained .tdsl file
// whose first line says how to replay it. Exit status: 0 when nothing was found, 1 otherwise,
// 2 on a bad command line.

#include "backends/cpp/CompileCpp.h"
#include "backends/cpp/CppEmitter.h"
#include "backends/interp/Interpreter.h"
#include "backends/llvm/JIT.h"
#include "backends/llvm/LLVMBackend.h"
#include "backends/llvm/Target.h"
#include "runtime/Float16.h"
#include "test/fuzzers/ArgReader.h"
#include "test/fuzzers/FuzzUtil.h"
#include "test/fuzzers/RandomSchedule.h"
#include "tools/driver/Driver.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tdsl;
namespace fs = std::filesystem;

namespace {

// ---- The generator ---------------------------------------------------------------------------

/// A dimension or extent: its text and its value in the run.
struct Dim {
  std::string text;
  int64_t value = 1;
  bool operator==(const Dim &o) const { return text == o.text; }
};

/// What the generator knows of a value: |x| <= 2^mag, and for floats x is a multiple of
/// 2^gran; `exact`: every route computes it bit for bit.
struct Val {
  std::string text;
  int mag = 0, gran = 0;
  bool exact = true;
  bool lowPrec = false; // an inexact value went through f16/bf16 rounding
};

/// The element types the generator picks from: a subset of ir::DType's.
using Ty = ir::DType::Code;

std::string tyName(Ty t) { return ir::DType(t).name(); }
bool isFloat(Ty t) { return t == Ty::F16 || t == Ty::BF16 || t == Ty::F32 || t == Ty::F64; }
bool isInt(Ty t) { return t == Ty::I8 || t == Ty::U8 || t == Ty::I32 || t == Ty::I64; }
/// The dtype a value of storage type `t` is computed in.
Ty computeTy(Ty t) { return t == Ty::F16 || t == Ty::BF16 ? Ty::F32 : t; }
int mantissa(Ty t) {
  switch (t) {
  case Ty::F16:
    return 11;
  case Ty::BF16:
    return 8;
  case Ty::F32:
    return 24;
  case Ty::F64:
    return 53;
  default:
    return 0;
  }
}
int intBits(Ty t) {
  switch (t) {
  case Ty::I8:
  case Ty::U8:
    return 8;
  case Ty::I32:
    return 32;
  default:
    return 64;
  }
}
/// Largest |x| of float dtype `t` we let values reach (2^mag), far from overflow.
int maxMag(Ty t) { return t == Ty::F16 ? 14 : t == Ty::F64 ? 200 : 60; }

struct Buf {
  std::string name;
  Ty ty;
  std::vector<Dim> dims;
  Val info; // what its elements are (mag, gran, exact)
  bool isInput = false;
};

struct Axis {
  std::string name;
  Dim extent;
  bool reduce = false;
};

struct Program {
  uint64_t index = 0;
  std::string name;
  std::string text;     // the function
  std::string schedule; // the schedule statements ("" for none)
  std::map<std::string, int64_t> shapes;
  std::map<std::string, double> tolerance; // per output: 0 = exact
  uint64_t inputSeed = 0;
  int applied = 0, refused = 0;
  std::string family = "classic";
  /// The func the schedule applies to: the program's own, or one a graph calls.
  std::string schedTarget;
  /// What must happen: "" (every route agrees), "refusal" (the compiler refuses the program:
  /// a hand-written parallel or vectorized loop whose iterations depend on each other), "oob"
  /// (when the reference interpreter reports an out-of-bounds access, every route must fail
  /// naming `oobBuffer`).
  std::string expect;
  std::string oobBuffer;
  /// Blocks that read what they write before writing it (cache_write targets).
  std::vector<std::string> rmwBlocks;
  /// Integer inputs used as indices: name -> (extent they index, whether one element is put
  /// out of range).
  std::map<std::string, std::pair<int64_t, bool>> indexData;

  const std::string &scheduled() const { return schedTarget.empty() ? name : schedTarget; }
  std::string fullText() const {
    std::string s = text;
    if (!schedule.empty())
      s += "schedule " + scheduled() + " {\n" + schedule + "}\n";
    return s;
  }
};

/// The program families and their weights among those enabled (--families).
const std::vector<std::pair<std::string, int>> kFamilies = {
    {"classic", 50}, {"parallel", 12}, {"graph", 14}, {"shapes", 12}, {"gather", 12}};

class Generator {
public:
  Generator(uint64_t seed, uint64_t index) {
    std::seed_seq seq{uint32_t(seed), uint32_t(seed >> 32), uint32_t(index), uint32_t(index >> 32)};
    rng_.seed(seq);
    p_.index = index;
    p_.name = "p" + std::to_string(index);
    p_.inputSeed = rng_();
  }

  /// A program of one of `families` (drawn by kFamilies' weights).
  Program generate(const std::set<std::string> &families) {
    int total = 0;
    for (const auto &[name, weight] : kFamilies)
      if (families.count(name))
        total += weight;
    int r = int(pick(uint64_t(std::max(total, 1))));
    std::string family = "classic";
    for (const auto &[name, weight] : kFamilies) {
      if (!families.count(name))
        continue;
      if (r < weight) {
        family = name;
        break;
      }
      r -= weight;
    }
    p_.family = family;
    if (family == "parallel")
      genParallel();
    else if (family == "graph")
      genGraph();
    else if (family == "shapes")
      genShapes();
    else if (family == "gather")
      genGather();
    else
      genClassic();
    return p_;
  }

  std::mt19937_64 &rng() { return rng_; }

private:
  /// One function: 1-4 stages over random inputs (the original family).
  void genClassic() {
    // Shape variables and the pool of dimensions.
    int nsym = chance(40) ? 1 + int(chance(30)) : 0;
    std::vector<Dim> syms;
    for (int k = 0; k < nsym; ++k) {
      std::string name = k == 0 ? "n" : "m";
      int64_t v = 1 + int64_t(pick(6));
      syms.push_back({name, v});
      p_.shapes[name] = v;
    }
    auto dim = [&]() -> Dim {
      if (!syms.empty() && chance(35))
        return syms[pick(syms.size())];
      int64_t v = 1 + int64_t(pick(8));
      return {std::to_string(v), v};
    };
    // Inputs: the first dimensions of the first inputs introduce the shape variables.
    size_t ninputs = 1 + pick(3);
    std::vector<std::string> sig;
    for (size_t k = 0; k < ninputs; ++k) {
      Buf b;
      b.name = std::string(1, char('A' + k));
      b.ty = randomTy(true);
      size_t rank = k < syms.size() ? 1 + pick(3) : pick(4);
      for (size_t d = 0; d < rank; ++d)
        b.dims.push_back(d == 0 && k < syms.size() ? syms[k] : dim());
      b.isInput = true;
      b.info = inputInfo(b.ty);
      bufs_.push_back(b);
      sig.push_back(b.name + ": " + typeText(b));
    }
    // Any shape variable not yet introduced becomes a dimension of the first input.
    if (syms.size() > ninputs) {
      for (size_t k = ninputs; k < syms.size(); ++k) {
        bufs_[0].dims.push_back(syms[k]);
      }
      sig[0] = bufs_[0].name + ": " + typeText(bufs_[0]);
    }
    if (chance(30)) {
      Ty t = chance(50) ? Ty::F32 : Ty::I32;
      scalars_.push_back({"s", t});
      sig.push_back(std::string("s: ") + tyName(t));
    }
    // Stages: the last one (and maybe the one before) are outputs.
    size_t nstages = 1 + pick(4);
    bool twoOutputs = nstages > 1 && chance(35);
    std::ostringstream body;
    std::vector<std::string> outs, allocs;
    for (size_t st = 0; st < nstages; ++st) {
      bool output = st + 1 == nstages || (twoOutputs && st + 2 == nstages);
      Buf w;
      w.name = (output ? "O" : "T") + std::to_string(st);
      w.ty = randomTy(false);
      size_t rank = pick(4);
      if (rank == 0 && w.ty == Ty::Bool)
        rank = 1;
      for (size_t d = 0; d < rank; ++d)
        w.dims.push_back(dim());
      std::string block = genBlock(w, output, dim);
      if (!w.dims.empty() && w.ty != Ty::Bool && chance(12))
        block += genUpdate(w);
      (output ? outs : allocs).push_back(w.name + ": " + typeText(w));
      if (!output)
        body << "  alloc " << w.name << ": " << typeText(w) << ";\n";
      body << block;
      if (output)
        p_.tolerance[w.name] = tolerance(w.info, w.ty);
      bufs_.push_back(w);
    }
    std::ostringstream text;
    text << "func " << p_.name << "(";
    for (size_t k = 0; k < sig.size(); ++k)
      text << (k ? ", " : "") << sig[k];
    text << ") -> (";
    for (size_t k = 0; k < outs.size(); ++k)
      text << (k ? ", " : "") << outs[k];
    text << ") {\n" << body.str() << "}\n";
    p_.text = text.str();
  }

  uint64_t pick(uint64_t n) { return n <= 1 ? 0 : rng_() % n; }
  bool chance(int percent) { return int(rng_() % 100) < percent; }

  Ty randomTy(bool input) {
    static const Ty common[] = {Ty::F32, Ty::F32, Ty::F32, Ty::F64, Ty::I32,
                                Ty::I64, Ty::I8,  Ty::U8,  Ty::F16, Ty::BF16};
    if (input && chance(8))
      return Ty::Bool;
    if (!input && chance(5))
      return Ty::Bool;
    return common[pick(std::size(common))];
  }

  static std::string typeText(const Buf &b) {
    std::string s = std::string(tyName(b.ty)) + "[";
    for (size_t d = 0; d < b.dims.size(); ++d)
      s += (d ? ", " : "") + b.dims[d].text;
    return s + "]";
  }

  static Val inputInfo(Ty t) {
    Val v;
    if (isFloat(t)) {
      v.mag = 1;
      v.gran = -3;
    } else if (isInt(t)) {
      v.mag = 4;
    }
    return v;
  }

  // ---- Expressions ---------------------------------------------------------------------------

  struct Scope {
    std::vector<Axis> axes;
    std::vector<std::pair<std::string, std::pair<Ty, Val>>> lets;
    const Buf *writing = nullptr;
  };

  /// Marks `v` inexact when its bits do not fit the mantissa of `t`, or it grows too large.
  static Val settle(Val v, Ty t) {
    if (isFloat(t) && (v.mag - v.gran > mantissa(t) || v.mag > maxMag(t) / 2))
      v.exact = false;
    return v;
  }

  std::string intConst(Ty t) {
    int64_t v = int64_t(pick(9)) - (t == Ty::U8 ? 0 : 4);
    return std::to_string(v);
  }

  /// An index expression into a dimension of extent `e`, always in range where `guard` (a
  /// condition appended to it when needed) holds.
  std::string index(const Dim &e, const Scope &sc, std::vector<std::string> &guard) {
    std::vector<const Axis *> same, smaller;
    for (const Axis &a : sc.axes) {
      if (a.extent == e)
        same.push_back(&a);
      else if (a.extent.value <= e.value && e.text == std::to_string(e.value) &&
               a.extent.text == std::to_string(a.extent.value))
        smaller.push_back(&a);
    }
    int r = int(pick(100));
    if (!same.empty() && r < 55) {
      const Axis *a = same[pick(same.size())];
      int how = int(pick(10));
      if (how < 6)
        return a->name;
      if (how < 8)
        return e.text + " - 1 - " + a->name;
      int64_t d = 1 + int64_t(pick(2));
      if (how == 8) {
        guard.push_back(a->name + " + " + std::to_string(d) + " < " + e.text);
        return a->name + " + " + std::to_string(d);
      }
      guard.push_back(a->name + " >= " + std::to_string(d));
      return a->name + " - " + std::to_string(d);
    }
    if (!smaller.empty() && r < 70)
      return smaller[pick(smaller.size())]->name;
    if (!sc.axes.empty() && r < 88) {
      const Axis *a = &sc.axes[pick(sc.axes.size())];
      switch (pick(3)) {
      case 0:
        return a->name + " % " + e.text;
      case 1:
        return "(" + a->name + " * 3 + 1) % " + e.text;
      default:
        return "min(" + a->name + ", " + e.text + " - 1)";
      }
    }
    if (e.text == std::to_string(e.value))
      return std::to_string(pick(uint64_t(e.value)));
    return chance(50) ? "0" : e.text + " - 1";
  }

  /// A load of `b` converted to `t`.
  Val load(const Buf &b, Ty t, const Scope &sc) {
    std::vector<std::string> guard;
    std::string s = b.name + "[";
    for (size_t d = 0; d < b.dims.size(); ++d)
      s += (d ? ", " : "") + index(b.dims[d], sc, guard);
    s += "]";
    Val v = b.info;
    v.text = s;
    Ty from = b.ty;
    if (from == Ty::F16 || from == Ty::BF16) {
      v.text = "f32(" + v.text + ")";
      from = Ty::F32;
    }
    v = convert(v, from, t);
    if (!guard.empty()) {
      std::string cond;
      for (size_t k = 0; k < guard.size(); ++k)
        cond += (k ? " && " : "") + guard[k];
      Val other = constant(t);
      v.text = "select(" + cond + ", " + v.text + ", " + other.text + ")";
      v.mag = std::max(v.mag, other.mag);
      v.gran = std::min(v.gran, other.gran);
    }
    return v;
  }

  /// `v` of compute type `from` as compute type `to` (a cast when they differ).
  Val convert(Val v, Ty from, Ty to) {
    if (from == to)
      return v;
    Val r = v;
    r.text = std::string(tyName(to)) + "(" + v.text + ")";
    if (to == Ty::Bool) {
      r.mag = 0;
      r.gran = 0;
      return r;
    }
    if (from == Ty::Bool) {
      r.mag = 0;
      r.gran = 0;
      r.exact = true;
      return r;
    }
    if (isFloat(to) && isInt(from)) {
      r.gran = 0;
      r.mag = std::min(v.mag, intBits(from));
      if (r.mag > mantissa(to)) // rounds, the same way everywhere
        r.gran = r.mag - mantissa(to);
      r.exact = true;
      return r;
    }
    if (isFloat(to) && isFloat(from)) {
      if (mantissa(to) < mantissa(from) && v.mag - v.gran > mantissa(to))
        r.gran = v.mag - mantissa(to); // rounds, deterministically if v is exact
      return settle(r, to);
    }
    if (isInt(to) && isFloat(from)) {
      // Only exact values (and in range) may be cast to an integer.
      r.mag = std::max(0, v.mag);
      r.gran = 0;
      r.exact = true;
      return r;
    }
    // int -> int
    r.mag = std::min(v.mag, intBits(to));
    return r;
  }

  Val constant(Ty t) {
    Val v;
    if (t == Ty::Bool) {
      v.text = chance(50) ? "true" : "false";
      return v;
    }
    if (isInt(t)) {
      v.text = intConst(t);
      if (t != Ty::I64)
        v.text = std::string(tyName(t)) + "(" + v.text + ")";
      v.mag = 3;
      return v;
    }
    static const char *floats[] = {"0.0", "1.0", "0.5", "-1.5", "2.0", "0.125", "-0.25", "3.0"};
    v.text = floats[pick(std::size(floats))];
    if (t == Ty::F64)
      v.text = "f64(" + v.text + ")";
    v.mag = 2;
    v.gran = -3;
    return v;
  }

  /// A leaf of compute type `t`.
  Val leaf(Ty t, const Scope &sc) {
    int r = int(pick(100));
    if (r < 60) {
      std::vector<const Buf *> readable;
      for (const Buf &b : bufs_)
        if (&b != sc.writing)
          readable.push_back(&b);
      if (!readable.empty()) {
        const Buf *b = readable[pick(readable.size())];
        Ty ct = computeTy(b->ty);
        // A float becomes an integer only when exact and well inside the range.
        bool castable =
            !isFloat(ct) || !isInt(t) || (b->info.exact && b->info.mag <= intBits(t) - 2);
        if (castable)
          return boolOrConvert(load(*b, t == Ty::Bool ? ct : t, sc), t, ct, b);
      }
    }
    if (r < 72 && !sc.lets.empty()) {
      const auto &[name, info] = sc.lets[pick(sc.lets.size())];
      Val v = info.second;
      v.text = name;
      return convert(v, info.first, t);
    }
    if (r < 80 && !sc.axes.empty() && t != Ty::Bool) {
      const Axis &a = sc.axes[pick(sc.axes.size())];
      Val v;
      v.text = a.name;
      v.mag = 4;
      return convert(v, Ty::I64, t);
    }
    if (r < 85 && !scalars_.empty() && t != Ty::Bool) {
      const auto &[name, st] = scalars_[pick(scalars_.size())];
      Val v = inputInfo(st);
      v.text = name;
      return convert(v, st, t);
    }
    return constant(t);
  }

  /// A load used where a bool is wanted compares it; elsewhere it is converted already.
  Val boolOrConvert(Val v, Ty t, Ty ct, const Buf *b) {
    if (t != Ty::Bool || ct == Ty::Bool)
      return v;
    (void)b;
    if (isFloat(ct) && !v.exact)
      return constant(Ty::Bool);
    Val r;
    r.text = "(" + v.text + (chance(50) ? " > " : " <= ") + (isFloat(ct) ? "0.25" : "1") + ")";
    return r;
  }

  Val expr(Ty t, int depth, const Scope &sc) {
    if (depth <= 0 || chance(25))
      return leaf(t, sc);
    if (t == Ty::Bool)
      return boolExpr(depth, sc);
    if (isInt(t))
      return intExpr(t, depth, sc);
    return floatExpr(t, depth, sc);
  }

  Val boolExpr(int depth, const Scope &sc) {
    int r = int(pick(6));
    Val v;
    if (r == 0) {
      Val a = expr(Ty::Bool, depth - 1, sc), b = expr(Ty::Bool, depth - 1, sc);
      v.text = "(" + a.text + (chance(50) ? " && " : " || ") + b.text + ")";
      return v;
    }
    if (r == 1) {
      v.text = "!(" + expr(Ty::Bool, depth - 1, sc).text + ")";
      return v;
    }
    // A comparison of two integers or two exact floats.
    Ty ct = chance(50) ? Ty::I32 : (chance(50) ? Ty::F32 : Ty::I64);
    Val a = expr(ct, depth - 1, sc), b = expr(ct, depth - 1, sc);
    if (!a.exact || !b.exact)
      return constant(Ty::Bool);
    static const char *ops[] = {" < ", " <= ", " > ", " >= ", " == ", " != "};
    v.text = "(" + a.text + ops[pick(6)] + b.text + ")";
    return v;
  }

  Val intExpr(Ty t, int depth, const Scope &sc) {
    Val a = expr(t, depth - 1, sc), b = expr(t, depth - 1, sc);
    Val v;
    int bits = intBits(t);
    switch (pick(9)) {
    case 0:
    case 1:
      v.text = "(" + a.text + " + " + b.text + ")";
      v.mag = std::min(bits, std::max(a.mag, b.mag) + 1);
      return v;
    case 2:
      v.text = "(" + a.text + " - " + b.text + ")";
      v.mag = std::min(bits, std::max(a.mag, b.mag) + 1);
      return v;
    case 3:
      v.text = "(" + a.text + " * " + b.text + ")";
      v.mag = std::min(bits, a.mag + b.mag);
      return v;
    case 4:
      v.text = "(" + a.text + " / " + b.text + ")";
      v.mag = a.mag;
      return v;
    case 5:
      v.text = "(" + a.text + " % " + b.text + ")";
      v.mag = std::max(a.mag, b.mag);
      return v;
    case 6:
      v.text = std::string(chance(50) ? "max(" : "min(") + a.text + ", " + b.text + ")";
      v.mag = std::max(a.mag, b.mag);
      return v;
    case 7: {
      Val c = expr(Ty::Bool, depth - 1, sc);
      v.text = "select(" + c.text + ", " + a.text + ", " + b.text + ")";
      v.mag = std::max(a.mag, b.mag);
      return v;
    }
    default:
      if (t == Ty::U8) {
        v.text = "(" + a.text + " / 2)";
        v.mag = a.mag;
        return v;
      }
      v.text = "abs(" + a.text + ")";
      v.mag = a.mag;
      return v;
    }
  }

  Val floatExpr(Ty t, int depth, const Scope &sc) {
    Val a = expr(t, depth - 1, sc);
    int r = int(pick(16));
    Val v = a;
    if (r < 3) { // + or -
      Val b = expr(t, depth - 1, sc);
      v.text = "(" + a.text + (r == 2 ? " - " : " + ") + b.text + ")";
      v.mag = std::max(a.mag, b.mag) + 1;
      v.gran = std::min(a.gran, b.gran);
      v.exact = a.exact && b.exact;
      v.lowPrec = a.lowPrec || b.lowPrec;
    } else if (r < 5) { // *
      Val b = expr(t, depth - 1, sc);
      if (a.mag + b.mag > maxMag(t))
        return a;
      v.text = "(" + a.text + " * " + b.text + ")";
      v.mag = a.mag + b.mag;
      v.gran = a.gran + b.gran;
      v.exact = a.exact && b.exact;
      v.lowPrec = a.lowPrec || b.lowPrec;
    } else if (r == 5) {
      v.text = "(" + a.text + " / " + (chance(50) ? "2.0" : "0.5") + ")";
      v.mag = a.mag + 1;
      v.gran = a.gran - 1;
    } else if (r == 6) {
      Val b = expr(t, depth - 1, sc);
      v.text = std::string(chance(50) ? "max(" : "min(") + a.text + ", " + b.text + ")";
      v.mag = std::max(a.mag, b.mag);
      v.gran = std::min(a.gran, b.gran);
      v.exact = a.exact && b.exact;
      v.lowPrec = a.lowPrec || b.lowPrec;
    } else if (r == 7) {
      v.text = chance(50) ? "abs(" + a.text + ")" : "(-" + a.text + ")";
    } else if (r == 8) {
      Val c = expr(Ty::Bool, depth - 1, sc), b = expr(t, depth - 1, sc);
      v.text = "select(" + c.text + ", " + a.text + ", " + b.text + ")";
      v.mag = std::max(a.mag, b.mag);
      v.gran = std::min(a.gran, b.gran);
      v.exact = a.exact && b.exact;
      v.lowPrec = a.lowPrec || b.lowPrec;
    } else if (r == 9) {
      if (!a.exact)
        return a;
      static const char *fns[] = {"floor", "ceil", "round", "trunc"};
      v.text = std::string(fns[pick(4)]) + "(" + a.text + ")";
      v.gran = std::max(0, a.gran);
      v.mag = a.mag + 1;
    } else if (r == 10) {
      if (!a.exact)
        return a;
      v.text = "(" + a.text + " % " + (chance(50) ? "2.0" : "0.75") + ")";
      bool pow2 = v.text.find("2.0") != std::string::npos;
      v.mag = 1;
      v.gran = pow2 ? a.gran : std::min(a.gran, -2);
      v.exact = pow2; // 0.75 is exact, but a / 0.75 rounds before floor
    } else if (r == 11) {
      Val b = expr(t, depth - 1, sc), c = expr(t, depth - 1, sc);
      if (a.mag + b.mag > maxMag(t))
        return c;
      v.text = "fma(" + a.text + ", " + b.text + ", " + c.text + ")";
      v.mag = std::max(a.mag + b.mag, c.mag) + 1;
      v.gran = std::min(a.gran + b.gran, c.gran);
      v.exact = a.exact && b.exact && c.exact;
      v.lowPrec = a.lowPrec || b.lowPrec || c.lowPrec;
    } else if (r == 12) {
      Ty it = chance(50) ? Ty::I32 : Ty::I64;
      if (!a.exact || a.mag > 30)
        return a;
      Val c = convert(a, t, it);
      return convert(c, it, t);
    } else {
      static const char *fns[] = {
          "tanh(%)",           "sigmoid(%)", "sqrt(abs(%))", "exp(min(%, 3.0))",
          "log(abs(%) + 1.0)", "sin(%)",     "cos(%)",       "erf(%)"};
      std::string f = fns[pick(std::size(fns))];
      size_t at = f.find('%');
      v.text = f.substr(0, at) + a.text + f.substr(at + 1);
      v.exact = false;
      v.mag = std::max(a.mag, 5);
      v.gran = -60;
    }
    return settle(v, t);
  }

  // ---- Blocks ----------------------------------------------------------------------------------

  template <typename DimFn> std::string genBlock(Buf &w, bool output, DimFn &dim) {
    Scope sc;
    sc.writing = &w;
    std::vector<std::string> spatial;
    for (size_t d = 0; d < w.dims.size(); ++d) {
      sc.axes.push_back({"i" + std::to_string(d), w.dims[d], false});
      spatial.push_back("i" + std::to_string(d));
    }
    bool reduction = w.dims.empty() || (w.ty != Ty::Bool && chance(40));
    if (w.ty == Ty::Bool)
      reduction = false;
    int64_t redCount = 1;
    int redMag = 0;
    if (reduction) {
      size_t nred = 1 + pick(2);
      for (size_t k = 0; k < nred; ++k) {
        Dim e = dim();
        sc.axes.push_back({"k" + std::to_string(k), e, true});
        redCount *= std::max<int64_t>(e.value, 1);
        redMag += 3; // extents are at most 8
      }
    }
    (void)redCount;
    std::ostringstream out;
    std::string lhs = w.name + "[";
    for (size_t d = 0; d < spatial.size(); ++d)
      lhs += (d ? ", " : "") + spatial[d];
    lhs += "]";
    Ty ct = computeTy(w.ty);
    // The explicit form (spec §6) with one loop per axis, sometimes; then maybe a `where` on
    // spatial loops, only where the unwritten elements stay zero (outputs).
    bool explicitForm = !sc.axes.empty() && chance(30);
    std::string where;
    auto loopVar = [&](size_t k) { return "l" + w.name + "_" + std::to_string(k); };
    if (explicitForm && output && !spatial.empty() && chance(50))
      where = " where " + loopVar(pick(spatial.size())) + (chance(50) ? " < " : " >= ") +
              std::to_string(1 + pick(3));
    std::string indent = "  ";
    if (explicitForm)
      for (size_t k = 0; k < sc.axes.size(); ++k) {
        out << indent << "for " << loopVar(k) << " in 0.." << sc.axes[k].extent.text << " {\n";
        indent += "  ";
      }
    out << indent << "block " << w.name << "(";
    for (size_t k = 0; k < sc.axes.size(); ++k) {
      out << (k ? ", " : "") << sc.axes[k].name << ": "
          << (sc.axes[k].reduce ? "reduce " : "spatial ") << sc.axes[k].extent.text;
      if (explicitForm)
        out << " = " << loopVar(k);
    }
    out << ")" << where << " {\n";
    // Lets.
    std::string lets;
    size_t nlets = chance(35) ? 1 + pick(2) : 0;
    for (size_t k = 0; k < nlets; ++k) {
      Ty lt = chance(60) ? ct : (chance(50) ? Ty::F32 : Ty::I32);
      if (lt == Ty::Bool)
        lt = Ty::I32;
      Val v = expr(lt, 2, sc);
      std::string name = "t" + std::to_string(k);
      lets += "    let " + name + " = " + v.text + ";\n";
      sc.lets.push_back({name, {lt, v}});
    }
    auto store = [&](const Val &v) {
      if (w.ty == Ty::F16 || w.ty == Ty::BF16)
        return std::string(tyName(w.ty)) + "(" + v.text + ")";
      return v.text;
    };
    int depth = 1 + int(pick(3));
    Val result;
    if (reduction) {
      Val e = expr(ct, depth, sc);
      std::string init, update;
      int kind = int(pick(isFloat(ct) ? 3 : 4));
      Val iv = constant(ct);
      if (kind == 0) { // sum
        init = iv.text;
        if (w.ty == Ty::F16 || w.ty == Ty::BF16)
          update = lhs + " = " + store({"f32(" + lhs + ") + " + e.text}) + ";";
        else
          update =
              chance(50) ? lhs + " += " + e.text + ";" : lhs + " = " + lhs + " + " + e.text + ";";
        result = e;
        result.mag = std::max(e.mag, iv.mag) + redMag + 1;
        result.gran = std::min(e.gran, iv.gran);
      } else if (kind <= 2) { // max / min
        const char *fn = kind == 1 ? "max" : "min";
        init = chance(50) ? std::string(kind == 1 ? "min_value(" : "max_value(") + tyName(ct) + ")"
                          : iv.text;
        std::string cur = (w.ty == Ty::F16 || w.ty == Ty::BF16) ? "f32(" + lhs + ")" : lhs;
        update = lhs + " = " + store({std::string(fn) + "(" + cur + ", " + e.text + ")"}) + ";";
        result = e;
        if (init.find("_value") != std::string::npos && !isFloat(ct)) {
          result.mag = intBits(ct);
        } else if (init.find("_value") != std::string::npos) {
          // A domain with an empty reduction keeps the extreme value.
          result.mag = std::max(e.mag, 127);
        } else {
          result.mag = std::max(e.mag, iv.mag);
          result.gran = std::min(e.gran, iv.gran);
        }
      } else { // integer product (wraps; exact everywhere)
        init = "1";
        update = lhs + " *= " + e.text + ";";
        result = e;
        result.mag = intBits(ct);
      }
      if (w.ty == Ty::F16 || w.ty == Ty::BF16)
        init = std::string(tyName(w.ty)) + "(" + init + ")";
      // An output starts zero-filled: a reduction into it may go without `init` (a
      // read-modify-write block: it reads the output's initial contents).
      bool noInit = output && kind <= 2 && chance(25);
      if (noInit) {
        p_.rmwBlocks.push_back(w.name);
        if (kind != 0) {
          result.mag = std::max(e.mag, 1);
          result.gran = std::min(e.gran, 0);
        }
      } else {
        out << "    init { " << lhs << " = " << init << "; }\n";
      }
      out << lets;
      if (chance(20)) {
        Val c = expr(Ty::Bool, 2, sc);
        out << "    if " << c.text << " { " << update << " }\n";
      } else {
        out << "    " << update << "\n";
      }
    } else {
      out << lets;
      Val e = expr(ct, depth, sc);
      result = e;
      if (chance(25)) {
        Val c = expr(Ty::Bool, 2, sc);
        Val e2 = expr(ct, depth, sc);
        out << "    if " << c.text << " {\n      " << lhs << " = " << store(e)
            << ";\n    } else {\n      " << lhs << " = " << store(e2) << ";\n    }\n";
        result.mag = std::max(e.mag, e2.mag);
        result.gran = std::min(e.gran, e2.gran);
        result.exact = e.exact && e2.exact;
        result.lowPrec = e.lowPrec || e2.lowPrec;
      } else if (output && w.ty != Ty::Bool && chance(15)) {
        // Read-modify-write of the zero-filled output: the value is `e` on every route.
        p_.rmwBlocks.push_back(w.name);
        std::string cur = (w.ty == Ty::F16 || w.ty == Ty::BF16) ? "f32(" + lhs + ")" : lhs;
        if (w.ty != Ty::F16 && w.ty != Ty::BF16 && chance(40))
          out << "    " << lhs << " += " << e.text << ";\n";
        else if (ct == Ty::F32 && chance(50))
          out << "    " << lhs << " = " << store({cur + " * 2.0 + " + e.text}) << ";\n";
        else
          out << "    " << lhs << " = " << store({"(" + e.text + ") - " + cur}) << ";\n";
      } else {
        out << "    " << lhs << " = " << store(e) << ";\n";
      }
    }
    out << indent << "}\n";
    while (indent.size() > 2) {
      indent.resize(indent.size() - 2);
      out << indent << "}\n";
    }
    w.info = holds(result, w.ty);
    return out.str();
  }

  /// What a buffer of dtype `t` holds after storing `result`.
  static Val holds(Val result, Ty t) {
    if (isFloat(t)) {
      result = settle(result, t);
      if (t == Ty::F16 || t == Ty::BF16) {
        if (result.mag - result.gran > mantissa(t))
          result.gran = result.mag - mantissa(t);
        if (!result.exact)
          result.lowPrec = true;
        if (result.mag > 14)
          result.exact = false;
      }
    } else if (isInt(t)) {
      result.mag = std::min(result.mag, intBits(t));
      result.exact = true;
    } else {
      result = Val{};
    }
    result.text.clear();
    return result;
  }

  static double tolerance(const Val &v, Ty t) {
    if (v.exact)
      return 0;
    return v.lowPrec || t == Ty::F16 || t == Ty::BF16 ? 3e-2 : 1e-3;
  }

  /// A second block `U<name>` updating every element of the written buffer `w` in place
  /// (`W[i] = W[i] + e`): it reads what an earlier block wrote.
  std::string genUpdate(Buf &w) {
    Scope sc;
    sc.writing = &w;
    std::string lhs = w.name + "[", axes;
    for (size_t d = 0; d < w.dims.size(); ++d) {
      std::string a = "u" + std::to_string(d);
      sc.axes.push_back({a, w.dims[d], false});
      lhs += (d ? ", " : "") + a;
      axes += (d ? ", " : "") + a + ": spatial " + w.dims[d].text;
    }
    lhs += "]";
    Ty ct = computeTy(w.ty);
    Val e = expr(ct, 1 + int(pick(2)), sc);
    Val old = w.info;
    bool low = w.ty == Ty::F16 || w.ty == Ty::BF16;
    std::string cur = low ? "f32(" + lhs + ")" : lhs, rhs;
    Val r = e;
    r.mag = std::max(old.mag, e.mag) + 1;
    if (ct == Ty::F32 && chance(50) && old.mag + 1 < maxMag(w.ty)) {
      rhs = cur + " * 2.0 + " + e.text;
      r.mag = std::max(old.mag + 1, e.mag) + 1;
    } else {
      rhs = cur + (chance(50) ? " + " : " - ") + e.text;
    }
    if (isFloat(ct)) {
      r.gran = std::min(old.gran, e.gran);
      r.exact = old.exact && e.exact;
      r.lowPrec = old.lowPrec || e.lowPrec;
    }
    std::string block = "U" + w.name;
    p_.rmwBlocks.push_back(block);
    std::ostringstream out;
    out << "  block " << block << "(" << axes << ") {\n    " << lhs << " = "
        << (low ? std::string(tyName(w.ty)) + "(" + rhs + ")" : rhs) << ";\n  }\n";
    w.info = holds(r, w.ty);
    return out.str();
  }

  // ---- The other families ----------------------------------------------------------------------

  Dim constDim(int64_t lo, int64_t hi) {
    int64_t v = lo + int64_t(pick(uint64_t(hi - lo + 1)));
    return {std::to_string(v), v};
  }
  /// The shape variable `name`, with a value in [lo, hi] for the run.
  Dim symDim(const std::string &name, int64_t lo, int64_t hi) {
    auto it = p_.shapes.find(name);
    if (it != p_.shapes.end())
      return {name, it->second};
    int64_t v = lo + int64_t(pick(uint64_t(hi - lo + 1)));
    p_.shapes[name] = v;
    return {name, v};
  }
  Buf inputBuf(const std::string &name, Ty t, std::vector<Dim> dims) {
    Buf b;
    b.name = name;
    b.ty = t;
    b.dims = std::move(dims);
    b.info = inputInfo(t);
    b.isInput = true;
    return b;
  }
  /// `a OP b` of compute type `t`, OP one of + - max (and * for floats when it stays small).
  Val combine(const Val &a, const Val &b, Ty t) {
    Val v;
    int r = int(pick(isFloat(t) && a.mag + b.mag <= maxMag(t) / 2 ? 4 : 3));
    if (r == 3) {
      v.text = "(" + a.text + " * " + b.text + ")";
      v.mag = a.mag + b.mag;
      v.gran = a.gran + b.gran;
    } else if (r == 2) {
      v.text = "max(" + a.text + ", " + b.text + ")";
      v.mag = std::max(a.mag, b.mag);
      v.gran = std::min(a.gran, b.gran);
    } else {
      v.text = "(" + a.text + (r ? " - " : " + ") + b.text + ")";
      v.mag = std::max(a.mag, b.mag) + 1;
      v.gran = std::min(a.gran, b.gran);
    }
    if (isInt(t)) {
      v.mag = std::min(v.mag, intBits(t));
      v.gran = 0;
    }
    v.exact = a.exact && b.exact;
    v.lowPrec = a.lowPrec || b.lowPrec;
    return isFloat(t) ? settle(v, t) : v;
  }
  /// A load of `b` at `index` (its text), converted to compute type `t`.
  Val loadAt(const Buf &b, const std::string &index, Ty t) {
    Val v = b.info;
    v.text = b.name + "[" + index + "]";
    Ty from = b.ty;
    if (from == Ty::F16 || from == Ty::BF16) {
      v.text = "f32(" + v.text + ")";
      from = Ty::F32;
    }
    return convert(v, from, t);
  }
  std::string signature(const std::vector<Buf> &ins, const std::vector<Buf> &outs) {
    std::string s = "func " + p_.name + "(";
    for (size_t k = 0; k < ins.size(); ++k)
      s += (k ? ", " : "") + ins[k].name + ": " + typeText(ins[k]);
    s += ") -> (";
    for (size_t k = 0; k < outs.size(); ++k)
      s += (k ? ", " : "") + outs[k].name + ": " + typeText(outs[k]);
    return s + ")";
  }

  /// Explicit-form loops marked `parallel` or `vectorized` by hand around blocks T (an alloc)
  /// and O (the output). Legal: each iteration touches its own elements, or reads what the same
  /// iteration wrote. With probability 30 %, illegal: O reads T at an element another iteration
  /// of the marked loop writes, or a binding maps two iterations to one element; the compiler
  /// must refuse those (expect "refusal").
  void genParallel() {
    bool illegal = chance(30);
    int how = int(pick(3)); // illegal: 0 race across parallel, 1 across lanes, 2 not injective
    size_t rank = 1 + pick(2);
    std::vector<Dim> dims;
    for (size_t d = 0; d < rank; ++d)
      dims.push_back(d == 0 && chance(30) ? symDim("n", 1, 6) : constDim(illegal ? 2 : 1, 8));
    // A vectorized loop needs a constant extent.
    auto isConst = [&](size_t d) { return dims[d].text == std::to_string(dims[d].value); };
    if (illegal && how == 1 && !isConst(rank - 1))
      how = 0;
    static const Ty tys[] = {Ty::F32, Ty::F32, Ty::F64, Ty::I32, Ty::I64};
    Ty tt = tys[pick(std::size(tys))];
    std::vector<Buf> ins = {inputBuf("A", randomTy(true), dims)};
    if (chance(50))
      ins.push_back(inputBuf("B", randomTy(true), dims));
    for (const Buf &b : ins)
      bufs_.push_back(b);
    Buf T{"T", tt, dims, {}, false}, O{"O", tt, dims, {}, false};
    Scope sc;
    for (size_t d = 0; d < rank; ++d)
      sc.axes.push_back({"v" + std::to_string(d), dims[d], false});
    Val eT = expr(tt, 1 + int(pick(3)), sc);
    T.info = holds(eT, tt);
    T.info.text.clear();
    // O's read of T: the same element, or (lay 1 only, or illegal) another one along `dim`.
    auto readT = [&](bool other, size_t dim) {
      std::string idx;
      std::string guard;
      for (size_t d = 0; d < rank; ++d) {
        std::string v = "v" + std::to_string(d), x = v;
        if (other && d == dim) {
          switch (pick(4)) {
          case 0:
            x = v + " - 1";
            guard = v + " >= 1";
            break;
          case 1:
            x = v + " + 1";
            guard = v + " + 1 < " + dims[d].text;
            break;
          case 2:
            x = dims[d].text + " - 1 - " + v;
            break;
          default:
            x = "(" + v + " + 1) % " + dims[d].text;
          }
        }
        idx += (d ? ", " : "") + x;
      }
      Val t = loadAt(T, idx, tt);
      if (!guard.empty()) {
        Val c = constant(tt);
        t.text = "select(" + guard + ", " + t.text + ", " + c.text + ")";
        t.mag = std::max(t.mag, c.mag);
        t.gran = std::min(t.gran, c.gran);
      }
      return t;
    };
    // Layouts: 0 one nest holding both blocks; 1 (rank 2) a parallel loop holding a loop per
    // block; 2 (rank 1, constant extent) a split loop, parallel outside.
    int lay = 0;
    if (!illegal && rank == 2 && chance(40))
      lay = 1;
    else if (!illegal && rank == 1 && dims[0].text == std::to_string(dims[0].value) &&
             dims[0].value >= 2 && chance(40))
      lay = 2;
    bool otherRead = (illegal && how != 2) || (lay == 1 && chance(70));
    size_t otherDim = illegal && how == 1 ? rank - 1 : (lay == 1 ? 1 : 0);
    Val tl = readT(otherRead, otherDim);
    Val e2 = expr(tt, 1 + int(pick(2)), sc);
    Val eO = combine(tl, e2, tt);
    O.info = holds(eO, tt);
    auto axesText = [&](const std::vector<std::string> &binds, const std::string &where) {
      std::string s = "(";
      for (size_t d = 0; d < rank; ++d)
        s += (d ? ", " : "") + std::string("v") + std::to_string(d) + ": spatial " + dims[d].text +
             " = " + binds[d];
      return s + ")" + where;
    };
    auto kindOf = [&](bool innermost, bool constExtent) {
      int r = int(pick(100));
      if (r < 45)
        return std::string(" parallel");
      if (innermost && constExtent && r < 75)
        return std::string(" vectorized");
      return std::string();
    };
    std::string tBody = "T[", oLhs = "O[";
    for (size_t d = 0; d < rank; ++d) {
      tBody += (d ? ", v" : "v") + std::to_string(d);
      oLhs += (d ? ", v" : "v") + std::to_string(d);
    }
    tBody += "] = " + eT.text + ";";
    oLhs += "]";
    std::string oBody = oLhs + " = " + eO.text + ";";
    std::ostringstream out;
    if (lay == 0) {
      std::vector<std::string> ext, kinds, binds;
      for (size_t d = 0; d < rank; ++d) {
        ext.push_back(dims[d].text);
        binds.push_back("l" + std::to_string(d));
        std::string k = kindOf(d + 1 == rank, isConst(d));
        if (k == " parallel" && d > 0 && kinds[0] == " parallel")
          k.clear();
        kinds.push_back(k);
      }
      if (illegal && how == 0)
        kinds[0] = " parallel";
      if (illegal && how == 1)
        kinds[rank - 1] = " vectorized";
      if (illegal && how == 2) {
        ext[0] = isConst(0) ? std::to_string(2 * dims[0].value) : dims[0].text + " * 2";
        binds[0] = isConst(0) && chance(50) ? "l0 % " + dims[0].text : "l0 / 2";
        kinds[0] = rank == 1 && isConst(0) && chance(30) ? " vectorized" : " parallel";
      }
      // A legal nest marks at least one loop.
      if (!illegal && kinds[0].empty() && kinds[rank - 1].empty())
        kinds[0] = " parallel";
      std::string indent = "  ";
      for (size_t d = 0; d < rank; ++d) {
        out << indent << "for l" << d << " in 0.." << ext[d] << kinds[d] << " {\n";
        indent += "  ";
      }
      out << indent << "block T" << axesText(binds, "") << " {\n"
          << indent << "  " << tBody << "\n"
          << indent << "}\n";
      out << indent << "block O" << axesText(binds, "") << " {\n"
          << indent << "  " << oBody << "\n"
          << indent << "}\n";
      while (indent.size() > 2) {
        indent.resize(indent.size() - 2);
        out << indent << "}\n";
      }
    } else if (lay == 1) {
      std::string k1 = kindOf(true, isConst(1)), k2 = kindOf(true, isConst(1));
      out << "  for l0 in 0.." << dims[0].text << " parallel {\n";
      out << "    for l1 in 0.." << dims[1].text << (k1 == " parallel" ? "" : k1) << " {\n"
          << "      block T" << axesText({"l0", "l1"}, "") << " {\n        " << tBody
          << "\n      }\n    }\n";
      out << "    for l2 in 0.." << dims[1].text << (k2 == " parallel" ? "" : k2) << " {\n"
          << "      block O" << axesText({"l0", "l2"}, "") << " {\n        " << oBody
          << "\n      }\n    }\n  }\n";
    } else {
      int64_t e = dims[0].value, f = 2 + int64_t(pick(3)), q = (e + f - 1) / f;
      std::string bind = "l0 * " + std::to_string(f) + " + l1";
      std::string where = e % f ? " where " + bind + " < " + dims[0].text : "";
      std::string k1 = chance(60) ? " vectorized" : "";
      out << "  for l0 in 0.." << q << " parallel {\n    for l1 in 0.." << f << k1 << " {\n";
      out << "      block T" << axesText({bind}, where) << " {\n        " << tBody << "\n      }\n";
      out << "      block O" << axesText({bind}, where) << " {\n        " << oBody
          << "\n      }\n    }\n  }\n";
    }
    p_.text = signature(ins, {O}) + " {\n  alloc T: " + typeText(T) + ";\n" + out.str() + "}\n";
    p_.tolerance["O"] = tolerance(O.info, tt);
    if (illegal)
      p_.expect = "refusal";
  }

  /// A graph whose dataflow calls several generated funcs: transposes (not element-wise: their
  /// values die at the next call, so memory planning reuses their storage), funcs that read
  /// their output before writing it (`y[i, j] = y[i, j] + x[i, j]`, reductions without
  /// `init`), row sums, biases, element-wise funcs (fused), sums of two values and products.
  void genGraph() {
    struct GV {
      std::string name;
      std::vector<Dim> dims;
      Val info;
    };
    Dim R = chance(40) ? symDim("n", 1, 6) : constDim(2, 6);
    Dim C = chance(30) ? R : constDim(2, 6);
    std::vector<GV> vals;
    std::string params;
    size_t nin = 1 + pick(2);
    for (size_t k = 0; k < nin; ++k) {
      std::string name = "x" + std::to_string(k);
      vals.push_back({name, {R, C}, inputInfo(Ty::F32)});
      params += (k ? ", " : "") + name + ": f32[" + R.text + ", " + C.text + "]";
    }
    auto dimsText = [](const std::vector<Dim> &d) {
      std::string s = "f32[";
      for (size_t k = 0; k < d.size(); ++k)
        s += (k ? ", " : "") + d[k].text;
      return s + "]";
    };
    std::ostringstream funcs, body;
    std::vector<std::string> fnames;
    std::map<std::string, std::vector<std::string>> rmw;
    size_t ncalls = 3 + pick(4);
    const Dim P{"P", 1}, Q{"Q", 1};
    for (size_t c = 0; c < ncalls; ++c) {
      // A 2-d value, most often the latest one.
      std::vector<size_t> two, one;
      for (size_t k = 0; k < vals.size(); ++k)
        (vals[k].dims.size() == 2 ? two : one).push_back(k);
      auto pickTwo = [&]() -> const GV & {
        if (vals[vals.size() - 1].dims.size() == 2 && chance(60))
          return vals.back();
        return vals[two[pick(two.size())]];
      };
      const GV &x = pickTwo();
      std::string fn = p_.name + "_f" + std::to_string(c);
      std::string v = "v" + std::to_string(c);
      int r = int(pick(100));
      // bias: x and a 1-d value as long as x's rows.
      const GV *rowv = nullptr;
      for (size_t k : one)
        if (vals[k].dims[0] == x.dims[0])
          rowv = &vals[k];
      // a second operand of x's shape, or of its transpose
      const GV *same = nullptr, *trans = nullptr;
      for (size_t k : two) {
        if (vals[k].name != x.name && vals[k].dims[0] == x.dims[0] && vals[k].dims[1] == x.dims[1])
          same = &vals[k];
        if (vals[k].dims[0] == x.dims[1] && vals[k].dims[1] == x.dims[0])
          trans = &vals[k];
      }
      std::string kind = r < 28   ? "tr"
                         : r < 50 ? "acc"
                         : r < 62 ? "rowsum"
                         : r < 72 ? "bias"
                         : r < 82 ? "ew"
                         : r < 91 ? "add"
                                  : "mm";
      if (kind == "bias" && !rowv)
        kind = "rowsum";
      if (kind == "add" && !same)
        kind = "ew";
      if (kind == "mm" && (!trans || x.info.mag + trans->info.mag > 40))
        kind = "tr";
      // The func's body: expressions over x read as `x` with dims (P, Q).
      Buf bx = inputBuf("x", Ty::F32, {P, Q});
      bx.info = x.info;
      std::vector<Buf> saved = bufs_;
      bufs_ = {bx};
      Scope sc;
      std::ostringstream f;
      GV out;
      out.name = v;
      std::string args = x.name;
      std::vector<std::string> rmwHere;
      auto extra = [&](Val base) {
        if (chance(30))
          return base;
        Val e = expr(Ty::F32, 1 + int(pick(2)), sc);
        return combine(base, e, Ty::F32);
      };
      if (kind == "tr") {
        sc.axes = {{"i", Q, false}, {"j", P, false}};
        Val val = extra(loadAt(bx, "j, i", Ty::F32));
        f << "func " << fn << "(x: f32[P, Q]) -> (y: f32[Q, P]) {\n"
          << "  block y(i: spatial Q, j: spatial P) { y[i, j] = " << val.text << "; }\n}\n";
        out.dims = {x.dims[1], x.dims[0]};
        out.info = holds(val, Ty::F32);
      } else if (kind == "acc" || kind == "ew") {
        sc.axes = {{"i", P, false}, {"j", Q, false}};
        Val val = extra(loadAt(bx, "i, j", Ty::F32));
        f << "func " << fn << "(x: f32[P, Q]) -> (y: f32[P, Q]) {\n  block y(i: spatial P, j: "
          << "spatial Q) { ";
        if (kind == "ew") {
          f << "y[i, j] = " << val.text << ";";
        } else {
          rmwHere.push_back("y");
          int how = int(pick(3));
          if (how == 0)
            f << "y[i, j] += " << val.text << ";";
          else if (how == 1)
            f << "y[i, j] = y[i, j] * 2.0 + " << val.text << ";";
          else
            f << "y[i, j] = " << val.text << " - y[i, j];";
        }
        f << " }\n}\n";
        out.dims = x.dims;
        out.info = holds(val, Ty::F32);
      } else if (kind == "rowsum") {
        sc.axes = {{"i", P, false}, {"k", Q, true}};
        Val val = extra(loadAt(bx, "i, k", Ty::F32));
        bool init = chance(25);
        if (!init)
          rmwHere.push_back("y");
        f << "func " << fn << "(x: f32[P, Q]) -> (y: f32[P]) {\n  block y(i: spatial P, k: reduce "
          << "Q) {\n"
          << (init ? "    init { y[i] = 0.0; }\n" : "") << "    y[i] += " << val.text
          << ";\n  }\n}\n";
        out.dims = {x.dims[0]};
        val.mag += 4;
        out.info = holds(val, Ty::F32);
      } else if (kind == "bias") {
        sc.axes = {{"i", P, false}, {"j", Q, false}};
        Buf br = inputBuf("r", Ty::F32, {P});
        br.info = rowv->info;
        Val val = extra(combine(loadAt(bx, "i, j", Ty::F32), loadAt(br, "i", Ty::F32), Ty::F32));
        f << "func " << fn << "(x: f32[P, Q], r: f32[P]) -> (y: f32[P, Q]) {\n  block y(i: spatial "
          << "P, j: spatial Q) { y[i, j] = " << val.text << "; }\n}\n";
        args += ", " + rowv->name;
        out.dims = x.dims;
        out.info = holds(val, Ty::F32);
      } else if (kind == "add") {
        sc.axes = {{"i", P, false}, {"j", Q, false}};
        Buf bb = inputBuf("b", Ty::F32, {P, Q});
        bb.info = same->info;
        Val val = combine(loadAt(bx, "i, j", Ty::F32), loadAt(bb, "i, j", Ty::F32), Ty::F32);
        f << "func " << fn << "(x: f32[P, Q], b: f32[P, Q]) -> (y: f32[P, Q]) {\n  block y(i: "
          << "spatial P, j: spatial Q) { y[i, j] = " << val.text << "; }\n}\n";
        args += ", " + same->name;
        out.dims = x.dims;
        out.info = holds(val, Ty::F32);
      } else { // mm
        bool init = chance(40);
        if (!init)
          rmwHere.push_back("y");
        Val val;
        val.mag = x.info.mag + trans->info.mag + 4;
        val.gran = x.info.gran + trans->info.gran;
        val.exact = x.info.exact && trans->info.exact;
        val.lowPrec = x.info.lowPrec || trans->info.lowPrec;
        f << "func " << fn << "(x: f32[P, Q], w: f32[Q, P]) -> (y: f32[P, P]) {\n  block y(i: "
          << "spatial P, j: spatial P, k: reduce Q) {\n"
          << (init ? "    init { y[i, j] = 0.0; }\n" : "")
          << "    y[i, j] += x[i, k] * w[k, j];\n  }\n}\n";
        args += ", " + trans->name;
        out.dims = {x.dims[0], x.dims[0]};
        out.info = holds(val, Ty::F32);
      }
      bufs_ = saved;
      funcs << f.str();
      fnames.push_back(fn);
      rmw[fn] = rmwHere;
      body << "    " << v << " = call " << fn << "(" << args << ");\n";
      vals.push_back(out);
    }
    // Results: the last value, and maybe another computed one.
    std::vector<const GV *> results = {&vals.back()};
    if (vals.size() > nin + 1 && chance(30))
      results.push_back(&vals[nin + pick(vals.size() - nin - 1)]);
    std::string names, types;
    for (size_t k = 0; k < results.size(); ++k) {
      names += (k ? ", " : "") + results[k]->name;
      types += (k ? ", " : "") + dimsText(results[k]->dims);
      p_.tolerance[results[k]->name] = tolerance(results[k]->info, Ty::F32);
    }
    if (results.size() > 1)
      types = "(" + types + ")";
    std::ostringstream text;
    text << funcs.str() << "graph " << p_.name << "(" << params << ") -> " << types
         << " {\n  dataflow {\n"
         << body.str() << "    output " << names << ";\n  }\n  return " << names << ";\n}\n";
    p_.text = text.str();
    p_.schedTarget = fnames[pick(fnames.size())];
    p_.rmwBlocks = rmw[p_.schedTarget];
  }

  /// Symbolic shapes with offsets: `A[vi + d]` over `vi` in `0..n - e` (d <= e, always in
  /// bounds) and `W[vr, vi + d2]` with `W: f32[r, m]`, in bounds only when m >= n - e + d2.
  /// The run's shapes fit, or with probability 35 % do not: then every route must fail naming
  /// W (expect "oob").
  void genShapes() {
    int64_t e = int64_t(pick(3)), d = int64_t(pick(uint64_t(e + 1))), d2 = int64_t(pick(2));
    bool transposed = chance(30);
    Dim N = symDim("n", e + 2, 7), R = symDim("r", 1, 3);
    int64_t need = N.value - e + d2;
    bool fits = chance(65);
    int64_t mv = fits ? need + int64_t(pick(3)) : std::max<int64_t>(1, need - 1 - int64_t(pick(2)));
    p_.shapes["m"] = mv;
    Dim M{"m", mv};
    Ty tt = chance(75) ? Ty::F32 : Ty::F64;
    std::vector<Buf> ins = {
        inputBuf("A", tt, {N}),
        inputBuf("W", tt, transposed ? std::vector<Dim>{M, R} : std::vector<Dim>{R, M})};
    if (chance(50))
      ins.push_back(inputBuf("X", randomTy(true), {R, N}));
    for (const Buf &b : ins)
      bufs_.push_back(b);
    Buf B{"B", tt, {R, N}, {}, false};
    Dim ext{e ? "n - " + std::to_string(e) : "n", N.value - e};
    Scope sc;
    sc.axes = {{"vr", R, false}, {"vi", ext, false}};
    auto plus = [](const std::string &v, int64_t k) {
      return k ? v + " + " + std::to_string(k) : v;
    };
    Val a = loadAt(ins[0], plus("vi", d), tt);
    Val w = loadAt(ins[1], transposed ? plus("vi", d2) + ", vr" : "vr, " + plus("vi", d2), tt);
    Val val = combine(a, w, tt);
    if (chance(60))
      val = combine(val, expr(tt, 1 + int(pick(2)), sc), tt);
    std::string rhs = val.text;
    if (chance(25)) {
      p_.rmwBlocks.push_back("B");
      rhs = "B[vr, vi] + " + rhs;
      val.mag += 1;
    }
    B.info = holds(val, tt);
    std::ostringstream out;
    if (chance(50)) {
      out << "  block B(vr: spatial r, vi: spatial " << ext.text << ") {\n    B[vr, vi] = " << rhs
          << ";\n  }\n";
    } else {
      out << "  for lr in 0..r" << (chance(50) ? " parallel" : "") << " {\n    for li in 0.."
          << ext.text << " {\n      block B(vr: spatial r = lr, vi: spatial " << ext.text
          << " = li) {\n        B[vr, vi] = " << rhs << ";\n      }\n    }\n  }\n";
    }
    p_.text = signature(ins, {B}) + " {\n" + out.str() + "}\n";
    p_.tolerance["B"] = tolerance(B.info, tt);
    if (!fits) {
      p_.expect = "oob";
      p_.oobBuffer = "W";
    }
  }

  /// Data-dependent gathers: `G[v] = A[I[v]]` (or an embedding, `G[v, j] = E[I[v], j]`) with
  /// `I` an integer input. Its data is in range, or with probability 30 % has one element out
  /// of range: then every route must fail naming the gathered buffer (expect "oob").
  void genGather() {
    bool emb = chance(35);
    Dim N = chance(40) ? symDim("n", 1, 6) : constDim(1, 8);
    Dim M = chance(40) ? symDim("m", 1, 6) : constDim(1, 8);
    Dim K = constDim(1, 4);
    Ty it = chance(75) ? Ty::I64 : Ty::I32;
    static const Ty tys[] = {Ty::F32, Ty::F32, Ty::F64, Ty::I32};
    Ty tt = tys[pick(std::size(tys))];
    std::string src = emb ? "E" : "A";
    std::vector<Buf> ins = {inputBuf(src, tt, emb ? std::vector<Dim>{N, K} : std::vector<Dim>{N}),
                            inputBuf("I", it, {M})};
    if (chance(50))
      ins.push_back(inputBuf("B", randomTy(true), {M}));
    for (const Buf &b : ins)
      if (b.name != "I")
        bufs_.push_back(b);
    Buf G{"G", tt, emb ? std::vector<Dim>{M, K} : std::vector<Dim>{M}, {}, false};
    Scope sc;
    sc.axes = {{"v", M, false}};
    if (emb)
      sc.axes.push_back({"j", K, false});
    std::string at;
    switch (pick(4)) {
    case 0:
      at = "(v + 1) % " + M.text;
      break;
    case 1:
      at = M.text + " - 1 - v";
      break;
    default:
      at = "v";
    }
    std::string index = "I[" + at + "]";
    if (it != Ty::I64)
      index = "i64(" + index + ")";
    Val g = loadAt(ins[0], emb ? index + ", j" : index, tt);
    Val val = chance(70) ? combine(g, expr(tt, 1 + int(pick(2)), sc), tt) : g;
    G.info = holds(val, tt);
    std::string lhs = emb ? "G[v, j]" : "G[v]";
    std::string axes = "v: spatial " + M.text + (emb ? ", j: spatial " + K.text : "");
    std::ostringstream out;
    if (chance(50)) {
      out << "  block G(" << axes << ") {\n    " << lhs << " = " << val.text << ";\n  }\n";
    } else {
      std::string kind = chance(60) ? " parallel" : "";
      out << "  for i in 0.." << M.text << kind << " {\n";
      if (emb)
        out << "    for jj in 0.." << K.text << " {\n";
      out << "    block G(v: spatial " << M.text << " = i"
          << (emb ? ", j: spatial " + K.text + " = jj" : "") << ") {\n      " << lhs << " = "
          << val.text << ";\n    }\n";
      if (emb)
        out << "    }\n";
      out << "  }\n";
    }
    p_.text = signature(ins, {G}) + " {\n" + out.str() + "}\n";
    p_.tolerance["G"] = tolerance(G.info, tt);
    bool bad = chance(30);
    p_.indexData["I"] = {N.value, bad};
    if (bad) {
      p_.expect = "oob";
      p_.oobBuffer = src;
    }
  }

  std::mt19937_64 rng_;
  Program p_;
  std::vector<Buf> bufs_;
  std::vector<std::pair<std::string, Ty>> scalars_;
};

// ---- Running ---------------------------------------------------------------------------------

struct Options {
  uint64_t seed = 1;
  uint64_t count = 100;
  unsigned jobs = 1;
  unsigned batch = 8;
  int maxSteps = 8;
  double seconds = 1e12;
  std::string reproDir = ".";
  std::set<std::string> routes = {"interp", "jit", "obj", "cpp"};
  std::string replay;
  uint64_t print = 0; // print the first N programs
  std::set<std::string> families = {"classic", "parallel", "graph", "shapes", "gather"};
};

struct Stats {
  uint64_t programs = 0, applied = 0, refused = 0, mismatches = 0, rejected = 0, crashes = 0,
           timeouts = 0, routeErrors = 0;
  // Expected outcomes: illegal parallel loops refused, shapes that do not fit and index data
  // out of range reported by every route. `missed`: one of them not reported (a finding).
  uint64_t refusals = 0, shapeErrors = 0, indexErrors = 0, missed = 0;
  void add(const Stats &o) {
    refusals += o.refusals;
    shapeErrors += o.shapeErrors;
    indexErrors += o.indexErrors;
    missed += o.missed;
    programs += o.programs;
    applied += o.applied;
    refused += o.refused;
    mismatches += o.mismatches;
    rejected += o.rejected;
    crashes += o.crashes;
    timeouts += o.timeouts;
    routeErrors += o.routeErrors;
  }
  uint64_t findings() const {
    return mismatches + rejected + crashes + timeouts + routeErrors + missed;
  }
};

const Options *gOpts = nullptr;

/// Writes a reproducer: a header saying what happened and how to replay, then the program.
void writeRepro(const std::string &kind, const Program &p, const std::string &what) {
  fs::create_directories(gOpts->reproDir);
  std::string path =
      gOpts->reproDir + "/" + kind + "-s" + std::to_string(gOpts->seed) + "-" + p.name + ".tdsl";
  std::ofstream out(path);
  out << "// progfuzz " << kind << ": replay with: tdsl-progfuzz --replay " << path << "\n";
  out << "// progfuzz-inputs: seed=" << p.inputSeed;
  for (const auto &[k, v] : p.shapes)
    out << " " << k << "=" << v;
  out << "\n// progfuzz-tolerance:";
  for (const auto &[k, v] : p.tolerance)
    out << " " << k << "=" << v;
  out << "\n// progfuzz-program: family=" << p.family << " entry=" << p.name
      << " sched=" << p.scheduled();
  if (!p.expect.empty())
    out << " expect=" << p.expect;
  if (!p.oobBuffer.empty())
    out << " oob=" << p.oobBuffer;
  for (const std::string &b : p.rmwBlocks)
    out << " rmw=" << b;
  out << "\n";
  if (!p.indexData.empty()) {
    out << "// progfuzz-index:";
    for (const auto &[k, v] : p.indexData)
      out << " " << k << "=" << v.first << "," << int(v.second);
    out << "\n";
  }
  std::istringstream lines(what);
  for (std::string line; std::getline(lines, line);)
    out << "// " << line << "\n";
  out << p.fullText();
  std::cout << "progfuzz: " << kind << " in " << p.name << " (" << path
            << "): " << what.substr(0, what.find('\n')) << "\n"
            << std::flush;
}

/// Whether compiler diagnostics `e` refuse a loop kind (a hand-written parallel or vectorized
/// loop whose iterations depend on each other).
bool refusesLoopKind(const std::string &e) {
  return e.find("cannot be parallel") != std::string::npos ||
         e.find("cannot be vectorized") != std::string::npos;
}

/// Generates program `index` with its random schedule (applied primitives only).
std::optional<Program> makeProgram(uint64_t index, Stats &stats) {
  Generator g(gOpts->seed, index);
  Program p = g.generate(gOpts->families);
  std::ostringstream err;
  std::optional<ir::Module> m = fuzz::compileText(p.name + ".tdsl", p.text, true, err);
  if (p.expect == "refusal") {
    // An illegal hand-written parallel or vectorized loop: the compiler must refuse it.
    std::string e = err.str();
    if (m) {
      ++stats.missed;
      ++stats.programs;
      writeRepro("missed-error", p,
                 "the compiler accepts a parallel or vectorized loop whose iterations depend "
                 "on each other");
    } else if (refusesLoopKind(e)) {
      ++stats.refusals;
      ++stats.programs;
    } else {
      ++stats.rejected;
      writeRepro("rejected", p, "refused, but not for its loop kinds:\n" + e);
    }
    return std::nullopt;
  }
  if (!m) {
    ++stats.rejected;
    writeRepro("rejected", p, "the generated program is refused:\n" + err.str());
    return std::nullopt;
  }
  schedule::ScheduleState state(m->lookup(p.scheduled()), "cpu");
  std::mt19937_64 &rng = g.rng();
  fuzz::RandomScheduler scheduler(state, [&](uint64_t n) { return n <= 1 ? 0 : rng() % n; });
  int steps = int(rng() % uint64_t(gOpts->maxSteps + 1));
  // A block that reads what it writes is often the first primitive's target: cache_write
  // must refuse it when it reads the buffer's initial contents, and be right otherwise.
  if (!p.rmwBlocks.empty() && rng() % 2 && gOpts->maxSteps > 0) {
    std::string bn = p.rmwBlocks[rng() % p.rmwBlocks.size()];
    for (const ir::Block *b : state.blocks()) {
      if (b->name != bn)
        continue;
      std::vector<ir::Buffer> written = fuzz::accessedBuffers(b, true);
      if (written.empty())
        break;
      schedule::ScheduleState before = state;
      try {
        schedule::cacheWrite(state, bn, written[0], ir::MemScope::Local);
        p.schedule += "  cache_write(" + bn + ", " + written[0].name() + ", \"local\");\n";
        ++p.applied;
      } catch (const schedule::ScheduleError &) {
        state = before;
        ++p.refused;
      }
      --steps;
      break;
    }
  }
  for (int k = 0; k < steps; ++k) {
    // A refusal may come after part of the rewrite (tile after its splits): undo it.
    schedule::ScheduleState before = state;
    try {
      std::string s = scheduler.step();
      if (!s.empty()) {
        p.schedule += "  " + s + "\n";
        ++p.applied;
      }
    } catch (const schedule::ScheduleError &) {
      state = before;
      ++p.refused;
    }
  }
  stats.applied += uint64_t(p.applied);
  stats.refused += uint64_t(p.refused);
  return p;
}

// The compiled routes: a JIT holding the batch's functions, and how to call one.
struct Route {
  std::string name;
  std::unique_ptr<llvmgen::Jit> jit;
};

/// Calls `name` (a func or a graph of the batch) compiled into `jit` on `args`; a failure's
/// message is the compiled code's (tdsl_last_error()).
bool callCompiled(llvmgen::Jit &jit, const ir::LoweredModule &lowered, const std::string &name,
                  interp::ArgMap &args, std::string &error) {
  std::optional<llvmgen::JitFunction> f = llvmgen::JitFunction::find(jit, lowered, name, error);
  return f && f->call(args, error);
}

/// The outputs of a func, or the results of a graph.
std::vector<ir::Buffer> outputsOf(const ir::Func &func) {
  if (const auto *g = func.as<ir::GraphFunc>())
    return g->results;
  return func.as<ir::PrimFunc>()->outputs;
}

std::string compareWithTolerance(const interp::ArgMap &want, const interp::ArgMap &got,
                                 const ir::Func &func, const Program &p) {
  for (const ir::Buffer &out : outputsOf(func)) {
    if (!want.count(out.name()) || !got.count(out.name()))
      return "output '" + out.name() + "' is missing";
    const auto &x = std::get<runtime::Tensor>(want.at(out.name()));
    const auto &y = std::get<runtime::Tensor>(got.at(out.name()));
    auto it = p.tolerance.find(out.name());
    double tol = it == p.tolerance.end() ? 0 : it->second;
    for (int64_t i = 0; i < x.numElements(); ++i) {
      runtime::Scalar a = x.load(i), b = y.load(i);
      bool same;
      if (out.dtype().isFloat())
        same =
            (std::isnan(a.f) && std::isnan(b.f)) || a.f == b.f ||
            std::fabs(a.f - b.f) <= tol * std::max(1.0, std::max(std::fabs(a.f), std::fabs(b.f)));
      else
        same = a.i == b.i;
      if (!same) {
        std::ostringstream os;
        os.precision(17);
        os << "output '" << out.name() << "' element " << i << ": " << b.toDouble() << ", expected "
           << a.toDouble() << (tol ? " (tolerance " : " (exact") << (tol ? std::to_string(tol) : "")
           << ")";
        return os.str();
      }
    }
  }
  return {};
}

/// Runs `programs` (one module) through every route; reports findings. `single`: the batch is
/// one program (a failing route compilation is then that program's finding).
void runBatch(const std::vector<Program> &programs, Stats &stats) {
  std::string textS, textR;
  for (const Program &p : programs) {
    textS += p.fullText();
    textR += p.text;
  }
  std::ostringstream errS, errR;
  bool compiled = gOpts->routes.size() > (gOpts->routes.count("interp") ? 1u : 0u);
  ir::LoweredModule L; // the module pipeline's result for the compiled routes
  std::optional<ir::Module> S =
      fuzz::compileText("batch.tdsl", textS, false, errS, compiled ? &L : nullptr);
  // The reference: unscheduled, graphs as written (neither fused nor planned).
  std::optional<ir::Module> R =
      fuzz::compileText("batch.tdsl", textR, true, errR, nullptr, /*graphPasses=*/false);
  if (!S || !R) {
    if (programs.size() > 1) {
      for (const Program &p : programs)
        runBatch({p}, stats);
      return;
    }
    ++stats.rejected;
    writeRepro(S ? "rejected" : "script-refused", programs[0],
               "the program or its schedule is refused:\n" + errS.str() + errR.str());
    return;
  }
  // The compiled routes.
  cpp::CppOptions copts;
  copts.format = false;
  std::map<std::string, Route> routes;
  std::string routeError, routeName;
  llvmgen::TargetOptions target;
  for (std::string name : {"jit", "obj", "cpp"}) {
    if (!gOpts->routes.count(name) || !routeError.empty())
      continue;
    Route r;
    r.name = name;
    std::string error;
    r.jit = llvmgen::Jit::create(target, error);
    bool ok = r.jit != nullptr;
    if (ok && std::string(name) == "jit") {
      ok = r.jit->addModule("batch", L, error);
    } else if (ok && std::string(name) == "obj") {
      std::string object;
      ok = llvmgen::compileModule("batch", L, target, llvmgen::OutputKind::Object, object, error) &&
           r.jit->addObject(object, "batch.o", L, error);
    } else if (ok) {
      std::string object, errors;
      cpp::CompileOptions cc;
      ok = cpp::compileCpp(cpp::emitCpp(L, copts), "batch.cpp", cc, object, errors);
      if (!ok)
        error = "the emitted C++ does not compile:\n" + errors;
      else
        ok = r.jit->addObject(object, "batch.o", L, error);
    }
    if (!ok) {
      routeError = error;
      routeName = name;
      break;
    }
    routes[name] = std::move(r);
  }
  if (!routeError.empty()) {
    if (programs.size() > 1) {
      for (const Program &p : programs)
        runBatch({p}, stats);
      return;
    }
    ++stats.routeErrors;
    writeRepro("route-error", programs[0], "route " + routeName + ": " + routeError);
    return;
  }
  interp::Interpreter inR(*R), inS(*S);
  for (const Program &p : programs) {
    ++stats.programs;
    ir::Func fR = R->lookup(p.name), fS = S->lookup(p.name);
    std::string error;
    interp::ArgMap inputs = fuzz::randomInputs(inR, fR, p.shapes, p.inputSeed, error);
    if (!error.empty()) {
      ++stats.rejected;
      writeRepro("rejected", p, "cannot make inputs: " + error);
      continue;
    }
    // Index inputs: values in [0, extent), and maybe one out of range.
    for (const auto &[name, spec] : p.indexData) {
      auto &t = std::get<runtime::Tensor>(inputs.at(name));
      std::mt19937_64 rng(p.inputSeed ^ 0x9e3779b97f4a7c15ull);
      int64_t extent = std::max<int64_t>(spec.first, 1);
      for (int64_t k = 0; k < t.numElements(); ++k)
        t.store(k, runtime::Scalar::ofInt(t.dtype, int64_t(rng() % uint64_t(extent))));
      if (spec.second && t.numElements() > 0) {
        int64_t bad = rng() % 2 ? spec.first + int64_t(rng() % 3) : -1 - int64_t(rng() % 2);
        t.store(int64_t(rng() % uint64_t(t.numElements())), runtime::Scalar::ofInt(t.dtype, bad));
      }
    }
    interp::ArgMap ref = inputs;
    bool refOk = inR.run(fR, ref, {}, error);
    bool oob = !refOk && error.find("out-of-bounds") != std::string::npos;
    if (!refOk && !(oob && p.expect == "oob")) {
      ++stats.rejected;
      writeRepro("rejected", p, "the unscheduled function fails in the interpreter: " + error);
      continue;
    }
    if (refOk && p.expect == "oob") {
      ++stats.missed;
      writeRepro("missed-error", p,
                 "the interpreter reports no out-of-bounds access of '" + p.oobBuffer + "'");
      continue;
    }
    // Expected: an out-of-bounds access. Every route must fail, the compiled ones with status
    // 1 and a message naming the function and the buffer.
    std::string found;
    auto expectFailure = [&](const std::string &route, bool ok, const std::string &message,
                             bool compiled) {
      if (ok) {
        found +=
            route + ": succeeds; expected an out-of-bounds error naming '" + p.oobBuffer + "'\n";
        return;
      }
      bool named = message.find("'" + p.oobBuffer) != std::string::npos &&
                   message.find("out-of-bounds") != std::string::npos;
      if (compiled)
        named = named && message.find("returned 1: " + p.name + ": ") != std::string::npos;
      if (!named)
        found += route + ": fails, but not naming '" + p.oobBuffer + "': " + message + "\n";
    };
    if (gOpts->routes.count("interp")) {
      interp::ArgMap got = inputs;
      bool ok = inS.run(fS, got, {}, error);
      if (oob)
        expectFailure("interp (scheduled)", ok, error, false);
      else if (!ok)
        found += "interp (scheduled): fails: " + error + "\n";
      else if (std::string d = compareWithTolerance(ref, got, fR, p); !d.empty())
        found += "interp (scheduled): " + d + "\n";
    }
    for (auto &[name, r] : routes) {
      interp::ArgMap got = inputs;
      bool ok = callCompiled(*r.jit, L, p.name, got, error);
      if (oob)
        expectFailure(name, ok, error, true);
      else if (!ok)
        found += name + ": fails: " + error + "\n";
      else if (std::string d = compareWithTolerance(ref, got, fR, p); !d.empty())
        found += name + ": " + d + "\n";
    }
    if (!found.empty()) {
      ++stats.mismatches;
      writeRepro("mismatch", p, found);
    } else if (oob) {
      ++(p.indexData.empty() ? stats.shapeErrors : stats.indexErrors);
    }
  }
}

/// Reads a reproducer: its text, inputs seed, shapes and tolerances.
std::optional<Program> readRepro(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    return std::nullopt;
  Program p;
  std::string line, text;
  while (std::getline(in, line)) {
    auto values = [&](const std::string &prefix, auto onPair) {
      std::istringstream is(line.substr(prefix.size()));
      for (std::string kv; is >> kv;) {
        size_t eq = kv.find('=');
        if (eq != std::string::npos)
          onPair(kv.substr(0, eq), kv.substr(eq + 1));
      }
    };
    if (line.rfind("// progfuzz-inputs:", 0) == 0) {
      values("// progfuzz-inputs:", [&](const std::string &k, const std::string &v) {
        if (k == "seed")
          p.inputSeed = std::stoull(v);
        else
          p.shapes[k] = std::stoll(v);
      });
    } else if (line.rfind("// progfuzz-tolerance:", 0) == 0) {
      values("// progfuzz-tolerance:",
             [&](const std::string &k, const std::string &v) { p.tolerance[k] = std::stod(v); });
    } else if (line.rfind("// progfuzz-program:", 0) == 0) {
      values("// progfuzz-program:", [&](const std::string &k, const std::string &v) {
        if (k == "family")
          p.family = v;
        else if (k == "entry")
          p.name = v;
        else if (k == "sched")
          p.schedTarget = v;
        else if (k == "expect")
          p.expect = v;
        else if (k == "oob")
          p.oobBuffer = v;
        else if (k == "rmw")
          p.rmwBlocks.push_back(v);
      });
    } else if (line.rfind("// progfuzz-index:", 0) == 0) {
      values("// progfuzz-index:", [&](const std::string &k, const std::string &v) {
        size_t comma = v.find(',');
        p.indexData[k] = {std::stoll(v.substr(0, comma)),
                          comma != std::string::npos && v.substr(comma + 1) == "1"};
      });
    } else if (line.rfind("//", 0) != 0) {
      text += line + "\n";
    }
  }
  size_t f = text.find("func ");
  if (f == std::string::npos)
    return std::nullopt;
  if (p.name.empty()) {
    size_t open = text.find('(', f);
    p.name = text.substr(f + 5, open - f - 5);
  }
  size_t sched = text.find("\nschedule ");
  p.text = sched == std::string::npos ? text : text.substr(0, sched + 1);
  if (sched != std::string::npos) {
    size_t body = text.find('{', sched);
    size_t end = text.rfind('}');
    p.schedule = text.substr(body + 2, end - body - 2);
  }
  return p;
}

int usage(const std::string &message) {
  std::cerr << "tdsl-progfuzz: error: " << message << "\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  fuzz::ArgReader args("tdsl-progfuzz", argc, argv);
  while (args.more()) {
    std::string a = args.next();
    auto next = [&] { return args.value(a); };
    try {
      if (a == "--seed")
        opts.seed = std::stoull(next());
      else if (a == "--count")
        opts.count = std::stoull(next());
      else if (a == "--jobs")
        opts.jobs = unsigned(std::max(1, std::stoi(next())));
      else if (a == "--batch")
        opts.batch = unsigned(std::max(1, std::stoi(next())));
      else if (a == "--max-steps")
        opts.maxSteps = std::max(0, std::stoi(next()));
      else if (a == "--seconds")
        opts.seconds = std::stod(next());
      else if (a == "--repro-dir")
        opts.reproDir = next();
      else if (a == "--replay")
        opts.replay = next();
      else if (a == "--print")
        opts.print = std::stoull(next());
      else if (a == "--families") {
        opts.families.clear();
        std::istringstream is(next());
        for (std::string f; std::getline(is, f, ',');) {
          bool known = false;
          for (const auto &[name, weight] : kFamilies)
            known = known || name == f;
          if (!known)
            return usage("unknown family '" + f +
                         "'; expected classic, parallel, graph, shapes or gather");
          opts.families.insert(f);
        }
        if (opts.families.empty())
          return usage("--families needs at least one family");
      } else if (a == "--routes") {
        opts.routes.clear();
        std::istringstream is(next());
        for (std::string r; std::getline(is, r, ',');) {
          if (r != "interp" && r != "jit" && r != "obj" && r != "cpp")
            return usage("unknown route '" + r + "'; expected interp, jit, obj or cpp");
          opts.routes.insert(r);
        }
      } else
        return usage("unknown argument '" + a + "'");
    } catch (const std::exception &) {
      return usage("invalid value for " + a);
    }
  }
  gOpts = &opts;
  // Parallel loops run on LLVM's OpenMP runtime: 2 threads, which sleep when idle.
  setenv("OMP_NUM_THREADS", "2", 0);
  setenv("KMP_BLOCKTIME", "0", 0);

  if (!opts.replay.empty()) {
    std::optional<Program> p = readRepro(opts.replay);
    if (!p)
      return usage("cannot read a program from '" + opts.replay + "'");
    opts.reproDir = fs::temp_directory_path() / "tdsl-progfuzz-replay";
    Stats stats;
    if (p->expect == "refusal") {
      std::ostringstream err;
      bool compiles = fuzz::compileText(opts.replay, p->text, true, err).has_value();
      if (compiles || !refusesLoopKind(err.str()))
        ++stats.missed;
      std::cout << "progfuzz: " << p->name << (compiles ? " is accepted" : " is refused")
                << "; expected a refusal of its loop kinds\n";
    } else {
      runBatch({*p}, stats);
    }
    std::cout << "progfuzz: replay of " << opts.replay << ": "
              << (stats.findings() ? "FAILS" : "passes") << "\n";
    return stats.findings() ? 1 : 0;
  }

  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  for (uint64_t i = 0; i < opts.print && i < opts.count; ++i) {
    Stats ignored;
    if (std::optional<Program> p = makeProgram(i, ignored))
      std::cout << p->fullText() << "\n";
  }

  // Work items: ranges of program indices; a crashed batch comes back one program at a time.
  struct Item {
    std::vector<uint64_t> indices;
  };
  std::vector<Item> queue;
  uint64_t nextIndex = 0;
  auto nextItem = [&](Item &item) {
    if (!queue.empty()) {
      item = queue.back();
      queue.pop_back();
      return true;
    }
    if (nextIndex >= opts.count || elapsed() > opts.seconds)
      return false;
    item.indices.clear();
    for (unsigned k = 0; k < opts.batch && nextIndex < opts.count; ++k)
      item.indices.push_back(nextIndex++);
    return true;
  };
  struct Worker {
    pid_t pid;
    int fd;
    Item item;
  };
  std::vector<Worker> running;
  Stats total;
  uint64_t batches = 0;
  double lastReport = 0;
  for (;;) {
    Item item;
    while (running.size() < opts.jobs && nextItem(item)) {
      int fds[2];
      if (pipe(fds) != 0) {
        perror("pipe");
        return 2;
      }
      std::cout.flush();
      pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        alarm(unsigned(120 + 60 * item.indices.size()));
        Stats st;
        std::vector<Program> programs;
        for (uint64_t idx : item.indices)
          if (std::optional<Program> p = makeProgram(idx, st))
            programs.push_back(*p);
        if (!programs.empty())
          runBatch(programs, st);
        std::cout.flush();
        if (write(fds[1], &st, sizeof st) != ssize_t(sizeof st))
          _exit(3);
        _exit(0);
      }
      close(fds[1]);
      running.push_back({pid, fds[0], item});
    }
    if (running.empty())
      break;
    int status = 0;
    pid_t done = wait(&status);
    auto it = std::find_if(running.begin(), running.end(),
                           [&](const Worker &w) { return w.pid == done; });
    if (it == running.end())
      continue;
    Stats st;
    bool got = read(it->fd, &st, sizeof st) == ssize_t(sizeof st);
    close(it->fd);
    Item finished = it->item;
    running.erase(it);
    ++batches;
    if (got && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      total.add(st);
    } else if (finished.indices.size() > 1) {
      for (uint64_t idx : finished.indices)
        queue.push_back({{idx}});
    } else {
      bool timeout = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM;
      Stats ignored;
      std::optional<Program> p = makeProgram(finished.indices[0], ignored);
      std::string what = WIFSIGNALED(status)
                             ? std::string("killed by signal ") + strsignal(WTERMSIG(status))
                             : "exit status " + std::to_string(WEXITSTATUS(status));
      ++(timeout ? total.timeouts : total.crashes);
      ++total.programs;
      if (p)
        writeRepro(timeout ? "timeout" : "crash", *p, what);
    }
    if (elapsed() - lastReport > 60) {
      lastReport = elapsed();
      rusage u{};
      getrusage(RUSAGE_CHILDREN, &u);
      std::cout << "progfuzz: ... " << total.programs << " programs, " << total.findings()
                << " findings, " << int(elapsed()) << " s, "
                << u.ru_utime.tv_sec + u.ru_stime.tv_sec << " CPU s\n"
                << std::flush;
    }
  }
  double took = elapsed();
  // CPU time of this process and its workers: the machine may be shared, wall time is not
  // the generator's cost.
  double cpu = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    cpu += double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  std::cout << "progfuzz: " << total.programs << " programs, " << total.applied
            << " schedule primitives applied (" << total.refused << " refused), "
            << total.mismatches << " mismatches, " << total.crashes << " crashes, "
            << total.timeouts << " timeouts, " << total.rejected << " rejected, "
            << total.routeErrors << " route errors, " << total.missed
            << " missed errors; expected: " << total.refusals << " refusals, " << total.shapeErrors
            << " shape errors, " << total.indexErrors << " index errors (seed " << opts.seed << ", "
            << int(took) << " s, " << (took > 0 ? double(total.programs) / took : 0)
            << " programs/s; " << int(cpu) << " CPU s, "
            << (cpu > 0 ? double(total.programs) / cpu : 0) << " programs per CPU s)\n";
  return total.findings() ? 1 : 0;
}

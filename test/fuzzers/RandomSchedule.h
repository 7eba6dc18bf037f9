//===- test/fuzzers/RandomSchedule.h - Random schedule primitives, with their script text -----===//
//
// Shared by the schedule harness (FuzzSchedule.cpp) and the program generator (ProgFuzz.cpp):
// one random schedule primitive at a time, applied through the primitives of
// passes/schedule/Primitives.h on a ScheduleState, with arguments drawn from the current IR.
// Every applied primitive is also written as schedule-script text (spec §7) that does the same
// when compiled: each statement that needs loop handles is preceded by `_, h1 = loops(B);` of a
// block under the loops concerned, so a script never depends on handles bound earlier.
//
// The choices come from a `Chooser` (a seeded generator, or the fuzzer's bytes). A refused
// primitive throws schedule::ScheduleError and leaves the state unchanged.

#pragma once

#include "ir/IRVisitor.h"
#include "passes/schedule/Primitives.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace tdsl::fuzz {

/// A source of choices: `pick(n)` is in [0, n) (n > 0).
using Chooser = std::function<uint64_t(uint64_t n)>;

/// Buffers that `b` reads (writes = false) or writes.
inline std::vector<ir::Buffer> accessedBuffers(const ir::Block *b, bool writes) {
  struct V : ir::IRVisitor {
    bool writes = false;
    std::vector<ir::Buffer> out;
    void add(const ir::Buffer &x) {
      for (const ir::Buffer &y : out)
        if (y == x)
          return;
      out.push_back(x);
    }
    void visit(const ir::BufferLoad *op) override {
      if (!writes)
        add(op->buffer);
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::BufferStore *op) override {
      if (writes)
        add(op->buffer);
      ir::IRVisitor::visit(op);
    }
  } v;
  v.writes = writes;
  v.visitStmt(b->body);
  if (b->init.defined())
    v.visitStmt(b->init);
  return v.out;
}

class RandomScheduler {
public:
  RandomScheduler(schedule::ScheduleState &s, Chooser choose) : s_(s), choose_(std::move(choose)) {}

  /// Applies one random primitive. Returns its script text ("" when the chosen primitive had
  /// nothing to apply to); throws schedule::ScheduleError when the primitive refuses.
  std::string step() {
    std::vector<const ir::Block *> blocks = s_.blocks();
    if (blocks.empty())
      return "";
    static const std::vector<std::string> prims = {"split",
                                                   "split",
                                                   "split3",
                                                   "fuse",
                                                   "reorder",
                                                   "tile",
                                                   "parallel",
                                                   "vectorize",
                                                   "unroll",
                                                   "compute_at",
                                                   "reverse_compute_at",
                                                   "compute_inline",
                                                   "reverse_compute_inline",
                                                   "decompose_reduction",
                                                   "cache_read",
                                                   "cache_write",
                                                   "rfactor",
                                                   "set_scope",
                                                   "blockize",
                                                   "transform_layout",
                                                   "storage_align"};
    std::string p = prims[choose_(prims.size())];
    const ir::Block *b = blocks[choose_(blocks.size())];
    std::string bn = b->name;
    std::vector<ir::Var> above = schedule::getLoops(s_, bn);
    std::ostringstream out;
    // `_, h1, _ = loops(B);` binding the loops at `want` (indices into `above`) to h<i>.
    auto bindLoops = [&](const std::vector<size_t> &want) {
      std::vector<std::string> names;
      for (size_t i = 0; i < above.size(); ++i)
        names.push_back(
            std::find(want.begin(), want.end(), i) != want.end() ? "h" + std::to_string(i) : "_");
      for (size_t i = 0; i < names.size(); ++i)
        out << (i ? ", " : "") << names[i];
      out << " = loops(" << bn << "); ";
    };
    auto h = [](size_t i) { return "h" + std::to_string(i); };
    size_t n = above.size();
    if ((p == "split" || p == "split3") && n > 0) {
      size_t i = choose_(n);
      std::vector<std::optional<int64_t>> f;
      std::string text;
      if (p == "split") {
        int64_t k = 2 + int64_t(choose_(4));
        bool inferOuter = choose_(2);
        f = inferOuter ? std::vector<std::optional<int64_t>>{std::nullopt, k}
                       : std::vector<std::optional<int64_t>>{k, std::nullopt};
        text = inferOuter ? "[_, " + std::to_string(k) + "]" : "[" + std::to_string(k) + ", _]";
      } else {
        int64_t a = 1 + int64_t(choose_(3)), c = 1 + int64_t(choose_(3));
        size_t hole = choose_(3);
        std::vector<std::string> parts;
        for (size_t j = 0; j < 3; ++j) {
          if (j == hole) {
            f.push_back(std::nullopt);
            parts.push_back("_");
          } else {
            int64_t v = f.size() == (hole == 0 ? 1u : 0u) ? a : c;
            f.push_back(v);
            parts.push_back(std::to_string(v));
          }
        }
        text = "[" + parts[0] + ", " + parts[1] + ", " + parts[2] + "]";
      }
      schedule::split(s_, above[i], f);
      bindLoops({i});
      out << "split(" << h(i) << ", " << text << ");";
      return out.str();
    }
    if (p == "fuse" && n >= 2) {
      size_t i = choose_(n - 1);
      size_t count = (n - i >= 3 && choose_(3) == 0) ? 3 : 2;
      std::vector<ir::Var> loops(above.begin() + i, above.begin() + i + count);
      schedule::fuse(s_, loops);
      std::vector<size_t> idx;
      for (size_t k = 0; k < count; ++k)
        idx.push_back(i + k);
      bindLoops(idx);
      out << "fuse(";
      for (size_t k = 0; k < count; ++k)
        out << (k ? ", " : "") << h(i + k);
      out << ");";
      return out.str();
    }
    if (p == "reorder" && n >= 2) {
      std::vector<size_t> idx(n);
      for (size_t k = 0; k < n; ++k)
        idx[k] = k;
      for (size_t k = n - 1; k > 0; --k)
        std::swap(idx[k], idx[choose_(k + 1)]);
      idx.resize(std::min<size_t>(n, 2 + choose_(2)));
      std::vector<ir::Var> order;
      for (size_t k : idx)
        order.push_back(above[k]);
      schedule::reorder(s_, order);
      bindLoops(idx);
      out << "reorder(";
      for (size_t k = 0; k < idx.size(); ++k)
        out << (k ? ", " : "") << h(idx[k]);
      out << ");";
      return out.str();
    }
    if (p == "tile" && n >= 2) {
      size_t i = choose_(n - 1);
      int64_t f0 = 2 + int64_t(choose_(3)), f1 = 2 + int64_t(choose_(3));
      schedule::tile(s_, above[i], above[i + 1], f0, f1);
      bindLoops({i, i + 1});
      out << "tile(" << h(i) << ", " << h(i + 1) << ", [" << f0 << ", " << f1 << "]);";
      return out.str();
    }
    if ((p == "parallel" || p == "vectorize" || p == "unroll" || p == "blockize") && n > 0) {
      size_t i = choose_(n);
      if (p == "parallel")
        schedule::parallel(s_, above[i]);
      else if (p == "vectorize")
        schedule::vectorize(s_, above[i]);
      else if (p == "unroll")
        schedule::unroll(s_, above[i]);
      else
        schedule::blockize(s_, above[i]);
      bindLoops({i});
      out << p << "(" << h(i) << ");";
      return out.str();
    }
    if (p == "compute_at" || p == "reverse_compute_at") {
      // A loop above another block (the consumer, or the producer).
      const ir::Block *other = blocks[choose_(blocks.size())];
      if (other == b)
        return "";
      std::string on = other->name;
      std::vector<ir::Var> loops = schedule::getLoops(s_, on);
      if (loops.empty())
        return "";
      size_t i = choose_(loops.size());
      if (p == "compute_at")
        schedule::computeAt(s_, bn, loops[i]);
      else
        schedule::reverseComputeAt(s_, bn, loops[i]);
      for (size_t k = 0; k < loops.size(); ++k)
        out << (k ? ", " : "") << (k == i ? h(k) : "_");
      out << " = loops(" << on << "); " << p << "(" << bn << ", " << h(i) << ");";
      return out.str();
    }
    if (p == "compute_inline") {
      schedule::computeInline(s_, bn);
      return p + "(" + bn + ");";
    }
    if (p == "reverse_compute_inline") {
      schedule::reverseComputeInline(s_, bn);
      return p + "(" + bn + ");";
    }
    if (p == "decompose_reduction" && n > 0) {
      size_t i = choose_(n);
      schedule::decomposeReduction(s_, bn, above[i]);
      bindLoops({i});
      out << "decompose_reduction(" << bn << ", " << h(i) << ");";
      return out.str();
    }
    if (p == "rfactor" && n > 0) {
      size_t i = choose_(n);
      int64_t axis = int64_t(choose_(2));
      schedule::rfactor(s_, above[i], axis);
      bindLoops({i});
      out << "rfactor(" << h(i) << ", " << axis << ");";
      return out.str();
    }
    if (p == "cache_read" || p == "cache_write" || p == "set_scope") {
      std::vector<ir::Buffer> bufs = accessedBuffers(b, p != "cache_read");
      if (bufs.empty())
        return "";
      ir::Buffer buf = bufs[choose_(bufs.size())];
      if (p == "cache_read")
        schedule::cacheRead(s_, bn, buf, ir::MemScope::Local);
      else if (p == "cache_write")
        schedule::cacheWrite(s_, bn, buf, ir::MemScope::Local);
      else
        schedule::setScope(s_, bn, buf, ir::MemScope::Local);
      return p + "(" + bn + ", " + buf.name() + ", \"local\");";
    }
    if (p == "transform_layout" || p == "storage_align") {
      std::vector<ir::Buffer> bufs = accessedBuffers(b, true);
      if (bufs.empty())
        return "";
      ir::Buffer buf = bufs[choose_(bufs.size())];
      if (p == "storage_align") {
        if (buf.rank() == 0)
          return "";
        int64_t axis = int64_t(choose_(buf.rank()));
        int64_t factor = 2 + int64_t(choose_(7));
        int64_t offset = int64_t(choose_(uint64_t(factor)));
        schedule::storageAlign(s_, bn, buf, axis, factor, offset);
        out << "storage_align(" << bn << ", " << buf.name() << ", " << axis << ", " << factor
            << ", " << offset << ");";
        return out.str();
      }
      // A transpose of a rank-2 buffer, or a rank-1 buffer folded in two.
      std::vector<ir::Var> params;
      std::vector<ir::Expr> results;
      std::string text;
      int64_t k = 2 + int64_t(choose_(3));
      if (buf.rank() == 2) {
        params = {ir::Var("i"), ir::Var("j")};
        results = {ir::VarRef::make(params[1]), ir::VarRef::make(params[0])};
        text = "(i, j) => (j, i)";
      } else if (buf.rank() == 1) {
        params = {ir::Var("i")};
        results = {ir::VarRef::make(params[0]) / ir::intImm(k),
                   ir::VarRef::make(params[0]) % ir::intImm(k)};
        text = "(i) => (i / " + std::to_string(k) + ", i % " + std::to_string(k) + ")";
      } else {
        return "";
      }
      schedule::transformLayout(s_, bn, buf, params, results);
      return p + "(" + bn + ", " + buf.name() + ", " + text + ");";
    }
    return "";
  }

private:
  schedule::ScheduleState &s_;
  Chooser choose_;
};

} // namespace tdsl::fuzz

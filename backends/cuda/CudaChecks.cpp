//===- backends/cuda/CudaChecks.cpp - What a cuda-target function must satisfy ------------===//
#include "backends/cuda/CudaEmitter.h"

#include "ir/Gpu.h"
#include "ir/IRVisitor.h"
#include "ir/Utils.h"
#include "support/Diagnostics.h"

#include <algorithm>
#include <map>
#include <set>

namespace tdsl::cuda {

using namespace ir;

namespace {

constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxSharedBytes = 48 * 1024;

SourceRange at(const SourceLoc &loc) { return SourceRange(loc); }

SourceLoc loopLoc(const For *op) { return op->loc.valid() ? op->loc : op->loopVar->loc; }

/// The checks on the scheduled function (blocks and loops, before lowering).
class ScheduledChecks : public IRVisitor {
public:
  ScheduledChecks(const std::string &func, DiagnosticEngine &diags) : func_(func), diags_(diags) {}

  void visit(const For *op) override {
    if (op->forKind != ForKind::ThreadBinding) {
      loops_.push_back(op);
      IRVisitor::visit(op);
      loops_.pop_back();
      return;
    }
    bool root = bound_.empty();
    if (root) {
      kernel_ = op;
      threads_.clear();
      blocksOutsideThreads_.clear();
      anyThreadLoop_ = false;
    }
    for (const For *outer : bound_)
      if (outer->threadTag == op->threadTag)
        diags_
            .error(at(loopLoc(op)),
                   "\"" + op->threadTag + "\" is bound twice in one loop nest: loop '" +
                       op->loopVar.name() + "' inside loop '" + outer->loopVar.name() + "'")
            .note(at(loopLoc(outer)), "loop '" + outer->loopVar.name() + "' is bound here");
    // The launch extent is computed on the host: it may not depend on loops of the kernel.
    for (const Var &v : ir::usedVars(op->extent))
      for (const For *l : kernelLoops_)
        if (l->loopVar == v)
          diags_.error(at(loopLoc(op)),
                       "the extent of loop '" + op->loopVar.name() + "' bound to \"" +
                           op->threadTag + "\" depends on loop '" + v.name() +
                           "' of the same kernel; the launch needs it on the host");
    if (ir::isThreadIdxTag(op->threadTag)) {
      anyThreadLoop_ = true;
      if (auto n = asConstInt(op->extent))
        threads_[op->threadTag] = std::max(threads_[op->threadTag], *n);
    }
    bound_.push_back(op);
    kernelLoops_.push_back(op);
    IRVisitor::visit(op);
    kernelLoops_.pop_back();
    bound_.pop_back();
    if (root)
      finishKernel();
  }

  void visit(const Block *op) override {
    bool leaf = !containsLoopsOrBlocks(op->body);
    if (leaf && bound_.empty())
      diags_.error(at(op->loc), "block '" + op->name + "' of cuda function '" + func_ +
                                    "' would run on the host: bind a loop above it to "
                                    "\"blockIdx.*\" or \"threadIdx.*\"");
    if (leaf && !bound_.empty() && !underThreadIdx())
      blocksOutsideThreads_.push_back(op);
    IRVisitor::visit(op);
  }

private:
  static bool containsLoopsOrBlocks(const Stmt &s) {
    struct Find : IRVisitor {
      bool found = false;
      void visit(const For *) override { found = true; }
      void visit(const Block *) override { found = true; }
    } f;
    f.visitStmt(s);
    return f.found;
  }
  bool underThreadIdx() const {
    for (const For *l : bound_)
      if (ir::isThreadIdxTag(l->threadTag))
        return true;
    return false;
  }
  void finishKernel() {
    int64_t product = 1;
    std::string dims;
    for (const auto &[tag, n] : threads_) {
      product *= n;
      dims += (dims.empty() ? "" : ", ") + tag + " " + std::to_string(n);
    }
    if (product > kMaxThreads)
      diags_.error(at(loopLoc(kernel_)), "the kernel under loop '" + kernel_->loopVar.name() +
                                             "' needs " + std::to_string(product) +
                                             " threads per block (" + dims +
                                             "); the limit is 1024");
    if (anyThreadLoop_)
      for (const Block *b : blocksOutsideThreads_)
        diags_
            .error(at(b->loc), "block '" + b->name +
                                   "' is under no \"threadIdx.*\" loop of its kernel, so every "
                                   "thread of a block would run it; bind a loop above it to a "
                                   "threadIdx tag")
            .note(at(loopLoc(kernel_)),
                  "the kernel's outermost loop '" + kernel_->loopVar.name() + "'");
  }

  const std::string &func_;
  DiagnosticEngine &diags_;
  std::vector<const For *> loops_, bound_, kernelLoops_;
  const For *kernel_ = nullptr;
  std::map<std::string, int64_t> threads_;
  std::vector<const Block *> blocksOutsideThreads_;
  bool anyThreadLoop_ = false;
};

/// The checks on the lowered function: buffers inside kernels.
class LoweredChecks : public IRVisitor {
public:
  LoweredChecks(const std::string &func, DiagnosticEngine &diags) : func_(func), diags_(diags) {}

  void visit(const For *op) override {
    bool root = op->forKind == ForKind::ThreadBinding && !kernel_;
    if (root) {
      kernel_ = op;
      shared_.clear();
    }
    IRVisitor::visit(op);
    if (!root)
      return;
    int64_t total = 0;
    std::string parts;
    for (const auto &[b, bytes] : shared_) {
      total += bytes;
      parts += (parts.empty() ? "" : ", ") + ("'" + b.name() + "' " + std::to_string(bytes));
    }
    if (total > kMaxSharedBytes && !shared_.empty())
      diags_.error(at(shared_.front().first->loc), "the kernel under loop '" + op->loopVar.name() +
                                                       "' needs " + std::to_string(total) +
                                                       " bytes of shared memory (" + parts +
                                                       "); the static limit is 49152 (48 KiB)");
    kernel_ = nullptr;
  }
  void visit(const Allocate *op) override {
    const Buffer &b = op->buffer;
    if (kernel_ && b.scope() == MemScope::Global)
      diags_.error(at(b->loc), "buffer '" + b.name() +
                                   "' of global scope is allocated inside a "
                                   "kernel; allocate it at the function root");
    if (b.scope() != MemScope::Global) {
      auto size = asConstInt(b.shape()[0]);
      if (!kernel_)
        diags_.error(at(b->loc), std::string(scopeName(b.scope())) + " buffer '" + b.name() +
                                     "' is used outside every kernel of cuda function '" + func_ +
                                     "'");
      else if (!size)
        diags_.error(at(b->loc), std::string(scopeName(b.scope())) + " buffer '" + b.name() +
                                     "' has no constant size inside its kernel (the accessed tile "
                                     "could not be bounded)");
      else if (b.scope() == MemScope::Shared)
        shared_.emplace_back(b, *size * b.dtype().storageBytes());
    }
    IRVisitor::visit(op);
  }

private:
  const std::string &func_;
  DiagnosticEngine &diags_;
  const For *kernel_ = nullptr;
  std::vector<std::pair<Buffer, int64_t>> shared_;
};

} // namespace

bool checkScheduled(const Func &func, DiagnosticEngine &diags) {
  unsigned mark = diags.errorCount();
  ScheduledChecks(func.name(), diags).visitStmt(func.as<PrimFunc>()->body);
  return diags.errorCount() == mark;
}

bool checkCompacted(const Func &blocks, const Func &compacted, DiagnosticEngine &diags) {
  // Shared and local buffers must have been compacted to one block's or thread's tile: one
  // that lower.cuda-compact left as it was is not.
  struct Allocs : IRVisitor {
    std::vector<Buffer> found;
    void visit(const Allocate *op) override {
      found.push_back(op->buffer);
      IRVisitor::visit(op);
    }
  };
  unsigned mark = diags.errorCount();
  Allocs pre, post;
  pre.visitStmt(blocks.as<PrimFunc>()->body);
  post.visitStmt(compacted.as<PrimFunc>()->body);
  for (const Buffer &b : post.found)
    if (b.scope() != MemScope::Global &&
        std::find_if(pre.found.begin(), pre.found.end(), [&](const Buffer &x) { return x == b; }) !=
            pre.found.end())
      diags.error(at(b->loc), std::string(scopeName(b.scope())) + " buffer '" + b.name() +
                                  "' of cuda function '" + blocks.name() +
                                  "': cannot find the tile one " +
                                  (b.scope() == MemScope::Shared ? "thread block" : "thread") +
                                  " uses (each index must be the same position of the " +
                                  (b.scope() == MemScope::Shared ? "block" : "thread") +
                                  " plus an offset bounded by constant loop extents)");
  return diags.errorCount() == mark;
}

bool checkLowered(const Func &lowered, DiagnosticEngine &diags) {
  unsigned mark = diags.errorCount();
  LoweredChecks(lowered.name(), diags).visitStmt(lowered.as<PrimFunc>()->body);
  return diags.errorCount() == mark;
}

} // namespace tdsl::cuda

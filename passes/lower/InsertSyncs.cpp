//===- passes/lower/InsertSyncs.cpp - __syncthreads() where threads of a block hand over data -===//
#include "passes/lower/InsertSyncs.h"

#include "ir/IRVisitor.h"
#include "passes/lower/GpuAnalysis.h"

#include <map>
#include <set>

namespace tdsl::lower {

using namespace ir;

namespace {

struct SharedAccess {
  Buffer buffer;
  Expr index;
  bool write = false;
  bool privateIndex = false; ///< Uses no loop variable defined inside its unit.
};

/// The Shared-buffer accesses of one unit (a statement executed as a whole by the threads).
class UnitAccesses : public IRVisitor {
public:
  std::vector<SharedAccess> accesses;

  void visit(const For *op) override {
    if (!(op->forKind == ForKind::ThreadBinding))
      local_.insert(op->loopVar.get());
    IRVisitor::visit(op);
  }
  void visit(const LetStmt *op) override {
    local_.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const BufferLoad *op) override {
    add(op->buffer, op->indices, false);
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    add(op->buffer, op->indices, true);
    IRVisitor::visit(op);
  }

private:
  void add(const Buffer &b, const std::vector<Expr> &indices, bool write) {
    if (b.scope() != MemScope::Shared)
      return;
    bool priv = true;
    for (const Var &v : usedVars(indices[0]))
      priv = priv && !local_.count(v.get());
    accesses.push_back({b, indices[0], write, priv});
  }
  std::set<const VarNode *> local_;
};

bool containsThreadLoop(const Stmt &s) {
  struct Find : IRVisitor {
    bool found = false;
    void visit(const For *op) override {
      found = found || (op->forKind == ForKind::ThreadBinding && isThreadIdxTag(op->threadTag));
      IRVisitor::visit(op);
    }
  } f;
  f.visitStmt(s);
  return f.found;
}

class SyncInserter {
public:
  explicit SyncInserter(const Stmt &kernel) {
    struct Aliases : IRVisitor {
      std::map<std::string, Var> byTag;
      std::unordered_map<Var, Var> alias;
      void visit(const For *op) override {
        if (op->forKind == ForKind::ThreadBinding)
          alias[op->loopVar] = byTag.emplace(op->threadTag, op->loopVar).first->second;
        IRVisitor::visit(op);
      }
    } a;
    a.visitStmt(kernel);
    alias_ = std::move(a.alias);
  }

  /// Rewrites a statement every thread of the block executes, with `pending` the accesses
  /// since the last barrier.
  Stmt uniform(const Stmt &s, std::vector<SharedAccess> &pending) {
    if (auto *op = s.as<SeqStmt>()) {
      std::vector<Stmt> out;
      for (const Stmt &child : op->seq)
        step(child, pending, out);
      return seq(std::move(out));
    }
    std::vector<Stmt> out;
    step(s, pending, out);
    return seq(std::move(out));
  }

private:
  void step(const Stmt &s, std::vector<SharedAccess> &pending, std::vector<Stmt> &out) {
    if (auto *op = s.as<For>();
        op && containsThreadLoop(op->body) &&
        (op->forKind != ForKind::ThreadBinding || !isThreadIdxTag(op->threadTag))) {
      out.push_back(loop(op, pending));
      return;
    }
    if (auto *op = s.as<Allocate>()) {
      out.push_back(Allocate::make(op->buffer, uniform(op->body, pending), op->loc));
      return;
    }
    if (auto *op = s.as<LetStmt>(); op && containsThreadLoop(op->body)) {
      out.push_back(LetStmt::make(op->var, op->value, uniform(op->body, pending), op->loc));
      return;
    }
    if (auto *op = s.as<SeqStmt>()) {
      for (const Stmt &child : op->seq)
        step(child, pending, out);
      return;
    }
    // A condition outside every threadIdx loop depends on nothing that varies between the
    // threads of a block: each branch is executed by all of them, barriers may go inside.
    if (auto *op = s.as<IfThenElse>(); op && containsThreadLoop(s)) {
      std::vector<SharedAccess> other = pending;
      Stmt thenCase = uniform(op->thenCase, pending);
      Stmt elseCase = op->elseCase.defined() ? uniform(op->elseCase, other) : op->elseCase;
      pending.insert(pending.end(), other.begin(), other.end());
      out.push_back(IfThenElse::make(op->condition, thenCase, elseCase, op->loc));
      return;
    }
    // A unit: a threadIdx loop nest, a condition, a plain statement.
    UnitAccesses unit;
    unit.visitStmt(s);
    if (conflict(pending, unit.accesses)) {
      out.push_back(barrier());
      pending.clear();
    }
    pending.insert(pending.end(), unit.accesses.begin(), unit.accesses.end());
    out.push_back(s);
  }

  /// A loop every thread runs (serial, or bound to blockIdx) around thread loops.
  Stmt loop(const For *op, std::vector<SharedAccess> &pending) {
    Stmt body = uniform(op->body, pending);
    // A blockIdx loop runs one iteration per block: nothing is carried across iterations.
    if (op->forKind == ForKind::ThreadBinding)
      return withBody(op, body);
    // Across iterations: what the end of one iteration left pending against what the next
    // iteration does before its first barrier.
    std::vector<SharedAccess> head;
    auto collectHead = [&](const Stmt &b) {
      std::vector<Stmt> items;
      if (auto *sq = b.as<SeqStmt>())
        items = sq->seq;
      else
        items = {b};
      for (const Stmt &item : items) {
        if (isSyncThreads(item))
          return true;
        UnitAccesses u;
        u.visitStmt(item);
        head.insert(head.end(), u.accesses.begin(), u.accesses.end());
      }
      return false;
    };
    bool hasBarrier = collectHead(body);
    (void)hasBarrier;
    if (!pending.empty() && conflict(pending, head)) {
      body = seq({body, barrier()});
      pending.clear();
    } else {
      pending.insert(pending.end(), head.begin(), head.end());
    }
    return withBody(op, body);
  }

  bool conflict(const std::vector<SharedAccess> &before, const std::vector<SharedAccess> &after) {
    for (const SharedAccess &a : after)
      for (const SharedAccess &b : before) {
        if (!(a.buffer == b.buffer) || (!a.write && !b.write))
          continue;
        // The same thread on both sides, at the same element: no hand-over between threads.
        if (a.privateIndex && b.privateIndex && equalExpr(a.index, b.index, alias_))
          continue;
        return true;
      }
    return false;
  }

  static Stmt barrier() { return Evaluate::make(VarRef::make(syncThreadsVar())); }

  std::unordered_map<Var, Var> alias_;
};

/// Finds the kernels (outermost thread-bound loops) and rewrites each.
Stmt rewrite(const Stmt &s) {
  if (!s.defined())
    return s;
  if (auto *op = s.as<For>()) {
    if (op->forKind == ForKind::ThreadBinding) {
      std::vector<SharedAccess> pending;
      SyncInserter inserter(s);
      // The kernel's own loop: blockIdx loops are uniform; a threadIdx loop is one unit.
      return inserter.uniform(s, pending);
    }
    return withBody(op, rewrite(op->body));
  }
  if (auto *op = s.as<SeqStmt>()) {
    std::vector<Stmt> out;
    for (const Stmt &c : op->seq)
      out.push_back(rewrite(c));
    return SeqStmt::make(out, op->loc);
  }
  if (auto *op = s.as<Allocate>())
    return Allocate::make(op->buffer, rewrite(op->body), op->loc);
  if (auto *op = s.as<LetStmt>())
    return LetStmt::make(op->var, op->value, rewrite(op->body), op->loc);
  if (auto *op = s.as<IfThenElse>())
    return IfThenElse::make(op->condition, rewrite(op->thenCase), rewrite(op->elseCase), op->loc);
  return s;
}

} // namespace

Func insertSyncs(const Func &func) {
  return mapBody(func, "insertSyncs takes a PrimFunc", rewrite);
}

} // namespace tdsl::lower

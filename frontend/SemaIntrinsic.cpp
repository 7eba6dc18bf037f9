//===- frontend/SemaIntrinsic.cpp - Checks of `intrinsic NAME(DESC, IMPL);` -------------------===//
//
// A tensor intrinsic (docs/schedules.md, "tensorize") names two funcs of its module: the
// description, whose one block a tensorized sub-tree must match, and the implementation, which
// replaces it. Checked here, where their IR exists: both are funcs (not generic), tensors only,
// with constant shapes; the description is a chain of loops from 0 with constant extents down to
// one block without allocations; the implementation has the description's signature.

#include "frontend/SemaInternal.h"
#include "ir/IRPrinter.h"
#include "support/Diagnostics.h"

#include <optional>

namespace tdsl::sema {

using namespace ir;

namespace {

std::string typeString(const Buffer &b) {
  std::string out = b.dtype().name() + "[";
  for (size_t i = 0; i < b.rank(); ++i)
    out += (i ? ", " : "") + toString(b.shape()[i]);
  return out + "]";
}

/// The tensors of `f`, inputs then outputs.
std::vector<Buffer> tensors(const PrimFunc &f) {
  std::vector<Buffer> out;
  for (const FuncParam &p : f.inputs)
    if (p.isTensor())
      out.push_back(p.buffer);
  out.insert(out.end(), f.outputs.begin(), f.outputs.end());
  return out;
}

class IntrinsicChecker {
public:
  IntrinsicChecker(const ast::Module &mod, const std::string &prefix, const FuncTable &table,
                   DiagnosticEngine &diags)
      : mod_(mod), prefix_(prefix), table_(table), diags_(diags) {}

  /// The PrimFunc `id` names, checked for `role`; null (reported) when it is not usable.
  const PrimFunc *func(const ast::IntrinsicDecl &d, const ast::Ident &id, const char *role) {
    const ast::Item *item = mod_.findCallable(id.name);
    std::string what = std::string("the ") + role + " of intrinsic '" + d.name.name + "'";
    if (!item) {
      diags_.error(id.range, "no func named '" + id.name + "' in this module (" + what + ")");
      return nullptr;
    }
    if (!item->as<ast::FuncDecl>()) {
      diags_.error(id.range, what + " must be a func; '" + id.name + "' is " +
                                 (item->as<ast::GraphDecl>() ? "a graph" : "an extern func") +
                                 (item->as<ast::ExternDecl>()
                                      ? " (extern implementations are not supported yet)"
                                      : ""));
      return nullptr;
    }
    auto it = table_.find(item);
    if (it == table_.end())
      return nullptr; // its own errors were reported
    const PrimFunc *f = it->second.as<PrimFunc>();
    if (!f)
      return nullptr;
    if (!f->constVars.empty()) {
      diags_.error(id.range, what + " must not be generic; '" + id.name + "' has constants");
      return nullptr;
    }
    for (const FuncParam &p : f->inputs)
      if (!p.isTensor()) {
        diags_.error(id.range, what + " takes tensors only; '" + id.name +
                                   "' has the scalar input '" + p.scalar.name() + "'");
        return nullptr;
      }
    for (const Buffer &b : tensors(*f))
      for (const Expr &e : b.shape())
        if (!e.as<IntImm>()) {
          diags_.error(id.range, what + " needs constant shapes; '" + b.name() + "' of '" +
                                     id.name + "' is " + typeString(b));
          return nullptr;
        }
    return f;
  }

  /// The description: loops from 0 with constant extents, one block, nothing allocated.
  bool checkDesc(const ast::IntrinsicDecl &d, const PrimFunc &f) {
    auto refuse = [&](const std::string &why) {
      diags_.error(d.desc.range, "the description '" + d.desc.name + "' of intrinsic '" +
                                     d.name.name + "' " + why);
      return false;
    };
    if (!f.allocBuffers.empty())
      return refuse("may not allocate; it must be one block under a chain of loops");
    Stmt s = f.body;
    while (const For *loop = s.as<For>()) {
      if (!isConstInt(loop->min, 0) || !loop->extent.as<IntImm>())
        return refuse("must have loops from 0 with constant extents; loop '" +
                      loop->loopVar.name() + "' is not");
      s = loop->body;
    }
    const Block *b = s.as<Block>();
    if (!b)
      return refuse("must be one block under a chain of loops");
    if (!b->allocBuffers.empty())
      return refuse("may not allocate; block '" + b->name + "' does");
    if (!isConstInt(b->predicate, 1))
      return refuse("may not have a 'where'");
    bool nested = false;
    auto findBlock = [&](const Stmt &st, auto &self) -> void {
      if (!st.defined() || nested)
        return;
      if (st.as<Block>()) {
        nested = true;
        return;
      }
      if (const For *l = st.as<For>())
        self(l->body, self);
      else if (const SeqStmt *q = st.as<SeqStmt>())
        for (const Stmt &c : q->seq)
          self(c, self);
      else if (const IfThenElse *i = st.as<IfThenElse>()) {
        self(i->thenCase, self);
        self(i->elseCase, self);
      } else if (const LetStmt *l = st.as<LetStmt>())
        self(l->body, self);
    };
    findBlock(b->body, findBlock);
    if (nested)
      return refuse("must have one block, with no loop or block inside");
    return true;
  }

  /// The implementation takes what the description takes.
  bool checkImpl(const ast::IntrinsicDecl &d, const PrimFunc &desc, const PrimFunc &impl) {
    std::string what = "the implementation '" + d.impl.name + "' of intrinsic '" + d.name.name +
                       "' must have the signature of its description '" + d.desc.name + "'";
    if (desc.inputs.size() != impl.inputs.size() || desc.outputs.size() != impl.outputs.size()) {
      diags_.error(d.impl.range, what + ": " + std::to_string(desc.inputs.size()) + " input" +
                                     (desc.inputs.size() == 1 ? "" : "s") + " and " +
                                     std::to_string(desc.outputs.size()) + " output" +
                                     (desc.outputs.size() == 1 ? "" : "s"));
      return false;
    }
    std::vector<Buffer> a = tensors(desc), b = tensors(impl);
    for (size_t i = 0; i < a.size(); ++i) {
      bool same = a[i].dtype() == b[i].dtype() && a[i].rank() == b[i].rank();
      for (size_t k = 0; same && k < a[i].rank(); ++k)
        same = a[i].shape()[k].as<IntImm>()->value == b[i].shape()[k].as<IntImm>()->value;
      if (!same) {
        diags_.error(d.impl.range, what + ": its parameter '" + b[i].name() + "' is " +
                                       typeString(b[i]) + ", where '" + a[i].name() + "' is " +
                                       typeString(a[i]));
        return false;
      }
    }
    return true;
  }

  void run(Module &out) {
    for (const ast::ItemPtr &item : mod_.items) {
      const auto *d = item->as<ast::IntrinsicDecl>();
      if (!d)
        continue;
      std::string name = prefix_ + d->name.name;
      if (out.lookupIntrinsic(name)) {
        diags_.error(d->name.range, "intrinsic '" + d->name.name + "' is declared twice");
        continue;
      }
      const PrimFunc *desc = func(*d, d->desc, "description");
      const PrimFunc *impl = func(*d, d->impl, "implementation");
      if (!desc || !impl || !checkDesc(*d, *desc) || !checkImpl(*d, *desc, *impl))
        continue;
      out.intrinsics.push_back(
          {name, prefix_ + d->desc.name, prefix_ + d->impl.name, locOf(d->name)});
    }
  }

private:
  const ast::Module &mod_;
  const std::string &prefix_;
  const FuncTable &table_;
  DiagnosticEngine &diags_;
};

} // namespace

void buildIntrinsics(const ast::Module &m, const std::string &prefix, const FuncTable &funcs,
                     Module &out, DiagnosticEngine &diags) {
  IntrinsicChecker(m, prefix, funcs, diags).run(out);
}

} // namespace tdsl::sema

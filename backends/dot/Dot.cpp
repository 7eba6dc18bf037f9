//===- backends/dot/Dot.cpp - Graphviz pictures of the IR ------------------------------------===//
//
// One digraph; each function a cluster whose nodes are numbered in one sequence (n0, n1, ...),
// so the text is deterministic. Labels are left-justified lines (`\l`).

#include "backends/dot/Dot.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <map>
#include <sstream>
#include <vector>

namespace tdsl::dot {

namespace {

using namespace ir;

/// A dot string literal's contents: quotes and backslashes escaped, each line ending in `\l`
/// (left-justified).
std::string label(const std::string &text) {
  std::string out = escapeString(text, "\\l");
  if (out.size() < 2 || out.compare(out.size() - 2, 2, "\\l") != 0)
    out += "\\l";
  return "\"" + out + "\"";
}

std::string joinExprs(const std::vector<Expr> &exprs) {
  std::string out;
  for (size_t i = 0; i < exprs.size(); ++i)
    out += (i ? ", " : "") + toString(exprs[i]);
  return out;
}

std::string typeText(const Buffer &b) {
  std::string out = b.dtype().name() + "[" + joinExprs(b.shape()) + "]";
  if (b.scope() != MemScope::Global)
    out += std::string(" ") + scopeName(b.scope());
  return out;
}

std::string paramText(const FuncParam &p) {
  return p.isTensor() ? p.buffer.name() + ": " + typeText(p.buffer)
                      : p.scalar.name() + ": " + p.scalar->dtype.name();
}

std::string rangeText(const Range &r) {
  if (isConstInt(r.extent, 1))
    return toString(r.min);
  std::optional<int64_t> lo = asConstInt(r.min), n = asConstInt(r.extent);
  if (lo && n)
    return std::to_string(*lo) + ":" + std::to_string(*lo + *n);
  return toString(r.min) + ":" + toString(r.min) + " + " + toString(r.extent);
}

std::string regionText(const BufferRegion &r) {
  std::string out = r.buffer.name() + "[";
  for (size_t i = 0; i < r.region.size(); ++i)
    out += (i ? ", " : "") + rangeText(r.region[i]);
  return out + "]";
}

/// The first lines of a statement's text, each at most `width` characters.
std::string stmtSummary(const Stmt &s, size_t maxLines = 3, size_t width = 72) {
  std::istringstream in(toString(s));
  std::string line, out;
  size_t n = 0;
  while (std::getline(in, line)) {
    if (n++ == maxLines) {
      out += "\n...";
      break;
    }
    if (line.size() > width)
      line = line.substr(0, width - 3) + "...";
    out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

/// The names of the blocks of a function body, in order.
void collectBlocks(const Stmt &s, std::vector<std::string> &names) {
  if (!s.defined())
    return;
  if (const auto *b = s.as<Block>()) {
    names.push_back(b->name);
    collectBlocks(b->init, names);
    collectBlocks(b->body, names);
  } else if (const auto *f = s.as<For>()) {
    collectBlocks(f->body, names);
  } else if (const auto *q = s.as<SeqStmt>()) {
    for (const Stmt &c : q->seq)
      collectBlocks(c, names);
  } else if (const auto *i = s.as<IfThenElse>()) {
    collectBlocks(i->thenCase, names);
    collectBlocks(i->elseCase, names);
  } else if (const auto *l = s.as<LetStmt>()) {
    collectBlocks(l->body, names);
  } else if (const auto *a = s.as<Allocate>()) {
    collectBlocks(a->body, names);
  }
}

/// The buffers a block's own statements load and store (nested blocks excluded), in order:
/// the IR keeps a block's reads and writes only where the source spelled them.
class Accesses : public IRVisitor {
public:
  std::vector<Buffer> reads, writes;
  using IRVisitor::visit;
  void visit(const BufferLoad *op) override {
    add(reads, op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    add(writes, op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const Block *) override {}

private:
  static void add(std::vector<Buffer> &list, const Buffer &b) {
    for (const Buffer &x : list)
      if (x == b)
        return;
    list.push_back(b);
  }
};

bool drawn(const Func &f, const DotOptions &options) {
  if (f.name().find('.') != std::string::npos)
    return false; // imported
  return options.onlyFunc.empty() || f.name() == options.onlyFunc;
}

class Printer {
public:
  Printer(const Module &module, const DotOptions &options) : module_(module), options_(options) {}

  std::string print() {
    os_ << "digraph tdsl {\n"
        << "  compound=true;\n  newrank=true;\n  ordering=out;\n"
        << "  fontname=\"monospace\";\n  fontsize=11;\n  labeljust=l;\n";
    if (!options_.title.empty())
      os_ << "  label=" << label(options_.title) << ";\n  labelloc=t;\n";
    os_ << "  node [fontname=\"monospace\", fontsize=10];\n"
        << "  edge [fontname=\"monospace\", fontsize=9];\n";
    std::vector<Func> funcs;
    for (const Func &f : module_.functions())
      if (drawn(f, options_)) {
        funcs.push_back(f);
        headers_[f.name()] = fresh();
      }
    for (size_t i = 0; i < funcs.size(); ++i) {
      os_ << "  subgraph cluster_" << i << " {\n";
      if (const auto *g = funcs[i].as<GraphFunc>())
        printGraph(*g);
      else if (const auto *p = funcs[i].as<PrimFunc>())
        printPrimFunc(*p);
      else if (const auto *e = funcs[i].as<ExternFunc>())
        printExtern(*e);
      os_ << "  }\n";
    }
    for (const std::string &e : lateEdges_)
      os_ << e;
    os_ << "}\n";
    return os_.str();
  }

private:
  std::string fresh() { return "n" + std::to_string(counter_++); }

  void node(const std::string &id, const std::string &text, const std::string &attrs,
            const std::string &indent = "    ") {
    os_ << indent << id << " [label=" << label(text) << (attrs.empty() ? "" : ", ") << attrs
        << "];\n";
  }
  /// An edge; in a graph, held back to the end of its cluster: an edge written inside the
  /// dataflow cluster would pull the graph's inputs into it.
  void edge(const std::string &from, const std::string &to, const std::string &attrs = "",
            const std::string &indent = "    ") {
    std::string text = from + " -> " + to + (attrs.empty() ? "" : " [" + attrs + "]") + ";\n";
    if (inGraph_)
      graphEdges_.push_back("    " + text);
    else
      os_ << indent << text;
  }

  std::string signature(const std::string &keyword, const std::string &name,
                        const std::vector<Var> &constVars, const std::vector<FuncParam> &inputs) {
    std::string out = keyword + " " + name;
    if (!constVars.empty()) {
      out += "<";
      for (size_t i = 0; i < constVars.size(); ++i)
        out += (i ? ", " : "") + constVars[i].name();
      out += ">";
    }
    out += "(";
    for (size_t i = 0; i < inputs.size(); ++i)
      out += (i ? ",\n    " : "") + paramText(inputs[i]);
    return out + ")";
  }

  std::string outputsText(const std::vector<Buffer> &outputs) {
    std::string out = " -> (";
    for (size_t i = 0; i < outputs.size(); ++i)
      out += (i ? ", " : "") + outputs[i].name() + ": " + typeText(outputs[i]);
    return out + ")";
  }

  void header(const std::string &name, const std::string &text, const char *color) {
    node(headers_.at(name), text,
         std::string("shape=note, style=filled, fillcolor=") + color + ", fontsize=11");
  }

  // ---- graphs ----------------------------------------------------------------------------

  void printGraph(const GraphFunc &g) {
    os_ << "    label=" << label("graph " + g.name) << ";\n    style=rounded;\n";
    header(g.name, signature("graph", g.name, g.constVars, g.inputs), "lightblue");
    values_.clear();
    scalars_.clear();
    inGraph_ = true;
    for (const FuncParam &p : g.inputs) {
      std::string id = fresh();
      if (p.isTensor()) {
        values_[p.buffer.get()] = id;
        node(id, p.buffer.name() + "\n" + typeText(p.buffer), "shape=ellipse");
      } else {
        scalars_[p.scalar.get()] = id;
        node(id, paramText(p), "shape=plaintext");
      }
      edge(headers_.at(g.name), id, "style=invis");
    }
    for (const GraphItem &item : g.body) {
      if (const auto *c = std::get_if<CallBinding>(&item))
        printCall(*c, "    ");
      else if (const auto *r = std::get_if<ReshapeBinding>(&item))
        printReshape(*r, "    ");
      else if (const auto *d = std::get_if<DataflowBlock>(&item))
        printDataflow(*d);
    }
    std::string ret = fresh();
    node(ret, "return", "shape=house, orientation=180");
    for (const Buffer &r : g.results)
      edge(valueNode(r), ret);
    inGraph_ = false;
    for (const std::string &e : graphEdges_)
      os_ << e;
    graphEdges_.clear();
  }

  void printDataflow(const DataflowBlock &d) {
    os_ << "    subgraph cluster_" << fresh() << " {\n"
        << "      label=\"dataflow\";\n      style=dashed;\n";
    for (const GraphBinding &b : d.bindings) {
      if (const auto *c = std::get_if<CallBinding>(&b))
        printCall(*c, "      ");
      else if (const auto *r = std::get_if<ReshapeBinding>(&b))
        printReshape(*r, "      ");
    }
    os_ << "    }\n";
    for (const Buffer &o : d.outputs)
      os_ << "    " << valueNode(o) << " [penwidth=2];\n";
  }

  /// The node of a value (an input, or a call's or reshape's target).
  std::string valueNode(const Buffer &b) {
    auto it = values_.find(b.get());
    if (it != values_.end())
      return it->second;
    std::string id = fresh(); // not defined in the graph (should not happen): drawn anyway
    values_[b.get()] = id;
    node(id, b.name() + "\n" + typeText(b), "shape=ellipse");
    return id;
  }

  void printCall(const CallBinding &c, const std::string &indent) {
    Func callee = module_.lookup(c.callee);
    std::string text = "call " + c.callee;
    if (!c.constArgs.empty())
      text += "<" + joinExprs(c.constArgs) + ">";
    std::string attrs = "shape=box";
    bool fused = callee.defined() && c.callee.rfind("fused_", 0) == 0;
    if (fused) {
      std::vector<std::string> blocks;
      if (const auto *p = callee.as<PrimFunc>())
        collectBlocks(p->body, blocks);
      text += "\nfused: blocks";
      for (const std::string &b : blocks)
        text += " " + b;
      attrs += ", style=filled, fillcolor=lightyellow";
    } else if (callee.as<ExternFunc>()) {
      attrs += ", style=filled, fillcolor=lightgrey";
    }
    std::string id = fresh();
    node(id, text, attrs, indent);
    // Parameter names of the callee label the edges when known.
    const std::vector<FuncParam> *params = nullptr;
    if (const auto *p = callee.as<PrimFunc>())
      params = &p->inputs;
    else if (const auto *e = callee.as<ExternFunc>())
      params = &e->inputs;
    else if (const auto *g = callee.as<GraphFunc>())
      params = &g->inputs;
    for (size_t i = 0; i < c.args.size(); ++i) {
      std::string edgeLabel = params && i < params->size() ? (*params)[i].name() : "";
      std::string attrs = edgeLabel.empty() ? "" : "label=" + label(edgeLabel);
      if (const auto *b = std::get_if<Buffer>(&c.args[i])) {
        edge(valueNode(*b), id, attrs, indent);
        continue;
      }
      const Expr &e = std::get<Expr>(c.args[i]);
      if (const auto *v = e.as<VarRef>(); v && scalars_.count(v->var.get())) {
        edge(scalars_.at(v->var.get()), id, attrs, indent);
        continue;
      }
      std::string k = fresh(); // a constant (or an expression of the shape variables)
      node(k, toString(e), "shape=plaintext, fontcolor=darkgreen", indent);
      edge(k, id, attrs, indent);
    }
    for (const Buffer &t : c.targets) {
      std::string v = fresh();
      values_[t.get()] = v;
      node(v, t.name() + "\n" + typeText(t), "shape=ellipse", indent);
      edge(id, v, "", indent);
    }
    if (callee.defined() && headers_.count(c.callee))
      lateEdges_.push_back("  " + id + " -> " + headers_.at(c.callee) +
                           " [style=dashed, color=grey, constraint=false];\n");
  }

  void printReshape(const ReshapeBinding &r, const std::string &indent) {
    std::string v = fresh();
    std::string source = valueNode(r.source);
    values_[r.target.get()] = v;
    node(v, r.target.name() + "\n" + typeText(r.target), "shape=ellipse, style=dashed", indent);
    edge(source, v, "label=\"reshape\", style=dashed", indent);
  }

  // ---- tensor functions ------------------------------------------------------------------

  void printPrimFunc(const PrimFunc &p) {
    os_ << "    label=" << label("func " + p.name) << ";\n    style=rounded;\n";
    header(p.name, signature("func", p.name, p.constVars, p.inputs) + outputsText(p.outputs),
           "lightyellow");
    buffers_.clear();
    for (const FuncParam &in : p.inputs)
      if (in.isTensor())
        bufferNode(in.buffer);
    for (const Buffer &o : p.outputs)
      bufferNode(o);
    std::string root = headers_.at(p.name);
    for (const Buffer &a : p.allocBuffers)
      bufferNode(a);
    stmt(p.body, root, "");
  }

  void printExtern(const ExternFunc &e) {
    os_ << "    label=" << label("extern " + e.name) << ";\n    style=rounded;\n";
    header(e.name,
           signature(e.pure ? "extern pure func" : "extern func", e.name, {}, e.inputs) +
               outputsText(e.outputs) + " = \"" + e.symbol + "\"",
           "lightgrey");
  }

  std::string bufferNode(const Buffer &b) {
    auto it = buffers_.find(b.get());
    if (it != buffers_.end())
      return it->second;
    std::string id = fresh();
    buffers_[b.get()] = id;
    const char *color = b.role() == BufferRole::Input    ? "palegreen"
                        : b.role() == BufferRole::Output ? "lightpink"
                                                         : "white";
    node(id, (b.role() == BufferRole::Alloc ? "alloc " : "") + b.name() + "\n" + typeText(b),
         std::string("shape=ellipse, style=filled, fillcolor=") + color);
    return id;
  }

  /// Draws `s` below `parent` (the edge labelled `edgeLabel`).
  void stmt(const Stmt &s, const std::string &parent, const std::string &edgeLabel) {
    if (!s.defined())
      return;
    std::string attrs = edgeLabel.empty() ? "" : "label=" + label(edgeLabel);
    if (const auto *q = s.as<SeqStmt>()) {
      for (const Stmt &c : q->seq)
        stmt(c, parent, edgeLabel);
      return;
    }
    std::string id = fresh();
    if (const auto *f = s.as<For>()) {
      std::string text = "for " + f->loopVar.name() + " in " + toString(f->min) + ".." +
                         (isConstInt(f->min, 0) ? toString(f->extent)
                                                : toString(f->min) + " + " + toString(f->extent));
      if (f->forKind == ForKind::ThreadBinding)
        text += "\nthread " + f->threadTag;
      else if (f->forKind != ForKind::Serial)
        text += std::string("\n") + forKindName(f->forKind);
      const char *color = f->forKind == ForKind::Serial ? "white" : "lightcyan";
      node(id, text, std::string("shape=box, style=\"rounded,filled\", fillcolor=") + color);
      edge(parent, id, attrs);
      stmt(f->body, id, "");
    } else if (const auto *b = s.as<Block>()) {
      std::string text = "block " + b->name;
      for (const IterVar &iv : b->iterVars) {
        text += "\n  " + iv.var.name() + ": " +
                (iv.kind == IterKind::Spatial ? "spatial " : "reduce ") + toString(iv.extent);
        if (iv.binding.defined())
          text += " = " + toString(iv.binding);
      }
      if (!isConstInt(b->predicate, 1))
        text += "\nwhere " + toString(b->predicate);
      for (const Buffer &a : b->allocBuffers)
        text += "\nalloc " + a.name() + ": " + typeText(a);
      if (b->init.defined())
        text += "\ninit:\n" + stmtSummary(b->init, 2);
      bool nested = false;
      for (const Stmt &c : directChildren(b->body))
        nested |= c.as<For>() || c.as<Block>() || c.as<IfThenElse>();
      if (!nested)
        text += "\n" + stmtSummary(b->body);
      node(id, text, "shape=box, style=filled, fillcolor=lightyellow");
      edge(parent, id, attrs);
      if (!b->reads.empty() || !b->writes.empty()) {
        for (const BufferRegion &r : b->reads)
          edge(bufferNode(r.buffer), id,
               "style=dotted, color=darkgreen, constraint=false, label=" + label(regionText(r)));
        for (const BufferRegion &w : b->writes)
          edge(id, bufferNode(w.buffer),
               "style=dotted, color=red, constraint=false, label=" + label(regionText(w)));
      } else {
        Accesses acc;
        acc.visitStmt(b->init);
        acc.visitStmt(b->body);
        for (const Buffer &r : acc.reads)
          edge(bufferNode(r), id, "style=dotted, color=darkgreen, constraint=false");
        for (const Buffer &w : acc.writes)
          edge(id, bufferNode(w), "style=dotted, color=red, constraint=false");
      }
      if (nested)
        stmt(b->body, id, "");
    } else if (const auto *i = s.as<IfThenElse>()) {
      node(id, "if " + toString(i->condition), "shape=diamond");
      edge(parent, id, attrs);
      stmt(i->thenCase, id, "then");
      stmt(i->elseCase, id, "else");
    } else if (const auto *l = s.as<LetStmt>()) {
      node(id, "let " + l->var.name() + " = " + toString(l->value), "shape=box");
      edge(parent, id, attrs);
      stmt(l->body, id, "");
    } else if (const auto *a = s.as<Allocate>()) {
      node(id, "alloc " + a->buffer.name() + ": " + typeText(a->buffer), "shape=box, style=dashed");
      edge(parent, id, attrs);
      stmt(a->body, id, "");
    } else {
      node(id, stmtSummary(s), "shape=plaintext");
      edge(parent, id, attrs);
    }
  }

  static std::vector<Stmt> directChildren(const Stmt &s) {
    if (const auto *q = s.as<SeqStmt>())
      return q->seq;
    return {s};
  }

  const Module &module_;
  const DotOptions &options_;
  std::ostringstream os_;
  int counter_ = 0;
  std::map<std::string, std::string> headers_;
  std::map<const void *, std::string> values_, scalars_, buffers_;
  std::vector<std::string> lateEdges_, graphEdges_;
  bool inGraph_ = false;
};

} // namespace

std::string printModule(const Module &module, const DotOptions &options) {
  return Printer(module, options).print();
}

} // namespace tdsl::dot

//===- ir/IRPrinter.cpp - Print IR in the explicit form of spec §6 ------------------------===//
#include "ir/IRPrinter.h"

#include "ir/Utils.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace tdsl::ir {

std::string formatFloat(double value, DType type) {
  if (std::isnan(value))
    return "(inf - inf)";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char buffer[64];
  std::to_chars_result result;
  // Shortest round trip in the dtype's own precision: 0.1f prints "0.1", not 0.100000001....
  if (type.element() == DType::f64())
    result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  else
    result = std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value));
  std::string text(buffer, result.ptr);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

namespace {

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

bool isReservedName(std::string_view name) {
  static const std::unordered_set<std::string_view> kReserved = {
      // Keywords (spec §2).
      "import", "const", "func", "graph", "extern", "pure", "schedule", "for", "in", "block",
      "spatial", "reduce", "init", "alloc", "scope", "if", "else", "let", "dataflow", "output",
      "return", "call", "where", "true", "false", "inf",
      // Dtype names, which would read as casts or as min_value's argument.
      "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"};
  return kReserved.count(name) != 0;
}

/// A valid identifier made from a name hint.
std::string sanitize(const std::string &hint) {
  if (hint.empty())
    return "v";
  std::string name = hint;
  for (char &c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok)
      c = '_';
  }
  if (name[0] >= '0' && name[0] <= '9')
    name.insert(name.begin(), '_');
  return name;
}

/// Printed names of Vars and Buffers. A definition takes the hint, or the hint with the first
/// free suffix `_1`, `_2`, ..., among the names in scope; undefine() ends the scope.
class NameTable {
public:
  std::string define(const void *object, const std::string &hint) {
    std::string base = sanitize(hint);
    std::string name = base;
    for (int suffix = 1; isReservedName(name) || inUse_[name] > 0; ++suffix)
      name = base + "_" + std::to_string(suffix);
    ++inUse_[name];
    std::vector<std::string> &stack = names_[object];
    stack.push_back(std::move(name));
    return stack.back();
  }

  void undefine(const void *object) {
    auto it = names_.find(object);
    if (it == names_.end() || it->second.empty())
      return;
    --inUse_[it->second.back()];
    it->second.pop_back();
  }

  /// The name of `object`; an object used without a definition (a free variable) is defined
  /// here for the rest of the print.
  std::string lookup(const void *object, const std::string &hint) {
    auto it = names_.find(object);
    if (it != names_.end() && !it->second.empty())
      return it->second.back();
    return define(object, hint);
  }

private:
  std::unordered_map<const void *, std::vector<std::string>> names_;
  std::unordered_map<std::string, int> inUse_;
};

// ---------------------------------------------------------------------------------------------
// Precedence
// ---------------------------------------------------------------------------------------------

enum Precedence : int {
  kOr = 1,
  kAnd = 2,
  kCompare = 3,
  kAdditive = 4,
  kMultiplicative = 5,
  kUnary = 6,
  kPrimary = 7,
};

/// The infix operator of a binary node; nullptr for Min and Max, printed as calls.
const char *binaryOperator(ExprKind kind) {
  static constexpr std::pair<ExprKind, const char *> kOperators[] = {
      {ExprKind::Add, "+"}, {ExprKind::Sub, "-"}, {ExprKind::Mul, "*"}, {ExprKind::Div, "/"},
      {ExprKind::Mod, "%"}, {ExprKind::EQ, "=="}, {ExprKind::NE, "!="}, {ExprKind::LT, "<"},
      {ExprKind::LE, "<="}, {ExprKind::GT, ">"},  {ExprKind::GE, ">="}, {ExprKind::And, "&&"},
      {ExprKind::Or, "||"}};
  for (const auto &[k, symbol] : kOperators)
    if (k == kind)
      return symbol;
  return nullptr;
}

int precedence(const Expr &e) {
  switch (e.kind()) {
  case ExprKind::Or:
    return kOr;
  case ExprKind::And:
    return kAnd;
  case ExprKind::EQ:
  case ExprKind::NE:
  case ExprKind::LT:
  case ExprKind::LE:
  case ExprKind::GT:
  case ExprKind::GE:
    return kCompare;
  case ExprKind::Add:
  case ExprKind::Sub:
    return kAdditive;
  case ExprKind::Mul:
  case ExprKind::Div:
  case ExprKind::Mod:
    return kMultiplicative;
  case ExprKind::Neg:
  case ExprKind::Not:
    return kUnary;
  case ExprKind::IntImm: {
    const auto *imm = e.as<IntImm>();
    return imm->type.isInt() && imm->value < 0 ? kUnary : kPrimary;
  }
  case ExprKind::FloatImm:
    return std::signbit(e.as<FloatImm>()->value) ? kUnary : kPrimary;
  default:
    return kPrimary;
  }
}

// ---------------------------------------------------------------------------------------------
// Printer
// ---------------------------------------------------------------------------------------------

class Printer {
public:
  explicit Printer(std::ostream &os) : os_(&os) {}

  void printExpr(const Expr &e, int minPrecedence = 0);
  void printStmt(const Stmt &s);
  void printFunc(const Func &func);
  void printModule(const Module &module);
  void printConstant(const Constant &constant);

private:
  std::ostream *os_; ///< Redirected while exprText() and friends capture text.
  int indent_ = 0;
  NameTable names_;
  std::unordered_set<std::string> blockNames_;

  std::ostream &line() { return *os_ << std::string(2 * indent_, ' '); }
  std::string exprText(const Expr &e, int minPrecedence = 0);

  std::string name(const Var &var) { return names_.lookup(var.get(), var.name()); }
  std::string name(const Buffer &buf) { return names_.lookup(buf.get(), buf.name()); }
  std::string define(const Var &var) { return names_.define(var.get(), var.name()); }
  std::string define(const Buffer &buf) { return names_.define(buf.get(), buf.name()); }
  std::string blockName(const std::string &hint);

  void printInt(const IntImm *op);
  void printCommaList(const std::vector<Expr> &exprs);
  void printType(const Buffer &buffer);
  void printParam(const FuncParam &param);
  void printSignature(const std::vector<Var> &constVars, const std::vector<FuncParam> &inputs);
  void printAlloc(const Buffer &buffer);
  void printBody(const Stmt &s);
  void printFor(const For *op);
  void printBlock(const Block *op);
  void printIf(const IfThenElse *op);
  void printBinding(const GraphBinding &binding);
  void printCall(const CallBinding &binding);
  void printPrimFunc(const PrimFunc *op);
  void printGraphFunc(const GraphFunc *op);
  void printExternFunc(const ExternFunc *op);
};

std::string Printer::exprText(const Expr &e, int minPrecedence) {
  std::ostringstream text;
  std::ostream *saved = std::exchange(os_, &text);
  printExpr(e, minPrecedence);
  os_ = saved;
  return text.str();
}

std::string Printer::blockName(const std::string &hint) {
  std::string base = sanitize(hint);
  std::string name = base;
  for (int suffix = 1; isReservedName(name) || blockNames_.count(name); ++suffix)
    name = base + "_" + std::to_string(suffix);
  blockNames_.insert(name);
  return name;
}

void Printer::printInt(const IntImm *op) {
  if (op->type.isBool()) {
    *os_ << (op->value ? "true" : "false");
    return;
  }
  if (op->type.isUInt()) {
    *os_ << static_cast<uint64_t>(op->value);
    return;
  }
  // INT64_MIN prints as `-9223372036854775808`: the frontend reads a negated literal as one
  // constant, and 2^63 is a valid literal under a unary minus.
  *os_ << op->value;
}

void Printer::printCommaList(const std::vector<Expr> &exprs) {
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (i)
      *os_ << ", ";
    printExpr(exprs[i]);
  }
}

void Printer::printExpr(const Expr &e, int minPrecedence) {
  if (!e.defined()) {
    *os_ << "<undefined>";
    return;
  }
  bool parens = precedence(e) < minPrecedence;
  if (parens)
    *os_ << '(';

  if (const char *symbol = binaryOperator(e.kind())) {
    auto [a, b] = binaryOperands(e);
    int p = precedence(e);
    // Left-associative; comparisons do not chain, so neither of their operands may be one.
    printExpr(*a, p == kCompare ? p + 1 : p);
    *os_ << ' ' << symbol << ' ';
    printExpr(*b, p + 1);
  } else {
    switch (e.kind()) {
    case ExprKind::IntImm:
      printInt(e.as<IntImm>());
      break;
    case ExprKind::FloatImm: {
      const auto *op = e.as<FloatImm>();
      *os_ << formatFloat(op->value, op->type);
      break;
    }
    case ExprKind::VarRef:
      *os_ << name(e.as<VarRef>()->var);
      break;
    case ExprKind::Cast: {
      const auto *op = e.as<Cast>();
      *os_ << op->type.name() << '(';
      printExpr(op->value);
      *os_ << ')';
      break;
    }
    case ExprKind::Neg: {
      const auto *op = e.as<Neg>();
      bool constant = op->a.as<IntImm>() || op->a.as<FloatImm>();
      *os_ << '-';
      printExpr(op->a, constant ? kPrimary + 1 : kPrimary);
      break;
    }
    case ExprKind::Not:
      *os_ << '!';
      printExpr(e.as<Not>()->a, kUnary);
      break;
    case ExprKind::Min:
    case ExprKind::Max: {
      auto [a, b] = binaryOperands(e);
      *os_ << (e.kind() == ExprKind::Min ? "min(" : "max(");
      printExpr(*a);
      *os_ << ", ";
      printExpr(*b);
      *os_ << ')';
      break;
    }
    case ExprKind::Select: {
      const auto *op = e.as<Select>();
      *os_ << "select(";
      printCommaList({op->condition, op->trueValue, op->falseValue});
      *os_ << ')';
      break;
    }
    case ExprKind::BufferLoad: {
      const auto *op = e.as<BufferLoad>();
      *os_ << name(op->buffer) << '[';
      printCommaList(op->indices);
      *os_ << ']';
      break;
    }
    case ExprKind::Call: {
      const auto *op = e.as<Call>();
      *os_ << intrinsicName(op->op) << '(';
      if (op->op == Intrinsic::MinValue || op->op == Intrinsic::MaxValue)
        *os_ << op->type.name();
      printCommaList(op->args);
      *os_ << ')';
      break;
    }
    case ExprKind::Ramp: {
      const auto *op = e.as<Ramp>();
      *os_ << "ramp(";
      printCommaList({op->base, op->stride});
      *os_ << ", " << op->lanes << ')';
      break;
    }
    case ExprKind::Broadcast: {
      const auto *op = e.as<Broadcast>();
      *os_ << "broadcast(";
      printExpr(op->value);
      *os_ << ", " << op->lanes << ')';
      break;
    }
    default:
      TDSL_IR_CHECK(false, "unhandled expression kind in the printer");
    }
  }

  if (parens)
    *os_ << ')';
}

void Printer::printType(const Buffer &buffer) {
  *os_ << buffer.dtype().name() << '[';
  printCommaList(buffer.shape());
  *os_ << ']';
}

void Printer::printAlloc(const Buffer &buffer) {
  line() << "alloc " << define(buffer) << ": ";
  printType(buffer);
  if (buffer.scope() != MemScope::Global)
    *os_ << " scope(" << scopeName(buffer.scope()) << ')';
  // storage_align: `@align(axis, factor, offset)` per aligned dimension.
  const std::vector<StorageAlign> &align = buffer->align;
  for (size_t d = 0; d < align.size(); ++d)
    if (align[d].factor != 0)
      *os_ << " @align(" << d << ", " << align[d].factor << ", " << align[d].offset << ')';
  *os_ << ";\n";
}

/// Prints `s` as a list of statements: a SeqStmt's elements one after the other.
void Printer::printBody(const Stmt &s) {
  if (const auto *seq = s.as<SeqStmt>()) {
    for (const Stmt &stmt : seq->seq)
      printBody(stmt);
    return;
  }
  printStmt(s);
}

void Printer::printStmt(const Stmt &s) {
  switch (s.kind()) {
  case StmtKind::For:
    return printFor(s.as<For>());
  case StmtKind::Block:
    return printBlock(s.as<Block>());
  case StmtKind::IfThenElse:
    return printIf(s.as<IfThenElse>());
  case StmtKind::SeqStmt:
    return printBody(s);
  case StmtKind::BufferStore: {
    const auto *op = s.as<BufferStore>();
    line() << name(op->buffer) << '[';
    printCommaList(op->indices);
    *os_ << "] = ";
    printExpr(op->value);
    *os_ << ";\n";
    return;
  }
  case StmtKind::LetStmt: {
    // The variable is in scope from here to the end of the enclosing braces.
    const auto *op = s.as<LetStmt>();
    std::string value = exprText(op->value);
    line() << "let " << define(op->var) << " = " << value << ";\n";
    printBody(op->body);
    names_.undefine(op->var.get());
    return;
  }
  case StmtKind::Evaluate:
    line() << "evaluate(";
    printExpr(s.as<Evaluate>()->value);
    *os_ << ");\n";
    return;
  case StmtKind::Allocate: {
    const auto *op = s.as<Allocate>();
    printAlloc(op->buffer);
    printBody(op->body);
    names_.undefine(op->buffer.get());
    return;
  }
  case StmtKind::AssertStmt: {
    const auto *op = s.as<AssertStmt>();
    line() << "assert ";
    printExpr(op->condition);
    *os_ << ", " << quoteString(op->message);
    for (const Expr &arg : op->args) {
      *os_ << ", ";
      printExpr(arg);
    }
    *os_ << " {\n";
    ++indent_;
    printBody(op->body);
    --indent_;
    line() << "}\n";
    return;
  }
  case StmtKind::ProfileRegion: {
    // --profile only (not parseable): `profile 2 "nn.conv2d" { ... }`
    const auto *op = s.as<ProfileRegion>();
    line() << "profile " << op->id << " " << quoteString(op->label) << " {\n";
    ++indent_;
    printBody(op->body);
    --indent_;
    line() << "}\n";
    return;
  }
  case StmtKind::BufferView: {
    // Lowered graphs only (not parseable): `view h: f32[1024] = arena @ 4096;`
    const auto *op = s.as<BufferView>();
    std::string source = name(op->source), offset = exprText(op->byteOffset);
    line() << "view " << define(op->buffer) << ": ";
    printType(op->buffer);
    *os_ << " = " << source << " @ " << offset << ";\n";
    printBody(op->body);
    names_.undefine(op->buffer.get());
    return;
  }
  case StmtKind::FuncCall: {
    // Lowered graphs only: `call_raw nn.linear(x, w, b, h, B, 784, 128);`
    const auto *op = s.as<FuncCall>();
    line() << "call_raw " << op->callee << '(';
    for (size_t i = 0; i < op->args.size(); ++i) {
      if (i)
        *os_ << ", ";
      if (const auto *buffer = std::get_if<Buffer>(&op->args[i]))
        *os_ << name(*buffer);
      else
        printExpr(std::get<Expr>(op->args[i]));
    }
    *os_ << ");\n";
    return;
  }
  }
}

void Printer::printFor(const For *op) {
  // The bounds belong to the enclosing scope: print them before naming the loop variable.
  std::string lo = exprText(op->min);
  std::string hi;
  std::optional<int64_t> min = asConstInt(op->min), extent = asConstInt(op->extent);
  if (min && *min == 0)
    hi = exprText(op->extent);
  else if (min && extent)
    hi = exprText(IntImm::make(op->extent.dtype(), *min + *extent));
  else if (auto *sub = op->extent.as<Sub>(); sub && sub->b.sameAs(op->min))
    hi = exprText(sub->a); // the frontend's `HI - LO` for a loop written `LO..HI`
  else
    hi = exprText(Add::make(op->min, op->extent));

  line() << "for " << define(op->loopVar) << " in " << lo << ".." << hi;
  switch (op->forKind) {
  case ForKind::Serial:
    break;
  case ForKind::ThreadBinding:
    *os_ << " thread(" << quoteString(op->threadTag) << ')';
    break;
  default:
    *os_ << ' ' << forKindName(op->forKind);
  }
  *os_ << " {\n";
  ++indent_;
  printBody(op->body);
  --indent_;
  line() << "}\n";
  names_.undefine(op->loopVar.get());
}

void Printer::printBlock(const Block *op) {
  // Extents, bindings and the predicate are over the surrounding loops: print them first.
  std::vector<std::string> extents, bindings;
  for (const IterVar &iv : op->iterVars) {
    extents.push_back(exprText(iv.extent));
    bindings.push_back(iv.binding.defined() ? exprText(iv.binding) : std::string());
  }
  std::string predicate = isConstInt(op->predicate, 1) ? "" : exprText(op->predicate);

  line() << "block " << blockName(op->name) << '(';
  for (size_t i = 0; i < op->iterVars.size(); ++i) {
    const IterVar &iv = op->iterVars[i];
    if (i)
      *os_ << ", ";
    *os_ << define(iv.var) << ": " << (iv.kind == IterKind::Spatial ? "spatial " : "reduce ")
         << extents[i];
    if (!bindings[i].empty())
      *os_ << " = " << bindings[i];
  }
  *os_ << ')';
  if (!predicate.empty())
    *os_ << " where " << predicate;
  *os_ << " {\n";

  ++indent_;
  for (const Buffer &buffer : op->allocBuffers)
    printAlloc(buffer);
  if (op->init.defined()) {
    // A single store fits on one line: `init { Y[vi] = 0.0; }`.
    if (op->init.as<BufferStore>()) {
      std::ostringstream text;
      std::ostream *saved = std::exchange(os_, &text);
      int savedIndent = std::exchange(indent_, 0);
      printStmt(op->init);
      os_ = saved;
      indent_ = savedIndent;
      std::string store = text.str();
      store.pop_back(); // The newline.
      line() << "init { " << store << " }\n";
    } else {
      line() << "init {\n";
      ++indent_;
      printBody(op->init);
      --indent_;
      line() << "}\n";
    }
  }
  printBody(op->body);
  --indent_;
  line() << "}\n";

  for (const Buffer &buffer : op->allocBuffers)
    names_.undefine(buffer.get());
  for (const IterVar &iv : op->iterVars)
    names_.undefine(iv.var.get());
}

void Printer::printIf(const IfThenElse *op) {
  line() << "if ";
  printExpr(op->condition);
  *os_ << " {\n";
  // `else if` chains stay flat.
  while (true) {
    ++indent_;
    printBody(op->thenCase);
    --indent_;
    if (!op->elseCase.defined()) {
      line() << "}\n";
      return;
    }
    const auto *elseIf = op->elseCase.as<IfThenElse>();
    if (!elseIf)
      break;
    line() << "} else if ";
    printExpr(elseIf->condition);
    *os_ << " {\n";
    op = elseIf;
  }
  line() << "} else {\n";
  ++indent_;
  printBody(op->elseCase);
  --indent_;
  line() << "}\n";
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

void Printer::printParam(const FuncParam &param) {
  if (!param.isTensor()) {
    *os_ << define(param.scalar) << ": " << param.scalar.dtype().name();
    return;
  }
  *os_ << define(param.buffer) << ": ";
  printType(param.buffer);
}

/// Prints `<consts>(inputs)`. Shape variables must already be defined.
void Printer::printSignature(const std::vector<Var> &constVars,
                             const std::vector<FuncParam> &inputs) {
  if (!constVars.empty()) {
    *os_ << '<';
    for (size_t i = 0; i < constVars.size(); ++i)
      *os_ << (i ? ", " : "") << name(constVars[i]) << ": " << constVars[i].dtype().name();
    *os_ << '>';
  }
  *os_ << '(';
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (i)
      *os_ << ", ";
    printParam(inputs[i]);
  }
  *os_ << ')';
}

void Printer::printPrimFunc(const PrimFunc *op) {
  // Constants and shape variables are named first: buffer types refer to them.
  for (const Var &var : op->constVars)
    define(var);
  for (const Var &var : op->shapeVars)
    define(var);
  line() << "func " << op->name;
  printSignature(op->constVars, op->inputs);
  *os_ << " -> (";
  for (size_t i = 0; i < op->outputs.size(); ++i) {
    if (i)
      *os_ << ", ";
    printParam(FuncParam::tensor(op->outputs[i]));
  }
  *os_ << ") {\n";
  ++indent_;
  for (const Buffer &buffer : op->allocBuffers)
    printAlloc(buffer);
  printBody(op->body);
  --indent_;
  line() << "}\n";
}

void Printer::printCall(const CallBinding &binding) {
  *os_ << "call " << binding.callee;
  if (!binding.constArgs.empty()) {
    // Constant arguments are addExprs in the grammar: `<` and `>` would end the list.
    *os_ << '<';
    for (size_t i = 0; i < binding.constArgs.size(); ++i) {
      if (i)
        *os_ << ", ";
      printExpr(binding.constArgs[i], kAdditive);
    }
    *os_ << '>';
  }
  *os_ << '(';
  for (size_t i = 0; i < binding.args.size(); ++i) {
    if (i)
      *os_ << ", ";
    if (const auto *buffer = std::get_if<Buffer>(&binding.args[i]))
      *os_ << name(*buffer);
    else
      printExpr(std::get<Expr>(binding.args[i]));
  }
  *os_ << ')';
  if (binding.annotated && binding.targets.size() == 1) {
    *os_ << " -> ";
    printType(binding.targets.front());
  }
}

void Printer::printBinding(const GraphBinding &binding) {
  if (const auto *reshape = std::get_if<ReshapeBinding>(&binding)) {
    std::string source = name(reshape->source);
    line() << define(reshape->target) << " = reshape(" << source << ", [";
    printCommaList(reshape->target.shape());
    *os_ << "]);\n";
    return;
  }
  const auto &callBinding = std::get<CallBinding>(binding);
  line();
  for (size_t i = 0; i < callBinding.targets.size(); ++i)
    *os_ << (i ? ", " : "") << define(callBinding.targets[i]);
  if (!callBinding.targets.empty())
    *os_ << " = ";
  printCall(callBinding);
  *os_ << ";\n";
}

void Printer::printGraphFunc(const GraphFunc *op) {
  // The module's constants a graph uses print as their names: they are defined first, so that a
  // local value of the same name takes a suffix instead.
  auto defineConstant = [&](const Buffer &b) {
    if (b.defined() && b.role() == BufferRole::Constant)
      name(b);
  };
  auto defineConstants = [&](const GraphBinding &binding) {
    if (const auto *reshape = std::get_if<ReshapeBinding>(&binding)) {
      defineConstant(reshape->source);
      return;
    }
    for (const GraphArg &a : std::get<CallBinding>(binding).args)
      if (const auto *b = std::get_if<Buffer>(&a))
        defineConstant(*b);
  };
  for (const GraphItem &item : op->body) {
    if (const auto *dataflow = std::get_if<DataflowBlock>(&item))
      for (const GraphBinding &binding : dataflow->bindings)
        defineConstants(binding);
    else if (const auto *call = std::get_if<CallBinding>(&item))
      defineConstants(*call);
    else
      defineConstants(std::get<ReshapeBinding>(item));
  }
  for (const Buffer &r : op->results)
    defineConstant(r);
  for (const Var &var : op->constVars)
    define(var);
  for (const Var &var : op->shapeVars)
    define(var);
  line() << "graph " << op->name;
  printSignature(op->constVars, op->inputs);
  *os_ << " -> ";
  if (op->results.size() == 1) {
    printType(op->results.front());
  } else {
    *os_ << '(';
    for (size_t i = 0; i < op->results.size(); ++i) {
      if (i)
        *os_ << ", ";
      printType(op->results[i]);
    }
    *os_ << ')';
  }
  *os_ << " {\n";
  ++indent_;
  for (const GraphItem &item : op->body) {
    if (const auto *dataflow = std::get_if<DataflowBlock>(&item)) {
      line() << "dataflow {\n";
      ++indent_;
      for (const GraphBinding &binding : dataflow->bindings)
        printBinding(binding);
      if (!dataflow->outputs.empty()) {
        line() << "output ";
        for (size_t i = 0; i < dataflow->outputs.size(); ++i)
          *os_ << (i ? ", " : "") << name(dataflow->outputs[i]);
        *os_ << ";\n";
      }
      --indent_;
      line() << "}\n";
      continue;
    }
    if (const auto *call = std::get_if<CallBinding>(&item))
      printBinding(*call);
    else
      printBinding(std::get<ReshapeBinding>(item));
  }
  if (op->plan) {
    // The memory plan is derived data: comments, so that the print still parses.
    line() << "// memory plan: arena of " << exprText(op->plan->arenaBytes) << " bytes\n";
    for (const PlannedValue &v : op->plan->values) {
      line() << "//   " << name(v.value) << ": ";
      switch (v.kind) {
      case PlannedValue::Kind::Arena:
        *os_ << "arena offset " << exprText(v.offset) << ", " << exprText(v.bytes)
             << " bytes, live " << v.firstUse << ".." << v.lastUse;
        break;
      case PlannedValue::Kind::Result:
        *os_ << "in place in result " << v.result;
        break;
      case PlannedValue::Kind::View:
        *os_ << "view of " << name(v.viewOf);
        break;
      }
      *os_ << "\n";
    }
  }
  if (!op->results.empty()) {
    line() << "return ";
    for (size_t i = 0; i < op->results.size(); ++i)
      *os_ << (i ? ", " : "") << name(op->results[i]);
    *os_ << ";\n";
  }
  --indent_;
  line() << "}\n";
}

void Printer::printExternFunc(const ExternFunc *op) {
  for (const Var &var : op->shapeVars)
    define(var);
  line() << "extern " << (op->pure ? "pure " : "") << "func " << op->name;
  printSignature({}, op->inputs);
  *os_ << " -> (";
  for (size_t i = 0; i < op->outputs.size(); ++i) {
    if (i)
      *os_ << ", ";
    printParam(FuncParam::tensor(op->outputs[i]));
  }
  *os_ << ") = " << quoteString(op->symbol) << ";\n";
}

void Printer::printFunc(const Func &func) {
  // Each function is its own name space.
  names_ = NameTable();
  blockNames_.clear();
  switch (func.kind()) {
  case FuncKind::PrimFunc:
    return printPrimFunc(func.as<PrimFunc>());
  case FuncKind::GraphFunc:
    return printGraphFunc(func.as<GraphFunc>());
  case FuncKind::ExternFunc:
    return printExternFunc(func.as<ExternFunc>());
  }
}

void Printer::printConstant(const Constant &constant) {
  *os_ << "const " << constant.name << ": ";
  printType(constant.buffer);
  if (!constant.path.empty()) {
    *os_ << " = load(" << quoteString(constant.path) << ");\n";
    return;
  }
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(constant.data ? constant.data->size() * 2 : 0);
  if (constant.data)
    for (uint8_t byte : *constant.data) {
      hex += digits[byte >> 4];
      hex += digits[byte & 15];
    }
  *os_ << " = hex(\"" << hex << "\");\n";
}

void Printer::printModule(const Module &module) {
  for (const std::string &import : module.imports)
    *os_ << "import " << quoteString(import) << ";\n";
  for (const Constant &constant : module.constants)
    printConstant(constant);
  bool first = module.imports.empty() && module.constants.empty();
  for (const Func &func : module.functions()) {
    if (!first)
      *os_ << '\n';
    first = false;
    printFunc(func);
  }
  if (!module.intrinsics.empty() && !first)
    *os_ << '\n';
  for (const TensorIntrin &t : module.intrinsics)
    *os_ << "intrinsic " << t.name << "(" << t.desc << ", " << t.impl << ");\n";
}

} // namespace

std::string escapeString(const std::string &text, const char *newline) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += newline;
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

std::string quoteString(const std::string &text) { return "\"" + escapeString(text) + "\""; }

std::string toString(const Expr &expr) {
  std::ostringstream os;
  os << expr;
  return os.str();
}

std::string toString(const Stmt &stmt) {
  std::ostringstream os;
  os << stmt;
  return os.str();
}

std::string toString(const Func &func) {
  std::ostringstream os;
  os << func;
  return os.str();
}

std::string toString(const Constant &constant) {
  std::ostringstream os;
  Printer(os).printConstant(constant);
  return os.str();
}

std::string toString(const Module &module) {
  std::ostringstream os;
  os << module;
  return os.str();
}

std::ostream &operator<<(std::ostream &os, const Expr &expr) {
  Printer(os).printExpr(expr);
  return os;
}

std::ostream &operator<<(std::ostream &os, const Stmt &stmt) {
  if (stmt.defined())
    Printer(os).printStmt(stmt);
  return os;
}

std::ostream &operator<<(std::ostream &os, const Func &func) {
  if (func.defined())
    Printer(os).printFunc(func);
  return os;
}

std::ostream &operator<<(std::ostream &os, const Module &module) {
  Printer(os).printModule(module);
  return os;
}

} // namespace tdsl::ir

//===- ir/IR.cpp - Node factories and helpers ---------------------------------------------===//
#include "ir/IR.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tdsl::ir {

void detail::checkFailed(const char *condition, const char *message, const char *file, int line) {
  std::fprintf(stderr, "%s:%d: internal error: %s (failed: %s)\n", file, line, message, condition);
  std::abort();
}

const char *kindName(ExprKind kind) {
  switch (kind) {
#define TDSL_IR_CASE(NAME)                                                                         \
  case ExprKind::NAME:                                                                             \
    return #NAME;
    TDSL_FOR_EACH_EXPR_NODE(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  }
  return "?";
}

const char *kindName(StmtKind kind) {
  switch (kind) {
#define TDSL_IR_CASE(NAME)                                                                         \
  case StmtKind::NAME:                                                                             \
    return #NAME;
    TDSL_FOR_EACH_STMT_NODE(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Var, Buffer, enums
// ---------------------------------------------------------------------------------------------

Expr::Expr(const Var &var) : Expr(VarRef::make(var)) {}

Var::Var(std::string nameHint, DType dtype, SourceLoc loc) {
  auto *node = new VarNode();
  node->name = std::move(nameHint);
  node->dtype = dtype;
  node->loc = loc;
  *this = Var(node);
}

Buffer::Buffer(std::string nameHint, DType dtype, std::vector<Expr> shape, BufferRole role,
               MemScope scope, std::vector<StorageAlign> align, SourceLoc loc) {
  TDSL_IR_CHECK(dtype.isScalar(), "buffer elements are scalars");
  TDSL_IR_CHECK(align.empty() || align.size() == shape.size(),
                "storage alignment needs one entry per dimension");
  for (const Expr &extent : shape)
    TDSL_IR_CHECK(extent.defined() && extent.dtype().isInteger(),
                  "buffer dimensions are integer expressions");
  auto *node = new BufferNode();
  node->name = std::move(nameHint);
  node->dtype = dtype;
  node->shape = std::move(shape);
  node->scope = scope;
  node->role = role;
  node->align = std::move(align);
  node->loc = loc;
  *this = Buffer(node);
}

const char *scopeName(MemScope scope) {
  static constexpr const char *kNames[] = {"global", "shared", "local"}; // MemScope's order
  return kNames[static_cast<size_t>(scope)];
}

std::optional<MemScope> parseScope(std::string_view text) {
  for (MemScope scope : {MemScope::Global, MemScope::Shared, MemScope::Local})
    if (text == scopeName(scope))
      return scope;
  return std::nullopt;
}

const char *forKindName(ForKind kind) {
  static constexpr const char *kNames[] = {"serial", "parallel", "vectorized", "unrolled",
                                           "thread"}; // ForKind's order
  return kNames[static_cast<size_t>(kind)];
}

const char *intrinsicName(Intrinsic op) {
  switch (op) {
#define TDSL_IR_CASE(NAME, SPELLING, ARITY)                                                        \
  case Intrinsic::NAME:                                                                            \
    return SPELLING;
    TDSL_FOR_EACH_INTRINSIC(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  }
  return "?";
}

int intrinsicArity(Intrinsic op) {
  switch (op) {
#define TDSL_IR_CASE(NAME, SPELLING, ARITY)                                                        \
  case Intrinsic::NAME:                                                                            \
    return ARITY;
    TDSL_FOR_EACH_INTRINSIC(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  }
  return 0;
}

std::optional<Intrinsic> parseIntrinsic(std::string_view name) {
#define TDSL_IR_CASE(NAME, SPELLING, ARITY)                                                        \
  if (name == SPELLING)                                                                            \
    return Intrinsic::NAME;
  TDSL_FOR_EACH_INTRINSIC(TDSL_IR_CASE)
#undef TDSL_IR_CASE
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

namespace {

/// Allocates a node of type T with location `loc`.
template <typename T> T *newNode(SourceLoc loc) {
  T *node = new T();
  node->loc = loc;
  return node;
}

/// Wraps `value` to the width of `type` (two's complement), see IntImm.
int64_t normalizeInt(DType type, int64_t value) {
  if (type.isBool())
    return value != 0;
  int bits = type.bits();
  if (bits == 64)
    return value;
  uint64_t mask = (uint64_t(1) << bits) - 1;
  uint64_t raw = static_cast<uint64_t>(value) & mask;
  if (type.isInt() && (raw >> (bits - 1)) != 0)
    raw |= ~mask; // Sign-extend.
  return static_cast<int64_t>(raw);
}

} // namespace

Expr IntImm::make(DType type, int64_t value, SourceLoc loc) {
  TDSL_IR_CHECK(type.isScalar() && (type.isInteger() || type.isBool()),
                "IntImm needs a scalar integer or bool dtype");
  auto *node = newNode<IntImm>(loc);
  node->type = type;
  node->value = normalizeInt(type, value);
  return node;
}

Expr FloatImm::make(DType type, double value, SourceLoc loc) {
  TDSL_IR_CHECK(type.isScalar() && type.isFloat(), "FloatImm needs a scalar float dtype");
  auto *node = newNode<FloatImm>(loc);
  node->type = type;
  node->value = type == DType::f32() ? static_cast<double>(static_cast<float>(value)) : value;
  return node;
}

Expr VarRef::make(Var var, SourceLoc loc) {
  TDSL_IR_CHECK(var.defined(), "reference to an undefined Var");
  auto *node = newNode<VarRef>(loc);
  node->type = var.dtype();
  node->var = std::move(var);
  return node;
}

Expr Cast::make(DType type, Expr value, SourceLoc loc) {
  TDSL_IR_CHECK(value.defined(), "cast of an undefined expression");
  TDSL_IR_CHECK(type.lanes() == value.dtype().lanes(), "cast must keep the lane count");
  auto *node = newNode<Cast>(loc);
  node->type = type;
  node->value = std::move(value);
  return node;
}

Expr Neg::make(Expr a, SourceLoc loc) {
  TDSL_IR_CHECK(a.defined() && !a.dtype().isBool(), "negation needs a number");
  auto *node = newNode<Neg>(loc);
  node->type = a.dtype();
  node->a = std::move(a);
  return node;
}

namespace {

template <typename T> Expr makeBinary(DType type, Expr a, Expr b, SourceLoc loc) {
  auto *node = newNode<T>(loc);
  node->type = type;
  node->a = std::move(a);
  node->b = std::move(b);
  return node;
}

void checkSameType(const Expr &a, const Expr &b) {
  TDSL_IR_CHECK(a.defined() && b.defined(), "binary operation on an undefined expression");
  TDSL_IR_CHECK(a.dtype() == b.dtype(), "binary operands must have the same dtype");
}

} // namespace

#define TDSL_IR_DEFINE_ARITH(NAME)                                                                 \
  Expr NAME::make(Expr a, Expr b, SourceLoc loc) {                                                 \
    checkSameType(a, b);                                                                           \
    TDSL_IR_CHECK(!a.dtype().isBool(), "arithmetic on bool");                                      \
    DType type = a.dtype();                                                                        \
    return makeBinary<NAME>(type, std::move(a), std::move(b), loc);                                \
  }
TDSL_FOR_EACH_ARITH_BINARY_NODE(TDSL_IR_DEFINE_ARITH)
#undef TDSL_IR_DEFINE_ARITH

#define TDSL_IR_DEFINE_CMP(NAME)                                                                   \
  Expr NAME::make(Expr a, Expr b, SourceLoc loc) {                                                 \
    checkSameType(a, b);                                                                           \
    DType type = DType::boolean().withLanes(a.dtype().lanes());                                    \
    return makeBinary<NAME>(type, std::move(a), std::move(b), loc);                                \
  }
TDSL_FOR_EACH_CMP_NODE(TDSL_IR_DEFINE_CMP)
#undef TDSL_IR_DEFINE_CMP

#define TDSL_IR_DEFINE_LOGICAL(NAME)                                                               \
  Expr NAME::make(Expr a, Expr b, SourceLoc loc) {                                                 \
    checkSameType(a, b);                                                                           \
    TDSL_IR_CHECK(a.dtype().isBool(), "logical operation on a non-bool");                          \
    DType type = a.dtype();                                                                        \
    return makeBinary<NAME>(type, std::move(a), std::move(b), loc);                                \
  }
TDSL_FOR_EACH_LOGICAL_BINARY_NODE(TDSL_IR_DEFINE_LOGICAL)
#undef TDSL_IR_DEFINE_LOGICAL

Expr Not::make(Expr a, SourceLoc loc) {
  TDSL_IR_CHECK(a.defined() && a.dtype().isBool(), "logical not of a non-bool");
  auto *node = newNode<Not>(loc);
  node->type = a.dtype();
  node->a = std::move(a);
  return node;
}

Expr Select::make(Expr condition, Expr trueValue, Expr falseValue, SourceLoc loc) {
  TDSL_IR_CHECK(condition.defined() && condition.dtype().isBool(), "select condition must be bool");
  checkSameType(trueValue, falseValue);
  TDSL_IR_CHECK(condition.dtype().isScalar() ||
                    condition.dtype().lanes() == trueValue.dtype().lanes(),
                "select condition lanes must match its values");
  auto *node = newNode<Select>(loc);
  node->type = trueValue.dtype();
  node->condition = std::move(condition);
  node->trueValue = std::move(trueValue);
  node->falseValue = std::move(falseValue);
  return node;
}

Expr BufferLoad::make(Buffer buffer, std::vector<Expr> indices, SourceLoc loc) {
  TDSL_IR_CHECK(buffer.defined(), "load from an undefined buffer");
  TDSL_IR_CHECK(indices.size() == buffer.rank(), "load needs one index per dimension");
  uint16_t lanes = 1;
  for (const Expr &index : indices) {
    TDSL_IR_CHECK(index.defined() && index.dtype().isInteger(), "indices are integers");
    lanes = std::max(lanes, index.dtype().lanes());
  }
  auto *node = newNode<BufferLoad>(loc);
  node->type = buffer.dtype().withLanes(lanes);
  node->buffer = std::move(buffer);
  node->indices = std::move(indices);
  return node;
}

Expr Call::make(DType type, Intrinsic op, std::vector<Expr> args, SourceLoc loc) {
  TDSL_IR_CHECK(static_cast<int>(args.size()) == intrinsicArity(op),
                "wrong number of intrinsic arguments");
  for (const Expr &arg : args)
    TDSL_IR_CHECK(arg.defined(), "undefined intrinsic argument");
  auto *node = newNode<Call>(loc);
  node->type = type;
  node->op = op;
  node->args = std::move(args);
  return node;
}

Expr Ramp::make(Expr base, Expr stride, int lanes, SourceLoc loc) {
  checkSameType(base, stride);
  TDSL_IR_CHECK(base.dtype().isScalar() && base.dtype().isInteger(),
                "ramp base and stride are scalar integers");
  TDSL_IR_CHECK(lanes > 1 && lanes <= 0xFFFF, "a ramp has more than one lane");
  auto *node = newNode<Ramp>(loc);
  node->type = base.dtype().withLanes(static_cast<uint16_t>(lanes));
  node->base = std::move(base);
  node->stride = std::move(stride);
  node->lanes = lanes;
  return node;
}

Expr Broadcast::make(Expr value, int lanes, SourceLoc loc) {
  TDSL_IR_CHECK(value.defined() && value.dtype().isScalar(), "broadcast of a scalar");
  TDSL_IR_CHECK(lanes > 1 && lanes <= 0xFFFF, "a broadcast has more than one lane");
  auto *node = newNode<Broadcast>(loc);
  node->type = value.dtype().withLanes(static_cast<uint16_t>(lanes));
  node->value = std::move(value);
  node->lanes = lanes;
  return node;
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

Stmt For::make(Var loopVar, Expr min, Expr extent, ForKind kind, Stmt body, std::string threadTag,
               SourceLoc loc) {
  TDSL_IR_CHECK(loopVar.defined() && loopVar.dtype().isInteger(), "loop variables are integers");
  TDSL_IR_CHECK(min.defined() && min.dtype() == loopVar.dtype(), "loop min has the var's dtype");
  TDSL_IR_CHECK(extent.defined() && extent.dtype() == loopVar.dtype(),
                "loop extent has the var's dtype");
  TDSL_IR_CHECK(body.defined(), "loop without a body");
  TDSL_IR_CHECK((kind == ForKind::ThreadBinding) == !threadTag.empty(),
                "a thread tag goes with thread binding and only with it");
  auto *node = newNode<For>(loc);
  node->loopVar = std::move(loopVar);
  node->min = std::move(min);
  node->extent = std::move(extent);
  node->forKind = kind;
  node->threadTag = std::move(threadTag);
  node->body = std::move(body);
  return node;
}

Stmt Block::make(std::string name, std::vector<IterVar> iterVars, Expr predicate, Stmt init,
                 Stmt body, std::vector<BufferRegion> reads, std::vector<BufferRegion> writes,
                 std::vector<Buffer> allocBuffers, SourceLoc loc) {
  for (const IterVar &iv : iterVars)
    TDSL_IR_CHECK(iv.var.defined() && iv.extent.defined(), "iter var without var or extent");
  if (!predicate.defined())
    predicate = boolImm(true);
  TDSL_IR_CHECK(predicate.dtype() == DType::boolean(), "block predicate must be bool");
  TDSL_IR_CHECK(body.defined(), "block without a body");
  auto *node = newNode<Block>(loc);
  node->name = std::move(name);
  node->iterVars = std::move(iterVars);
  node->predicate = std::move(predicate);
  node->init = std::move(init);
  node->body = std::move(body);
  node->reads = std::move(reads);
  node->writes = std::move(writes);
  node->allocBuffers = std::move(allocBuffers);
  return node;
}

Stmt BufferStore::make(Buffer buffer, Expr value, std::vector<Expr> indices, SourceLoc loc) {
  TDSL_IR_CHECK(buffer.defined() && value.defined(), "store of undefined buffer or value");
  TDSL_IR_CHECK(indices.size() == buffer.rank(), "store needs one index per dimension");
  TDSL_IR_CHECK(value.dtype().element() == buffer.dtype(), "stored value has the buffer dtype");
  for (const Expr &index : indices)
    TDSL_IR_CHECK(index.defined() && index.dtype().isInteger(), "indices are integers");
  auto *node = newNode<BufferStore>(loc);
  node->buffer = std::move(buffer);
  node->value = std::move(value);
  node->indices = std::move(indices);
  return node;
}

Stmt LetStmt::make(Var var, Expr value, Stmt body, SourceLoc loc) {
  TDSL_IR_CHECK(var.defined() && value.defined() && body.defined(), "incomplete let");
  TDSL_IR_CHECK(var.dtype() == value.dtype(), "let value has the var's dtype");
  auto *node = newNode<LetStmt>(loc);
  node->var = std::move(var);
  node->value = std::move(value);
  node->body = std::move(body);
  return node;
}

Stmt IfThenElse::make(Expr condition, Stmt thenCase, Stmt elseCase, SourceLoc loc) {
  TDSL_IR_CHECK(condition.defined() && condition.dtype() == DType::boolean(),
                "if condition must be a scalar bool");
  TDSL_IR_CHECK(thenCase.defined(), "if without a then branch");
  auto *node = newNode<IfThenElse>(loc);
  node->condition = std::move(condition);
  node->thenCase = std::move(thenCase);
  node->elseCase = std::move(elseCase);
  return node;
}

Stmt SeqStmt::make(std::vector<Stmt> seq, SourceLoc loc) {
  for (const Stmt &stmt : seq)
    TDSL_IR_CHECK(stmt.defined(), "undefined statement in a sequence");
  auto *node = newNode<SeqStmt>(loc);
  node->seq = std::move(seq);
  return node;
}

Stmt Evaluate::make(Expr value, SourceLoc loc) {
  TDSL_IR_CHECK(value.defined(), "evaluate of an undefined expression");
  auto *node = newNode<Evaluate>(loc);
  node->value = std::move(value);
  return node;
}

Stmt Allocate::make(Buffer buffer, Stmt body, SourceLoc loc) {
  TDSL_IR_CHECK(buffer.defined() && body.defined(), "incomplete allocate");
  auto *node = newNode<Allocate>(loc);
  node->buffer = std::move(buffer);
  node->body = std::move(body);
  return node;
}

Stmt ProfileRegion::make(int32_t id, std::string label, Stmt body, SourceLoc loc) {
  TDSL_IR_CHECK(body.defined(), "a profiled region without a body");
  TDSL_IR_CHECK(id >= 0, "profiled regions are numbered from 0");
  auto *node = newNode<ProfileRegion>(loc);
  node->id = id;
  node->label = std::move(label);
  node->body = std::move(body);
  return node;
}

Stmt AssertStmt::make(Expr condition, std::string message, std::vector<Expr> args, Stmt body,
                      SourceLoc loc) {
  TDSL_IR_CHECK(condition.defined() && condition.dtype() == DType::boolean(),
                "assert condition must be a scalar bool");
  TDSL_IR_CHECK(body.defined(), "assert without a body");
  for (const Expr &arg : args)
    TDSL_IR_CHECK(arg.defined() && arg.dtype() == DType::i64(), "assert arguments are i64");
  auto *node = newNode<AssertStmt>(loc);
  node->condition = std::move(condition);
  node->message = std::move(message);
  node->args = std::move(args);
  node->body = std::move(body);
  return node;
}

Stmt BufferView::make(Buffer buffer, Buffer source, Expr byteOffset, Stmt body, SourceLoc loc) {
  TDSL_IR_CHECK(buffer.defined() && source.defined() && byteOffset.defined() && body.defined(),
                "incomplete buffer view");
  TDSL_IR_CHECK(byteOffset.dtype() == DType::i64(), "a view's byte offset is i64");
  auto *node = newNode<BufferView>(loc);
  node->buffer = std::move(buffer);
  node->source = std::move(source);
  node->byteOffset = std::move(byteOffset);
  node->body = std::move(body);
  return node;
}

Stmt FuncCall::make(std::string callee, std::vector<std::variant<Buffer, Expr>> args,
                    SourceLoc loc) {
  for (const auto &arg : args)
    TDSL_IR_CHECK(std::visit([](const auto &a) { return a.defined(); }, arg),
                  "undefined argument of a function call");
  auto *node = newNode<FuncCall>(loc);
  node->callee = std::move(callee);
  node->args = std::move(args);
  return node;
}

// ---------------------------------------------------------------------------------------------
// Functions and modules
// ---------------------------------------------------------------------------------------------

Func PrimFunc::make(std::string name, std::vector<Var> constVars, std::vector<FuncParam> inputs,
                    std::vector<Buffer> outputs, std::vector<Var> shapeVars,
                    std::vector<Buffer> allocBuffers, Stmt body, SourceLoc loc) {
  TDSL_IR_CHECK(body.defined(), "function without a body");
  auto *node = newNode<PrimFunc>(loc);
  node->name = std::move(name);
  node->constVars = std::move(constVars);
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  node->shapeVars = std::move(shapeVars);
  node->allocBuffers = std::move(allocBuffers);
  node->body = std::move(body);
  return node;
}

Func GraphFunc::make(std::string name, std::vector<Var> constVars, std::vector<FuncParam> inputs,
                     std::vector<Var> shapeVars, std::vector<GraphItem> body,
                     std::vector<Buffer> results, SourceLoc loc, std::optional<MemoryPlan> plan) {
  auto *node = newNode<GraphFunc>(loc);
  node->plan = std::move(plan);
  node->name = std::move(name);
  node->constVars = std::move(constVars);
  node->inputs = std::move(inputs);
  node->shapeVars = std::move(shapeVars);
  node->body = std::move(body);
  node->results = std::move(results);
  return node;
}

Func ExternFunc::make(std::string name, bool pure, std::vector<FuncParam> inputs,
                      std::vector<Buffer> outputs, std::vector<Var> shapeVars, std::string symbol,
                      SourceLoc loc) {
  auto *node = newNode<ExternFunc>(loc);
  node->name = std::move(name);
  node->pure = pure;
  node->inputs = std::move(inputs);
  node->outputs = std::move(outputs);
  node->shapeVars = std::move(shapeVars);
  node->symbol = std::move(symbol);
  return node;
}

void Module::add(Func func) {
  TDSL_IR_CHECK(func.defined(), "adding an undefined function");
  bool inserted = index_.emplace(func.name(), funcs_.size()).second;
  TDSL_IR_CHECK(inserted, "function name already in the module");
  funcs_.push_back(std::move(func));
}

void Module::replace(Func func) {
  auto it = index_.find(func.name());
  TDSL_IR_CHECK(it != index_.end(), "replacing a function the module does not have");
  funcs_[it->second] = std::move(func);
}

int64_t Constant::numElements() const {
  int64_t n = 1;
  for (const Expr &d : buffer.shape()) {
    const auto *imm = d.as<IntImm>();
    TDSL_IR_CHECK(imm, "a constant with a symbolic shape");
    n *= imm->value;
  }
  return n;
}

const GradItem *Module::lookupGrad(std::string_view name) const {
  for (const GradItem &g : grads)
    if (g.name == name)
      return &g;
  return nullptr;
}

const TensorIntrin *Module::lookupIntrinsic(std::string_view name) const {
  for (const TensorIntrin &t : intrinsics)
    if (t.name == name)
      return &t;
  return nullptr;
}

const Constant *Module::lookupConstant(std::string_view name) const {
  for (const Constant &c : constants)
    if (c.name == name)
      return &c;
  return nullptr;
}

const Constant *Module::constantOf(const Buffer &buffer) const {
  for (const Constant &c : constants)
    if (c.buffer == buffer)
      return &c;
  return nullptr;
}

Func Module::lookup(std::string_view name) const {
  auto it = index_.find(std::string(name));
  if (it == index_.end())
    return Func();
  return funcs_[it->second];
}

// ---------------------------------------------------------------------------------------------
// Convenience constructors
// ---------------------------------------------------------------------------------------------

Expr intImm(int64_t value, DType type) { return IntImm::make(type, value); }
Expr floatImm(double value, DType type) { return FloatImm::make(type, value); }
Expr boolImm(bool value) { return IntImm::make(DType::boolean(), value); }

Expr detail::intConstant(DType type, int64_t value) {
  if (type.isFloat())
    return FloatImm::make(type.element(), static_cast<double>(value));
  return IntImm::make(type.element(), value);
}

Expr detail::floatConstant(DType type, double value) {
  if (type.isFloat())
    return FloatImm::make(type.element(), value);
  TDSL_IR_CHECK(std::trunc(value) == value, "a non-integral constant for an integer dtype");
  return IntImm::make(type.element(), static_cast<int64_t>(value));
}

std::optional<int64_t> asConstInt(const Expr &e) {
  if (const auto *imm = e.as<IntImm>())
    return imm->value;
  return std::nullopt;
}

bool isConstInt(const Expr &e, int64_t value) {
  std::optional<int64_t> constant = asConstInt(e);
  return constant && *constant == value;
}

namespace {
void flattenInto(const Stmt &stmt, std::vector<Stmt> &out) {
  if (const auto *nested = stmt.as<SeqStmt>()) {
    for (const Stmt &s : nested->seq)
      flattenInto(s, out);
    return;
  }
  out.push_back(stmt);
}
} // namespace

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (const Stmt &stmt : stmts)
    flattenInto(stmt, flat);
  if (flat.size() == 1)
    return flat.front();
  return SeqStmt::make(std::move(flat));
}

Expr add(Expr a, Expr b) { return Add::make(std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return Sub::make(std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return Mul::make(std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return Div::make(std::move(a), std::move(b)); }
Expr mod(Expr a, Expr b) { return Mod::make(std::move(a), std::move(b)); }
Expr min(Expr a, Expr b) { return Min::make(std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return Max::make(std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return EQ::make(std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return NE::make(std::move(a), std::move(b)); }
Expr lt(Expr a, Expr b) { return LT::make(std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return LE::make(std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return GT::make(std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return GE::make(std::move(a), std::move(b)); }
Expr logicalAnd(Expr a, Expr b) { return And::make(std::move(a), std::move(b)); }
Expr logicalOr(Expr a, Expr b) { return Or::make(std::move(a), std::move(b)); }
Expr logicalNot(Expr a) { return Not::make(std::move(a)); }
Expr cast(DType type, Expr value) { return Cast::make(type, std::move(value)); }
Expr select(Expr condition, Expr trueValue, Expr falseValue) {
  return Select::make(std::move(condition), std::move(trueValue), std::move(falseValue));
}

Expr call(Intrinsic op, std::vector<Expr> args) {
  TDSL_IR_CHECK(!args.empty(), "call(): use Call::make with a dtype for min_value/max_value");
  DType type = args.front().dtype();
  return Call::make(type, op, std::move(args));
}

Expr operator+(Expr a, Expr b) { return add(std::move(a), std::move(b)); }
Expr operator-(Expr a, Expr b) { return sub(std::move(a), std::move(b)); }
Expr operator*(Expr a, Expr b) { return mul(std::move(a), std::move(b)); }
Expr operator/(Expr a, Expr b) { return div(std::move(a), std::move(b)); }
Expr operator%(Expr a, Expr b) { return mod(std::move(a), std::move(b)); }
Expr operator-(Expr a) { return Neg::make(std::move(a)); }

} // namespace tdsl::ir

//===- backends/cuda/CudaEmitter.cpp - The CUDA backend -----------------------------------===//
#include "backends/cuda/CudaEmitter.h"

#include "backends/cfamily/CFamily.h"
#include "backends/cpp/Format.h"

#include "ir/Gpu.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/StructuralEqual.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace tdsl::cuda {

using namespace ir;
using cfamily::Bounds;
using cfamily::storageType;
using cfamily::stripParens;
using cfamily::valueType;

namespace {

// ---------------------------------------------------------------------------------------------
// The prelude: includes and the helpers the emitted code calls (host and device versions).
// ---------------------------------------------------------------------------------------------

const std::string kHostDevice = "[[maybe_unused]] __host__ __device__ ";
const std::string kPrelude =
    std::string(R"(#include <cuda_runtime.h>
#include <dlpack/dlpack.h>

#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

// The message of tdsl_last_error(), one per host thread and one per program (an inline
// variable, shared with the objects of the C++ backend).
namespace tdsl_generated {
inline thread_local char last_error[512];
} // namespace tdsl_generated

)") +
    cfamily::preludeFail() +
    R"(// A device buffer freed when the entry returns, on every path.
struct tdsl_device_buffer {
  void *ptr = nullptr;
  ~tdsl_device_buffer() {
    if (ptr)
      cudaFree(ptr);
  }
};

)" + cfamily::preludeIntegerArithmetic(kHostDevice) +
    R"([[maybe_unused]] __host__ __device__ static inline float tdsl_fmod_floor(float a, float b) { return a - floorf(a / b) * b; }
[[maybe_unused]] __host__ __device__ static inline double tdsl_fmod_floor(double a, double b) { return a - floor(a / b) * b; }

// float -> integer: truncates toward zero, saturates out of range, NaN gives 0.
template <typename T> [[maybe_unused]] __host__ __device__ static inline T tdsl_f2i(double x, T lowest, T highest) {
  if (x != x)
    return 0;
  if (x <= static_cast<double>(lowest))
    return lowest;
  if (x >= static_cast<double>(highest))
    return highest;
  return static_cast<T>(x);
}

)" +
    cfamily::preludeHalfConversions({kHostDevice, "memcpy", "bits << 1 == uint64_t(0x7ff) << 53",
                                     "  int top = 63;\n  while (!((mag >> top) & 1))\n    --top;\n",
                                     "top", "ldexpf", "NAN", "INFINITY"}) +
    cfamily::preludeDlpackChecks("[[maybe_unused]] ") +
    R"(// A launch configuration the device accepts (grid.y and grid.z at most 65535, at most 1024
// threads per block); 0 when some dimension is empty (the kernel has no iteration).
[[maybe_unused]] static inline int32_t tdsl_launch_ok(const char *kernel, int64_t gx, int64_t gy, int64_t gz,
                                     int64_t tx, int64_t ty, int64_t tz, bool &empty) {
  empty = gx <= 0 || gy <= 0 || gz <= 0 || tx <= 0 || ty <= 0 || tz <= 0;
  if (empty)
    return 0;
  if (gx > 2147483647 || gy > 65535 || gz > 65535 || tx * ty * tz > 1024 || tz > 64)
    return tdsl_fail("%s: launch configuration grid (%lld, %lld, %lld) block (%lld, %lld, %lld) "
                     "exceeds the device limits", kernel, (long long)gx, (long long)gy,
                     (long long)gz, (long long)tx, (long long)ty, (long long)tz);
  return 0;
}

)" + cfamily::preludeEnd();

// ---------------------------------------------------------------------------------------------
// Types and names
// ---------------------------------------------------------------------------------------------

/// Names the CUDA code reserves besides abi::isReservedWord's C and C++ ones.
bool isCudaReservedWord(const std::string &name) {
  static const std::set<std::string> words = {
      "kDLCUDA",     "threadIdx",   "blockIdx", "blockDim", "gridDim", "dim3", "warpSize",
      "cudaError_t", "cudaSuccess", "rsqrt",    "sigmoid",  "sinf",    "cosf"};
  return words.count(name) != 0;
}

// ---------------------------------------------------------------------------------------------
// Kernels: the outermost thread-bound loop nests of the lowered body
// ---------------------------------------------------------------------------------------------

/// One `__global__` function: its loop nest, what it uses from the host, its launch extents.
struct Kernel {
  const For *root = nullptr;
  std::string name;
  std::vector<Buffer> buffers; ///< Global buffers, in order of first use.
  std::vector<Var> scalars;    ///< Variables defined outside the kernel, in order of first use.
  std::map<std::string, Expr> launch; ///< Tag → number of blocks or threads along it.
};

/// What a kernel refers to from outside and the extents of its bound loops.
class KernelScan : public IRVisitor {
public:
  Kernel &k;
  std::map<std::string, std::vector<Expr>> extents;
  std::set<const void *> defined, seenBuffer, seenVar;

  explicit KernelScan(Kernel &kernel) : k(kernel) {}

  void visit(const For *op) override {
    defined.insert(op->loopVar.get());
    if (op->forKind == ForKind::ThreadBinding)
      extents[op->threadTag].push_back(op->extent);
    IRVisitor::visit(op);
  }
  void visit(const LetStmt *op) override {
    defined.insert(op->var.get());
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    defined.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const VarRef *op) override {
    if (op->var == ir::syncThreadsVar() || defined.count(op->var.get()) ||
        !seenVar.insert(op->var.get()).second)
      return;
    k.scalars.push_back(op->var);
  }
  void visit(const BufferLoad *op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const BufferStore *op) override {
    use(op->buffer);
    IRVisitor::visit(op);
  }

private:
  void use(const Buffer &b) {
    if (defined.count(b.get()) || !seenBuffer.insert(b.get()).second)
      return;
    k.buffers.push_back(b);
  }
};

/// The launch extent of a tag: the common extent of its loops, the largest constant, or the
/// maximum computed on the host.
Expr launchExtent(const std::vector<Expr> &extents) {
  Expr out = extents.front();
  for (const Expr &e : extents) {
    if (ir::equalExpr(out, e))
      continue;
    auto a = asConstInt(out), b = asConstInt(e);
    out = a && b ? intImm(std::max(*a, *b)) : ir::max(out, e);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// One function
// ---------------------------------------------------------------------------------------------

/// The CUDA dialect: math functions with their `f` variants for f32, <cfloat> limits,
/// saturating casts given their bounds; plus kernels, launches and device memory.
class FunctionEmitter : public cfamily::FunctionEmitterBase {
public:
  FunctionEmitter(const PrimFunc *source, const PrimFunc *lowered, std::string cName)
      : FunctionEmitterBase(source, lowered, std::move(cName),
                            cfamily::NameTable({}, isCudaReservedWord)) {}

  void emit(std::ostream &os);

private:
  /// f32 (and the half types, computed in float) call the `f` variants of the math functions.
  std::string mathFunction(const std::string &name, DType t) override {
    return t.code() == DType::Code::F64 ? name : name + "f";
  }
  std::string nonFinite(bool isF64, bool isNan) override {
    std::string value = isNan ? "NAN" : "INFINITY";
    return isF64 ? "static_cast<double>(" + value + ")" : value;
  }
  std::string limit(DType t, bool isMax) override;
  std::string floatToInt(DType to, const std::string &x) override {
    return "tdsl_f2i<" + storageType(to) + ">(" + x + ", " + limit(to, false) + ", " +
           limit(to, true) + ")";
  }

  // Statements: host code (launches) and device code (kernel bodies).
  void hostStmt(const Stmt &s);
  void deviceStmt(const Stmt &s, bool inFor);
  void deviceFor(const For *op);
  void collectKernels(const Stmt &s);
  void emitKernel(std::ostream &os, const Kernel &k);
  void emitLaunch(const Kernel &k);
  std::string paramDecl(const Buffer &b);
  std::string scalarDecl(const Var &v);

  std::vector<Kernel> kernels_;
  std::map<const For *, size_t> kernelOf_;
  const Kernel *current_ = nullptr; ///< The kernel being emitted (device code).
};

std::string FunctionEmitter::limit(DType t, bool isMax) {
  if (t.code() == DType::Code::F32)
    return isMax ? "FLT_MAX" : "(-FLT_MAX)";
  if (t.code() == DType::Code::F64)
    return isMax ? "DBL_MAX" : "(-DBL_MAX)";
  if (t.isBool())
    return isMax ? "true" : "false";
  if (t.isUInt())
    return intLiteral(t, isMax ? (t.bits() == 64 ? -1 : (int64_t(1) << t.bits()) - 1) : 0);
  if (t.bits() == 64)
    return isMax ? "INT64_MAX" : "INT64_MIN";
  int64_t hi = (int64_t(1) << (t.bits() - 1)) - 1;
  return intLiteral(t, isMax ? hi : -hi - 1);
}

// --- Statements ------------------------------------------------------------------------------

std::string FunctionEmitter::paramDecl(const Buffer &b) {
  bool input = b.role() == BufferRole::Input;
  return std::string(input ? "const " : "") + storageType(b.dtype()) + " *__restrict__ " +
         names_(b);
}

std::string FunctionEmitter::scalarDecl(const Var &v) {
  DType t = v.dtype();
  // Scalar parameters of a half or bool type travel as their bit patterns, as in the ABI.
  return (halfParams_.count(v.get()) ? storageType(t) : valueType(t)) + " " + names_(v);
}

void FunctionEmitter::collectKernels(const Stmt &s) {
  if (!s.defined())
    return;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    if (op->forKind != ForKind::ThreadBinding)
      return collectKernels(op->body);
    Kernel k;
    k.root = op;
    k.name = cName_ + "_kernel" + std::to_string(kernels_.size());
    KernelScan scan(k);
    scan.visitStmt(s);
    // Parameters in signature order (inputs, outputs, shape variables), then the rest (global
    // intermediates, host loop variables) in order of first use.
    std::vector<const void *> order;
    for (const FuncParam &p : lowered_->inputs)
      if (p.isTensor())
        order.push_back(p.buffer.get());
    for (const Buffer &b : lowered_->outputs)
      order.push_back(b.get());
    for (const FuncParam &p : lowered_->inputs)
      if (!p.isTensor())
        order.push_back(p.scalar.get());
    for (const Var &v : lowered_->shapeVars)
      order.push_back(v.get());
    auto rank = [&](const void *x) {
      return std::find(order.begin(), order.end(), x) - order.begin();
    };
    std::stable_sort(k.buffers.begin(), k.buffers.end(), [&](const Buffer &x, const Buffer &y) {
      return rank(x.get()) < rank(y.get());
    });
    std::stable_sort(k.scalars.begin(), k.scalars.end(),
                     [&](const Var &x, const Var &y) { return rank(x.get()) < rank(y.get()); });
    for (auto &[tag, extents] : scan.extents)
      k.launch[tag] = launchExtent(extents);
    kernelOf_[op] = kernels_.size();
    kernels_.push_back(std::move(k));
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &c : s.as<SeqStmt>()->seq)
      collectKernels(c);
    return;
  case StmtKind::LetStmt:
    return collectKernels(s.as<LetStmt>()->body);
  case StmtKind::Allocate:
    return collectKernels(s.as<Allocate>()->body);
  case StmtKind::IfThenElse:
    collectKernels(s.as<IfThenElse>()->thenCase);
    return collectKernels(s.as<IfThenElse>()->elseCase);
  default:
    return;
  }
}

/// A loop of a kernel: a thread-bound loop is one iteration a thread (guarded where the launch
/// is larger than the loop); the others are loops, unrolled where vectorized or unrolled.
void FunctionEmitter::deviceFor(const For *op) {
  if (op->forKind == ForKind::ThreadBinding) {
    // Each thread runs one iteration: the loop variable is its index along the tag.
    std::string v = names_(op->loopVar);
    const Expr &launch = current_->launch.at(op->threadTag);
    std::string index = "static_cast<int64_t>(" + op->threadTag + ")";
    line("{");
    ++indent_;
    line("[[maybe_unused]] const int64_t " + v + " = " +
         (isConstInt(op->min, 0) ? index : expr(op->min) + " + " + index) + "; // thread(\"" +
         op->threadTag + "\")");
    recordLoopBounds(op);
    bool guard = !ir::equalExpr(op->extent, launch);
    if (guard) {
      std::string end = isConstInt(op->min, 0) ? expr(op->extent) : expr(op->min + op->extent);
      line("if (" + v + " < " + end + ") {");
      ++indent_;
    }
    deviceStmt(op->body, true);
    if (guard) {
      --indent_;
      line("}");
    }
    --indent_;
    line("}");
    return;
  }
  switch (op->forKind) {
  case ForKind::Vectorized:
  case ForKind::Unrolled: {
    auto n = asConstInt(op->extent);
    if (op->forKind == ForKind::Vectorized)
      line("// vectorized: consecutive elements, unrolled");
    line(n && *n > 0 && *n < 65535 ? "#pragma unroll " + std::to_string(*n) : "#pragma unroll");
    break;
  }
  case ForKind::Parallel:
    line("// parallel: a serial loop inside a CUDA thread");
    break;
  default:
    break;
  }
  forHeader(op);
  ++indent_;
  deviceStmt(op->body, true);
  --indent_;
  line("}");
}

void FunctionEmitter::deviceStmt(const Stmt &s, bool inFor) {
  if (structuralStmt(s, inFor, [&](const Stmt &inner) { deviceStmt(inner, false); }))
    return;
  switch (s.kind()) {
  case StmtKind::For:
    return deviceFor(s.as<For>());
  case StmtKind::BufferStore: {
    return scalarStore(s.as<BufferStore>());
  }
  case StmtKind::LetStmt:
  case StmtKind::IfThenElse:
  case StmtKind::SeqStmt:
    return; // printed by structuralStmt
  case StmtKind::Evaluate:
    if (ir::isSyncThreads(s)) {
      line("__syncthreads();");
      return;
    }
    line("(void)" + expr(s.as<Evaluate>()->value) + ";");
    return;
  case StmtKind::Allocate: {
    const auto *op = s.as<Allocate>();
    const Buffer &b = op->buffer;
    auto size = asConstInt(b.shape()[0]);
    TDSL_IR_CHECK(size, "kernel buffers have a constant size (checkLowered)");
    std::string decl = storageType(b.dtype()) + " " + names_(b) + "[" +
                       std::to_string(std::max<int64_t>(*size, 1)) + "];";
    if (b.scope() == MemScope::Shared)
      line("__shared__ " + decl + " // shared by the threads of a block");
    else
      line(decl + " // " + std::string(scopeName(b.scope())) + ": one per thread");
    deviceStmt(op->body, false);
    return;
  }
  case StmtKind::Block:         // lowered away
  case StmtKind::BufferView:    // lowered away
  case StmtKind::FuncCall:      // graphs run on the host
  case StmtKind::AssertStmt:    // the cuda pipeline inserts no bounds checks
  case StmtKind::ProfileRegion: // --profile runs on the CPU routes only
    break;
  }
  TDSL_IR_CHECK(false, "the CUDA backend takes lowered device code (no blocks, views, calls, "
                       "assertions or profiled regions)");
}

void FunctionEmitter::emitKernel(std::ostream &os, const Kernel &k) {
  os_ = &os;
  current_ = &k;
  std::string bounds;
  int64_t threads = 1;
  for (const char *tag : {"threadIdx.x", "threadIdx.y", "threadIdx.z"}) {
    auto it = k.launch.find(tag);
    if (it == k.launch.end())
      continue;
    auto n = asConstInt(it->second);
    threads = n && threads > 0 ? threads * *n : -1;
  }
  if (threads > 0)
    bounds = "__launch_bounds__(" + std::to_string(threads) + ") ";
  auto it = comments_.find(k.root->loopVar);
  if (it != comments_.end() && !it->second.empty())
    os << "// " << it->second << "\n";
  os << "__global__ void " << bounds << k.name << "(";
  bool first = true;
  for (const Buffer &b : k.buffers) {
    os << (first ? "" : ", ") << paramDecl(b);
    first = false;
  }
  for (const Var &v : k.scalars) {
    os << (first ? "" : ", ") << scalarDecl(v);
    first = false;
  }
  os << ") {\n";
  indent_ = 1;
  deviceStmt(Stmt(k.root), true);
  indent_ = 0;
  os << "}\n\n";
  current_ = nullptr;
}

void FunctionEmitter::emitLaunch(const Kernel &k) {
  auto dim = [&](const char *tag) {
    auto it = k.launch.find(tag);
    return it == k.launch.end() ? std::string("1") : stripParens(expr(it->second));
  };
  line("{");
  ++indent_;
  auto show = [&](const char *tag) {
    auto it = k.launch.find(tag);
    return it == k.launch.end() ? std::string("1") : toString(it->second);
  };
  line("// " + k.name + ": grid (" + show("blockIdx.x") + ", " + show("blockIdx.y") + ", " +
       show("blockIdx.z") + "), block (" + show("threadIdx.x") + ", " + show("threadIdx.y") + ", " +
       show("threadIdx.z") + ")");
  line("const int64_t grid[3] = {" + dim("blockIdx.x") + ", " + dim("blockIdx.y") + ", " +
       dim("blockIdx.z") + "};");
  line("const int64_t block[3] = {" + dim("threadIdx.x") + ", " + dim("threadIdx.y") + ", " +
       dim("threadIdx.z") + "};");
  line("bool empty = false;");
  line("if (tdsl_launch_ok(\"" + k.name +
       "\", grid[0], grid[1], grid[2], block[0], block[1], block[2], empty) != 0)");
  line("  return 1;");
  line("if (!empty) {");
  ++indent_;
  std::string args;
  for (const Buffer &b : k.buffers)
    args += (args.empty() ? "" : ", ") + names_(b);
  for (const Var &v : k.scalars)
    args += (args.empty() ? "" : ", ") + names_(v);
  line(k.name +
       "<<<dim3(static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), "
       "static_cast<unsigned>(grid[2])), dim3(static_cast<unsigned>(block[0]), "
       "static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]))>>>(" +
       args + ");");
  line("const cudaError_t error = cudaGetLastError();");
  line("if (error != cudaSuccess)");
  line("  return tdsl_fail(\"" + cName_ + ": launching " + k.name +
       " failed: %s\", cudaGetErrorString(error));");
  --indent_;
  line("}");
  --indent_;
  line("}");
}

void FunctionEmitter::hostStmt(const Stmt &s) {
  if (!s.defined())
    return;
  switch (s.kind()) {
  case StmtKind::For: {
    const auto *op = s.as<For>();
    auto it = kernelOf_.find(op);
    if (it != kernelOf_.end())
      return emitLaunch(kernels_[it->second]);
    forHeader(op); // a loop on the host around kernel launches
    ++indent_;
    hostStmt(op->body);
    --indent_;
    line("}");
    return;
  }
  case StmtKind::SeqStmt:
    for (const Stmt &c : s.as<SeqStmt>()->seq)
      hostStmt(c);
    return;
  case StmtKind::LetStmt: {
    const auto *op = s.as<LetStmt>();
    letLine(op);
    return hostStmt(op->body);
  }
  case StmtKind::IfThenElse:
    return ifThenElse(s.as<IfThenElse>(), [&](const Stmt &branch) { hostStmt(branch); });
  case StmtKind::Allocate: {
    // A global intermediate: device memory for the duration of the call.
    const auto *op = s.as<Allocate>();
    const Buffer &b = op->buffer;
    std::string name = names_(b), type = storageType(b.dtype());
    std::string count = "(" + expr(b.shape()[0]) + " > 0 ? " + expr(b.shape()[0]) + " : 1)";
    line("// " + std::string(scopeName(b.scope())) + " " + b.dtype().name() + "[" +
         toString(b.shape()[0]) + "] in device memory");
    line("tdsl_device_buffer " + name + "_memory;");
    line("if (cudaMalloc(&" + name + "_memory.ptr, sizeof(" + type + ") * static_cast<size_t>(" +
         count + ")) != cudaSuccess)");
    line("  return tdsl_fail(\"" + cName_ + ": out of device memory for '" + b.name() + "'\");");
    line(type + " *" + name + " = static_cast<" + type + " *>(" + name + "_memory.ptr);");
    return hostStmt(op->body);
  }
  default:
    TDSL_IR_CHECK(false, "work outside every kernel (checkScheduled refuses it)");
  }
}

void FunctionEmitter::emit(std::ostream &os) {
  os_ = &os;
  std::string raw = prepare();

  os << "// ===== func " << source_->name;
  if (source_->loc.valid())
    os << " (line " << source_->loc.line << ")";
  os << " =====\n\n";
  collectKernels(lowered_->body);
  for (const Kernel &k : kernels_)
    emitKernel(os, k);

  os_ = &os;
  os << "// Launches the kernels of " << source_->name
     << " in order on the default stream; pointers are device pointers.\n";
  os << "extern \"C\" " << raw << " {\n";
  indent_ = 1;
  markUnusedParameters();
  line("tdsl_generated::last_error[0] = '\\0';");
  hostStmt(lowered_->body);
  line("return 0;");
  indent_ = 0;
  os << "}\n\n";
  emitDlpack(os, {"kDLCUDA", "is not in CUDA device memory"});
}

/// C function names for the emitted functions, unique over the module.
std::vector<std::string> functionNames(const std::vector<Func> &funcs) {
  cfamily::NameTable table({"tdsl_last_error", "tdsl_generated"}, isCudaReservedWord);
  std::vector<std::string> out;
  for (const Func &f : funcs)
    out.push_back(table.define(f.get(), f.name()));
  return out;
}

} // namespace

std::string emitCuda(const LoweredModule &module, const CudaOptions &options) {
  std::vector<std::string> names = functionNames(module.sources());
  std::ostringstream os;
  os << "// Generated by tdslc (CUDA backend). Do not edit.\n" << kPrelude;
  for (size_t i = 0; i < module.funcs.size(); ++i) {
    const LoweredFunc &f = module.funcs[i];
    os << "\n";
    FunctionEmitter(f.source.as<PrimFunc>(), f.lowered.as<PrimFunc>(), names[i]).emit(os);
  }
  return options.format ? cpp::formatCpp(os.str(), "tdsl.cu") : os.str();
}

} // namespace tdsl::cuda

//===- backends/llvm/CodeGenInternal.h - Shared by the visitor and the ABI wrappers -------===//
//
// Not a public header: the per-module state (types, the f16/bf16 helpers, runtime
// declarations) and the function emitter, used by CodeGen.cpp (statements and expressions)
// and ABI.cpp (entries, DLPack checks, tdsl_last_error).
//
//===--------------------------------------------------------------------------------------===//
#pragma once

#include "backends/llvm/LLVMBackend.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <map>
#include <unordered_map>

namespace tdsl::llvmgen::detail {

/// State shared by every function of one llvm::Module.
class ModuleState {
public:
  ModuleState(llvm::Module &module, const CodeGenOptions &options)
      : module(module), context(module.getContext()), options(options) {}

  llvm::Module &module;
  llvm::LLVMContext &context;
  const CodeGenOptions &options;

  /// The type values of `t` are computed in: i1 for bool, iN, float for f16/bf16/f32, double;
  /// a fixed vector of it for lanes > 1.
  llvm::Type *valueType(ir::DType t);
  /// The type of one element in memory (and of an ABI scalar): i8 for bool, i16 for f16/bf16.
  llvm::Type *storageType(ir::DType t);

  /// `i16 (double)` (or the vector form): the bits of `x` rounded to f16 or bf16, to nearest
  /// even, overflow to infinity, NaN quiet with its sign (runtime/Float16.h).
  llvm::Function *halfEncoder(bool bf16, unsigned lanes);

  /// Declarations of the C library and OpenMP runtime functions the code calls.
  llvm::FunctionCallee libFunction(const std::string &name);

  /// The message buffer of tdsl_last_error() ([512 x i8]).
  llvm::GlobalVariable *lastErrorBuffer();
  /// This thread's address of that buffer.
  llvm::Value *lastErrorAddress(llvm::IRBuilder<> &builder);

  /// How many parallel loops of each function have been outlined (for their names).
  std::map<std::string, int> nextOutlined;

  /// Callees of lowered graphs' FuncCalls, by their IR name: the raw entries emitted so far
  /// (graphs come after the funcs they call), and the externs given to emitModule.
  std::map<std::string, llvm::Function *> rawEntries;
  std::map<std::string, const ir::ExternFunc *> externs;
  /// The declaration of an extern's C symbol with the raw-entry type of spec §10 (inputs,
  /// outputs, shape variables as i64; small scalars sign- or zero-extended).
  llvm::FunctionCallee externFunction(const ir::ExternFunc &x);

  /// The graph constants: each flat buffer with its private, read-only, 64-byte aligned global
  /// (bound in every function emitted).
  std::vector<std::pair<ir::Buffer, llvm::GlobalVariable *>> constants;

private:
  std::map<std::pair<bool, unsigned>, llvm::Function *> encoders_;
  llvm::GlobalVariable *lastError_ = nullptr;
};

/// Emits IR for the statements and expressions of one lowered function into `function`.
class FunctionEmitter {
public:
  FunctionEmitter(ModuleState &state, llvm::Function *function, std::string cName);

  ModuleState &state;
  llvm::IRBuilder<> builder;

  /// Scalars and buffers in scope: parameters, loop and let variables, allocations.
  void bind(const ir::Var &var, llvm::Value *value) { vars_[var.get()] = value; }
  void bind(const ir::Buffer &buffer, llvm::Value *pointer) { buffers_[buffer.get()] = pointer; }

  llvm::Value *expr(const ir::Expr &e);
  void stmt(const ir::Stmt &s);

  /// A value of an ABI scalar (bit patterns for f16/bf16, a byte for bool) as a computed
  /// value, and back.
  llvm::Value *fromStorage(llvm::Value *stored, ir::DType t);
  llvm::Value *toStorage(llvm::Value *value, ir::DType t);

  /// Run-time checks (AssertStmt): the entry's failure flag and first message, on its stack.
  /// beginChecks() before the body when it has checks; endChecks() after it returns 1 with the
  /// message in tdsl_last_error() when one failed.
  void beginChecks();
  void endChecks();

  /// A new block of the current function.
  llvm::BasicBlock *newBlock(const std::string &name);
  /// An alloca in the entry block of the current function.
  llvm::AllocaInst *entryAlloca(llvm::Type *type, llvm::Value *count, const std::string &name);

private:
  llvm::Value *binary(ir::ExprKind kind, const ir::Expr &e, const ir::Expr &a, const ir::Expr &b);
  /// `lhs ± rhs` as llvm.fmuladd when one operand is a (negated) product and contraction is on
  /// (CodeGenOptions::fpContract); nullptr otherwise.
  llvm::Value *mulAdd(bool isSub, const ir::Expr &lhs, const ir::Expr &rhs);
  /// Whether float operations of type `t` contract (not halves: they round after the product).
  bool contracts(ir::DType t) const;
  llvm::Value *intDivMod(bool isDiv, ir::DType t, llvm::Value *a, llvm::Value *b);
  llvm::Value *cast(ir::DType to, const ir::Expr &value);
  llvm::Value *call(const ir::Call *op);
  llvm::Value *select(const ir::Select *op);
  llvm::Value *load(const ir::BufferLoad *op);
  llvm::Value *roundHalf(llvm::Value *value, ir::DType t);
  llvm::Value *decodeHalf(llvm::Value *bits, bool bf16);
  llvm::Value *constantFloat(ir::DType t, double v);
  /// The address of element `index` (a vector of addresses for a vector index), and whether
  /// it is a contiguous vector access (a Ramp of stride 1). `inBounds`: the address is within
  /// the buffer (false for a masked access, whose masked-off lanes may lie outside it).
  llvm::Value *address(const ir::Buffer &buffer, const ir::Expr &index, bool &contiguous,
                       bool inBounds = true);

  void assertStmt(const ir::AssertStmt *op);
  void forLoop(const ir::For *op);
  void parallelFor(const ir::For *op);
  void allocate(const ir::Allocate *op);
  /// Lowered graphs: a view of another buffer's storage at a byte offset; a call of a raw
  /// entry whose non-zero status frees the live heap allocations and is returned.
  void bufferView(const ir::BufferView *op);
  void funcCall(const ir::FuncCall *op);
  /// Frees the heap allocations in scope, innermost first (before an early return).
  void releaseHeap();
  /// Emits a counted loop [begin, end) around `body(i)`; returns the latch branch (for
  /// loop metadata).
  llvm::Instruction *countedLoop(llvm::Value *begin, llvm::Value *end, const std::string &name,
                                 const std::function<void(llvm::Value *)> &body);

  llvm::Function *function_;
  std::string cName_;
  std::unordered_map<const void *, llvm::Value *> vars_;
  std::unordered_map<const void *, llvm::Value *> buffers_;
  /// malloc'ed allocations in scope at the current point (outside loops), outermost first.
  std::vector<llvm::Value *> heap_;
  /// Inside a branch of a select with a vector condition: the lanes that take it (vector of
  /// i1); the branch's loads read only those. nullptr elsewhere.
  llvm::Value *laneMask_ = nullptr;
  /// The loads of the vector conditions of the unmasked selects around that point: read on
  /// every lane already, so read again without a mask.
  std::vector<ir::Expr> readByCondition_;
  /// beginChecks(): an i32 flag (first failure wins) and a char[512] message; passed on to
  /// the outlined bodies of parallel loops.
  llvm::Value *failed_ = nullptr, *message_ = nullptr;
  int loopDepth_ = 0;
  int outlined_ = 0;
  bool inOutlined_ = false;
};

/// ABI.cpp: the raw entry (prototype and body), the DLPack entry and tdsl_last_error().
/// `exported`: external linkage; otherwise internal (a function the file imports or derives).
llvm::Function *emitRawEntry(ModuleState &state, const ir::PrimFunc *lowered,
                             const std::string &cName, bool exported = true);
void emitDlpackEntry(ModuleState &state, const ir::PrimFunc *source, const ir::PrimFunc *lowered,
                     llvm::Function *raw, const std::string &cName);
void emitLastError(ModuleState &state);
/// The raw entry's function type.
llvm::FunctionType *rawEntryType(ModuleState &state, const ir::PrimFunc *lowered);

} // namespace tdsl::llvmgen::detail

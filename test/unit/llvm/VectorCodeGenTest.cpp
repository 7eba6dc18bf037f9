//===- test/unit/llvm/VectorCodeGenTest.cpp - Vector IR through the LLVM backend ----------===//
//
// Lowering does not produce Ramp/Broadcast yet, so these functions are built by hand in the
// lowered form (flat buffers, no blocks): contiguous vector loads and stores, strided
// gathers and scatters, and vector arithmetic on f32, i32 (floor division), bool and f16.
// Each is checked in the IR (vector types at -O0) and run in the JIT against a scalar
// reference computed here.
//
//===--------------------------------------------------------------------------------------===//
#include "backends/llvm/JIT.h"
#include "backends/llvm/LLVMBackend.h"
#include "backends/llvm/Target.h"
#include "runtime/Float16.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace tdsl {
namespace {

using namespace ir;

Expr i64(int64_t v) { return intImm(v); }

/// `func` as the module pipeline would hand it over: its own lowered form.
LoweredModule moduleOf(const Func &func) {
  LoweredModule m;
  m.funcs.push_back({func, func, func});
  return m;
}

/// The IR of `func` at -O0.
std::string irOf(const Func &func) {
  std::string out, error;
  llvmgen::TargetOptions options;
  options.optLevel = 0;
  EXPECT_TRUE(
      llvmgen::compileModule("test", moduleOf(func), options, llvmgen::OutputKind::IR, out, error))
      << error;
  return out;
}

/// Runs `func` in the JIT; `slots` as the packed entry takes them.
int32_t runJit(const Func &func, std::vector<void *> slots, int optLevel = 2) {
  std::string error;
  llvmgen::TargetOptions options;
  options.optLevel = optLevel;
  std::unique_ptr<llvmgen::Jit> jit = llvmgen::Jit::create(options, error);
  EXPECT_TRUE(jit) << error;
  LoweredModule m = moduleOf(func);
  EXPECT_TRUE(jit->addModule("test", m, error)) << error;
  void *entry = jit->lookup(llvmgen::packedEntryName(func.name()), error);
  EXPECT_TRUE(entry) << error;
  return reinterpret_cast<int32_t (*)(void **)>(entry)(slots.data());
}

// B[4i .. 4i+3] = A[4i .. 4i+3] * 2.5 + 1: contiguous <4 x float> loads and stores.
TEST(VectorCodeGen, ContiguousLoadsAndStores) {
  Buffer a("A", DType::f32(), {i64(16)}, BufferRole::Input);
  Buffer b("B", DType::f32(), {i64(16)}, BufferRole::Output);
  Var i("i");
  Expr index = Ramp::make(Expr(i) * 4, i64(1), 4);
  Expr value = BufferLoad::make(a, {index}) * Broadcast::make(floatImm(2.5), 4) +
               Broadcast::make(floatImm(1.0), 4);
  Stmt body = For::make(i, i64(0), i64(4), ForKind::Serial, BufferStore::make(b, value, {index}));
  Func f = PrimFunc::make("vscale", {}, {FuncParam::tensor(a)}, {b}, {}, {}, body);

  std::string ir = irOf(f);
  EXPECT_NE(ir.find("load <4 x float>, ptr"), std::string::npos) << ir;
  // Contraction is on by default (spec §11): a * b + c is one vector llvm.fmuladd.
  EXPECT_NE(ir.find("@llvm.fmuladd.v4f32(<4 x float>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store <4 x float>"), std::string::npos) << ir;

  for (int opt : {0, 2}) {
    std::vector<float> in(16), out(16, 0.0f);
    for (int k = 0; k < 16; ++k)
      in[k] = 0.25f * static_cast<float>(k) - 1.0f;
    ASSERT_EQ(runJit(f, {in.data(), out.data()}, opt), 0);
    for (int k = 0; k < 16; ++k)
      EXPECT_EQ(out[k], in[k] * 2.5f + 1.0f) << "element " << k << " at -O" << opt;
  }
}

// A 4 x 4 transpose: B[i + 4l] = A[4i + l], a contiguous load and a scatter of stride 4; then
// C[l] = A[4l + 3], a load of stride 4 (one masked load of the 13 elements it spans, the lanes
// past them masked off, and a shuffle: it ends at A's last element), and D[l] = A[5l], a
// gather (strides above 4).
TEST(VectorCodeGen, GatherAndScatter) {
  Buffer a("A", DType::i32(), {i64(16)}, BufferRole::Input);
  Buffer b("B", DType::i32(), {i64(16)}, BufferRole::Output);
  Buffer c("C", DType::i32(), {i64(4)}, BufferRole::Output);
  Buffer d("D", DType::i32(), {i64(4)}, BufferRole::Output);
  Var i("i");
  Stmt transpose =
      For::make(i, i64(0), i64(4), ForKind::Serial,
                BufferStore::make(b, BufferLoad::make(a, {Ramp::make(Expr(i) * 4, i64(1), 4)}),
                                  {Ramp::make(Expr(i), i64(4), 4)}));
  Stmt strided = BufferStore::make(c, BufferLoad::make(a, {Ramp::make(i64(3), i64(4), 4)}),
                                   {Ramp::make(i64(0), i64(1), 4)});
  Stmt gather = BufferStore::make(d, BufferLoad::make(a, {Ramp::make(i64(0), i64(5), 4)}),
                                  {Ramp::make(i64(0), i64(1), 4)});
  Func f = PrimFunc::make("vtranspose", {}, {FuncParam::tensor(a)}, {b, c, d}, {}, {},
                          seq({transpose, strided, gather}));

  std::string ir = irOf(f);
  EXPECT_NE(ir.find("llvm.masked.scatter.v4i32"), std::string::npos) << ir;
  EXPECT_NE(ir.find("llvm.masked.load.v16i32"), std::string::npos) << ir;
  EXPECT_NE(ir.find("<4 x i32> <i32 0, i32 4, i32 8, i32 12>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("llvm.masked.gather.v4i32"), std::string::npos) << ir;

  std::vector<int32_t> in(16), out(16, 0), column(4, 0), fifth(4, 0);
  for (int k = 0; k < 16; ++k)
    in[k] = k * 10;
  ASSERT_EQ(runJit(f, {in.data(), out.data(), column.data(), fifth.data()}), 0);
  for (int r = 0; r < 4; ++r)
    for (int l = 0; l < 4; ++l)
      EXPECT_EQ(out[r + 4 * l], in[4 * r + l]);
  for (int l = 0; l < 4; ++l) {
    EXPECT_EQ(column[l], in[4 * l + 3]);
    EXPECT_EQ(fifth[l], in[5 * l]);
  }
}

// Lanes of every kind: Q = X / -3 (floor), M = X < 0 (bool bytes), H = f16(f32(X) / 3).
TEST(VectorCodeGen, IntBoolAndHalfLanes) {
  Buffer x("X", DType::i32(), {i64(8)}, BufferRole::Input);
  Buffer q("Q", DType::i32(), {i64(8)}, BufferRole::Output);
  Buffer m("M", DType::boolean(), {i64(8)}, BufferRole::Output);
  Buffer h("H", DType::f16(), {i64(8)}, BufferRole::Output);
  Var i("i");
  Expr index = Ramp::make(Expr(i) * 4, i64(1), 4);
  Expr xv = BufferLoad::make(x, {index});
  Stmt body = seq({
      BufferStore::make(q, Div::make(xv, Broadcast::make(intImm(-3, DType::i32()), 4)), {index}),
      BufferStore::make(m, LT::make(xv, Broadcast::make(intImm(0, DType::i32()), 4)), {index}),
      BufferStore::make(
          h,
          Cast::make(DType::f16().withLanes(4), Div::make(Cast::make(DType::f32().withLanes(4), xv),
                                                          Broadcast::make(floatImm(3.0), 4))),
          {index}),
  });
  Func f = PrimFunc::make("vmixed", {}, {FuncParam::tensor(x)}, {q, m, h}, {}, {},
                          For::make(i, i64(0), i64(2), ForKind::Serial, body));

  std::string ir = irOf(f);
  EXPECT_NE(ir.find("sdiv <4 x i32>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store <4 x i8>"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store <4 x i16>"), std::string::npos) << ir;

  std::vector<int32_t> in = {-7, 7, -6, 6, 0, -1, 2147483647, -2147483647 - 1};
  std::vector<int32_t> quotient(8, 0);
  std::vector<uint8_t> negative(8, 7);
  std::vector<uint16_t> third(8, 0);
  ASSERT_EQ(runJit(f, {in.data(), quotient.data(), negative.data(), third.data()}), 0);
  for (int k = 0; k < 8; ++k) {
    int64_t floorDiv = in[k] / -3 - ((in[k] % -3 != 0 && (in[k] % -3 > 0)) ? 1 : 0);
    EXPECT_EQ(quotient[k], floorDiv) << in[k];
    EXPECT_EQ(negative[k], in[k] < 0 ? 1 : 0) << in[k];
    EXPECT_EQ(third[k], runtime::f16FromDouble(static_cast<float>(in[k]) / 3.0f)) << in[k];
  }
}

} // namespace
} // namespace tdsl

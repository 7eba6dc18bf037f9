//===- test/unit/ir/MmRelu.h - mm_relu of spec §6, built by hand --------------------------===//
#pragma once

#include "ir/IR.h"

#include <string>

namespace tdsl::ir::test {

/// Options to build variants of the function for equality tests.
struct MmReluOptions {
  std::string suffix;     ///< Appended to every Var and Buffer name hint.
  double initValue = 0.0; ///< The constant in `init`.
};

/// The scheduled mm_relu of spec §6.
inline Func buildMmRelu(const MmReluOptions &options = {}) {
  auto n = [&](const char *hint) { return hint + options.suffix; };
  DType f32 = DType::f32();
  auto c = [](int64_t v) { return intImm(v); };
  Buffer a(n("A"), f32, {c(128), c(128)}, BufferRole::Input);
  Buffer b(n("B"), f32, {c(128), c(128)}, BufferRole::Input);
  Buffer out(n("C"), f32, {c(128), c(128)}, BufferRole::Output);
  Buffer y(n("Y"), f32, {c(128), c(128)}, BufferRole::Alloc);

  Var i(n("i")), j0(n("j_0")), k(n("k")), j1(n("j_1")), ax0(n("ax0"));
  auto point = [&](const Buffer &buffer, const Expr &x, const Expr &z) {
    return BufferRegion{buffer, {{x, c(1)}, {z, c(1)}}};
  };

  // block Y: the reduction.
  Var vi(n("vi")), vj(n("vj")), vk(n("vk"));
  std::vector<IterVar> yAxes = {{vi, IterKind::Spatial, c(128), i, {}},
                                {vj, IterKind::Spatial, c(128), j0 * 4 + j1, {}},
                                {vk, IterKind::Reduce, c(128), k, {}}};
  Stmt yInit = BufferStore::make(y, floatImm(options.initValue), {vi, vj});
  Stmt yBody = BufferStore::make(y,
                                 BufferLoad::make(y, {vi, vj}) +
                                     BufferLoad::make(a, {vi, vk}) * BufferLoad::make(b, {vk, vj}),
                                 {vi, vj});
  Stmt yBlock =
      Block::make("Y", yAxes, Expr(), yInit, yBody,
                  {point(y, vi, vj), point(a, vi, vk), point(b, vk, vj)}, {point(y, vi, vj)});

  // block C: the relu, under the producer's j_0 loop.
  Var ci(n("vi")), cj(n("vj"));
  std::vector<IterVar> cAxes = {{ci, IterKind::Spatial, c(128), i, {}},
                                {cj, IterKind::Spatial, c(128), j0 * 4 + ax0, {}}};
  Stmt cBody = BufferStore::make(out, max(BufferLoad::make(y, {ci, cj}), floatImm(0.0)), {ci, cj});
  Stmt cBlock =
      Block::make("C", cAxes, Expr(), Stmt(), cBody, {point(y, ci, cj)}, {point(out, ci, cj)});

  Stmt loopJ1 = For::make(j1, c(0), c(4), ForKind::Vectorized, yBlock);
  Stmt loopK = For::make(k, c(0), c(128), ForKind::Serial, loopJ1);
  Stmt loopAx0 = For::make(ax0, c(0), c(4), ForKind::Serial, cBlock);
  Stmt loopJ0 = For::make(j0, c(0), c(32), ForKind::Serial, seq({loopK, loopAx0}));
  Stmt loopI = For::make(i, c(0), c(128), ForKind::Parallel, loopJ0);

  return PrimFunc::make("mm_relu", {}, {FuncParam::tensor(a), FuncParam::tensor(b)}, {out}, {}, {y},
                        loopI);
}

/// The text of spec §6.
inline const char *kMmReluText =
    R"(func mm_relu(A: f32[128, 128], B: f32[128, 128]) -> (C: f32[128, 128]) {
  alloc Y: f32[128, 128];
  for i in 0..128 parallel {
    for j_0 in 0..32 {
      for k in 0..128 {
        for j_1 in 0..4 vectorized {
          block Y(vi: spatial 128 = i, vj: spatial 128 = j_0 * 4 + j_1, vk: reduce 128 = k) {
            init { Y[vi, vj] = 0.0; }
            Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj];
          }
        }
      }
      for ax0 in 0..4 {
        block C(vi: spatial 128 = i, vj: spatial 128 = j_0 * 4 + ax0) {
          C[vi, vj] = max(Y[vi, vj], 0.0);
        }
      }
    }
  }
}
)";

} // namespace tdsl::ir::test

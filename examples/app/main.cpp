//===- examples/app/main.cpp ------------------------------------------------------------------===//
//
// A program built from TDSL kernels (examples/Makefile, examples/cmake): calls the raw entries
// of layer.tdsl (linear, and the graph dense_relu, which calls the relu of the file it imports)
// and the DLPack entry of saxpy.tdsl, and checks the results against plain C++ loops.

#include "layer.h"
#include "saxpy.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

bool close(const std::vector<float> &got, const std::vector<float> &want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4f * (1.0f + std::fabs(want[i])))
      return false;
  return got.size() == want.size();
}

} // namespace

int main() {
  const int64_t B = 4, K = 16, N = 8;
  std::vector<float> x(B * K), w(N * K), bias(N), y(B * N), r(B * N);
  for (int64_t i = 0; i < B * K; ++i)
    x[i] = static_cast<float>(i % 7) - 3.0f;
  for (int64_t i = 0; i < N * K; ++i)
    w[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  for (int64_t j = 0; j < N; ++j)
    bias[j] = 0.1f * static_cast<float>(j);

  // Raw entries: inputs, outputs, then the shape variables in order of first appearance.
  if (linear(x.data(), w.data(), bias.data(), y.data(), B, K, N) != 0 ||
      dense_relu(x.data(), w.data(), bias.data(), r.data(), B, K, N) != 0) {
    std::printf("error: %s\n", tdsl_last_error());
    return 1;
  }
  std::vector<float> want(B * N), wantRelu(B * N);
  for (int64_t i = 0; i < B; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = bias[j];
      for (int64_t k = 0; k < K; ++k)
        acc += x[i * K + k] * w[j * K + k];
      want[i * N + j] = acc;
      wantRelu[i * N + j] = acc > 0.0f ? acc : 0.0f;
    }
  std::printf("linear: %s\n", close(y, want) ? "ok" : "MISMATCH");
  std::printf("relu: %s\n", close(r, wantRelu) ? "ok" : "MISMATCH");

  // The DLPack entry validates dtypes and shapes, and binds N from them.
  std::vector<float> X(100), Y0(100), Y(100), wantY(100);
  for (int i = 0; i < 100; ++i) {
    X[i] = static_cast<float>(i);
    Y0[i] = 1.0f;
    wantY[i] = 2.0f * X[i] + 1.0f;
  }
  int64_t shape[1] = {100};
  auto tensor = [&](std::vector<float> &v) {
    DLTensor t{};
    t.data = v.data();
    t.device = {kDLCPU, 0};
    t.ndim = 1;
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape;
    return t;
  };
  DLTensor tX = tensor(X), tY0 = tensor(Y0), tY = tensor(Y);
  if (saxpy_dlpack(&tX, &tY0, 2.0f, &tY) != 0) {
    std::printf("error: %s\n", tdsl_last_error());
    return 1;
  }
  std::printf("saxpy_dlpack: %s\n", close(Y, wantY) ? "ok" : "MISMATCH");
  // A mismatch is refused with a message (one tdsl_last_error for all the kernels linked in).
  DLTensor bad = tY;
  bad.dtype = {kDLFloat, 64, 1};
  if (saxpy_dlpack(&tX, &tY0, 2.0f, &bad) == 0)
    std::printf("saxpy_dlpack(f64): ACCEPTED\n");
  else
    std::printf("saxpy_dlpack(f64): refused: %s\n", tdsl_last_error());
  return 0;
}

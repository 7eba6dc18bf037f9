//===- examples/cuda/run_gemm.cu --------------------------------------------------------------===//
//
// Runs the GEMM of gemm.tdsl on the GPU: allocates device memory, calls the
// emitted entry `gemm` (device pointers, spec §10), times it, compares with a CPU reference
// and, when built with -DTDSL_WITH_CUBLAS (link -lcublas), times cublasSgemm beside it.
//
// tdslc gemm.tdsl --target=cuda --emit=cuda -D M=1024 -D N=1024 -D K=1024 -o gemm.cu
// tdslc gemm.tdsl --target=cuda --emit=header -D M=1024 -D N=1024 -D K=1024 -o gemm.h
// nvcc -O3 -arch=sm_90 -DTDSL_WITH_CUBLAS run_gemm.cu gemm.cu -lcublas -o run_gemm
// ./run_gemm

#include "gemm.h"

#include <cuda_runtime.h>
#ifdef TDSL_WITH_CUBLAS
#include <cublas_v2.h>
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {
constexpr int kM = 1024, kN = 1024, kK = 1024, kRuns = 20;

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    cudaError_t e = (call);                                                                        \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));                              \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename F> double millisecondsPerRun(F run) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  run(); // warm-up
  CHECK_CUDA(cudaEventRecord(start));
  for (int i = 0; i < kRuns; ++i)
    run();
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  return ms / kRuns;
}
} // namespace

int main() {
  std::vector<float> a(size_t(kM) * kK), b(size_t(kK) * kN), c(size_t(kM) * kN), ref(c.size());
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float((i * 7) % 13) / 13.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = float((i * 5) % 11) / 11.0f - 0.5f;
  for (int i = 0; i < kM; ++i)
    for (int j = 0; j < kN; ++j) {
      double s = 0;
      for (int k = 0; k < kK; ++k)
        s += double(a[size_t(i) * kK + k]) * b[size_t(k) * kN + j];
      ref[size_t(i) * kN + j] = float(s);
    }
  float *dA, *dB, *dC;
  CHECK_CUDA(cudaMalloc(&dA, a.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dB, b.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dC, c.size() * sizeof(float)));
  CHECK_CUDA(cudaMemcpy(dA, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dB, b.data(), b.size() * sizeof(float), cudaMemcpyHostToDevice));

  double ms = millisecondsPerRun([&] {
    if (gemm(dA, dB, dC) != 0) {
      std::fprintf(stderr, "gemm: %s\n", tdsl_last_error());
      std::exit(1);
    }
  });
  CHECK_CUDA(cudaMemcpy(c.data(), dC, c.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double maxDiff = 0;
  for (size_t i = 0; i < c.size(); ++i)
    maxDiff = std::fmax(maxDiff, std::fabs(double(c[i]) - ref[i]));
  double flops = 2.0 * kM * kN * kK;
  std::printf("tdsl gemm %dx%dx%d: %.3f ms, %.1f GFLOP/s, max |diff| vs CPU %.3g (%s)\n", kM, kN,
              kK, ms, flops / ms / 1e6, maxDiff, maxDiff < 1e-2 ? "OK" : "MISMATCH");
#ifdef TDSL_WITH_CUBLAS
  cublasHandle_t handle;
  cublasCreate(&handle);
  const float one = 1.0f, zero = 0.0f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  double cublasMs = millisecondsPerRun([&] {
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kM, kK, &one, dB, kN, dA, kK, &zero, dC, kN);
  });
  std::printf("cublasSgemm:           %.3f ms, %.1f GFLOP/s\n", cublasMs, flops / cublasMs / 1e6);
  cublasDestroy(handle);
#endif
  cudaFree(dA);
  cudaFree(dB);
  cudaFree(dC);
  return maxDiff < 1e-2 ? 0 : 1;
}

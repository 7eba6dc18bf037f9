//===- test/CodeGen/CPP/Inputs/dlpack_errors.cpp ----------------------------------------------===//
//
// Calls rowsum_dlpack (test/CodeGen/CPP/dlpack_errors.tdsl, header given
// with -include) with good and bad DLTensors and prints what it returns.

#include <cstdio>

namespace {

DLTensor tensor(void *data, int32_t ndim, int64_t *shape, DLDataType dtype = {kDLFloat, 32, 1}) {
  DLTensor t{};
  t.data = data;
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = ndim;
  t.dtype = dtype;
  t.shape = shape;
  return t;
}

void report(const char *what, int32_t status, const float *c, int n) {
  bool untouched = true;
  for (int i = 0; i < n; ++i)
    untouched &= c[i] == -1.0f;
  std::printf("%s: status %d: %s; C %s\n", what, status, tdsl_last_error(),
              untouched ? "untouched" : "WRITTEN");
}

} // namespace

int main() {
  float a[4] = {1, 2, 3, 4}, b[2] = {1, 1}, c[3] = {-1, -1, -1};
  int64_t aShape[2] = {2, 2}, bShape[1] = {2}, cShape[1] = {2};
  DLTensor A = tensor(a, 2, aShape), B = tensor(b, 1, bShape), C = tensor(c, 1, cShape);
  int32_t status = rowsum_dlpack(&A, &B, &C);
  std::printf("ok: status %d C = %g %g\n", status, c[0], c[1]);

  c[0] = c[1] = -1;
  DLTensor badType = tensor(a, 2, aShape, {kDLInt, 32, 1});
  report("wrong dtype", rowsum_dlpack(&badType, &B, &C), c, 3);
  DLTensor badRank = tensor(b, 2, aShape);
  report("wrong rank", rowsum_dlpack(&A, &badRank, &C), c, 3);
  int64_t c3[1] = {3};
  DLTensor badShape = tensor(c, 1, c3);
  report("wrong shape", rowsum_dlpack(&A, &B, &badShape), c, 3);
  int64_t b3[1] = {3};
  DLTensor badK = tensor(b, 1, b3);
  report("inconsistent K", rowsum_dlpack(&A, &badK, &C), c, 3);
  int64_t strides[2] = {1, 2};
  DLTensor strided = tensor(a, 2, aShape);
  strided.strides = strides;
  report("strided", rowsum_dlpack(&strided, &B, &C), c, 3);
  DLTensor onGpu = tensor(c, 1, cShape);
  onGpu.device = DLDevice{kDLCUDA, 0};
  report("device", rowsum_dlpack(&A, &B, &onGpu), c, 3);
  return 0;
}

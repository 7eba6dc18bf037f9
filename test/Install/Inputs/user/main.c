//===- test/Install/Inputs/user/main.c --------------------------------------------------------===//
//
// ===- test/Install/Inputs/user/main.c - A C program calling an installed TDSL's kernels
// -------===//
//
// Built against an installed prefix (or the unpacked .deb) by Inputs/user/CMakeLists.txt and
// Inputs/user/Makefile: calls the raw entry of softmax.tdsl, then its DLPack entry with a
// wrong dtype, and prints tdsl_last_error() (tdsl.h).

#include "softmax.h"
#include "tdsl.h"

#include <math.h>
#include <stdio.h>

int main(void) {
  float x[2][3] = {{1, 2, 3}, {0, 0, 0}}, y[2][3];
  if (row_softmax(&x[0][0], &y[0][0], 2, 3) != 0) {
    printf("error: %s\n", tdsl_last_error());
    return 1;
  }
  float sum = y[0][0] + y[0][1] + y[0][2];
  printf("softmax: %s\n", fabsf(sum - 1) < 1e-5f && fabsf(y[1][0] - 1.0f / 3) < 1e-6f &&
                                  fabsf(y[0][2] - 0.66524096f) < 1e-5f
                              ? "ok"
                              : "wrong");

  int64_t shape[2] = {2, 3};
  DLTensor tx = {&x[0][0], {kDLCPU, 0}, 2, {kDLFloat, 64, 1}, shape, NULL, 0};
  DLTensor ty = {&y[0][0], {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, NULL, 0};
  if (row_softmax_dlpack(&tx, &ty) != 0)
    printf("refused: %s\n", tdsl_last_error());
  return 0;
}

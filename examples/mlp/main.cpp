//===- examples/mlp/main.cpp ------------------------------------------------------------------===//
//
// Runs the mlp graph through its raw entry (spec §10, header from
// `tdslc mlp.tdsl --emit=header`) on the .npy files of `model.py write DIR` and compares the
// result with DIR/ref.npy (|got - want| <= 1e-5 + 1e-4 |want|). Usage: main DIR

#include "mlp.h"

#include "../npy.h"

int main(int argc, char **argv) {
  return npy::runGraph(argc, argv, "mlp", {"x", "w0", "b0", "w1", "b1"}, 10, tdsl_last_error,
                       [](const std::vector<npy::Array> &in, float *o, int64_t batch) {
                         return mlp(in[0].data.data(), in[1].data.data(), in[2].data.data(),
                                    in[3].data.data(), in[4].data.data(), o, batch);
                       });
}

//===- examples/cnn/main.cpp ------------------------------------------------------------------===//
//
// Runs the cnn graph through its raw entry (spec §10, header from
// `tdslc cnn.tdsl --emit=header`) on the .npy files of `model.py write DIR` and compares the
// result with DIR/ref.npy (|got - want| <= 1e-5 + 1e-4 |want|). Usage: main DIR

#include "cnn.h"

#include "../npy.h"

int main(int argc, char **argv) {
  return npy::runGraph(argc, argv, "cnn", {"x", "w1", "w2", "wl", "bl"}, 10, tdsl_last_error,
                       [](const std::vector<npy::Array> &in, float *o, int64_t batch) {
                         return cnn(in[0].data.data(), in[1].data.data(), in[2].data.data(),
                                    in[3].data.data(), in[4].data.data(), o, batch);
                       });
}

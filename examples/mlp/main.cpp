//===- examples/mlp/main.cpp ------------------------------------------------------------------===//
//
// Runs the mlp graph through its raw entry (spec §10, header from
// `tdslc mlp.tdsl --emit=header`) on the .npy files of `model.py write DIR` and compares the
// result with DIR/ref.npy (|got - want| <= 1e-5 + 1e-4 |want|). Usage: main DIR

#include "mlp.h"

#include "../npy.h"

int main(int argc, char **argv) {
  if (argc != 2)
    return std::fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
  std::string dir = argv[1];
  npy::Array x = npy::load(dir + "/x.npy"), w0 = npy::load(dir + "/w0.npy"),
             b0 = npy::load(dir + "/b0.npy"), w1 = npy::load(dir + "/w1.npy"),
             b1 = npy::load(dir + "/b1.npy"), ref = npy::load(dir + "/ref.npy");
  int64_t batch = x.shape[0];
  std::vector<float> o(static_cast<size_t>(batch * 10));
  if (mlp(x.data.data(), w0.data.data(), b0.data.data(), w1.data.data(), b1.data.data(), o.data(),
          batch) != 0)
    return std::fprintf(stderr, "mlp: %s\n", tdsl_last_error()), 1;
  return npy::report("o", o, ref);
}

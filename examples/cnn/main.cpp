//===- examples/cnn/main.cpp ------------------------------------------------------------------===//
//
// Runs the cnn graph through its raw entry (spec §10, header from
// `tdslc cnn.tdsl --emit=header`) on the .npy files of `model.py write DIR` and compares the
// result with DIR/ref.npy (|got - want| <= 1e-5 + 1e-4 |want|). Usage: main DIR

#include "cnn.h"

#include "../npy.h"

int main(int argc, char **argv) {
  if (argc != 2)
    return std::fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
  std::string dir = argv[1];
  npy::Array x = npy::load(dir + "/x.npy"), w1 = npy::load(dir + "/w1.npy"),
             w2 = npy::load(dir + "/w2.npy"), wl = npy::load(dir + "/wl.npy"),
             bl = npy::load(dir + "/bl.npy"), ref = npy::load(dir + "/ref.npy");
  int64_t batch = x.shape[0];
  std::vector<float> o(static_cast<size_t>(batch * 10));
  if (cnn(x.data.data(), w1.data.data(), w2.data.data(), wl.data.data(), bl.data.data(), o.data(),
          batch) != 0)
    return std::fprintf(stderr, "cnn: %s\n", tdsl_last_error()), 1;
  return npy::report("o", o, ref);
}

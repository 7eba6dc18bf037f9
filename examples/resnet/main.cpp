//===- examples/resnet/main.cpp - Classify a .npy image with the imported ResNet-18 -----------===//
//
// Calls the raw entry `int32_t resnet18(const float *image, float *logits)` (spec §10) that
// `tdsl-import resnet18.onnx --name resnet18` and `tdslc --emit=obj` / `--emit=header` make from
// the ONNX file (the weights are embedded in the object: nothing is read at run time but the
// image), and prints the five classes with the highest logits, their logits and softmax
// probabilities, and the time of the call.
//
//   classify IMAGE.npy [LOGITS.npy]      IMAGE: float32 [1, 3, 224, 224] (NCHW, C order);
//                                        LOGITS: where to write the [1, 1000] logits
//===------------------------------------------------------------------------------------------===//

#include "resnet18.h"

#include "../npy.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace {

constexpr int64_t kClasses = 1000;

/// Writes `data` as a little-endian float32 .npy file of shape [1, n] (version 1.0).
bool saveRow(const std::string &path, const std::vector<float> &data) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, " +
                       std::to_string(data.size()) + "), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  uint16_t len = static_cast<uint16_t>(header.size());
  unsigned char lenBytes[2] = {static_cast<unsigned char>(len & 0xff),
                               static_cast<unsigned char>(len >> 8)};
  bool ok = std::fwrite("\x93NUMPY\x01\x00", 1, 8, f) == 8 && std::fwrite(lenBytes, 1, 2, f) == 2 &&
            std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
            std::fwrite(data.data(), sizeof(float), data.size(), f) == data.size();
  return std::fclose(f) == 0 && ok;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3)
    return std::fprintf(stderr, "usage: %s IMAGE.npy [LOGITS.npy]\n", argv[0]), 2;
  npy::Array image = npy::load(argv[1]);
  if (image.shape != std::vector<int64_t>{1, 3, 224, 224})
    return std::fprintf(stderr, "%s: expected a float32 [1, 3, 224, 224] image\n", argv[1]), 2;

  std::vector<float> logits(kClasses);
  auto start = std::chrono::steady_clock::now();
  if (resnet18(image.data.data(), logits.data()) != 0)
    return std::fprintf(stderr, "resnet18: %s\n", tdsl_last_error()), 1;
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  // Softmax in double, shifted by the largest logit.
  double top = *std::max_element(logits.begin(), logits.end()), sum = 0;
  for (float l : logits)
    sum += std::exp(double(l) - top);
  std::vector<int> order(kClasses);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return logits[a] > logits[b]; });
  std::printf("rank class    logit  probability\n");
  for (int r = 0; r < 5; ++r) {
    int c = order[r];
    std::printf("%4d %5d %8.4f  %11.6f\n", r + 1, c, double(logits[c]),
                std::exp(double(logits[c]) - top) / sum);
  }
  std::printf("resnet18: %.1f ms (first call)\n", ms);
  if (argc == 3 && !saveRow(argv[2], logits))
    return std::fprintf(stderr, "cannot write %s\n", argv[2]), 1;
  return 0;
}

//===- examples/train/main.cpp ----------------------------------------------------------------===//
//
// Trains the MLP of mlp.tdsl or the CNN of cnn.tdsl on Fashion-MNIST through the compiled
// training step (spec §13): loads the IDX files (gzip, as Debian's dataset-fashion-mnist ships
// them), initialises the parameters as PyTorch's nn.Linear and nn.Conv2d do, shuffles with a
// seed every epoch, calls the model's step graph on each batch (swapping old and new parameter
// buffers), shows a progress bar, and evaluates the test set with the forward graph after each
// epoch.
//
//   train [--model mlp|cnn] [--data DIR] [--epochs N] [--batch B] [--lr X] [--momentum X]
//         [--seed S] [--train-limit N] [--test-limit N]
//
// The last line reads `loss: first batch F, last batch L` (the test checks that the loss falls).

#include "cnn.h"
#include "mlp.h"

#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "train: error: %s\n", message.c_str());
  std::exit(1);
}

/// Reads a gzip-compressed IDX file whose magic is `magic` (0x803: images, 0x801: labels);
/// returns its bytes after the header and sets `dims`.
std::vector<uint8_t> readIdx(const std::string &path, uint32_t magic, std::vector<int64_t> &dims) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (!file)
    die("cannot open '" + path + "'");
  auto word = [&]() {
    unsigned char b[4];
    if (gzread(file, b, 4) != 4)
      die("'" + path + "' is not an IDX file");
    return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | uint32_t(b[3]);
  };
  if (word() != magic)
    die("'" + path + "' is not an IDX file of the expected kind");
  size_t count = 1;
  for (uint32_t i = 0; i < (magic & 0xff); ++i) {
    dims.push_back(word());
    count *= static_cast<size_t>(dims.back());
  }
  std::vector<uint8_t> bytes(count);
  if (gzread(file, bytes.data(), static_cast<unsigned>(count)) != static_cast<int>(count))
    die("'" + path + "' is truncated");
  gzclose(file);
  return bytes;
}

struct Dataset {
  std::vector<float> images; // [n, 784], normalised: (pixel / 255 - mean) / std
  std::vector<int64_t> labels;
  int64_t size = 0;
};

Dataset load(const std::string &dir, const std::string &prefix, int64_t limit) {
  std::vector<int64_t> idims, ldims;
  std::vector<uint8_t> pixels = readIdx(dir + "/" + prefix + "-images-idx3-ubyte.gz", 0x803, idims);
  std::vector<uint8_t> labels = readIdx(dir + "/" + prefix + "-labels-idx1-ubyte.gz", 0x801, ldims);
  if (idims.size() != 3 || idims[1] != 28 || idims[2] != 28 || ldims[0] != idims[0])
    die("'" + dir + "': the " + prefix + " images and labels do not match");
  Dataset d;
  d.size = limit > 0 ? std::min(limit, idims[0]) : idims[0];
  d.images.resize(static_cast<size_t>(d.size) * 784);
  // The training set's mean and standard deviation (torchvision's Normalize for Fashion-MNIST).
  const float mean = 0.2860f, stddev = 0.3530f;
  for (size_t i = 0; i < d.images.size(); ++i)
    d.images[i] = (pixels[i] / 255.0f - mean) / stddev;
  d.labels.assign(labels.begin(), labels.begin() + d.size);
  return d;
}

using Buffers = std::vector<std::vector<float>>;

/// A model of the two modules: its parameters (sizes and fan-in, for the initialisation) and
/// calls of its forward graph and training step. `p` holds the parameters then their
/// velocities; `next` receives the new ones.
struct Model {
  const char *name, *description;
  std::vector<int64_t> sizes, fanIn;
  int32_t (*forward)(const float *x, const Buffers &p, float *logits, int64_t b);
  int32_t (*step)(const float *x, const int64_t *labels, const Buffers &p, float lr, float mu,
                  float *loss, Buffers &next, int64_t b);
};

const Model kModels[] = {
    {"mlp",
     "MLP 784-256-10",
     {256 * 784, 256, 10 * 256, 10},
     {784, 784, 256, 256},
     [](const float *x, const Buffers &p, float *o, int64_t b) {
       return mlp(x, p[0].data(), p[1].data(), p[2].data(), p[3].data(), o, b);
     },
     [](const float *x, const int64_t *labels, const Buffers &p, float lr, float mu, float *loss,
        Buffers &n, int64_t b) {
       return mlp_step(x, labels, p[0].data(), p[1].data(), p[2].data(), p[3].data(), p[4].data(),
                       p[5].data(), p[6].data(), p[7].data(), lr, mu, loss, n[0].data(),
                       n[1].data(), n[2].data(), n[3].data(), n[4].data(), n[5].data(), n[6].data(),
                       n[7].data(), b);
     }},
    {"cnn",
     "CNN conv3x3(16)-pool-conv3x3(32)-pool-linear",
     {16 * 9, 16, 32 * 16 * 9, 32, 10 * 1568, 10},
     {9, 9, 144, 144, 1568, 1568},
     [](const float *x, const Buffers &p, float *o, int64_t b) {
       return cnn(x, p[0].data(), p[1].data(), p[2].data(), p[3].data(), p[4].data(), p[5].data(),
                  o, b);
     },
     [](const float *x, const int64_t *labels, const Buffers &p, float lr, float mu, float *loss,
        Buffers &n, int64_t b) {
       return cnn_step(x, labels, p[0].data(), p[1].data(), p[2].data(), p[3].data(), p[4].data(),
                       p[5].data(), p[6].data(), p[7].data(), p[8].data(), p[9].data(),
                       p[10].data(), p[11].data(), lr, mu, loss, n[0].data(), n[1].data(),
                       n[2].data(), n[3].data(), n[4].data(), n[5].data(), n[6].data(), n[7].data(),
                       n[8].data(), n[9].data(), n[10].data(), n[11].data(), b);
     }},
};

/// The parameters and their velocities, double-buffered: the step reads `cur` and writes
/// `next`, then the two swap.
struct Params {
  Buffers cur, next;

  Params(const Model &model, std::mt19937 &rng) {
    size_t count = model.sizes.size();
    cur.resize(2 * count);
    // PyTorch's nn.Linear and nn.Conv2d: weight and bias uniform in +-1/sqrt(fan_in).
    for (size_t i = 0; i < count; ++i) {
      float bound = 1.0f / std::sqrt(static_cast<float>(model.fanIn[i]));
      std::uniform_real_distribution<float> u(-bound, bound);
      cur[i].resize(static_cast<size_t>(model.sizes[i]));
      for (float &v : cur[i])
        v = u(rng);
      cur[count + i].assign(static_cast<size_t>(model.sizes[i]), 0.0f);
    }
    for (const std::vector<float> &buffer : cur)
      next.emplace_back(buffer.size());
  }
  void swap() { cur.swap(next); }
};

double accuracy(const Model &model, const Dataset &test, const Params &p, int64_t batch) {
  std::vector<float> logits(static_cast<size_t>(batch) * 10);
  int64_t correct = 0;
  for (int64_t start = 0; start < test.size; start += batch) {
    int64_t b = std::min(batch, test.size - start);
    if (model.forward(&test.images[start * 784], p.cur, logits.data(), b) != 0)
      die(std::string(model.name) + ": " + tdsl_last_error());
    for (int64_t i = 0; i < b; ++i) {
      const float *row = &logits[i * 10];
      correct += std::max_element(row, row + 10) - row == test.labels[start + i];
    }
  }
  return 100.0 * static_cast<double>(correct) / static_cast<double>(test.size);
}

void progress(int epoch, int epochs, int64_t done, int64_t total, double loss, bool tty) {
  if (!tty)
    return;
  const int width = 30;
  int filled = static_cast<int>(width * done / total);
  std::fprintf(stderr, "\repoch %d/%d [%s%s] %lld/%lld loss %.4f", epoch, epochs,
               std::string(filled, '=').c_str(), std::string(width - filled, ' ').c_str(),
               static_cast<long long>(done), static_cast<long long>(total), loss);
}

} // namespace

int main(int argc, char **argv) {
  std::string data = "/usr/share/datasets/fashion-mnist", modelName = "mlp";
  int epochs = 5;
  int64_t batch = 64, trainLimit = 0, testLimit = 0;
  float lr = 0.01f, momentum = 0.9f;
  unsigned seed = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      die("'" + arg +
          "' needs a value (usage: train [--model mlp|cnn] [--data DIR] [--epochs N] "
          "[--batch B] [--lr X] [--momentum X] [--seed S] [--train-limit N] "
          "[--test-limit N])");
    std::string value = argv[++i];
    char *end = nullptr;
    double number = std::strtod(value.c_str(), &end);
    bool numeric = *end == '\0' && !value.empty();
    if (arg == "--data")
      data = value;
    else if (arg == "--model")
      modelName = value;
    else if (!numeric)
      die("'" + arg + "' takes a number, not '" + value + "'");
    else if (arg == "--epochs")
      epochs = static_cast<int>(number);
    else if (arg == "--batch")
      batch = static_cast<int64_t>(number);
    else if (arg == "--lr")
      lr = static_cast<float>(number);
    else if (arg == "--momentum")
      momentum = static_cast<float>(number);
    else if (arg == "--seed")
      seed = static_cast<unsigned>(number);
    else if (arg == "--train-limit")
      trainLimit = static_cast<int64_t>(number);
    else if (arg == "--test-limit")
      testLimit = static_cast<int64_t>(number);
    else
      die("unknown option '" + arg + "'");
  }
  if (epochs < 1 || batch < 1)
    die("--epochs and --batch must be at least 1");
  const Model *model = nullptr;
  for (const Model &m : kModels)
    if (modelName == m.name)
      model = &m;
  if (!model)
    die("unknown model '" + modelName + "' (mlp or cnn)");

  Dataset train = load(data, "train", trainLimit), test = load(data, "t10k", testLimit);
  std::mt19937 rng(seed);
  Params p(*model, rng);
  std::vector<int64_t> order(static_cast<size_t>(train.size));
  std::iota(order.begin(), order.end(), 0);
  std::vector<float> x(static_cast<size_t>(batch) * 784);
  std::vector<int64_t> labels(static_cast<size_t>(batch));
  bool tty = isatty(STDERR_FILENO);
  double firstLoss = -1, lastLoss = 0;
  std::printf("Fashion-MNIST: %lld training, %lld test images; %s, batch %lld, SGD lr %g "
              "momentum %g, seed %u\n",
              static_cast<long long>(train.size), static_cast<long long>(test.size),
              model->description, static_cast<long long>(batch), lr, momentum, seed);
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    std::shuffle(order.begin(), order.end(), rng);
    double sum = 0;
    int64_t steps = 0;
    for (int64_t first = 0; first < train.size; first += batch) {
      int64_t b = std::min(batch, train.size - first);
      for (int64_t i = 0; i < b; ++i) {
        int64_t k = order[first + i];
        std::memcpy(&x[i * 784], &train.images[k * 784], 784 * sizeof(float));
        labels[i] = train.labels[k];
      }
      float loss = 0;
      if (model->step(x.data(), labels.data(), p.cur, lr, momentum, &loss, p.next, b) != 0)
        die(std::string(model->name) + "_step: " + tdsl_last_error());
      if (!std::isfinite(loss))
        die("the loss is not finite at epoch " + std::to_string(epoch) + " (lower --lr)");
      p.swap();
      if (firstLoss < 0)
        firstLoss = loss;
      lastLoss = loss;
      sum += loss;
      ++steps;
      if (steps % 16 == 0 || first + b == train.size)
        progress(epoch, epochs, first + b, train.size, sum / steps, tty);
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (tty)
      std::fprintf(stderr, "\n");
    std::printf("epoch %d/%d: train loss %.4f, test accuracy %.2f%% (%.1f s)\n", epoch, epochs,
                sum / static_cast<double>(steps), accuracy(*model, test, p, batch), seconds);
    std::fflush(stdout);
  }
  std::printf("loss: first batch %.4f, last batch %.4f\n", firstLoss, lastLoss);
  return 0;
}

//===- tune/CostModel.cpp - Predicted speed of candidates ------------------------------------===//

#include "tune/CostModel.h"

#include "passes/schedule/Sample.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <utility>

namespace tdsl::tune {

namespace {

class XGBoostModel : public CostModel {
public:
  ~XGBoostModel() override {
    if (booster_)
      XGBoosterFree(booster_);
  }
  void update(const std::vector<std::vector<float>> &xs, const std::vector<float> &ys) override {
    if (xs.size() < 4)
      return;
    size_t width = xs[0].size();
    std::vector<float> flat, labels;
    for (size_t i = 0; i < xs.size(); ++i) {
      if (xs[i].size() != width)
        continue;
      flat.insert(flat.end(), xs[i].begin(), xs[i].end());
      labels.push_back(ys[i]);
    }
    DMatrixHandle m;
    if (XGDMatrixCreateFromMat(flat.data(), labels.size(), width, NAN, &m) != 0)
      return;
    XGDMatrixSetFloatInfo(m, "label", labels.data(), labels.size());
    if (booster_)
      XGBoosterFree(booster_);
    XGBoosterCreate(&m, 1, &booster_);
    for (auto [k, v] : {std::pair<const char *, const char *>{"nthread", "1"},
                        {"max_depth", "6"},
                        {"eta", "0.2"},
                        {"seed", "0"},
                        {"verbosity", "0"},
                        {"objective", "reg:squarederror"}})
      XGBoosterSetParam(booster_, k, v);
    for (int it = 0; it < 50; ++it)
      XGBoosterUpdateOneIter(booster_, it, m);
    XGDMatrixFree(m);
  }
  double predict(const std::vector<float> &x) override {
    if (!booster_)
      return 0;
    DMatrixHandle m;
    if (XGDMatrixCreateFromMat(x.data(), 1, x.size(), NAN, &m) != 0)
      return 0;
    bst_ulong n = 0;
    const float *out = nullptr;
    double score = 0;
    if (XGBoosterPredict(booster_, m, 0, 0, 0, &n, &out) == 0 && n == 1)
      score = out[0];
    XGDMatrixFree(m);
    return score;
  }

private:
  BoosterHandle booster_ = nullptr;
};

class RandomModel : public CostModel {
public:
  explicit RandomModel(uint64_t seed) : state_(seed) {}
  void update(const std::vector<std::vector<float>> &, const std::vector<float> &) override {}
  double predict(const std::vector<float> &) override {
    return double(schedule::nextRandom(state_) >> 11) * 0x1p-53;
  }

private:
  uint64_t state_;
};

} // namespace

std::unique_ptr<CostModel> makeXGBoostModel() { return std::make_unique<XGBoostModel>(); }
std::unique_ptr<CostModel> makeRandomModel(uint64_t seed) {
  return std::make_unique<RandomModel>(seed);
}

} // namespace tdsl::tune

//===- tune/CostModel.h - Predicted speed of candidates --------------------------------------===//
//
// A cost model scores feature vectors (tune/FeatureExtractor.h): higher is predicted faster.
// The search trains it on the measured candidates of one task (label -log(seconds)) and
// measures the best predicted member of a mutated population. XGBoostModel is the tuner's;
// RandomModel scores at random, for tests of the search and as an ablation.
//
//===------------------------------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace tdsl::tune {

class CostModel {
public:
  virtual ~CostModel() = default;
  /// Retrains on every sample so far (`xs[i]` scored `ys[i]`); samples whose width is not the
  /// first one's are skipped.
  virtual void update(const std::vector<std::vector<float>> &xs, const std::vector<float> &ys) = 0;
  /// The predicted score of `x`; 0 before any update.
  virtual double predict(const std::vector<float> &x) = 0;
};

/// Gradient-boosted trees (XGBoost's C API: depth 6, eta 0.2, 50 rounds, one thread, seed 0);
/// trained once there are 4 samples.
std::unique_ptr<CostModel> makeXGBoostModel();
/// Uniform scores in [0, 1) from a seeded generator: the same seed, the same scores in turn.
std::unique_ptr<CostModel> makeRandomModel(uint64_t seed);

} // namespace tdsl::tune

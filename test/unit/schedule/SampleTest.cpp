//===- test/unit/schedule/SampleTest.cpp - sample_* decisions and the tuner's moves -----------===//
//
// The decisions of passes/schedule/Sample.h: drawDecision and fitsSite on perfect tilings, and
// reshapeTiles, the tuner's mutation that changes a register tile's shape and keeps its size.
//
//===--------------------------------------------------------------------------------------===//
#include "passes/schedule/Sample.h"

#include <gtest/gtest.h>

#include <set>

using namespace tdsl::schedule;

namespace {

SampleSite tiling(int64_t extent, int64_t n, int64_t maxInnermost) {
  SampleSite s;
  s.kind = SampleSite::Kind::PerfectTile;
  s.extent = extent;
  s.n = n;
  s.maxInnermost = maxInnermost;
  return s;
}

int64_t product(const Decision &d) {
  int64_t p = 1;
  for (int64_t f : d)
    p *= f;
  return p;
}

} // namespace

TEST(Sample, DrawsPerfectTilings) {
  SampleSite s = tiling(1024, 4, 16);
  uint64_t state = 7;
  for (int i = 0; i < 200; ++i) {
    Decision d = drawDecision(s, state);
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(product(d), 1024);
    EXPECT_LE(d.back(), 16);
    EXPECT_TRUE(fitsSite(s, d));
  }
  EXPECT_FALSE(fitsSite(s, {2, 2, 2, 128})); // product 1024, innermost over 16
  EXPECT_FALSE(fitsSite(s, {1, 1, 64, 8}));  // product 512
}

// The matmul space's row and column tilings: 8 x 32 becomes 4 x 64 (or another shape of 256
// elements), each tiling's extent kept, within the innermost limits.
TEST(Sample, ReshapeKeepsTheTileSize) {
  std::vector<SampleSite> sites = {tiling(1024, 4, 16), tiling(1024, 4, 64), tiling(1024, 2, 0)};
  std::vector<Decision> base = {{2, 1, 64, 8}, {8, 1, 4, 32}, {1, 1024}};
  std::set<std::pair<int64_t, int64_t>> shapes;
  uint64_t state = 1;
  int moves = 0;
  for (int i = 0; i < 500; ++i) {
    std::optional<std::vector<Decision>> d = reshapeTiles(sites, base, state);
    if (!d)
      continue;
    ++moves;
    ASSERT_EQ(d->size(), 3u);
    for (size_t k = 0; k < 3; ++k)
      EXPECT_TRUE(fitsSite(sites[k], (*d)[k])) << k;
    EXPECT_EQ((*d)[2], base[2]); // the reduction's tiling (no innermost bound) takes no part
    int64_t rows = (*d)[0].back(), cols = (*d)[1].back();
    EXPECT_EQ(rows * cols, 8 * 32);
    EXPECT_NE(rows, 8);
    shapes.insert({rows, cols});
  }
  EXPECT_GT(moves, 100);
  EXPECT_TRUE(shapes.count({4, 64})) << "8 x 32 never became 4 x 64";
  EXPECT_TRUE(shapes.count({16, 16})) << "8 x 32 never became 16 x 16";
}

// Nothing to trade: one bounded tiling (the other without an innermost bound), or innermost
// tiles of 1 on both sides.
TEST(Sample, ReshapeNeedsTwoTilings) {
  uint64_t state = 3;
  for (int i = 0; i < 50; ++i) {
    EXPECT_FALSE(
        reshapeTiles({tiling(64, 4, 16), tiling(64, 2, 0)}, {{2, 2, 4, 4}, {8, 8}}, state));
    EXPECT_FALSE(reshapeTiles({tiling(64, 2, 16), tiling(64, 2, 16)}, {{64, 1}, {64, 1}}, state));
  }
}

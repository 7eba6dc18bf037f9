//===- test/unit/interp/RuntimeTest.cpp - f16/bf16, .npy files, output comparison --------===//
#include "runtime/Compare.h"
#include "runtime/Float16.h"
#include "runtime/Npy.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>

using namespace tdsl::runtime;
using tdsl::ir::DType;

namespace {

/// The textbook float → bf16 rounding (to nearest even) for non-NaN values.
uint16_t referenceBF16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

TEST(Float16, EveryPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t b = static_cast<uint16_t>(bits);
    double f16 = f16ToDouble(b), bf16 = bf16ToDouble(b);
    if (!std::isnan(f16)) {
      EXPECT_EQ(f16FromDouble(f16), b) << std::hex << bits;
    }
    if (!std::isnan(bf16)) {
      EXPECT_EQ(bf16FromDouble(bf16), b) << std::hex << bits;
    }
  }
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(f16FromDouble(1.0 + std::ldexp(1, -11)), 0x3c00);     // tie, down to even
  EXPECT_EQ(f16FromDouble(1.0 + 3 * std::ldexp(1, -11)), 0x3c02); // tie, up to even
  EXPECT_EQ(f16FromDouble(1.0 + std::ldexp(1, -11) + std::ldexp(1, -40)), 0x3c01);
  EXPECT_EQ(f16FromDouble(std::ldexp(1, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(f16FromDouble(std::ldexp(1, -25)), 0x0000); // tie to even zero
  EXPECT_EQ(f16FromDouble(1.5 * std::ldexp(1, -25)), 0x0001);
  EXPECT_EQ(f16FromDouble(-std::ldexp(1, -26)), 0x8000); // signed zero
  EXPECT_EQ(f16FromDouble(65504.0), 0x7bff);
  EXPECT_EQ(f16FromDouble(65519.99), 0x7bff);
  EXPECT_EQ(f16FromDouble(65520.0), 0x7c00); // rounds to infinity
  EXPECT_EQ(f16FromDouble(-INFINITY), 0xfc00);
  EXPECT_EQ(f16FromDouble(NAN) & 0x7e00, 0x7e00);
  EXPECT_EQ(f16FromInt(2049), 0x6800); // 2048
  EXPECT_EQ(f16FromInt(2051), 0x6802); // 2052
  EXPECT_EQ(f16FromInt(-70000), 0xfc00);
  EXPECT_EQ(bf16FromUInt(~uint64_t(0)), 0x5f80); // 2^64
  // 2^24 + 1 as an int64 rounds once to bf16 (through f32 it would round twice).
  EXPECT_EQ(bf16FromInt((int64_t(1) << 24) + (int64_t(1) << 16) + 1), 0x4b81);
}

TEST(Float16, MatchesReferenceConversions) {
  std::mt19937 gen(42);
  for (int i = 0; i < 200000; ++i) {
    float x = std::bit_cast<float>(static_cast<uint32_t>(gen()));
    if (std::isnan(x))
      continue;
    EXPECT_EQ(bf16FromFloat(x), referenceBF16(x)) << x;
#if defined(__FLT16_MAX__)
    EXPECT_EQ(f16FromFloat(x), std::bit_cast<uint16_t>(static_cast<_Float16>(x))) << x;
#endif
  }
}

TEST(Npy, RoundTripsEveryDType) {
  const DType types[] = {DType::boolean(), DType::i8(),  DType::i16(), DType::i32(),
                         DType::i64(),     DType::u8(),  DType::u16(), DType::u32(),
                         DType::u64(),     DType::f16(), DType::f32(), DType::f64()};
  std::string path = ::testing::TempDir() + "tdsl_runtime_test.npy";
  for (DType t : types) {
    for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {3}, {2, 5}}) {
      Tensor a(t, shape);
      for (int64_t i = 0; i < a.numElements(); ++i)
        a.store(i,
                t.isFloat() ? Scalar::ofFloat(t, i * 0.5 - 1) : Scalar::ofInt(t, i % 2 ? i : -i));
      std::string error;
      ASSERT_TRUE(writeNpy(path, a, error)) << error;
      std::optional<Tensor> b = readNpy(path, error);
      ASSERT_TRUE(b) << error;
      EXPECT_EQ(b->dtype, t) << t.name();
      EXPECT_EQ(b->shape, shape);
      EXPECT_EQ(b->bytes, a.bytes) << t.name();
    }
  }
  Tensor h(DType::bf16(), {2});
  std::string error;
  ASSERT_TRUE(writeNpy(path, h, error));
  EXPECT_EQ(readNpy(path, error)->dtype, DType::u16()); // bf16 travels as <u2
  std::remove(path.c_str());
}

TEST(Npy, RejectsBadFiles) {
  std::string error;
  EXPECT_FALSE(readNpy("/nonexistent/x.npy", error));
  EXPECT_EQ(error, "cannot open '/nonexistent/x.npy'");
  EXPECT_EQ(dtypeFromNpyDescr(">f4"), std::nullopt);
  EXPECT_EQ(dtypeFromNpyDescr("|b1"), DType::boolean());
  EXPECT_EQ(dtypeFromNpyDescr("<c8"), std::nullopt);
}

} // namespace

namespace {

Tensor floats(std::vector<double> values) {
  Tensor t(DType::f32(), {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t.store(static_cast<int64_t>(i), Scalar::ofFloat(DType::f32(), values[i]));
  return t;
}

} // namespace

// runtime/Compare.h: 1e-5 of the reference's largest magnitude (at least 1) plus 1e-4 of the
// element's; NaN only against NaN; integers exactly; shapes and dtypes must agree.
TEST(CompareOutputs, FloatTolerance) {
  Tensor want = floats({100.0, 0.0, -2.0});
  EXPECT_TRUE(compareOutputs(floats({100.005, 0.0009, -2.0}), want).same());
  Comparison far = compareOutputs(floats({100.0, 0.0011 + 0.0002, -2.0}), want);
  ASSERT_FALSE(far.same());
  EXPECT_EQ(far.index, 1);
  EXPECT_NE(far.mismatch.find("element 1:"), std::string::npos) << far.mismatch;
  // Small outputs: at least 1e-5 absolute.
  EXPECT_TRUE(compareOutputs(floats({1e-6}), floats({0.0})).same());
  EXPECT_FALSE(compareOutputs(floats({3e-5}), floats({0.0})).same());
}

TEST(CompareOutputs, NaNsAndIntegers) {
  double nan = std::nan("");
  EXPECT_TRUE(compareOutputs(floats({nan, 1.0}), floats({nan, 1.0})).same());
  EXPECT_FALSE(compareOutputs(floats({nan}), floats({1.0})).same());
  EXPECT_FALSE(compareOutputs(floats({1.0}), floats({nan})).same());
  Tensor a(DType::i32(), {2}), b(DType::i32(), {2});
  a.store(0, Scalar::ofInt(DType::i32(), 5));
  b.store(0, Scalar::ofInt(DType::i32(), 5));
  a.store(1, Scalar::ofInt(DType::i32(), 7));
  b.store(1, Scalar::ofInt(DType::i32(), 8));
  Comparison c = compareOutputs(a, b);
  ASSERT_FALSE(c.same());
  EXPECT_EQ(c.index, 1);
}

TEST(CompareOutputs, ShapeAndType) {
  EXPECT_NE(compareOutputs(floats({1.0, 2.0}), floats({1.0})).mismatch.find("shape or type"),
            std::string::npos);
  Tensor i(DType::i32(), {1});
  EXPECT_FALSE(compareOutputs(i, floats({0.0})).same());
}

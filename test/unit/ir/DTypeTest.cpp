//===- test/unit/ir/DTypeTest.cpp - DType names, parsing and predicates -------------------===//
#include "ir/DType.h"

#include <gtest/gtest.h>

using namespace tdsl::ir;

TEST(DType, NamesRoundTripThroughParse) {
  for (const char *name : {"bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16",
                           "bf16", "f32", "f64", "f32x4", "i8x16", "boolx8"}) {
    std::optional<DType> type = DType::parse(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(type->name(), name);
  }
}

TEST(DType, ParseRejectsOtherText) {
  for (const char *text : {"", "f31", "float", "f32x", "f32x1", "f32x0", "f32x04", "f32y4", "i64x",
                           "x4", "f32x4a", "F32"})
    EXPECT_FALSE(DType::parse(text).has_value()) << text;
}

TEST(DType, Predicates) {
  EXPECT_TRUE(DType::i32().isInt());
  EXPECT_FALSE(DType::i32().isUInt());
  EXPECT_TRUE(DType::u8().isUInt());
  EXPECT_TRUE(DType::u8().isInteger());
  EXPECT_FALSE(DType::boolean().isInteger());
  EXPECT_TRUE(DType::bf16().isFloat());
  EXPECT_FALSE(DType::u64().isFloat());
  EXPECT_EQ(DType::bf16().bits(), 16);
  EXPECT_EQ(DType::f64().bits(), 64);
  EXPECT_EQ(DType::boolean().bits(), 1);
  EXPECT_EQ(DType::boolean().storageBytes(), 1);
  EXPECT_EQ(DType::i16().storageBytes(), 2);
  EXPECT_EQ(DType(), DType::i64());
}

TEST(DType, Lanes) {
  DType v = DType::f32().withLanes(8);
  EXPECT_TRUE(v.isVector());
  EXPECT_EQ(v.lanes(), 8);
  EXPECT_EQ(v.element(), DType::f32());
  EXPECT_FALSE(v == DType::f32());
}

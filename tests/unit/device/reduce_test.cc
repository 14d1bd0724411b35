// Host reduction kernels: every type x operator on small values (checked against int64/double
// arithmetic), integer wrap-around, min/max of negatives, 16-bit rounding, NaN / signed-zero symmetry,
// scale and divide.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "device/host/half.hpp"
#include "device/host/reduce.hpp"

namespace hetccl::device {
namespace {

constexpr RedOpKind kAccumulateOps[] = {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max, RedOpKind::Min};

/// A buffer of `type` elements written from and read back as double (16-bit floats via our conversions,
/// which half_conversion_test checks independently).
class Buffer {
 public:
  Buffer(DataType type, const std::vector<double>& values) : type_(type), bytes_(values.size() * dataTypeSize(type)) {
    for (size_t i = 0; i < values.size(); ++i) set(i, values[i]);
  }
  void set(size_t i, double v) {
    unsigned char* p = bytes_.data() + i * dataTypeSize(type_);
    switch (type_) {
      case DataType::Int8: store(p, static_cast<int8_t>(v)); break;
      case DataType::Uint8: store(p, static_cast<uint8_t>(v)); break;
      case DataType::Int32: store(p, static_cast<int32_t>(v)); break;
      case DataType::Uint32: store(p, static_cast<uint32_t>(v)); break;
      case DataType::Int64: store(p, static_cast<int64_t>(v)); break;
      case DataType::Uint64: store(p, static_cast<uint64_t>(v)); break;
      case DataType::Float16: store(p, floatToHalf(static_cast<float>(v))); break;
      case DataType::Float32: store(p, static_cast<float>(v)); break;
      case DataType::Float64: store(p, v); break;
      case DataType::Bfloat16: store(p, floatToBfloat16(static_cast<float>(v))); break;
      case DataType::Float8e4m3: store(p, Fp8E4M3::fromFloat(static_cast<float>(v))); break;
      case DataType::Float8e5m2: store(p, Fp8E5M2::fromFloat(static_cast<float>(v))); break;
    }
  }
  double get(size_t i) const {
    const unsigned char* p = bytes_.data() + i * dataTypeSize(type_);
    switch (type_) {
      case DataType::Int8: return load<int8_t>(p);
      case DataType::Uint8: return load<uint8_t>(p);
      case DataType::Int32: return load<int32_t>(p);
      case DataType::Uint32: return load<uint32_t>(p);
      case DataType::Int64: return static_cast<double>(load<int64_t>(p));
      case DataType::Uint64: return static_cast<double>(load<uint64_t>(p));
      case DataType::Float16: return halfToFloat(load<uint16_t>(p));
      case DataType::Float32: return load<float>(p);
      case DataType::Float64: return load<double>(p);
      case DataType::Bfloat16: return bfloat16ToFloat(load<uint16_t>(p));
      case DataType::Float8e4m3: return Fp8E4M3::toFloat(load<Fp8E4M3>(p));
      case DataType::Float8e5m2: return Fp8E5M2::toFloat(load<Fp8E5M2>(p));
    }
    return 0;
  }
  void* data() { return bytes_.data(); }

 private:
  template <typename T>
  static void store(unsigned char* p, T v) { std::memcpy(p, &v, sizeof v); }
  template <typename T>
  static T load(const unsigned char* p) { T v; std::memcpy(&v, p, sizeof v); return v; }
  DataType type_;
  std::vector<unsigned char> bytes_;
};

bool isSigned(DataType t) {
  return t != DataType::Uint8 && t != DataType::Uint32 && t != DataType::Uint64;
}

double referenceOp(RedOpKind op, double a, double b) {
  switch (op) {
    case RedOpKind::Prod: return a * b;
    case RedOpKind::Max: return std::max(a, b);
    case RedOpKind::Min: return std::min(a, b);
    default: return a + b;
  }
}

// 1000 elements: many full blocks and a tail. Values small enough to be exact in every type (fp8: smaller
// ones; fp8_reduce_test checks every fp8 pair exhaustively).
TEST(HostReduce, EveryTypeAndOperatorMatchesReferenceOnSmallValues) {
  constexpr size_t kCount = 1000;
  for (int t = 0; t < kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    for (RedOpKind op : kAccumulateOps) {
      std::vector<double> a(kCount), b(kCount);
      const bool fp8 = isFp8Type(type);
      for (size_t i = 0; i < kCount; ++i) {
        a[i] = fp8 ? static_cast<double>(i % 5) - 2 : static_cast<double>(i % 7) - (isSigned(type) ? 3 : 0);
        b[i] = fp8 ? static_cast<double>((i * 3) % 7) - 3 : static_cast<double>((i * 5) % 11) - (isSigned(type) ? 5 : 0);
      }
      Buffer dst(type, a), src(type, b);
      ReduceFn fn = hostReduceFn(type, op);
      ASSERT_NE(fn, nullptr);
      fn(dst.data(), src.data(), kCount);
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(dst.get(i), referenceOp(op, a[i], b[i])) << dataTypeName(type) << " " << redOpName(op) << " at " << i;
    }
  }
}

TEST(HostReduce, AvgAndPreMulSumAccumulateAsSumAndBadPairsGiveNull) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    EXPECT_EQ(hostReduceFn(type, RedOpKind::Avg), hostReduceFn(type, RedOpKind::Sum));
    EXPECT_EQ(hostReduceFn(type, RedOpKind::PreMulSum), hostReduceFn(type, RedOpKind::Sum));
  }
  EXPECT_EQ(hostReduceFn(static_cast<DataType>(kNumDataTypes), RedOpKind::Sum), nullptr);
  EXPECT_EQ(hostReduceFn(static_cast<DataType>(-1), RedOpKind::Sum), nullptr);
  EXPECT_EQ(hostReduceFn(DataType::Float32, static_cast<RedOpKind>(6)), nullptr);
}

template <typename T>
T reduceOne(DataType type, RedOpKind op, T a, T b) {
  hostReduceFn(type, op)(&a, &b, 1);
  return a;
}

TEST(HostReduce, IntegersWrapAround) {
  EXPECT_EQ(reduceOne<uint8_t>(DataType::Uint8, RedOpKind::Sum, 200, 100), 44);
  EXPECT_EQ(reduceOne<uint8_t>(DataType::Uint8, RedOpKind::Prod, 16, 17), 16);
  EXPECT_EQ(reduceOne<int8_t>(DataType::Int8, RedOpKind::Sum, 127, 1), -128);
  EXPECT_EQ(reduceOne<int8_t>(DataType::Int8, RedOpKind::Prod, -128, -1), -128);
  EXPECT_EQ(reduceOne<int32_t>(DataType::Int32, RedOpKind::Sum, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(reduceOne<uint32_t>(DataType::Uint32, RedOpKind::Prod, 0x10000u, 0x10000u), 0u);
  EXPECT_EQ(reduceOne<uint64_t>(DataType::Uint64, RedOpKind::Sum, UINT64_MAX, 2), 1u);
  EXPECT_EQ(reduceOne<int64_t>(DataType::Int64, RedOpKind::Prod, INT64_MIN, -1), INT64_MIN);
}

TEST(HostReduce, MinMaxOfNegativesAndExtremes) {
  EXPECT_EQ(reduceOne<int8_t>(DataType::Int8, RedOpKind::Max, -5, -3), -3);
  EXPECT_EQ(reduceOne<int8_t>(DataType::Int8, RedOpKind::Min, -5, -3), -5);
  EXPECT_EQ(reduceOne<int64_t>(DataType::Int64, RedOpKind::Min, INT64_MIN, INT64_MAX), INT64_MIN);
  EXPECT_EQ(reduceOne<uint64_t>(DataType::Uint64, RedOpKind::Max, 0, UINT64_MAX), UINT64_MAX);
  EXPECT_EQ(reduceOne<uint8_t>(DataType::Uint8, RedOpKind::Max, 0, 255), 255);
  EXPECT_EQ(reduceOne<float>(DataType::Float32, RedOpKind::Max, -INFINITY, -1e30f), -1e30f);
  EXPECT_EQ(reduceOne<double>(DataType::Float64, RedOpKind::Min, -2.5, -2.25), -2.5);
}

TEST(HostReduce, SixteenBitSumsRoundToNearestEven) {
  // 2048 + 1 = 2049 lies halfway between halves 2048 and 2050: even mantissa wins (2048).
  EXPECT_EQ(reduceOne(DataType::Float16, RedOpKind::Sum, floatToHalf(2048), floatToHalf(1)), floatToHalf(2048));
  EXPECT_EQ(reduceOne(DataType::Float16, RedOpKind::Sum, floatToHalf(2048), floatToHalf(3)), floatToHalf(2052));
  EXPECT_EQ(reduceOne(DataType::Float16, RedOpKind::Sum, floatToHalf(65504), floatToHalf(16)), 0x7c00);  // to Inf
  EXPECT_EQ(reduceOne(DataType::Bfloat16, RedOpKind::Sum, floatToBfloat16(256), floatToBfloat16(1)),
            floatToBfloat16(256));
  EXPECT_EQ(reduceOne(DataType::Bfloat16, RedOpKind::Sum, floatToBfloat16(256), floatToBfloat16(3)),
            floatToBfloat16(260));
}

/// op(a, b) and op(b, a) for Max and Min, as bit patterns, for one floating type.
template <typename T>
void expectSymmetric(DataType type, T a, T b, const char* what) {
  for (RedOpKind op : {RedOpKind::Max, RedOpKind::Min}) {
    const T ab = reduceOne(type, op, a, b), ba = reduceOne(type, op, b, a);
    EXPECT_EQ(std::memcmp(&ab, &ba, sizeof(T)), 0) << dataTypeName(type) << " " << redOpName(op) << " " << what;
  }
}

TEST(HostReduce, FloatMinMaxIsSymmetricForNanAndSignedZero) {
  const float nanA = std::bit_cast<float>(0x7fc00001u), nanB = std::bit_cast<float>(0xffc00002u);
  expectSymmetric<float>(DataType::Float32, nanA, 1.0f, "nan,1");
  expectSymmetric<float>(DataType::Float32, nanA, nanB, "two nans");
  expectSymmetric<float>(DataType::Float32, 0.0f, -0.0f, "+0,-0");
  expectSymmetric<double>(DataType::Float64, std::bit_cast<double>(0x7ff8000000000001ull), -3.0, "nan,-3");
  expectSymmetric<double>(DataType::Float64, 0.0, -0.0, "+0,-0");
  expectSymmetric<uint16_t>(DataType::Float16, 0x7e01, 0x3c00, "nan,1");
  expectSymmetric<uint16_t>(DataType::Float16, 0x7e01, 0xfe02, "two nans");
  expectSymmetric<uint16_t>(DataType::Float16, 0x0000, 0x8000, "+0,-0");
  expectSymmetric<uint16_t>(DataType::Bfloat16, 0x7fc1, 0xffc2, "two nans");
  expectSymmetric<uint16_t>(DataType::Bfloat16, 0x0000, 0x8000, "+0,-0");

  EXPECT_TRUE(std::isnan(reduceOne(DataType::Float32, RedOpKind::Max, 1.0f, nanA)));
  EXPECT_TRUE(std::isnan(reduceOne(DataType::Float32, RedOpKind::Min, nanA, 1.0f)));
  EXPECT_TRUE(std::isnan(halfToFloat(reduceOne<uint16_t>(DataType::Float16, RedOpKind::Max, 0x3c00, 0x7e01))));
  EXPECT_FALSE(std::signbit(reduceOne(DataType::Float32, RedOpKind::Max, -0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(reduceOne(DataType::Float32, RedOpKind::Min, 0.0f, -0.0f)));
}

TEST(HostScale, MultipliesEveryTypeAndWrapsIntegers) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    std::vector<double> values(77);
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(isFp8Type(type) ? i % 3 : i % 9);
    Buffer src(type, values), dst(type, std::vector<double>(values.size(), 0)), factor(type, {3});
    hostScale(dst.data(), src.data(), values.size(), type, factor.data());
    for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(dst.get(i), values[i] * 3) << dataTypeName(type) << " " << i;
    hostScale(src.data(), src.data(), values.size(), type, factor.data());  // in place
    for (size_t i = 0; i < values.size(); ++i) ASSERT_EQ(src.get(i), values[i] * 3) << dataTypeName(type) << " in place";
  }
  int8_t x = 100, three = 3;
  hostScale(&x, &x, 1, DataType::Int8, &three);
  EXPECT_EQ(x, 44);  // 300 mod 256
  uint16_t h = floatToHalf(3), half = floatToHalf(0.5f);
  hostScale(&h, &h, 1, DataType::Float16, &half);
  EXPECT_EQ(halfToFloat(h), 1.5f);
}

TEST(HostDivide, TruncatesIntegersAndDividesFloats) {
  int8_t i8[] = {-7, 7, -128, 127};
  hostDivide(i8, 4, DataType::Int8, 2);
  EXPECT_EQ(i8[0], -3);
  EXPECT_EQ(i8[1], 3);
  EXPECT_EQ(i8[2], -64);
  EXPECT_EQ(i8[3], 63);
  int8_t minByte = -128;
  hostDivide(&minByte, 1, DataType::Int8, 128);  // divisor beyond int8's range
  EXPECT_EQ(minByte, -1);
  uint8_t u8 = 255;
  hostDivide(&u8, 1, DataType::Uint8, 2);
  EXPECT_EQ(u8, 127);
  uint64_t u64 = UINT64_MAX;
  hostDivide(&u64, 1, DataType::Uint64, 3);
  EXPECT_EQ(u64, UINT64_MAX / 3);
  int64_t i64 = INT64_MIN;
  hostDivide(&i64, 1, DataType::Int64, 4);
  EXPECT_EQ(i64, INT64_MIN / 4);
  float f[] = {1, -3};
  hostDivide(f, 2, DataType::Float32, 4);
  EXPECT_EQ(f[0], 0.25f);
  EXPECT_EQ(f[1], -0.75f);
  double d = 1;
  hostDivide(&d, 1, DataType::Float64, 3);
  EXPECT_EQ(d, 1.0 / 3.0);
  uint16_t h = floatToHalf(3), b = floatToBfloat16(3);
  hostDivide(&h, 1, DataType::Float16, 2);
  hostDivide(&b, 1, DataType::Bfloat16, 2);
  EXPECT_EQ(halfToFloat(h), 1.5f);
  EXPECT_EQ(bfloat16ToFloat(b), 1.5f);
  int32_t unchanged = 9;
  hostDivide(&unchanged, 1, DataType::Int32, 0);
  EXPECT_EQ(unchanged, 9);
}

}  // namespace
}  // namespace hetccl::device

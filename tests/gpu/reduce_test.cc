// GPU reduction kernels against the host kernels (src/device/host/reduce.cc), bit for bit: every data type
// x operator, random finite bit patterns plus every pair of edge values (zeros, extremes, subnormals,
// rounding ties, infinities, NaNs), on the vectorised (16-byte aligned) and the element-wise path; for the
// fp8 types every one of the 65,536 input pairs, NaN results included (fp8 NaNs are canonical).
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "device/host/half.hpp"
#include "device/host/reduce.hpp"
#include "gpu_fixture.hpp"

namespace hetccl::device::test {
namespace {

constexpr DataType kAllTypes[] = {DataType::Int8,    DataType::Uint8,   DataType::Int32,   DataType::Uint32,
                                  DataType::Int64,   DataType::Uint64,  DataType::Float16, DataType::Float32,
                                  DataType::Float64, DataType::Bfloat16, DataType::Float8e4m3,
                                  DataType::Float8e5m2};
constexpr RedOpKind kAllOps[] = {RedOpKind::Sum, RedOpKind::Prod, RedOpKind::Max,
                                 RedOpKind::Min, RedOpKind::Avg,  RedOpKind::PreMulSum};
constexpr size_t kRandomCount = 10007;  // odd: the vector path also runs its element-wise tail

/// Interesting bit patterns of each type (stored in the low bytes).
std::vector<uint64_t> edgeValues(DataType type) {
  switch (type) {
    case DataType::Float16:
      return {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x0400, 0x0001, 0x03ff,
              0x3c01, 0x1000, 0x7c00, 0xfc00, 0x7e00, 0x7d00, 0xfe01};
    case DataType::Bfloat16:
      return {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x0080, 0x0001,
              0x007f, 0x3f81, 0x3b80, 0x7f80, 0xff80, 0x7fc0, 0x7fa0, 0xffc1};
    case DataType::Float32:
      return {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff, 0x00800000, 0x00000001,
              0x007fffff, 0x3f800001, 0x33800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00000, 0xffc00001};
    case DataType::Float64:
      return {0x0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7fefffffffffffff,
              0xffefffffffffffff, 0x0010000000000000, 0x1, 0x000fffffffffffff, 0x3ff0000000000001,
              0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff4000000000000, 0xfff8000000000001};
    case DataType::Float8e4m3:  // 0, -0, 1, -1, 448, -448, min normal, min subnormal, max subnormal, 1+ulp, NaNs
      return {0x00, 0x80, 0x38, 0xb8, 0x7e, 0xfe, 0x08, 0x01, 0x07, 0x39, 0x18, 0x7f, 0xff, 0x77};
    case DataType::Float8e5m2:  // ... and the infinities
      return {0x00, 0x80, 0x3c, 0xbc, 0x7b, 0xfb, 0x04, 0x01, 0x03, 0x3d, 0x2c, 0x7c, 0xfc, 0x7e, 0x7d, 0xff};
    default:  // integers: 0, 1, -1/max, min, max, 2, alternating bits (truncated to the width)
      return {0x0, 0x1, ~0ull, 0x8000000000000000, 0x7fffffffffffffff, 0x80, 0x7f, 0x80000000, 0x7fffffff,
              0x2, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa, 0xff};
  }
}

bool isNan(DataType type, uint64_t bits) {
  switch (type) {
    case DataType::Float16: return (bits & 0x7fff) > 0x7c00;
    case DataType::Bfloat16: return (bits & 0x7fff) > 0x7f80;
    case DataType::Float32: return (bits & 0x7fffffff) > 0x7f800000;
    case DataType::Float64: return (bits & 0x7fffffffffffffff) > 0x7ff0000000000000;
    case DataType::Float8e4m3: return (bits & 0x7f) == 0x7f;
    case DataType::Float8e5m2: return (bits & 0x7f) > 0x7c;
    default: return false;
  }
}

/// True for the non-finite patterns (exponent all ones) of a floating type.
bool isNonFinite(DataType type, uint64_t bits) {
  switch (type) {
    case DataType::Float16: return (bits & 0x7c00) == 0x7c00;
    case DataType::Bfloat16: return (bits & 0x7f80) == 0x7f80;
    case DataType::Float32: return (bits & 0x7f800000) == 0x7f800000;
    case DataType::Float64: return (bits & 0x7ff0000000000000) == 0x7ff0000000000000;
    case DataType::Float8e4m3: return (bits & 0x7f) == 0x7f;
    case DataType::Float8e5m2: return (bits & 0x7c) == 0x7c;
    default: return false;
  }
}

uint64_t elementAt(const std::vector<unsigned char>& buf, size_t i, size_t width) {
  uint64_t v = 0;
  std::memcpy(&v, buf.data() + i * width, width);
  return v;
}

void setElement(std::vector<unsigned char>& buf, size_t i, size_t width, uint64_t v) {
  std::memcpy(buf.data() + i * width, &v, width);
}

/// Random finite elements (any bit pattern but Inf/NaN).
std::vector<unsigned char> randomElements(DataType type, size_t count, std::mt19937_64& rng) {
  const size_t width = dataTypeSize(type);
  std::vector<unsigned char> buf(count * width);
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = rng();
    while (isNonFinite(type, v & (width == 8 ? ~0ull : (1ull << (8 * width)) - 1))) v = rng();
    setElement(buf, i, width, v);
  }
  return buf;
}

/// dst and src inputs: every (edge, edge) pair, then random finite elements.
void makeInputs(DataType type, std::mt19937_64& rng, std::vector<unsigned char>& dst, std::vector<unsigned char>& src) {
  const size_t width = dataTypeSize(type);
  const std::vector<uint64_t> edges = edgeValues(type);
  dst = randomElements(type, edges.size() * edges.size() + kRandomCount, rng);
  src = randomElements(type, edges.size() * edges.size() + kRandomCount, rng);
  for (size_t i = 0; i < edges.size(); ++i)
    for (size_t j = 0; j < edges.size(); ++j) {
      setElement(dst, i * edges.size() + j, width, edges[i]);
      setElement(src, i * edges.size() + j, width, edges[j]);
    }
}

/// Expects bitwise equality; where `nanMayDiffer`, two NaNs of different bits also pass (arithmetic on NaN or
/// Inf inputs creates the vendor's default NaN, whose bits differ between x86 and GPUs).
void expectSameBits(DataType type, const std::vector<unsigned char>& expected, const std::vector<unsigned char>& got,
                    bool nanMayDiffer, const char* what) {
  const size_t width = dataTypeSize(type);
  const size_t count = expected.size() / width;
  size_t mismatches = 0;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t e = elementAt(expected, i, width), g = elementAt(got, i, width);
    if (e == g || (nanMayDiffer && isNan(type, e) && isNan(type, g))) continue;
    if (++mismatches <= 5)
      ADD_FAILURE() << what << " " << dataTypeName(type) << " element " << i << ": host 0x" << std::hex << e
                    << " gpu 0x" << g << std::dec;
  }
  EXPECT_EQ(mismatches, 0u) << what << " " << dataTypeName(type) << ": " << mismatches << " of " << count
                            << " elements differ";
}

class GpuReduceTest : public GpuTest {
 protected:
  /// Runs reduce on the GPU with dst at element offset 0 and src at `srcOffset` elements (1 makes the
  /// pointers misaligned for 16-byte packs), returns the result.
  std::vector<unsigned char> gpuReduce(DataType type, RedOpKind op, const std::vector<unsigned char>& dst,
                                       const std::vector<unsigned char>& src, size_t srcOffset) {
    const size_t width = dataTypeSize(type), bytes = dst.size();
    GpuBuffer d(*rt_, bytes, GpuBuffer::Where::Device), s(*rt_, bytes + srcOffset * width, GpuBuffer::Where::Device);
    rt_->copyAsync(d.get(), dst.data(), bytes, stream_);
    rt_->copyAsync(s.bytes() + srcOffset * width, src.data(), bytes, stream_);
    rt_->reduce(d.get(), s.bytes() + srcOffset * width, bytes / width, type, op, stream_);
    std::vector<unsigned char> out(bytes);
    rt_->copyAsync(out.data(), d.get(), bytes, stream_);
    rt_->synchronize(stream_);
    return out;
  }
};

TEST_F(GpuReduceTest, EveryTypeAndOpMatchesHostBitwise) {
  std::mt19937_64 rng(20261122);
  for (DataType type : kAllTypes) {
    std::vector<unsigned char> dst, src;
    makeInputs(type, rng, dst, src);
    for (RedOpKind op : kAllOps) {
      SCOPED_TRACE(concat(dataTypeName(type), " ", redOpName(op)));
      std::vector<unsigned char> expected = dst;
      hostReduceFn(type, op)(expected.data(), src.data(), dst.size() / dataTypeSize(type));
      // max/min and fp8: canonical NaNs
      const bool nanMayDiffer = op != RedOpKind::Max && op != RedOpKind::Min && !isFp8Type(type);
      for (size_t srcOffset : {size_t{0}, size_t{1}})
        expectSameBits(type, expected, gpuReduce(type, op, dst, src, srcOffset), nanMayDiffer,
                       srcOffset ? "reduce (element-wise path)" : "reduce (vector path)");
    }
  }
}

TEST_F(GpuReduceTest, Fp8EveryPairAndOpMatchesHostBitwise) {
  std::vector<unsigned char> dst(65536), src(65536);
  for (size_t i = 0; i < dst.size(); ++i) {
    dst[i] = static_cast<unsigned char>(i >> 8);
    src[i] = static_cast<unsigned char>(i & 0xff);
  }
  for (DataType type : {DataType::Float8e4m3, DataType::Float8e5m2})
    for (RedOpKind op : kAllOps) {
      SCOPED_TRACE(concat(dataTypeName(type), " ", redOpName(op), " all pairs"));
      std::vector<unsigned char> expected = dst;
      hostReduceFn(type, op)(expected.data(), src.data(), dst.size());
      for (size_t srcOffset : {size_t{0}, size_t{1}})
        expectSameBits(type, expected, gpuReduce(type, op, dst, src, srcOffset), false,
                       srcOffset ? "reduce (element-wise path)" : "reduce (vector path)");
    }
}

TEST_F(GpuReduceTest, InPlaceReduceDoublesEachElement) {
  const size_t count = 1001;
  std::vector<int32_t> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = static_cast<int32_t>(i) - 500;
  GpuBuffer d(*rt_, count * 4, GpuBuffer::Where::Device);
  rt_->copyAsync(d.get(), values.data(), count * 4, stream_);
  rt_->reduce(d.get(), d.get(), count, DataType::Int32, RedOpKind::Sum, stream_);
  std::vector<int32_t> out(count);
  rt_->copyAsync(out.data(), d.get(), count * 4, stream_);
  rt_->synchronize(stream_);
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(out[i], 2 * values[i]) << "element " << i;
}

TEST_F(GpuReduceTest, ScaleAndDivideMatchHostBitwise) {
  std::mt19937_64 rng(7);
  for (DataType type : kAllTypes) {
    const size_t width = dataTypeSize(type);
    std::vector<unsigned char> input, unused;
    makeInputs(type, rng, input, unused);
    const size_t count = input.size() / width;
    GpuBuffer in(*rt_, input.size(), GpuBuffer::Where::Device), out(*rt_, input.size(), GpuBuffer::Where::Device);
    std::vector<unsigned char> got(input.size());

    for (uint64_t scalarBits : {edgeValues(type)[2], edgeValues(type)[4], rng()}) {
      uint64_t factor = scalarBits;
      if (isNonFinite(type, factor & (width == 8 ? ~0ull : (1ull << (8 * width)) - 1))) factor = edgeValues(type)[2];
      SCOPED_TRACE(concat(dataTypeName(type), " scale by 0x", std::hex, factor));
      std::vector<unsigned char> expected(input.size());
      hostScale(expected.data(), input.data(), count, type, &factor);
      rt_->copyAsync(in.get(), input.data(), input.size(), stream_);
      rt_->scale(out.get(), in.get(), count, type, &factor, stream_);
      rt_->copyAsync(got.data(), out.get(), input.size(), stream_);
      rt_->synchronize(stream_);
      expectSameBits(type, expected, got, !isFp8Type(type), "scale");
    }
    for (uint64_t n : {1ull, 3ull, 7ull, 128ull, 1000ull, 1ull << 40}) {
      SCOPED_TRACE(concat(dataTypeName(type), " divide by ", n));
      std::vector<unsigned char> expected = input;
      hostDivide(expected.data(), count, type, n);
      rt_->copyAsync(in.get(), input.data(), input.size(), stream_);
      rt_->divide(in.get(), count, type, n, stream_);
      rt_->copyAsync(got.data(), in.get(), input.size(), stream_);
      rt_->synchronize(stream_);
      expectSameBits(type, expected, got, !isFp8Type(type), "divide");
    }
  }
}

TEST_F(GpuReduceTest, RejectsUnknownTypeAndOp) {
  GpuBuffer d(*rt_, 64, GpuBuffer::Where::Device);
  EXPECT_THROW(rt_->reduce(d.get(), d.get(), 4, static_cast<DataType>(42), RedOpKind::Sum, stream_), InvalidArgument);
  EXPECT_THROW(rt_->reduce(d.get(), d.get(), 4, DataType::Float32, static_cast<RedOpKind>(42), stream_),
               InvalidArgument);
}

}  // namespace
}  // namespace hetccl::device::test

#include "device/host/reduce_x86.hpp"

#include <cstring>

#include "device/host/reduce_ops.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define HETCCL_X86_KERNELS 1
#endif

namespace hetccl::device {

#ifdef HETCCL_X86_KERNELS
namespace {

using host_ops::ElementTraits;

constexpr size_t kBlock = 32;  // elements per step: four 8-lane conversions

/// 8 bfloat16 values as floats: the bits shifted up, NaNs quieted (as bfloat16ToFloat).
__attribute__((target("avx2,f16c"))) inline __m256 bfloat16x8ToFloat(const uint16_t* p) {
  const __m256i bits = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 16);
  const __m256i magnitude = _mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7f800000));
  return _mm256_castsi256_ps(_mm256_or_si256(bits, _mm256_and_si256(nan, _mm256_set1_epi32(0x400000))));
}

/// 8 floats rounded to bfloat16 (nearest even; NaN: quieted, sign and top payload kept; as
/// floatToBfloat16), as 32-bit lanes holding the 16-bit results.
__attribute__((target("avx2,f16c"))) inline __m256i floatToBfloat16x8(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
  const __m256i quietNan = _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
  const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7fffffff)), _mm256_set1_epi32(0x7f800000));
  return _mm256_blendv_epi8(rounded, quietNan, nan);
}

/// How 8 lanes of a 16-bit format become floats and back.
struct HalfLanes {  // F16C
  using Element = Half;
  __attribute__((target("avx2,f16c"))) static __m256 load8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  __attribute__((target("avx2,f16c"))) static void store8(uint16_t* p, __m256 x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
};
struct Bfloat16Lanes {  // the integer conversions above
  using Element = Bfloat16;
  __attribute__((target("avx2,f16c"))) static __m256 load8(const uint16_t* p) { return bfloat16x8ToFloat(p); }
  __attribute__((target("avx2,f16c"))) static void store8(uint16_t* p, __m256 x) {
    const __m256i lanes = floatToBfloat16x8(x);  // 16-bit results in 32-bit lanes: pack the two halves
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packus_epi32(_mm256_castsi256_si128(lanes), _mm256_extracti128_si256(lanes, 1)));
  }
};

/// A block of each operand into float, the operator over the block, the block back; the tail through the
/// portable element conversions.
template <typename Lanes, typename Op>
__attribute__((target("avx2,f16c"))) void reduceSixteenBit(void* dst, const void* src, size_t count) {
  auto* d = static_cast<uint16_t*>(dst);
  const auto* s = static_cast<const uint16_t*>(src);
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    alignas(32) float a[kBlock], b[kBlock];
    for (size_t k = 0; k < kBlock; k += 8) {
      _mm256_store_ps(a + k, Lanes::load8(d + i + k));
      _mm256_store_ps(b + k, Lanes::load8(s + i + k));
    }
    for (size_t j = 0; j < kBlock; ++j) a[j] = Op::apply(a[j], b[j]);
    for (size_t k = 0; k < kBlock; k += 8) Lanes::store8(d + i + k, _mm256_load_ps(a + k));
  }
  using E = typename Lanes::Element;
  using Traits = ElementTraits<E>;
  for (; i < count; ++i) d[i] = Traits::store(Op::apply(Traits::load(E{d[i]}), Traits::load(E{s[i]}))).bits;
}

template <typename Lanes>
ReduceFn sixteenBitKernel(RedOpKind op) noexcept {
  switch (op) {
    case RedOpKind::Sum:
    case RedOpKind::Avg:
    case RedOpKind::PreMulSum: return &reduceSixteenBit<Lanes, host_ops::SumOp>;
    case RedOpKind::Prod: return &reduceSixteenBit<Lanes, host_ops::ProdOp>;
    case RedOpKind::Max: return &reduceSixteenBit<Lanes, host_ops::MaxOp>;
    case RedOpKind::Min: return &reduceSixteenBit<Lanes, host_ops::MinOp>;
  }
  return nullptr;
}

/// AVX2 and F16C, and an OS that saves the YMM registers (CPUID and XGETBV; clang 14's
/// __builtin_cpu_supports does not know "f16c").
bool cpuHasAvx2F16c() noexcept {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!osxsave || !avx || !f16c) return false;
    unsigned xcr0Low = 0, xcr0High = 0;
    __asm__("xgetbv" : "=a"(xcr0Low), "=d"(xcr0High) : "c"(0));
    if ((xcr0Low & 0x6u) != 0x6u) return false;  // XMM and YMM state enabled by the OS
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & (1u << 5)) != 0;  // AVX2
  }();
  return has;
}

}  // namespace

ReduceFn x86SixteenBitReduceFn(DataType type, RedOpKind op) noexcept {
  if (!cpuHasAvx2F16c()) return nullptr;
  if (type == DataType::Float16) return sixteenBitKernel<HalfLanes>(op);
  if (type == DataType::Bfloat16) return sixteenBitKernel<Bfloat16Lanes>(op);
  return nullptr;
}

#else

ReduceFn x86SixteenBitReduceFn(DataType, RedOpKind) noexcept { return nullptr; }

#endif

}  // namespace hetccl::device

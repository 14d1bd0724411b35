// Every entry point of libhetccl-hip.so (hetcclGpuPlugin_v2) against the fake HIP runtime, in this process:
// the default configuration (ROCm 6 runtime, 2 devices of gfx90a, stream memory operations supported).
// Configurations of their own (no runtime, no device, other versions, architectures, cache) run in child
// processes: scenarios_test.cc.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "core/types.hpp"
#include "device/host/reduce.hpp"
#include "harness.hpp"

namespace hip_test {
namespace {

using namespace std::chrono_literals;

#define EXPECT_GPU_OK(call)                                          \
  do {                                                               \
    const int rc_ = (call);                                          \
    EXPECT_EQ(rc_, HETCCL_GPU_OK) << #call << ": " << P().lastError(); \
  } while (0)
#define ASSERT_GPU_OK(call)                                          \
  do {                                                               \
    const int rc_ = (call);                                          \
    ASSERT_EQ(rc_, HETCCL_GPU_OK) << #call << ": " << P().lastError(); \
  } while (0)

const hetcclGpuPlugin_t& P() { return plugin(); }
uint64_t badAccessesNow();
const Fake& F() {
  P();  // the plugin opens the fake first
  return fake();
}

/// The thread's last error must name `call` and the HIP error.
void expectRuntimeError(int rc, const char* call, const char* hipError) {
  EXPECT_EQ(rc, HETCCL_GPU_ERR_RUNTIME);
  const std::string text = P().lastError();
  EXPECT_NE(text.find(call), std::string::npos) << "lastError: " << text;
  if (hipError) {
    EXPECT_NE(text.find(hipError), std::string::npos) << "lastError: " << text;
  }
}

struct Stream {
  void* s = nullptr;
  Stream() { EXPECT_GPU_OK(P().streamCreate(&s)); }
  ~Stream() { EXPECT_GPU_OK(P().streamDestroy(s)); }
  operator void*() const { return s; }
};
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { EXPECT_GPU_OK(P().allocDevice(&p, bytes)); }
  ~DeviceBuffer() { EXPECT_GPU_OK(P().freeDevice(p)); }
  template <typename T = char>
  T* as() const { return static_cast<T*>(p); }
};
struct PinnedBuffer {
  void* p = nullptr;
  explicit PinnedBuffer(size_t bytes) {
    EXPECT_GPU_OK(P().allocPinned(&p, bytes));
    std::memset(p, 0, bytes);
  }
  ~PinnedBuffer() { EXPECT_GPU_OK(P().freePinned(p)); }
  template <typename T = char>
  T* as() const { return static_cast<T*>(p); }
};

uint64_t badAccessesNow() { return fake().snapshot().badAccesses; }

/// Fails the test if the fake saw a bad access (a kernel or copy touching memory the device cannot reach)
/// while it ran.
struct NoBadAccess {
  uint64_t before = badAccessesNow();
  ~NoBadAccess() { EXPECT_EQ(badAccessesNow(), before) << fake().lastBadAccess(); }
};

volatile uint64_t* word(void* p, size_t i = 0) { return static_cast<volatile uint64_t*>(p) + i; }

// ---------------------------------------------------------------------------------------------------
TEST(HipPlugin, InitVersionAndName) {
  EXPECT_EQ(P().version, HETCCL_GPU_PLUGIN_VERSION);
  EXPECT_STREQ(P().name, "hip");
  EXPECT_EQ(P().init(nullptr), HETCCL_GPU_OK);  // later calls return the first result
  int runtime = 0, driver = 0;
  EXPECT_GPU_OK(P().versions(&runtime, &driver));
  EXPECT_EQ(runtime, 6020);  // the fake's default 6.2.0 as 1000*major + 10*minor
  EXPECT_EQ(driver, 6020);
  EXPECT_EQ(P().versions(nullptr, &driver), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_NE(P().lastError(), nullptr);
  bool logged = false;
  for (const std::string& l : logLines()) logged = logged || l.find("HIP") != std::string::npos;
  EXPECT_TRUE(logged) << "init logs nothing through the core's logger";
}

TEST(HipPlugin, DevicesAreCurrentPerThread) {
  int count = 0;
  EXPECT_GPU_OK(P().deviceCount(&count));
  EXPECT_EQ(count, 2);
  int d = -1;
  EXPECT_GPU_OK(P().getDevice(&d));
  EXPECT_EQ(d, 0);
  std::thread([] {
    EXPECT_GPU_OK(P().setDevice(1));
    int inner = -1;
    EXPECT_GPU_OK(P().getDevice(&inner));
    EXPECT_EQ(inner, 1);
    void* p = nullptr;
    EXPECT_GPU_OK(P().allocDevice(&p, 64));
    int type = -1, dev = -1;
    EXPECT_GPU_OK(P().pointerQuery(p, &type, &dev));
    EXPECT_EQ(type, HETCCL_GPU_MEM_DEVICE);
    EXPECT_EQ(dev, 1);
    EXPECT_GPU_OK(P().freeDevice(p));
  }).join();
  EXPECT_GPU_OK(P().getDevice(&d));
  EXPECT_EQ(d, 0) << "another thread's setDevice changed this thread's device";
  expectRuntimeError(P().setDevice(7), "hipSetDevice", "hipErrorInvalidDevice");
  EXPECT_EQ(P().deviceCount(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().getDevice(nullptr), HETCCL_GPU_ERR_ARGUMENT);
}

TEST(HipPlugin, MemoryKindsAndPointerQuery) {
  const fakehipStats_t before = F().snapshot();
  int type = -1, dev = -2;
  {
    DeviceBuffer d(1000);
    PinnedBuffer pinned(1000);
    EXPECT_GPU_OK(P().pointerQuery(d.p, &type, &dev));
    EXPECT_EQ(type, HETCCL_GPU_MEM_DEVICE);
    EXPECT_EQ(dev, 0);
    EXPECT_GPU_OK(P().pointerQuery(d.as() + 999, &type, &dev));  // inside the allocation
    EXPECT_EQ(type, HETCCL_GPU_MEM_DEVICE);
    EXPECT_GPU_OK(P().pointerQuery(pinned.p, &type, &dev));
    EXPECT_EQ(type, HETCCL_GPU_MEM_PINNED);
    EXPECT_EQ(dev, -1);
    const fakehipStats_t during = F().snapshot();
    EXPECT_EQ(during.liveDeviceAllocs, before.liveDeviceAllocs + 1);
    EXPECT_EQ(during.livePinnedAllocs, before.livePinnedAllocs + 1);
  }
  const fakehipStats_t after = F().snapshot();
  EXPECT_EQ(after.liveDeviceAllocs, before.liveDeviceAllocs) << "freeDevice did not free";
  EXPECT_EQ(after.livePinnedAllocs, before.livePinnedAllocs) << "freePinned did not free";

  std::vector<char> host(4096);
  EXPECT_GPU_OK(P().pointerQuery(host.data(), &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_HOST);
  EXPECT_EQ(dev, -1);
  EXPECT_GPU_OK(P().pointerQuery(nullptr, &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_HOST);
  EXPECT_GPU_OK(P().hostRegister(host.data(), host.size()));
  EXPECT_GPU_OK(P().pointerQuery(host.data() + 100, &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_PINNED);
  expectRuntimeError(P().hostRegister(host.data(), host.size()), "hipHostRegister", "hipErrorHostMemoryAlreadyRegistered");
  EXPECT_GPU_OK(P().hostUnregister(host.data()));
  EXPECT_GPU_OK(P().pointerQuery(host.data(), &type, &dev));
  EXPECT_EQ(type, HETCCL_GPU_MEM_HOST);
  expectRuntimeError(P().hostUnregister(host.data()), "hipHostUnregister", "hipErrorHostMemoryNotRegistered");

  void* p = nullptr;
  EXPECT_EQ(P().allocDevice(&p, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().allocDevice(nullptr, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().allocPinned(&p, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().allocPinned(nullptr, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().hostRegister(nullptr, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().hostRegister(host.data(), 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().hostUnregister(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().pointerQuery(host.data(), nullptr, &dev), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().freeDevice(nullptr));
  EXPECT_GPU_OK(P().freePinned(nullptr));
  expectRuntimeError(P().freeDevice(host.data()), "hipFree", "hipErrorInvalidValue");
}

TEST(HipPlugin, RegisteredSharedMemorySegment) {
  NoBadAccess noBadAccess;
  // What the multi-process transports do: a MAP_SHARED segment registered as pinned memory, written by a
  // kernel (a flag write) and read by a wait.
  const size_t bytes = 1 << 16;
  void* seg = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(seg, MAP_FAILED);
  ASSERT_GPU_OK(P().hostRegister(seg, bytes));
  void* dev = nullptr;
  EXPECT_GPU_OK(P().devicePointer(seg, &dev));
  EXPECT_EQ(dev, seg);
  Stream s;
  auto* flags = static_cast<uint64_t*>(seg);
  EXPECT_GPU_OK(P().streamWriteFlag(s, flags + 1, 5, HETCCL_GPU_FLAG_FORCE_KERNEL));
  EXPECT_GPU_OK(P().streamWriteFlag(s, flags + 2, 6, 0));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(flags[1], 5u);
  EXPECT_EQ(flags[2], 6u);
  EXPECT_GPU_OK(P().hostUnregister(seg));
  munmap(seg, bytes);
}

TEST(HipPlugin, StreamsQueryAndSynchronize) {
  Stream s;
  PinnedBuffer flag(64);
  EXPECT_GPU_OK(P().streamQuery(s));
  EXPECT_GPU_OK(P().streamWaitFlag(s, flag.as<uint64_t>(), 1, 0));
  EXPECT_EQ(P().streamQuery(s), HETCCL_GPU_ERR_NOT_READY);
  *word(flag.p) = 1;
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_GPU_OK(P().streamQuery(s));
  // The null stream is the runtime's default stream.
  EXPECT_GPU_OK(P().streamQuery(nullptr));
  EXPECT_GPU_OK(P().streamSynchronize(nullptr));
  EXPECT_EQ(P().streamCreate(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().streamDestroy(nullptr));
}

TEST(HipPlugin, EventsOrderStreams) {
  NoBadAccess noBadAccess;
  Stream a, b;
  PinnedBuffer flag(64), out(64);
  DeviceBuffer src(64);
  EXPECT_GPU_OK(P().memsetSync(src.p, 0x5A, 64));
  void* e = nullptr;
  ASSERT_GPU_OK(P().eventCreate(&e));
  EXPECT_GPU_OK(P().eventQuery(e));  // never recorded: reached
  EXPECT_GPU_OK(P().streamWaitFlag(a, flag.as<uint64_t>(), 1, 0));
  EXPECT_GPU_OK(P().eventRecord(e, a));
  EXPECT_EQ(P().eventQuery(e), HETCCL_GPU_ERR_NOT_READY);
  EXPECT_GPU_OK(P().streamWaitEvent(b, e));
  EXPECT_GPU_OK(P().memcpyAsync(out.p, src.p, 64, b));  // b waits for a's event
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(out.as<unsigned char>()[0], 0) << "streamWaitEvent did not hold the other stream";
  EXPECT_EQ(P().streamQuery(b), HETCCL_GPU_ERR_NOT_READY);
  *word(flag.p) = 1;
  EXPECT_GPU_OK(P().eventSynchronize(e));
  EXPECT_GPU_OK(P().eventQuery(e));
  EXPECT_GPU_OK(P().streamSynchronize(b));
  EXPECT_EQ(out.as<unsigned char>()[63], 0x5A);
  EXPECT_GPU_OK(P().eventDestroy(e));
  EXPECT_EQ(P().eventCreate(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().eventRecord(nullptr, a), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().eventQuery(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().eventSynchronize(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamWaitEvent(a, nullptr), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().eventDestroy(nullptr));
}

TEST(HipPlugin, CopiesAndMemsetsInEveryDirection) {
  NoBadAccess noBadAccess;
  const size_t n = 4099;
  std::vector<unsigned char> host(n), back(n, 0);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<unsigned char>(i * 7 + 1);
  DeviceBuffer d1(n), d2(n);
  PinnedBuffer pinned(n);
  EXPECT_GPU_OK(P().memcpySync(d1.p, host.data(), n));    // host -> device
  EXPECT_GPU_OK(P().memcpySync(d2.p, d1.p, n));           // device -> device
  EXPECT_GPU_OK(P().memcpySync(pinned.p, d2.p, n));       // device -> pinned
  EXPECT_GPU_OK(P().memcpySync(back.data(), pinned.p, n)); // pinned -> host
  EXPECT_EQ(back, host);
  // memsetSync is complete when it returns (the fake's hipMemset is asynchronous and late).
  EXPECT_GPU_OK(P().memsetSync(pinned.p, 0x3C, n));
  EXPECT_EQ(pinned.as<unsigned char>()[0], 0x3C);
  EXPECT_EQ(pinned.as<unsigned char>()[n - 1], 0x3C);
  EXPECT_GPU_OK(P().memsetSync(d1.p, 0x11, n));
  EXPECT_GPU_OK(P().memcpySync(back.data(), d1.p, n));
  EXPECT_EQ(back[n / 2], 0x11);
  // Asynchronous forms, ordered on the stream, with pageable host memory too.
  Stream s;
  std::vector<unsigned char> pageable(n, 0);
  EXPECT_GPU_OK(P().memsetAsync(d2.p, 0x77, n, s));
  EXPECT_GPU_OK(P().memcpyAsync(pageable.data(), d2.p, n, s));
  EXPECT_GPU_OK(P().memcpyAsync(d1.p, host.data(), n, s));
  EXPECT_GPU_OK(P().memcpyAsync(pinned.p, d1.p, n, s));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(pageable[n - 1], 0x77);
  EXPECT_EQ(std::memcmp(pinned.p, host.data(), n), 0);
  // Zero bytes is a no-op, a null pointer an argument error.
  EXPECT_GPU_OK(P().memcpySync(nullptr, nullptr, 0));
  EXPECT_GPU_OK(P().memsetSync(nullptr, 0, 0));
  EXPECT_GPU_OK(P().memcpyAsync(nullptr, nullptr, 0, s));
  EXPECT_GPU_OK(P().memsetAsync(nullptr, 0, 0, s));
  EXPECT_EQ(P().memcpySync(nullptr, host.data(), 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().memsetSync(nullptr, 0, 8), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().memcpyAsync(d1.p, nullptr, 8, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().memsetAsync(nullptr, 0, 8, s), HETCCL_GPU_ERR_ARGUMENT);
}

// A wait really holds later work: a copy queued after streamWaitFlag must not happen before the host
// writes the flag (the test fails if the plugin drops or misplaces the wait).
void checkWaitOrdering(unsigned flags, bool expectNative) {
  NoBadAccess noBadAccess;
  const fakehipStats_t before = F().snapshot();
  Stream s;
  PinnedBuffer flag(64), out(64), written(64);
  DeviceBuffer src(64);
  EXPECT_GPU_OK(P().memsetSync(src.p, 0x42, 64));
  EXPECT_GPU_OK(P().streamWaitFlag(s, flag.as<uint64_t>(), 3, flags));
  EXPECT_GPU_OK(P().memcpyAsync(out.p, src.p, 64, s));
  EXPECT_GPU_OK(P().streamWriteFlag(s, written.as<uint64_t>(), 9, flags));
  *word(flag.p) = 2;  // below the value: still waiting
  std::this_thread::sleep_for(40ms);
  EXPECT_EQ(out.as<unsigned char>()[0], 0) << "work after streamWaitFlag ran before the flag reached its value";
  EXPECT_EQ(*word(written.p), 0u) << "streamWriteFlag fired before the earlier wait was satisfied";
  EXPECT_EQ(P().streamQuery(s), HETCCL_GPU_ERR_NOT_READY);
  *word(flag.p) = 3;
  EXPECT_TRUE(eventually(5000, [&] { return *word(written.p) == 9; })) << "the stream never went on";
  EXPECT_EQ(out.as<unsigned char>()[63], 0x42) << "the flag write became visible before the earlier copy";
  EXPECT_GPU_OK(P().streamSynchronize(s));
  const fakehipStats_t after = F().snapshot();
  if (expectNative) {
    EXPECT_EQ(after.waitValueOps, before.waitValueOps + 1);
    EXPECT_EQ(after.writeValueOps, before.writeValueOps + 1);
  } else {
    EXPECT_EQ(after.waitValueOps, before.waitValueOps) << "FORCE_KERNEL used a stream memory operation";
    EXPECT_GE(after.launches, before.launches + 2);
  }
  // The wait condition is (int64)(*flag - value) >= 0: a larger value also releases it.
  *word(flag.p) = 100;
  EXPECT_GPU_OK(P().streamWaitFlag(s, flag.as<uint64_t>(), 50, flags));
  EXPECT_GPU_OK(P().streamSynchronize(s));
}

TEST(HipPlugin, WaitFlagBlocksLaterWorkNative) {
  int native = -1;
  EXPECT_GPU_OK(P().flagMethod(&native));
  EXPECT_EQ(native, 1);
  EXPECT_EQ(P().flagMethod(nullptr), HETCCL_GPU_ERR_ARGUMENT);
  checkWaitOrdering(0, true);
}

TEST(HipPlugin, WaitFlagBlocksLaterWorkForcedKernel) { checkWaitOrdering(HETCCL_GPU_FLAG_FORCE_KERNEL, false); }

TEST(HipPlugin, FlagArgumentsAreChecked) {
  NoBadAccess noBadAccess;
  Stream s;
  PinnedBuffer flag(64);
  std::vector<uint64_t> pageable(4);
  EXPECT_EQ(P().streamWaitFlag(s, nullptr, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamWriteFlag(s, nullptr, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  auto* misaligned = reinterpret_cast<uint64_t*>(flag.as() + 4);
  EXPECT_EQ(P().streamWaitFlag(s, misaligned, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamWriteFlag(s, misaligned, 1, 0), HETCCL_GPU_ERR_ARGUMENT);
  // Not pinned: the device cannot see it.
  EXPECT_NE(P().streamWriteFlag(s, pageable.data(), 1, 0), HETCCL_GPU_OK);
  EXPECT_GPU_OK(P().streamSynchronize(s));
}

// ---------------------------------------------------------------------------------------------------
// Reductions: every type and operator, against hetccl's host kernels (src/device/host/reduce.hpp).

using hetccl::DataType;
using hetccl::RedOpKind;

std::vector<unsigned char> randomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

/// Float-like types get finite values (random bits could make NaN payloads, equal either way, but the
/// plugin promises bit-identity for finite inputs only).
std::vector<unsigned char> randomElements(DataType t, size_t count, uint32_t seed) {
  const size_t size = hetccl::dataTypeSize(t);
  std::vector<unsigned char> v = randomBytes(count * size, seed);
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (size_t i = 0; i < count; ++i) {
    unsigned char* e = v.data() + i * size;
    switch (t) {
      case DataType::Float32: { float f = dist(rng); std::memcpy(e, &f, 4); break; }
      case DataType::Float64: { double d = dist(rng); std::memcpy(e, &d, 8); break; }
      case DataType::Float16: { uint16_t h = static_cast<uint16_t>(rng() & 0x43ff); std::memcpy(e, &h, 2); break; }   // |x| < 4
      case DataType::Bfloat16: { uint16_t b = static_cast<uint16_t>((rng() & 0x80ff) | 0x3f00); std::memcpy(e, &b, 2); break; }
      case DataType::Float8e4m3: e[0] = static_cast<unsigned char>(rng() & 0xc7); break;  // exponent small
      case DataType::Float8e5m2: e[0] = static_cast<unsigned char>(rng() & 0x87) | 0x30; break;
      default: break;
    }
  }
  return v;
}

struct ReduceCase {
  size_t count;
  size_t offsetElements;  // misaligns the buffers: the scalar (non-vectorized) path
};

TEST(HipPlugin, ReduceEveryTypeAndOperatorMatchesHost) {
  Stream s;
  const size_t maxCount = 3000;
  DeviceBuffer dst(maxCount * 8 + 64), src(maxCount * 8 + 64);
  const ReduceCase cases[] = {{2053, 0}, {17, 1}, {1, 0}};
  const fakehipStats_t before = F().snapshot();
  for (int t = 0; t < hetccl::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    const size_t size = hetccl::dataTypeSize(type);
    for (int op = 0; op <= static_cast<int>(RedOpKind::PreMulSum); ++op) {
      for (const ReduceCase& c : cases) {
        SCOPED_TRACE(std::string(hetccl::dataTypeName(type)) + " op " + std::to_string(op) + " count " +
                     std::to_string(c.count) + " offset " + std::to_string(c.offsetElements));
        const size_t bytes = c.count * size;
        std::vector<unsigned char> a = randomElements(type, c.count, 11 + t * 31 + op);
        std::vector<unsigned char> b = randomElements(type, c.count, 977 + t * 17 + op);
        char* d = dst.as() + c.offsetElements * size;
        char* sp = src.as() + c.offsetElements * size;
        ASSERT_GPU_OK(P().memcpySync(d, a.data(), bytes));
        ASSERT_GPU_OK(P().memcpySync(sp, b.data(), bytes));
        ASSERT_GPU_OK(P().reduce(d, sp, c.count, t, op, s));
        ASSERT_GPU_OK(P().streamSynchronize(s));
        std::vector<unsigned char> got(bytes);
        ASSERT_GPU_OK(P().memcpySync(got.data(), d, bytes));
        const RedOpKind accumulate = op >= static_cast<int>(RedOpKind::Avg) ? RedOpKind::Sum : static_cast<RedOpKind>(op);
        hetccl::device::hostReduceFn(type, accumulate)(a.data(), b.data(), c.count);
        ASSERT_EQ(got, a);
      }
    }
  }
  // In place (dst == src).
  std::vector<unsigned char> a = randomElements(DataType::Int32, 100, 5);
  ASSERT_GPU_OK(P().memcpySync(dst.p, a.data(), 400));
  ASSERT_GPU_OK(P().reduce(dst.p, dst.p, 100, static_cast<int>(DataType::Int32), static_cast<int>(RedOpKind::Sum), s));
  ASSERT_GPU_OK(P().streamSynchronize(s));
  std::vector<unsigned char> got(400);
  ASSERT_GPU_OK(P().memcpySync(got.data(), dst.p, 400));
  hetccl::device::hostReduceFn(DataType::Int32, RedOpKind::Sum)(a.data(), a.data(), 100);
  EXPECT_EQ(got, a);
  const fakehipStats_t after = F().snapshot();
  EXPECT_EQ(after.badAccesses, before.badAccesses) << F().lastBadAccess();
  EXPECT_EQ(after.compiles, 0u) << "gfx90a has a built-in code object: nothing to compile";
}

TEST(HipPlugin, ScaleAndDivideEveryTypeMatchHost) {
  NoBadAccess noBadAccess;
  Stream s;
  const size_t count = 1027;
  DeviceBuffer dst(count * 8 + 64), src(count * 8 + 64);
  for (int t = 0; t < hetccl::kNumDataTypes; ++t) {
    const auto type = static_cast<DataType>(t);
    const size_t size = hetccl::dataTypeSize(type);
    const size_t bytes = count * size;
    SCOPED_TRACE(hetccl::dataTypeName(type));
    std::vector<unsigned char> in = randomElements(type, count, 300 + t);
    std::vector<unsigned char> scalar = randomElements(type, 1, 400 + t);
    std::vector<unsigned char> expect(bytes), got(bytes);
    // scale: dst = src * scalar (out of place, then with dst misaligned by one element).
    for (size_t offset : {size_t{0}, size_t{1}}) {
      char* d = dst.as() + offset * size;
      ASSERT_GPU_OK(P().memcpySync(src.p, in.data(), bytes));
      ASSERT_GPU_OK(P().scale(d, src.p, count, t, scalar.data(), s));
      ASSERT_GPU_OK(P().streamSynchronize(s));
      ASSERT_GPU_OK(P().memcpySync(got.data(), d, bytes));
      hetccl::device::hostScale(expect.data(), in.data(), count, type, scalar.data());
      ASSERT_EQ(got, expect) << "scale, offset " << offset;
    }
    // divide: buf /= n for several n (n = 0 changes nothing).
    for (uint64_t n : {uint64_t{1}, uint64_t{3}, uint64_t{7}, uint64_t{0}}) {
      ASSERT_GPU_OK(P().memcpySync(dst.p, in.data(), bytes));
      ASSERT_GPU_OK(P().divide(dst.p, count, t, n, s));
      ASSERT_GPU_OK(P().streamSynchronize(s));
      ASSERT_GPU_OK(P().memcpySync(got.data(), dst.p, bytes));
      expect = in;
      hetccl::device::hostDivide(expect.data(), count, type, n);
      ASSERT_EQ(got, expect) << "divide by " << n;
    }
  }
}

TEST(HipPlugin, ReductionArgumentsAreChecked) {
  Stream s;
  DeviceBuffer d(64);
  const float one = 1.0f;
  EXPECT_EQ(P().reduce(d.p, d.p, 4, hetccl::kNumDataTypes, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, d.p, 4, -1, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, d.p, 4, 7, 6, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, d.p, 4, 7, -1, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(nullptr, d.p, 4, 7, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().reduce(d.p, nullptr, 4, 7, 0, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().reduce(nullptr, nullptr, 0, 7, 0, s));
  EXPECT_EQ(P().scale(d.p, d.p, 4, 12, &one, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().scale(d.p, d.p, 4, 7, nullptr, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().scale(nullptr, d.p, 4, 7, &one, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().divide(d.p, 4, 12, 2, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().divide(nullptr, 4, 7, 2, s), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().streamSynchronize(s));
}

TEST(HipPlugin, AsynchronousFaultSurfacesAtSynchronize) {
  // A kernel touching memory the device cannot access (plain host memory) fails the stream, as on a GPU:
  // the plugin reports it at the next synchronisation, naming the call.
  Stream s;
  std::vector<float> pageable(64, 1.0f);
  DeviceBuffer d(256);
  const uint64_t badBefore = F().snapshot().badAccesses;
  EXPECT_GPU_OK(P().reduce(d.p, pageable.data(), 64, static_cast<int>(DataType::Float32), 0, s));
  expectRuntimeError(P().streamSynchronize(s), "hipStreamSynchronize", "hipErrorIllegalAddress");
  EXPECT_EQ(F().snapshot().badAccesses, badBefore + 1);
}

// ---------------------------------------------------------------------------------------------------
// streamOps (v2).

hetcclGpuStreamOp_t op(uint32_t kind, uint64_t* w, uint64_t value, uint32_t flags = 0) {
  hetcclGpuStreamOp_t o{};
  o.kind = kind;
  o.flags = flags;
  o.word = w;
  o.value = value;
  return o;
}

void checkStreamOps(uint32_t flags) {
  NoBadAccess noBadAccess;
  Stream s;
  PinnedBuffer words(256), out(64);
  DeviceBuffer src(64);
  EXPECT_GPU_OK(P().memsetSync(src.p, 0x24, 64));
  auto* w = words.as<uint64_t>();
  // WAIT_GEQ then WAIT_EQ then WRITE, in one call; then a copy that must wait for all of it.
  const hetcclGpuStreamOp_t batch[] = {op(HETCCL_GPU_OP_WAIT_GEQ, w + 0, 5, flags),
                                       op(HETCCL_GPU_OP_WAIT_EQ, w + 1, 7, flags),
                                       op(HETCCL_GPU_OP_WRITE, w + 2, 11, flags)};
  ASSERT_GPU_OK(P().streamOps(s, batch, 3));
  ASSERT_GPU_OK(P().memcpyAsync(out.p, src.p, 64, s));
  *word(w, 0) = 6;  // GEQ satisfied
  *word(w, 1) = 8;  // EQ not (8 != 7)
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(*word(w, 2), 0u) << "WRITE ran before WAIT_EQ was satisfied";
  EXPECT_EQ(out.as<unsigned char>()[0], 0);
  *word(w, 1) = 7;
  EXPECT_TRUE(eventually(5000, [&] { return *word(w, 2) == 11; }));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(out.as<unsigned char>()[0], 0x24);
  // STAMP_CHECK: a match leaves the report alone; a mismatch records what was found and expected once.
  uint64_t* stamp = w + 8;
  uint64_t* report = w + 16;
  for (int i = 0; i < 4; ++i) stamp[i] = 100 + i;
  hetcclGpuStreamOp_t check{};
  check.kind = HETCCL_GPU_OP_STAMP_CHECK;
  check.flags = flags;
  check.word = stamp;
  check.report = report;
  for (int i = 0; i < 4; ++i) check.expect[i] = 100 + i;
  ASSERT_GPU_OK(P().streamOps(s, &check, 1));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(report[0], 0u) << "STAMP_CHECK reported a matching stamp";
  check.expect[2] = 999;
  hetcclGpuStreamOp_t checkAgain = check;
  checkAgain.expect[0] = 555;  // a second mismatch must not overwrite the first report
  const hetcclGpuStreamOp_t two[] = {check, checkAgain};
  ASSERT_GPU_OK(P().streamOps(s, two, 2));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(report[0], 1u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(report[1 + i], 100u + i) << "found word " << i;
    EXPECT_EQ(report[5 + i], check.expect[i]) << "expected word " << i;
  }
  // The maximum batch of mixed operations.
  hetcclGpuStreamOp_t eight[HETCCL_GPU_MAX_STREAM_OPS];
  for (unsigned i = 0; i < HETCCL_GPU_MAX_STREAM_OPS; ++i)
    eight[i] = i % 2 ? op(HETCCL_GPU_OP_WAIT_GEQ, w + 24, i, flags) : op(HETCCL_GPU_OP_WRITE, w + 24, i + 1, flags);
  ASSERT_GPU_OK(P().streamOps(s, eight, HETCCL_GPU_MAX_STREAM_OPS));
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(*word(w, 24), 7u);
}

TEST(HipPlugin, StreamOpsEveryKind) {
  const fakehipStats_t before = F().snapshot();
  checkStreamOps(0);
  const fakehipStats_t after = F().snapshot();
  EXPECT_GT(after.waitValueOps, before.waitValueOps) << "waits did not use hipStreamWaitValue64 where supported";
  EXPECT_GT(after.launches, before.launches) << "STAMP_CHECK runs in the kernel";
  EXPECT_EQ(after.badAccesses, before.badAccesses) << F().lastBadAccess();
}

TEST(HipPlugin, StreamOpsOnDeviceMemoryWords) {
  NoBadAccess noBadAccess;
  // Words may be device memory too (gpu_plugin.h): written and waited on by the stream, read back by a copy.
  Stream s;
  DeviceBuffer words(64);
  PinnedBuffer out(64);
  for (uint32_t flags : {0u, HETCCL_GPU_FLAG_FORCE_KERNEL}) {
    EXPECT_GPU_OK(P().memsetSync(words.p, 0, 64));
    auto* w = words.as<uint64_t>();
    const hetcclGpuStreamOp_t ops[] = {op(HETCCL_GPU_OP_WRITE, w, 41, flags), op(HETCCL_GPU_OP_WAIT_EQ, w, 41, flags),
                                       op(HETCCL_GPU_OP_WRITE, w + 1, 42, flags)};
    ASSERT_GPU_OK(P().streamOps(s, ops, 3));
    EXPECT_GPU_OK(P().memcpyAsync(out.p, words.p, 16, s));
    EXPECT_GPU_OK(P().streamSynchronize(s));
    EXPECT_EQ(out.as<uint64_t>()[0], 41u);
    EXPECT_EQ(out.as<uint64_t>()[1], 42u);
  }
}

TEST(HipPlugin, StreamOpsForcedKernel) {
  const fakehipStats_t before = F().snapshot();
  checkStreamOps(HETCCL_GPU_FLAG_FORCE_KERNEL);
  const fakehipStats_t after = F().snapshot();
  EXPECT_EQ(after.waitValueOps, before.waitValueOps);
  EXPECT_EQ(after.writeValueOps, before.writeValueOps);
}

TEST(HipPlugin, StreamOpsArgumentsAreChecked) {
  NoBadAccess noBadAccess;
  Stream s;
  PinnedBuffer words(128);
  auto* w = words.as<uint64_t>();
  hetcclGpuStreamOp_t ok = op(HETCCL_GPU_OP_WRITE, w, 1);
  hetcclGpuStreamOp_t many[HETCCL_GPU_MAX_STREAM_OPS + 1];
  for (auto& m : many) m = ok;
  EXPECT_EQ(P().streamOps(s, nullptr, 1), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamOps(s, &ok, 0), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamOps(s, many, HETCCL_GPU_MAX_STREAM_OPS + 1), HETCCL_GPU_ERR_ARGUMENT);
  hetcclGpuStreamOp_t bad = ok;
  bad.kind = 0;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad.kind = 5;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad = ok;
  bad.word = nullptr;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad.word = reinterpret_cast<uint64_t*>(words.as() + 4);
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  bad = ok;
  bad.kind = HETCCL_GPU_OP_STAMP_CHECK;
  bad.report = nullptr;
  EXPECT_EQ(P().streamOps(s, &bad, 1), HETCCL_GPU_ERR_ARGUMENT);
  const hetcclGpuStreamOp_t mixed[] = {ok, bad};  // nothing of a rejected call is queued
  EXPECT_EQ(P().streamOps(s, mixed, 2), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_GPU_OK(P().streamSynchronize(s));
  EXPECT_EQ(w[0], 0u) << "a rejected streamOps call queued some of its operations";
}

// ---------------------------------------------------------------------------------------------------
TEST(HipPlugin, StreamCaptureInfoAndRelaxedAllocation) {
  NoBadAccess noBadAccess;
  Stream s;
  int capturing = -1;
  uint64_t id = 1;
  EXPECT_GPU_OK(P().streamCaptureInfo(s, &capturing, &id));
  EXPECT_EQ(capturing, 0);
  EXPECT_EQ(id, 0u);
  EXPECT_GPU_OK(P().streamCaptureInfo(nullptr, &capturing, &id));
  EXPECT_EQ(capturing, 0);
  EXPECT_EQ(P().streamCaptureInfo(s, nullptr, &id), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().streamCaptureInfo(s, &capturing, nullptr), HETCCL_GPU_ERR_ARGUMENT);
  ASSERT_EQ(F().setCapturing(s, 1, 4242, 0 /* global mode */), 0);
  EXPECT_GPU_OK(P().streamCaptureInfo(s, &capturing, &id));
  EXPECT_EQ(capturing, 1);
  EXPECT_EQ(id, 4242u);
  // Allocation, free, stream and event creation stay legal during a global-mode capture.
  const uint64_t violations = F().snapshot().relaxedViolations;
  void *d = nullptr, *h = nullptr, *s2 = nullptr, *e = nullptr;
  EXPECT_GPU_OK(P().allocDevice(&d, 64));
  EXPECT_GPU_OK(P().allocPinned(&h, 64));
  EXPECT_GPU_OK(P().streamCreate(&s2));
  EXPECT_GPU_OK(P().eventCreate(&e));
  EXPECT_GPU_OK(P().freeDevice(d));
  EXPECT_GPU_OK(P().freePinned(h));
  EXPECT_GPU_OK(P().streamDestroy(s2));
  EXPECT_GPU_OK(P().eventDestroy(e));
  EXPECT_EQ(F().snapshot().relaxedViolations, violations) << "an allocation ran in the global capture mode";
  ASSERT_EQ(F().setCapturing(s, 0, 0, 0), 0);
  EXPECT_GPU_OK(P().streamCaptureInfo(s, &capturing, &id));
  EXPECT_EQ(capturing, 0);
}

TEST(HipPlugin, DevicePointer) {
  DeviceBuffer d(64);
  PinnedBuffer pinned(64);
  std::vector<char> host(256), registered(4096);
  void* out = nullptr;
  EXPECT_GPU_OK(P().devicePointer(d.p, &out));
  EXPECT_EQ(out, d.p);
  EXPECT_GPU_OK(P().devicePointer(pinned.as() + 8, &out));
  EXPECT_EQ(out, pinned.as() + 8);
  ASSERT_GPU_OK(P().hostRegister(registered.data(), registered.size()));
  EXPECT_GPU_OK(P().devicePointer(registered.data() + 16, &out));
  EXPECT_EQ(out, registered.data() + 16);
  EXPECT_GPU_OK(P().hostUnregister(registered.data()));
  EXPECT_EQ(P().devicePointer(host.data(), &out), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().devicePointer(nullptr, &out), HETCCL_GPU_ERR_ARGUMENT);
  EXPECT_EQ(P().devicePointer(d.p, nullptr), HETCCL_GPU_ERR_ARGUMENT);
}

// ---------------------------------------------------------------------------------------------------
// Runtime failures: each plugin function whose HIP call fails returns ERR_RUNTIME naming the call and the
// error, and the next call works (no sticky leftover).

struct Injection {
  const char* hipFunction;
  int error;  // 0: the fake's usual one
  const char* errorName;
  std::function<int()> call;
};

TEST(HipPlugin, InjectedRuntimeFailuresNameTheCall) {
  Stream s;
  DeviceBuffer d(256), d2(256);
  PinnedBuffer pinned(256);
  void* e = nullptr;
  ASSERT_GPU_OK(P().eventCreate(&e));
  void* tmp = nullptr;
  const std::vector<Injection> cases = {
      {"hipMalloc", 0, "hipErrorOutOfMemory", [&] { return P().allocDevice(&tmp, 64); }},
      {"hipFree", 0, "hipErrorInvalidValue", [&] {
         void* p = nullptr;
         EXPECT_GPU_OK(P().allocDevice(&p, 8));
         const int rc = P().freeDevice(p);
         P().freeDevice(p);
         return rc;
       }},
      {"hipHostMalloc", 0, "hipErrorOutOfMemory", [&] { return P().allocPinned(&tmp, 64); }},
      {"hipHostFree", 0, "hipErrorInvalidValue", [&] {
         void* p = nullptr;
         EXPECT_GPU_OK(P().allocPinned(&p, 8));
         const int rc = P().freePinned(p);
         P().freePinned(p);
         return rc;
       }},
      {"hipHostRegister", 0, "hipErrorOutOfMemory", [&] { static char area[64]; return P().hostRegister(area, 64); }},
      {"hipSetDevice", 0, "hipErrorInvalidDevice", [&] { return P().setDevice(0); }},
      {"hipGetDeviceCount", 999, "hipErrorUnknown", [&] { int c; return P().deviceCount(&c); }},
      {"hipGetDevice", 999, "hipErrorUnknown", [&] { int c; return P().getDevice(&c); }},
      {"hipRuntimeGetVersion", 999, "hipErrorUnknown", [&] { int a, b; return P().versions(&a, &b); }},
      {"hipPointerGetAttributes", 999, "hipErrorUnknown", [&] { int a, b; return P().pointerQuery(d.p, &a, &b); }},
      {"hipStreamCreateWithFlags", 0, "hipErrorOutOfMemory", [&] { return P().streamCreate(&tmp); }},
      {"hipStreamSynchronize", 0, "hipErrorLaunchFailure", [&] { return P().streamSynchronize(s); }},
      {"hipStreamQuery", 0, "hipErrorLaunchFailure", [&] { return P().streamQuery(s); }},
      {"hipEventCreateWithFlags", 0, "hipErrorOutOfMemory", [&] { return P().eventCreate(&tmp); }},
      {"hipEventRecord", 0, "hipErrorInvalidHandle", [&] { return P().eventRecord(e, s); }},
      {"hipEventQuery", 0, "hipErrorInvalidHandle", [&] { return P().eventQuery(e); }},
      {"hipEventSynchronize", 0, "hipErrorInvalidHandle", [&] { return P().eventSynchronize(e); }},
      {"hipStreamWaitEvent", 0, "hipErrorInvalidHandle", [&] { return P().streamWaitEvent(s, e); }},
      {"hipMemcpyAsync", 0, "hipErrorInvalidValue", [&] { return P().memcpyAsync(d.p, d2.p, 64, s); }},
      {"hipMemsetAsync", 0, "hipErrorInvalidValue", [&] { return P().memsetAsync(d.p, 0, 64, s); }},
      {"hipMemcpy", 0, "hipErrorInvalidValue", [&] { return P().memcpySync(d.p, d2.p, 64); }},
      {"hipMemset", 0, "hipErrorInvalidValue", [&] { return P().memsetSync(d.p, 0, 64); }},
      {"hipStreamWaitValue64", 0, "hipErrorInvalidValue",
       [&] { return P().streamWaitFlag(s, pinned.as<uint64_t>(), 0, 0); }},
      {"hipStreamWriteValue64", 0, "hipErrorInvalidValue",
       [&] { return P().streamWriteFlag(s, pinned.as<uint64_t>(), 0, 0); }},
      {"hipModuleLaunchKernel", 0, "hipErrorLaunchFailure", [&] { return P().reduce(d.p, d2.p, 8, 7, 0, s); }},
      {"hipModuleLaunchKernel", 0, "hipErrorLaunchFailure",
       [&] { return P().streamWriteFlag(s, pinned.as<uint64_t>(), 0, HETCCL_GPU_FLAG_FORCE_KERNEL); }},
      {"hipStreamGetCaptureInfo", 0, "hipErrorInvalidHandle", [&] {
         int c;
         uint64_t id;
         return P().streamCaptureInfo(s, &c, &id);
       }},
      {"hipHostGetDevicePointer", 0, "hipErrorInvalidValue",
       [&] { return P().streamWriteFlag(s, pinned.as<uint64_t>(), 0, 0); }},
  };
  for (const Injection& c : cases) {
    SCOPED_TRACE(c.hipFunction);
    F().failCall(c.hipFunction, 1, c.error);
    expectRuntimeError(c.call(), c.hipFunction, c.errorName);
    F().failCall(nullptr, 0, 0);
    EXPECT_GPU_OK(P().streamSynchronize(s));  // nothing sticky
  }
  EXPECT_GPU_OK(P().eventDestroy(e));
}

// Many threads on their own streams at once (the plugin is thread-safe).
TEST(HipPlugin, ConcurrentThreads) {
  NoBadAccess noBadAccess;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      if (P().setDevice(t % 2) != HETCCL_GPU_OK) failures++;
      void *s = nullptr, *a = nullptr, *b = nullptr, *flag = nullptr;
      if (P().streamCreate(&s) || P().allocDevice(&a, 4096) || P().allocDevice(&b, 4096) || P().allocPinned(&flag, 64)) {
        failures++;
        return;
      }
      std::vector<int32_t> x(1024, t), y(1024, 1);
      for (int i = 0; i < 20; ++i) {
        if (P().memcpyAsync(a, x.data(), 4096, s) || P().memcpyAsync(b, y.data(), 4096, s) ||
            P().reduce(a, b, 1024, static_cast<int>(DataType::Int32), 0, s) ||
            P().streamWriteFlag(s, static_cast<uint64_t*>(flag), i + 1, i % 2 ? HETCCL_GPU_FLAG_FORCE_KERNEL : 0) ||
            P().memcpyAsync(x.data(), a, 4096, s) || P().streamSynchronize(s))
          failures++;
        if (x[1023] != t + i + 1 || *static_cast<uint64_t*>(flag) != static_cast<uint64_t>(i + 1)) failures++;
        x.assign(1024, x[0]);
      }
      P().freeDevice(a);
      P().freeDevice(b);
      P().freePinned(flag);
      P().streamDestroy(s);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace hip_test

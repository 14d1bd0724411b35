// GPU memory services: pointer queries, synchronous and asynchronous copies in every direction with
// pinned, registered (a shared mapping, as a shm segment is) and pageable host memory, fills, and the
// registration of the runtime in the process registry.
#include <sys/mman.h>

#include <cerrno>

#include <numeric>
#include <vector>

#include "gpu_fixture.hpp"

namespace hetccl::device::test {
namespace {

std::vector<unsigned char> pattern(size_t bytes, unsigned seed) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>((i * 131 + seed) ^ (i >> 8));
  return v;
}

/// An anonymous shared mapping registered with the runtime for its lifetime.
class RegisteredMapping {
 public:
  RegisteredMapping(GpuRuntime& rt, size_t bytes) : rt_(rt), bytes_(bytes) {
    ptr_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ptr_ == MAP_FAILED) throw SystemError::fromErrno("mmap", errno);
    rt_.registerHost(ptr_, bytes);
  }
  ~RegisteredMapping() {
    rt_.unregisterHost(ptr_);
    munmap(ptr_, bytes_);
  }
  unsigned char* bytes() const { return static_cast<unsigned char*>(ptr_); }

 private:
  GpuRuntime& rt_;
  size_t bytes_;
  void* ptr_ = nullptr;
};

class GpuMemoryTest : public GpuTest {};

TEST_F(GpuMemoryTest, PointerQueryTellsDevicePinnedAndPlainHost) {
  GpuBuffer device(*rt_, 4096, GpuBuffer::Where::Device), pinned(*rt_, 4096, GpuBuffer::Where::Pinned);
  RegisteredMapping registered(*rt_, 1 << 16);
  std::vector<char> plain(4096);

  EXPECT_EQ(rt_->query(device.get()).memType, HETCCL_GPU_MEM_DEVICE);
  EXPECT_EQ(rt_->query(device.get()).device, rt_->currentDevice());
  EXPECT_EQ(rt_->query(pinned.get()).memType, HETCCL_GPU_MEM_PINNED);
  EXPECT_EQ(rt_->query(registered.bytes() + 100).memType, HETCCL_GPU_MEM_PINNED);
  EXPECT_EQ(rt_->query(plain.data()).memType, HETCCL_GPU_MEM_HOST);

  EXPECT_TRUE(rt_->owns(device.get()));
  EXPECT_FALSE(rt_->owns(pinned.get()));
  EXPECT_FALSE(rt_->owns(plain.data()));
  EXPECT_TRUE(rt_->owns(device.bytes() + 10));
  EXPECT_EQ(rt_->kind(), MemoryKind::Cuda);
  EXPECT_EQ(cudaRuntime(), rt_);
  EXPECT_GE(rt_->deviceCount(), 1);
}

TEST_F(GpuMemoryTest, AsyncCopiesInEveryDirectionKeepTheBytes) {
  const size_t bytes = (4 << 20) + 13;  // not a multiple of anything convenient
  const std::vector<unsigned char> source = pattern(bytes, 1);
  GpuBuffer pinnedIn(*rt_, bytes, GpuBuffer::Where::Pinned), pinnedOut(*rt_, bytes, GpuBuffer::Where::Pinned);
  GpuBuffer deviceA(*rt_, bytes, GpuBuffer::Where::Device), deviceB(*rt_, bytes, GpuBuffer::Where::Device);
  RegisteredMapping registered(*rt_, bytes + 4096);
  std::vector<unsigned char> pageable(bytes);
  std::memcpy(pinnedIn.get(), source.data(), bytes);

  rt_->copyAsync(deviceA.get(), pinnedIn.get(), bytes, stream_);      // H2D, pinned
  rt_->copyAsync(deviceB.get(), deviceA.get(), bytes, stream_);       // D2D
  rt_->copyAsync(registered.bytes(), deviceB.get(), bytes, stream_);  // D2H, registered
  rt_->copyAsync(pinnedOut.get(), registered.bytes(), bytes, stream_);  // H2H through the runtime
  rt_->synchronize(stream_);
  EXPECT_EQ(std::memcmp(registered.bytes(), source.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(pinnedOut.get(), source.data(), bytes), 0);

  rt_->fillAsync(deviceA.get(), 0xab, bytes, stream_);
  rt_->copyAsync(deviceA.bytes() + 7, registered.bytes(), 1000, stream_);  // H2D from registered, unaligned
  rt_->copyAsync(pageable.data(), deviceA.get(), bytes, stream_);          // D2H, pageable
  rt_->synchronize(stream_);
  for (size_t i = 0; i < bytes; ++i) {
    const unsigned char want = (i >= 7 && i < 1007) ? source[i - 7] : 0xab;
    ASSERT_EQ(pageable[i], want) << "byte " << i;
  }
}

TEST_F(GpuMemoryTest, SynchronousCopyAndFillAreCompleteOnReturn) {
  const size_t bytes = 1 << 20;
  const std::vector<unsigned char> source = pattern(bytes, 2);
  void* a = rt_->alloc(bytes);
  void* b = rt_->alloc(bytes);
  std::vector<unsigned char> out(bytes);
  rt_->copy(a, source.data(), bytes);
  rt_->copy(b, a, bytes);
  rt_->copy(out.data(), b, bytes);
  EXPECT_EQ(out, source);
  rt_->fill(b, 0x5c, bytes);
  rt_->copy(out.data(), b, bytes);
  EXPECT_EQ(out, std::vector<unsigned char>(bytes, 0x5c));
  rt_->free(a);
  rt_->free(b);
}

TEST_F(GpuMemoryTest, FailuresThrowWithTheCallNamed) {
  EXPECT_THROW(rt_->alloc(0), InvalidArgument);
  try {
    rt_->alloc(size_t{1} << 62);  // far beyond any device
    FAIL() << "a 4 EiB allocation succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace hetccl::device::test

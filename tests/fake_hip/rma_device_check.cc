// rma_device_check: RMA (hetccl_rma.h) on device memory of HIP ranks, run by hip_ranks.sh on the fake HIP
// runtime. Every rank registers a region of device memory (hipMalloc of the runtime the HIP plugin uses,
// found as libamdhip64.so.7), descriptors travel by an all-gather; then each rank puts a pattern of its own
// into the next rank's region in many pieces (a batch of ranges and single puts) and notifies it; the
// receiver, at the moment the notification arrives, copies its region to the host and checks every byte;
// then 2000 puts of random ranges (a second pattern, from a registration inside a larger allocation, some
// overlapping) and a notification, the receiver again
// checking every byte the moment it arrives; then each rank gets the previous rank's region back with one
// batched get into its own device memory and checks it. RMA_EXPECT_IPC=1 / 0: the ranks must (must not)
// copy each other's device registrations through IPC mappings (the fake's count of open mappings while the
// job runs; 0 after the communicator is gone either way). Prints "rma_device_check: rank R: OK ..." and
// exits 0, or names the first wrong byte.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fake_hip.h"

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"
#include "hetccl/hetccl_rma.h"

namespace {

using HipMalloc = int (*)(void**, size_t);
using HipFree = int (*)(void*);
using HipMemcpy = int (*)(void*, const void*, size_t, int);
constexpr int kHipMemcpyDefault = 4;

int rank_ = -1;

int fail(const char* what) {
  std::printf("rma_device_check: rank %d: FAIL: %s: %s\n", rank_, what, hetcclGetLastError(nullptr));
  return 1;
}

unsigned char pattern(int writer, size_t i) { return static_cast<unsigned char>(writer * 37 + i * 13 + (i >> 9)); }
unsigned char pattern2(int writer, size_t i) { return static_cast<unsigned char>(writer * 101 + i * 7 + (i >> 11) + 5); }

/// The random ranges rank `writer` puts in the second round (its receiver draws the same ones).
std::vector<hetcclRmaRange_t> randomRanges(int writer, size_t bytes) {
  std::mt19937_64 rng(0x5eed0000u + static_cast<unsigned>(writer));
  std::vector<hetcclRmaRange_t> out;
  for (int i = 0; i < 2000; ++i) {
    const size_t len = 1 + rng() % (rng() % 4 == 0 ? 70000 : 700);
    const size_t off = rng() % (bytes - len);
    out.push_back({off, off, len});
  }
  return out;
}

fakehipStats_t stats(void* hip) {
  auto get = reinterpret_cast<void (*)(fakehipStats_t*)>(dlsym(hip, "fakehipStats"));
  fakehipStats_t s{};
  if (get) get(&s);
  return s;
}
uint64_t liveIpcMappings(void* hip) { return stats(hip).liveIpcMappings; }

}  // namespace

int main() {
  auto env = hetccl::tools::readLaunchEnv();
  rank_ = env.rank;
  void* hip = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_GLOBAL);
  if (!hip) return fail("dlopen libamdhip64.so.7");
  auto hipMalloc = reinterpret_cast<HipMalloc>(dlsym(hip, "hipMalloc"));
  auto hipFree = reinterpret_cast<HipFree>(dlsym(hip, "hipFree"));
  auto hipMemcpy = reinterpret_cast<HipMemcpy>(dlsym(hip, "hipMemcpy"));
  if (!hipMalloc || !hipFree || !hipMemcpy) return fail("HIP functions");

  hetcclComm_t comm;
  if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess) return fail("init");
  if (hetcclRmaInit(comm) != hetcclSuccess) return fail("hetcclRmaInit");
  const size_t bytes = (3u << 20) + 4097;  // several pieces, not a multiple of anything
  void *region = nullptr, *back = nullptr;
  if (hipMalloc(&region, bytes) != 0 || hipMalloc(&back, bytes) != 0) return fail("hipMalloc");
  std::vector<unsigned char> mine(bytes), host(bytes);
  for (size_t i = 0; i < bytes; ++i) mine[i] = pattern(env.rank, i);
  if (hipMemcpy(back, mine.data(), bytes, kHipMemcpyDefault) != 0) return fail("hipMemcpy to the source");

  hetcclMem_t regionMem, sourceMem;
  if (hetcclMemRegister(comm, region, bytes, &regionMem) != hetcclSuccess) return fail("register the region");
  if (hetcclMemRegister(comm, back, bytes, &sourceMem) != hetcclSuccess) return fail("register the source");
  hetcclMemKind_t kind;
  size_t size = 0;
  if (hetcclMemQuery(regionMem, &kind, &size) != hetcclSuccess || kind != hetcclMemHip || size != bytes)
    return fail("hetcclMemQuery does not say HIP memory");
  std::vector<hetcclMemDesc_t> descs(env.size);
  if (hetcclMemExport(regionMem, &descs[env.rank]) != hetcclSuccess) return fail("export");
  if (hetcclAllGather(&descs[env.rank], descs.data(), HETCCL_MEM_DESC_BYTES, hetcclUint8, comm, nullptr) !=
      hetcclSuccess)
    return fail("all-gather of descriptors");
  const int next = (env.rank + 1) % env.size, prev = (env.rank + env.size - 1) % env.size;
  hetcclRemoteMem_t toNext, fromPrev;
  if (hetcclMemImport(comm, &descs[next], &toNext) != hetcclSuccess) return fail("import next");
  if (hetcclMemImport(comm, &descs[prev], &fromPrev) != hetcclSuccess) return fail("import prev");

  // Puts: the first half as a batch of 257 ranges in reverse order, the rest as single puts of 64 KiB.
  std::vector<hetcclRmaRange_t> ranges;
  const size_t half = bytes / 2, block = half / 257;
  for (size_t b = 257; b-- > 0;) {
    const size_t off = b * block, len = b == 256 ? half - off : block;
    ranges.push_back({off, off, len});
  }
  std::vector<hetcclRequest_t> reqs(1);
  if (hetcclPutBatch(sourceMem, toNext, ranges.data(), ranges.size(), &reqs[0]) != hetcclSuccess)
    return fail("put batch");
  for (size_t off = half; off < bytes; off += 65536) {
    hetcclRequest_t r;
    if (hetcclPut(sourceMem, off, toNext, off, std::min<size_t>(65536, bytes - off), &r) != hetcclSuccess)
      return fail("put");
    reqs.push_back(r);
  }
  if (hetcclNotify(comm, next, 7) != hetcclSuccess) return fail("notify");  // before waiting for any put
  if (hetcclNotifyWait(comm, prev, 7, -1) != hetcclSuccess) return fail("notify wait");
  if (hipMemcpy(host.data(), region, bytes, kHipMemcpyDefault) != 0) return fail("hipMemcpy of the region");
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != pattern(prev, i)) {
      std::printf("rma_device_check: rank %d: FAIL: byte %zu of the region is %u, rank %d put %u (notification "
                  "arrived before the data)\n", env.rank, i, host[i], prev, pattern(prev, i));
      return 1;
    }
  for (hetcclRequest_t r : reqs)
    if (hetcclRequestWait(r) != hetcclSuccess || hetcclRequestFree(r) != hetcclSuccess) return fail("put request");

  // Round 2: 2000 puts of random ranges from a second source (single puts; a later one wins where they
  // overlap: puts to one peer apply in order), one notification, every byte checked when it arrives.
  // The second source starts 12288 bytes into its allocation (as a tensor of a caching allocator does): an
  // IPC handle names the allocation, so the offset must travel with it.
  void* block2 = nullptr;
  if (hipMalloc(&block2, bytes + 16384) != 0) return fail("hipMalloc");
  void* source2 = static_cast<unsigned char*>(block2) + 12288;
  for (size_t i = 0; i < bytes; ++i) mine[i] = pattern2(env.rank, i);
  if (hipMemcpy(source2, mine.data(), bytes, kHipMemcpyDefault) != 0) return fail("hipMemcpy to the second source");
  hetcclMem_t source2Mem;
  if (hetcclMemRegister(comm, source2, bytes, &source2Mem) != hetcclSuccess) return fail("register the second source");
  std::vector<hetcclRequest_t> reqs2;
  for (const hetcclRmaRange_t& r : randomRanges(env.rank, bytes)) {
    hetcclRequest_t q;
    if (hetcclPut(source2Mem, r.localOffset, toNext, r.remoteOffset, r.bytes, &q) != hetcclSuccess) return fail("random put");
    reqs2.push_back(q);
  }
  if (hetcclNotify(comm, next, 8) != hetcclSuccess) return fail("notify 2");
  if (hetcclNotifyWait(comm, prev, 8, -1) != hetcclSuccess) return fail("notify wait 2");
  if (hipMemcpy(host.data(), region, bytes, kHipMemcpyDefault) != 0) return fail("hipMemcpy of the region");
  {
    std::vector<unsigned char> expect(bytes);
    for (size_t i = 0; i < bytes; ++i) expect[i] = pattern(prev, i);
    for (const hetcclRmaRange_t& r : randomRanges(prev, bytes))
      for (size_t i = r.remoteOffset; i < r.remoteOffset + r.bytes; ++i) expect[i] = pattern2(prev, i);
    for (size_t i = 0; i < bytes; ++i)
      if (host[i] != expect[i]) {
        std::printf("rma_device_check: rank %d: FAIL: after 2000 random puts, byte %zu of the region is %u, expected "
                    "%u (wrong data, or the notification arrived before it)\n", env.rank, i, host[i], expect[i]);
        return 1;
      }
  }
  for (hetcclRequest_t r : reqs2)
    if (hetcclRequestWait(r) != hetcclSuccess || hetcclRequestFree(r) != hetcclSuccess) return fail("random put request");
  const uint64_t mapped = liveIpcMappings(hip);
  if (const char* e = std::getenv("RMA_EXPECT_IPC"); e && (*e == '1') != (mapped > 0)) {
    std::printf("rma_device_check: rank %d: FAIL: %llu IPC mappings open, RMA_EXPECT_IPC=%s\n", env.rank,
                static_cast<unsigned long long>(mapped), e);
    return 1;
  }
  // Put the first pattern back where the random puts went, for the get below.
  for (size_t i = 0; i < bytes; ++i) mine[i] = pattern(prev, i);
  if (hipMemcpy(region, mine.data(), bytes, kHipMemcpyDefault) != 0) return fail("hipMemcpy to the region");

  // Get the previous rank's region (now holding the pattern of the rank before it) into `back`.
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("barrier");  // every region complete
  std::vector<hetcclRmaRange_t> getRanges;
  for (size_t off = 0; off < bytes; off += 300000) getRanges.push_back({off, off, std::min<size_t>(300000, bytes - off)});
  hetcclRequest_t get;
  if (hetcclGetBatch(sourceMem, fromPrev, getRanges.data(), getRanges.size(), &get) != hetcclSuccess ||
      hetcclRequestWait(get) != hetcclSuccess || hetcclRequestFree(get) != hetcclSuccess)
    return fail("get batch");
  if (hipMemcpy(host.data(), back, bytes, kHipMemcpyDefault) != 0) return fail("hipMemcpy of the get");
  const int writerOfPrev = (prev + env.size - 1) % env.size;
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != pattern(writerOfPrev, i)) {
      std::printf("rma_device_check: rank %d: FAIL: byte %zu got back is %u, expected %u\n", env.rank, i, host[i],
                  pattern(writerOfPrev, i));
      return 1;
    }
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("final barrier");
  hetcclRemoteMemRelease(toNext);
  hetcclRemoteMemRelease(fromPrev);
  // Deregistration returns once every peer that mapped the allocation closed its mapping: freeing it
  // right away is safe (the fake counts a free under another process's mapping).
  if (hetcclMemDeregister(source2Mem) != hetcclSuccess) return fail("deregister the second source");
  hipFree(block2);
  if (hetcclMemDeregister(regionMem) != hetcclSuccess || hetcclMemDeregister(sourceMem) != hetcclSuccess)
    return fail("deregister");
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("barrier after deregistration");
  if (const uint64_t left = liveIpcMappings(hip); left != 0) {
    std::printf("rma_device_check: rank %d: FAIL: %llu IPC mappings still open after every rank deregistered "
                "everything\n", env.rank, static_cast<unsigned long long>(left));
    return 1;
  }
  hetcclCommDestroy(comm);
  if (const uint64_t left = liveIpcMappings(hip); left != 0) {
    std::printf("rma_device_check: rank %d: FAIL: %llu IPC mappings still open after hetcclCommDestroy\n", env.rank,
                static_cast<unsigned long long>(left));
    return 1;
  }
  hipFree(region);
  hipFree(back);
  if (const uint64_t bad = stats(hip).freedWhileMapped; bad != 0) {
    std::printf("rma_device_check: rank %d: FAIL: %llu allocation(s) freed while another rank still mapped them\n",
                env.rank, static_cast<unsigned long long>(bad));
    return 1;
  }
  std::printf("rma_device_check: rank %d: OK: %zu bytes of HIP device memory put (%zu ranges + %zu puts, then 2000 "
              "random puts) and got back, every byte checked when the notification arrived; %llu IPC mapping(s) "
              "were open\n", env.rank, bytes, ranges.size(), reqs.size() - 1, static_cast<unsigned long long>(mapped));
  return 0;
}

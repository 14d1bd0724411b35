// rma_device_check: RMA (hetccl_rma.h) on device memory of HIP ranks, run by hip_ranks.sh on the fake HIP
// runtime. Every rank registers a region of device memory (hipMalloc of the runtime the HIP plugin uses,
// found as libamdhip64.so.7), descriptors travel by an all-gather; then each rank puts a pattern of its own
// into the next rank's region in many pieces (a batch of ranges and single puts) and notifies it; the
// receiver, at the moment the notification arrives, copies its region to the host and checks every byte;
// then each rank gets the previous rank's region back with one batched get into its own device memory and
// checks it. Prints "rma_device_check: rank R: OK ..." and exits 0, or names the first wrong byte.
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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
  hetcclMemDeregister(regionMem);
  hetcclMemDeregister(sourceMem);
  hetcclCommDestroy(comm);
  hipFree(region);
  hipFree(back);
  std::printf("rma_device_check: rank %d: OK: %zu bytes of HIP device memory put (%zu ranges + %zu puts) and got "
              "back, every byte checked when the notification arrived\n", env.rank, bytes, ranges.size(),
              reqs.size() - 1);
  return 0;
}

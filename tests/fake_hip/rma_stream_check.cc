// rma_stream_check MODE: stream-ordered RMA (hetcclPutOnStream / hetcclGetOnStream / hetcclNotifyOnStream,
// hetccl_rma.h) between HIP ranks on the fake HIP runtime (streams are threads, flag waits really block).
// Run by rma_stream.sh under hetccl-run. Prints "rma_stream_check: rank R: OK ..." and exits 0, or FAIL.
//
// order (>= 2 ranks, a ring: every rank puts to the next and gets from the previous one)
//   Stream S of every rank: [wait for a host gate] [copy the pattern into src] [PutOnStream src -> next]
//   [NotifyOnStream next] [copy garbage over src] [GetOnStream back <- prev's pub] [copy back -> host].
//   Checks: (1) while the gate is closed (300 ms) the target's region is untouched: the put did not start
//   before its stream reached it; (2) when the stream notification arrives, the region holds the pattern:
//   the put read src after the copy before it and before the garbage copy after it (later work waited
//   for the put), and the notification came after the data; (3) after a stream synchronisation the host
//   copy queued after the get holds prev's pub bytes (later work saw the get complete); (4) while the put
//   is pending, deregistering src is hetcclInvalidUsage; a capturing stream is refused (hetcclInvalidUsage)
//   ; the communicator's asynchronous error stays hetcclSuccess. Then times stream puts (sync each) against
//   hetcclPut + hetcclRequestWait.
// batch (>= 2 ranks, the same ring): hetcclPutBatchOnStream / hetcclGetBatchOnStream of scattered blocks
//   (block i -> block perm(i) for every even i; back block i <- prev's pub block perm(i) for i % 3 == 0).
//   Checks: nothing moves while the stream is held at its gate; when the stream notification arrives every
//   put block is at its place and every other block of the region untouched; after a stream
//   synchronisation every got block is in place and the others untouched; a batch with one bad range is
//   hetcclInvalidArgument naming it and holds nothing; n == 0 queues nothing.
// kill (2 ranks): rank 1 SIGKILLs itself while rank 0 loops over 16 MiB stream puts to it (each followed
//   by a stream synchronisation): rank 0's synchronisation must return (within 20 s of the death), the
//   asynchronous error must be hetcclRemoteError naming "rank 1 (host", and a next PutOnStream fails at once.
//   rma_stream.sh expects hetccl-run to exit 137.
// abort (2 ranks): rank 1 SIGSTOPs itself; rank 0's stream put to it cannot complete (stream held for
//   500 ms, checked); a second stream holds a put behind a closed gate. hetcclCommAbort on rank 0 must
//   release the first stream, and the second one once its gate opens. Rank 0 then SIGCONTs rank 1.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/launch_env.hpp"
#include "hetccl/hetccl.h"
#include "hetccl/hetccl_rma.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kHipMemcpyDefault = 4, kHipErrorNotReady = 600, kWaitGte = 0;

struct Hip {
  int (*malloc)(void**, size_t);
  int (*free)(void*);
  int (*memcpy)(void*, const void*, size_t, int);
  int (*memcpyAsync)(void*, const void*, size_t, int, void*);
  int (*hostMalloc)(void**, size_t, unsigned);
  int (*hostFree)(void*);
  int (*streamCreate)(void**);
  int (*streamDestroy)(void*);
  int (*streamSynchronize)(void*);
  int (*streamQuery)(void*);
  int (*waitValue64)(void*, void*, uint64_t, unsigned, uint64_t);
  int (*setCapturing)(void*, int, unsigned long long, int);  // fakehipSetCapturing
} hip;

int rank_ = -1;

int fail(const char* what) {
  std::printf("rma_stream_check: rank %d: FAIL: %s: %s\n", rank_, what, hetcclGetLastError(nullptr));
  std::fflush(stdout);
  return 1;
}

template <typename F>
bool load(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

bool loadHip() {
  void* lib = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_GLOBAL);
  return lib && load(lib, "hipMalloc", hip.malloc) && load(lib, "hipFree", hip.free) &&
         load(lib, "hipMemcpy", hip.memcpy) && load(lib, "hipMemcpyAsync", hip.memcpyAsync) &&
         load(lib, "hipHostMalloc", hip.hostMalloc) && load(lib, "hipHostFree", hip.hostFree) &&
         load(lib, "hipStreamCreate", hip.streamCreate) && load(lib, "hipStreamDestroy", hip.streamDestroy) &&
         load(lib, "hipStreamSynchronize", hip.streamSynchronize) && load(lib, "hipStreamQuery", hip.streamQuery) &&
         load(lib, "hipStreamWaitValue64", hip.waitValue64) && load(lib, "fakehipSetCapturing", hip.setCapturing);
}

unsigned char pattern(int writer, size_t i) { return static_cast<unsigned char>(writer * 41 + i * 7 + (i >> 11) + 1); }
unsigned char pubPattern(int owner, size_t i) { return static_cast<unsigned char>(owner * 29 + i * 3 + (i >> 13) + 5); }

/// The communicator's asynchronous error message (read on a fresh thread: the calling thread's last error
/// would hide it).
std::string asyncMessage(hetcclComm_t comm) {
  std::string m;
  std::thread([&] { m = hetcclGetLastError(comm); }).join();
  return m;
}

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/// A registered device buffer.
struct DevBuf {
  void* ptr = nullptr;
  hetcclMem_t mem = nullptr;
};

bool devBuf(hetcclComm_t comm, size_t bytes, DevBuf& b) {
  return hip.malloc(&b.ptr, bytes) == 0 && hetcclMemRegister(comm, b.ptr, bytes, &b.mem) == hetcclSuccess;
}

bool exchange(hetcclComm_t comm, hetcclMem_t mem, int size, std::vector<hetcclMemDesc_t>& descs) {
  descs.resize(size);
  return hetcclMemExport(mem, &descs[rank_]) == hetcclSuccess &&
         hetcclAllGather(&descs[rank_], descs.data(), HETCCL_MEM_DESC_BYTES, hetcclUint8, comm, nullptr) == hetcclSuccess;
}

/// What the ring modes share: this rank's device buffers src (what it puts), region (what prev puts into),
/// pub (what next gets) and back (what it gets from prev), registered; pinned host buffers with the
/// pattern, garbage and a zeroed copy-out area; a gate word (0: closed); next's region and prev's pub,
/// imported. region starts as 0x5a bytes, back as zeros, pub as pubPattern(rank).
struct Ring {
  int next = 0, prev = 0;
  size_t bytes = 0;
  DevBuf src, region, pub, back;
  void *patternHost = nullptr, *garbageHost = nullptr, *outHost = nullptr, *gateMem = nullptr;
  uint64_t* gate = nullptr;
  hetcclRemoteMem_t toNext = nullptr, pubOfPrev = nullptr;
};

/// Sets `r` up; returns nullptr, or what failed.
const char* setUpRing(hetcclComm_t comm, int size, size_t bytes, Ring& r) {
  r.bytes = bytes;
  r.next = (rank_ + 1) % size;
  r.prev = (rank_ + size - 1) % size;
  if (!devBuf(comm, bytes, r.src) || !devBuf(comm, bytes, r.region) || !devBuf(comm, bytes, r.pub) ||
      !devBuf(comm, bytes, r.back))
    return "device buffers";
  std::vector<unsigned char> host(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = pubPattern(rank_, i);
  if (hip.memcpy(r.pub.ptr, host.data(), bytes, kHipMemcpyDefault) != 0) return "fill pub";
  std::memset(host.data(), 0x5a, bytes);
  if (hip.memcpy(r.region.ptr, host.data(), bytes, kHipMemcpyDefault) != 0) return "fill region";
  std::memset(host.data(), 0, bytes);
  if (hip.memcpy(r.back.ptr, host.data(), bytes, kHipMemcpyDefault) != 0) return "clear back";
  if (hip.hostMalloc(&r.patternHost, bytes, 0) || hip.hostMalloc(&r.garbageHost, bytes, 0) ||
      hip.hostMalloc(&r.outHost, bytes, 0) || hip.hostMalloc(&r.gateMem, 64, 0))
    return "pinned host buffers";
  for (size_t i = 0; i < bytes; ++i) static_cast<unsigned char*>(r.patternHost)[i] = pattern(rank_, i);
  std::memset(r.garbageHost, 0xA7, bytes);
  std::memset(r.outHost, 0, bytes);
  r.gate = static_cast<uint64_t*>(r.gateMem);
  __atomic_store_n(r.gate, 0, __ATOMIC_RELEASE);
  std::vector<hetcclMemDesc_t> regionDescs, pubDescs;
  if (!exchange(comm, r.region.mem, size, regionDescs) || !exchange(comm, r.pub.mem, size, pubDescs)) return "descriptors";
  if (hetcclMemImport(comm, &regionDescs[r.next], &r.toNext) != hetcclSuccess ||
      hetcclMemImport(comm, &pubDescs[r.prev], &r.pubOfPrev) != hetcclSuccess)
    return "import";
  return nullptr;
}

/// Destroys `stream`, releases and deregisters everything of `r`, destroys `comm`; 0, or fail()'s 1.
int tearDownRing(hetcclComm_t comm, Ring& r, void* stream) {
  hip.streamDestroy(stream);
  hetcclRemoteMemRelease(r.toNext);
  hetcclRemoteMemRelease(r.pubOfPrev);
  for (DevBuf* b : {&r.src, &r.region, &r.pub, &r.back})
    if (hetcclMemDeregister(b->mem) != hetcclSuccess) return fail("deregister");
  if (hetcclCommDestroy(comm) != hetcclSuccess) return fail("destroy");
  for (DevBuf* b : {&r.src, &r.region, &r.pub, &r.back}) hip.free(b->ptr);
  for (void* p : {r.patternHost, r.garbageHost, r.outHost, r.gateMem}) hip.hostFree(p);
  return 0;
}

int runOrder(hetcclComm_t comm, int size) {
  const size_t bytes = (6u << 20) + 333;  // several pieces, staged through pinned memory on both sides
  Ring ring;
  if (const char* what = setUpRing(comm, size, bytes, ring)) return fail(what);
  auto& [next, prev, unusedBytes, src, region, pub, back, patternHost, garbageHost, outHost, gateMem, gate, toNext,
         pubOfPrev] = ring;
  std::vector<unsigned char> host(bytes);

  void* s = nullptr;
  if (hip.streamCreate(&s) != 0) return fail("hipStreamCreate");
  // Refused while the stream is captured (nothing queued).
  if (hip.setCapturing(s, 1, 77, 0) != 0) return fail("fakehipSetCapturing");
  const hetcclResult_t captured = hetcclPutOnStream(src.mem, 0, toNext, 0, bytes, s);
  const std::string capturedMsg = hetcclGetLastError(nullptr);
  hip.setCapturing(s, 0, 0, 0);
  if (captured != hetcclInvalidUsage || capturedMsg.find("graph") == std::string::npos)
    return fail(("PutOnStream on a capturing stream gave " + std::to_string(captured) + ": " + capturedMsg).c_str());

  // The stream: gate, produce src, put, notify, overwrite src, get, copy out.
  if (hip.waitValue64(s, gate, 1, kWaitGte, ~0ull) != 0) return fail("hipStreamWaitValue64 (gate)");
  if (hip.memcpyAsync(src.ptr, patternHost, bytes, kHipMemcpyDefault, s) != 0) return fail("produce src");
  if (hetcclPutOnStream(src.mem, 0, toNext, 0, bytes, s) != hetcclSuccess) return fail("hetcclPutOnStream");
  if (hetcclNotifyOnStream(comm, next, 11, s) != hetcclSuccess) return fail("hetcclNotifyOnStream");
  if (hip.memcpyAsync(src.ptr, garbageHost, bytes, kHipMemcpyDefault, s) != 0) return fail("overwrite src");
  if (hetcclGetOnStream(back.mem, 0, pubOfPrev, 0, bytes, s) != hetcclSuccess) return fail("hetcclGetOnStream");
  if (hip.memcpyAsync(outHost, back.ptr, bytes, kHipMemcpyDefault, s) != 0) return fail("copy back out");

  if (hetcclMemDeregister(src.mem) != hetcclInvalidUsage) return fail("deregistering src with a stream put pending");
  // (1) Nothing may have started: the stream waits at the gate.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (hip.memcpy(host.data(), region.ptr, bytes, kHipMemcpyDefault) != 0) return fail("read region");
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != 0x5a) {
      std::printf("rma_stream_check: rank %d: FAIL: byte %zu of the region changed to %u while rank %d's stream was "
                  "still held at the gate (a stream put started before its stream reached it)\n", rank_, i, host[i], prev);
      return 1;
    }
  int note = 0;
  uint64_t tag = 0;
  int received = 0;
  if (hetcclNotifyPoll(comm, &note, &tag, &received) != hetcclSuccess || received)
    return fail("a stream notification arrived before its stream reached it");
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("barrier");  // every rank checked (1)

  const auto opened = Clock::now();
  __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
  // (2) The notification queued after the put on prev's stream: the data is in place.
  if (hetcclNotifyWait(comm, prev, 11, -1) != hetcclSuccess) return fail("hetcclNotifyWait");
  const double notifiedMs = msSince(opened);
  if (hip.memcpy(host.data(), region.ptr, bytes, kHipMemcpyDefault) != 0) return fail("read region");
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != pattern(prev, i)) {
      std::printf("rma_stream_check: rank %d: FAIL: byte %zu of the region is %u, rank %d put %u (%s)\n", rank_, i,
                  host[i], prev, pattern(prev, i),
                  host[i] == 0xA7 ? "the garbage queued after the put: later stream work did not wait for the put"
                  : host[i] == 0x5a ? "unchanged: the stream notification overtook the data"
                                    : "the put read src before the copy queued ahead of it");
      return 1;
    }
  // (3) The copy queued after the get saw its data.
  if (hip.streamSynchronize(s) != 0) return fail("hipStreamSynchronize");
  const double streamMs = msSince(opened);
  for (size_t i = 0; i < bytes; ++i)
    if (static_cast<unsigned char*>(outHost)[i] != pubPattern(prev, i)) {
      std::printf("rma_stream_check: rank %d: FAIL: byte %zu copied out after the stream get is %u, expected %u "
                  "(later stream work did not wait for the get)\n", rank_, i, static_cast<unsigned char*>(outHost)[i],
                  pubPattern(prev, i));
      return 1;
    }
  hetcclResult_t async = hetcclSuccess;
  if (hetcclCommGetAsyncError(comm, &async) != hetcclSuccess || async != hetcclSuccess)
    return fail(("asynchronous error " + std::to_string(async) + ": " + asyncMessage(comm)).c_str());

  // Timing: a 64 KiB put then a stream synchronisation, against hetcclPut + hetcclRequestWait.
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("barrier");
  const int iters = 200;
  const size_t small = 64 << 10;
  auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i)
    if (hetcclPutOnStream(src.mem, 0, toNext, 0, small, s) != hetcclSuccess || hip.streamSynchronize(s) != 0)
      return fail("timed stream put");
  const double streamUs = msSince(t0) * 1000 / iters;
  t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    hetcclRequest_t r;
    if (hetcclPut(src.mem, 0, toNext, 0, small, &r) != hetcclSuccess || hetcclRequestWait(r) != hetcclSuccess ||
        hetcclRequestFree(r) != hetcclSuccess)
      return fail("timed put");
  }
  const double hostUs = msSince(t0) * 1000 / iters;
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("final barrier");
  if (hetcclCommGetAsyncError(comm, &async) != hetcclSuccess || async != hetcclSuccess)
    return fail("asynchronous error after the timed loop");
  if (tearDownRing(comm, ring, s) != 0) return 1;
  std::printf("rma_stream_check: rank %d: OK: order: %zu bytes put and got on a stream: nothing moved while the stream "
              "was held, the notification came %.1f ms after the gate opened with every byte in place, the stream "
              "finished after %.1f ms with the got bytes; 64 KiB put + sync: stream %.0f us, host put + wait %.0f us\n",
              rank_, bytes, notifiedMs, streamMs, streamUs, hostUs);
  return 0;
}

int runBatch(hetcclComm_t comm, int size) {
  constexpr size_t kBlock = (48u << 10) + 8, kBlocks = 128, bytes = kBlock * kBlocks;
  auto perm = [](size_t i) { return (i * 37 + 11) % kBlocks; };  // 37 is coprime with 128: a permutation
  Ring ring;
  if (const char* what = setUpRing(comm, size, bytes, ring)) return fail(what);
  auto& [next, prev, unusedBytes, src, region, pub, back, patternHost, garbageHost, outHost, gateMem, gate, toNext,
         pubOfPrev] = ring;
  std::vector<unsigned char> host(bytes);
  std::vector<hetcclRmaRange_t> puts, gets;
  for (size_t i = 0; i < kBlocks; ++i) {
    if (i % 2 == 0) puts.push_back({i * kBlock, perm(i) * kBlock, kBlock});
    if (i % 3 == 0) gets.push_back({i * kBlock, perm(i) * kBlock, kBlock});
  }

  void* s = nullptr;
  if (hip.streamCreate(&s) != 0) return fail("hipStreamCreate");
  // Refused without queuing anything: one bad range (the whole call), and n == 0 queues nothing.
  std::vector<hetcclRmaRange_t> bad = puts;
  bad[5].remoteOffset = bytes - 1;
  if (hetcclPutBatchOnStream(src.mem, toNext, bad.data(), bad.size(), s) != hetcclInvalidArgument ||
      std::string(hetcclGetLastError(nullptr)).find("range 5") == std::string::npos)
    return fail("a stream batch with a bad range 5 was not refused naming it");
  if (hetcclGetBatchOnStream(back.mem, pubOfPrev, nullptr, 3, s) != hetcclInvalidArgument) return fail("ranges NULL accepted");
  if (hetcclPutBatchOnStream(src.mem, toNext, puts.data(), 0, s) != hetcclSuccess) return fail("n == 0");

  if (hip.waitValue64(s, gate, 1, kWaitGte, ~0ull) != 0) return fail("hipStreamWaitValue64 (gate)");
  if (hip.memcpyAsync(src.ptr, patternHost, bytes, kHipMemcpyDefault, s) != 0) return fail("produce src");
  if (hetcclPutBatchOnStream(src.mem, toNext, puts.data(), puts.size(), s) != hetcclSuccess)
    return fail("hetcclPutBatchOnStream");
  if (hetcclNotifyOnStream(comm, next, 21, s) != hetcclSuccess) return fail("hetcclNotifyOnStream");
  if (hip.memcpyAsync(src.ptr, garbageHost, bytes, kHipMemcpyDefault, s) != 0) return fail("overwrite src");
  if (hetcclGetBatchOnStream(back.mem, pubOfPrev, gets.data(), gets.size(), s) != hetcclSuccess)
    return fail("hetcclGetBatchOnStream");
  if (hip.memcpyAsync(outHost, back.ptr, bytes, kHipMemcpyDefault, s) != 0) return fail("copy back out");
  if (hetcclMemDeregister(src.mem) != hetcclInvalidUsage) return fail("deregistering src with a stream batch pending");

  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (hip.memcpy(host.data(), region.ptr, bytes, kHipMemcpyDefault) != 0) return fail("read region");
  for (size_t i = 0; i < bytes; ++i)
    if (host[i] != 0x5a) return fail("the region changed while the putting stream was held at its gate");
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("barrier");
  __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
  if (hetcclNotifyWait(comm, prev, 21, -1) != hetcclSuccess) return fail("hetcclNotifyWait");
  if (hip.memcpy(host.data(), region.ptr, bytes, kHipMemcpyDefault) != 0) return fail("read region");
  std::vector<int> from(kBlocks, -1);  // the source block of each region block, -1: none
  for (size_t i = 0; i < kBlocks; i += 2) from[perm(i)] = static_cast<int>(i);
  for (size_t b = 0; b < kBlocks; ++b)
    for (size_t j = 0; j < kBlock; ++j) {
      const unsigned char want = from[b] < 0 ? 0x5a : pattern(prev, from[b] * kBlock + j);
      if (host[b * kBlock + j] != want) {
        std::printf("rma_stream_check: rank %d: FAIL: region block %zu byte %zu is %u, expected %u (%s)\n", rank_, b, j,
                    host[b * kBlock + j], want,
                    from[b] < 0 ? "no range targets this block" : "block of a put range, checked when the notification came");
        return 1;
      }
    }
  if (hip.streamSynchronize(s) != 0) return fail("hipStreamSynchronize");
  const auto* out = static_cast<const unsigned char*>(outHost);
  for (size_t b = 0; b < kBlocks; ++b)
    for (size_t j = 0; j < kBlock; ++j) {
      const unsigned char want = b % 3 ? 0 : pubPattern(prev, perm(b) * kBlock + j);
      if (out[b * kBlock + j] != want) {
        std::printf("rma_stream_check: rank %d: FAIL: got block %zu byte %zu is %u, expected %u (copied out after the "
                    "stream batch get)\n", rank_, b, j, out[b * kBlock + j], want);
        return 1;
      }
    }
  hetcclResult_t async = hetcclSuccess;
  if (hetcclCommGetAsyncError(comm, &async) != hetcclSuccess || async != hetcclSuccess)
    return fail(("asynchronous error " + std::to_string(async) + ": " + asyncMessage(comm)).c_str());
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("final barrier");
  if (tearDownRing(comm, ring, s) != 0) return 1;
  std::printf("rma_stream_check: rank %d: OK: batch: %zu put and %zu get ranges of %zu bytes on a stream, every block "
              "in place and no other byte touched\n", rank_, puts.size(), gets.size(), kBlock);
  return 0;
}

int runKill(hetcclComm_t comm, int size) {
  const int victim = 1;
  const size_t bytes = 16u << 20;
  DevBuf buf;
  if (!devBuf(comm, bytes, buf)) return fail("device buffer");
  std::vector<hetcclMemDesc_t> descs;
  if (!exchange(comm, buf.mem, size, descs)) return fail("descriptors");
  if (rank_ == victim) {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // rank 0's stream puts are flowing
    ::kill(::getpid(), SIGKILL);
  }
  if (rank_ != 0) {  // bystanders
    hetcclCommAbort(comm);
    std::printf("rma_stream_check: rank %d: OK: bystander\n", rank_);
    return 0;
  }
  hetcclRemoteMem_t remote;
  if (hetcclMemImport(comm, &descs[victim], &remote) != hetcclSuccess) return fail("import");
  void* s = nullptr;
  if (hip.streamCreate(&s) != 0) return fail("hipStreamCreate");
  const std::string needle = "rank " + std::to_string(victim) + " (host ";
  for (int iter = 0; iter < 100000; ++iter) {
    const hetcclResult_t r = hetcclPutOnStream(buf.mem, 0, remote, 0, bytes, s);
    if (r != hetcclSuccess) return fail("PutOnStream before any asynchronous error");
    const auto t = Clock::now();
    if (hip.streamSynchronize(s) != 0) return fail("hipStreamSynchronize");
    const double syncMs = msSince(t);
    hetcclResult_t async = hetcclSuccess;
    if (hetcclCommGetAsyncError(comm, &async) != hetcclSuccess) return fail("hetcclCommGetAsyncError");
    if (async == hetcclSuccess) continue;
    const std::string msg = asyncMessage(comm);
    const hetcclResult_t again = hetcclPutOnStream(buf.mem, 0, remote, 0, bytes, s);
    const std::string againMsg = hetcclGetLastError(nullptr);
    const bool ok = async == hetcclRemoteError && msg.find(needle) != std::string::npos &&
                    msg.find("stream-ordered put") != std::string::npos && syncMs < 20000 && again == hetcclRemoteError &&
                    againMsg.find(needle) != std::string::npos;
    std::printf("rma_stream_check: rank %d: %s: kill: after %d stream puts the stream was released %.0f ms into its "
                "synchronisation; asynchronous error %d: %s; next PutOnStream: %d: %s\n", rank_, ok ? "OK" : "FAIL",
                iter, syncMs, async, msg.c_str(), again, againMsg.c_str());
    std::fflush(stdout);
    hetcclCommAbort(comm);
    return ok ? 0 : 1;
  }
  std::printf("rma_stream_check: rank %d: FAIL: kill: no asynchronous error\n", rank_);
  return 1;
}

int runAbort(hetcclComm_t comm, int size) {
  const int victim = 1;
  const size_t bytes = 32u << 20;  // more than the transports buffer: the put cannot complete
  DevBuf buf;
  if (!devBuf(comm, bytes, buf)) return fail("device buffer");
  std::vector<hetcclMemDesc_t> descs;
  if (!exchange(comm, buf.mem, size, descs)) return fail("descriptors");
  std::vector<int> pids(size);
  pids[rank_] = static_cast<int>(::getpid());
  if (hetcclAllGather(&pids[rank_], pids.data(), 1, hetcclInt32, comm, nullptr) != hetcclSuccess) return fail("pids");
  if (hetcclBarrier(comm, nullptr) != hetcclSuccess) return fail("barrier");
  if (rank_ == victim) {
    ::kill(::getpid(), SIGSTOP);  // rank 0 SIGCONTs it after its abort
    hetcclCommAbort(comm);
    std::printf("rma_stream_check: rank %d: OK: stopped and continued\n", rank_);
    return 0;
  }
  if (rank_ != 0) {
    hetcclCommAbort(comm);
    std::printf("rma_stream_check: rank %d: OK: bystander\n", rank_);
    return 0;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the victim has stopped
  hetcclRemoteMem_t remote;
  if (hetcclMemImport(comm, &descs[victim], &remote) != hetcclSuccess) return fail("import");
  void *s1 = nullptr, *s2 = nullptr, *gateMem = nullptr;
  if (hip.streamCreate(&s1) != 0 || hip.streamCreate(&s2) != 0 || hip.hostMalloc(&gateMem, 64, 0) != 0)
    return fail("streams");
  auto* gate = static_cast<uint64_t*>(gateMem);
  __atomic_store_n(gate, 0, __ATOMIC_RELEASE);
  if (hetcclPutOnStream(buf.mem, 0, remote, 0, bytes, s1) != hetcclSuccess) return fail("PutOnStream (in flight)");
  if (hip.waitValue64(s2, gate, 1, kWaitGte, ~0ull) != 0) return fail("gate");
  if (hetcclPutOnStream(buf.mem, 0, remote, 0, bytes, s2) != hetcclSuccess) return fail("PutOnStream (behind a gate)");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  if (hip.streamQuery(s1) != kHipErrorNotReady) {
    ::kill(pids[victim], SIGCONT);
    return fail("the stream of a put to a stopped rank was not held");
  }
  // The gate opens 300 ms into the abort (whose teardown frees device memory, which synchronises the whole
  // device, s2 included, as real runtimes do).
  const auto t = Clock::now();
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    __atomic_store_n(gate, 1, __ATOMIC_RELEASE);
  });
  std::atomic<double> ms1{-1};
  std::thread watch1([&] {  // s1 must be released by the abort itself, before the gate opens
    if (hip.streamSynchronize(s1) == 0) ms1 = msSince(t);
  });
  const hetcclResult_t aborted = hetcclCommAbort(comm);
  const double abortMs = msSince(t);
  watch1.join();
  opener.join();
  const bool released2 = hip.streamSynchronize(s2) == 0;
  const double ms2 = msSince(t);
  ::kill(pids[victim], SIGCONT);
  if (aborted != hetcclSuccess) return fail("hetcclCommAbort");
  const bool released1 = ms1 >= 0 && ms1 < 2000;  // by the abort itself (the gate does not hold s1)
  const bool ok = released1 && released2 && ms2 < 5000;
  std::printf("rma_stream_check: rank %d: %s: abort: the stream of the put in flight was released %.1f ms after "
              "hetcclCommAbort began (it returned after %.0f ms), the one behind a gate (opened at 300 ms) after "
              "%.0f ms\n", rank_, ok ? "OK" : "FAIL", ms1.load(), abortMs, ms2);
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "order";
  auto env = hetccl::tools::readLaunchEnv();
  rank_ = env.rank;
  if (!loadHip()) return fail("the fake HIP runtime's functions (libamdhip64.so.7)");
  if (env.size < 2) return fail("needs at least 2 ranks");
  hetcclComm_t comm;
  if (hetcclCommInitRank(&comm, env.size, env.id, env.rank) != hetcclSuccess) return fail("init");
  if (hetcclRmaInit(comm) != hetcclSuccess) return fail("hetcclRmaInit");
  if (mode == "order") return runOrder(comm, env.size);
  if (mode == "batch") return runBatch(comm, env.size);
  if (mode == "kill") return runKill(comm, env.size);
  if (mode == "abort") return runAbort(comm, env.size);
  std::printf("usage: rma_stream_check order|batch|kill|abort\n");
  return 2;
}

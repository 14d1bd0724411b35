// agent_device_check: agents (hetccl_agent.h) on HIP device memory, on the fake HIP runtime -- the device
// paths of src/agent: chunks pipelined through the shared-memory windows by the copy engine (events per
// chunk; HETCCL_RMA_WINDOW_SLOTS/BYTES made small so that every transfer wraps the window many times) and,
// with HETCCL_AGENT_WINDOW=off, device memory staged through pinned memory over tcp (with AGENT_CHECK_PATH=ucx,
// the processes on two "hosts", over UCX: device ranges staged, host ones in place); with AGENT_CHECK_PATH=ipc
// (HETCCL_AGENT_IPC=auto), device-to-device copies by the target through the runtime's IPC handles.
// A forked "prefill" process registers two device regions (a source with a pattern, a destination) and
// hands its blob to the parent "decode" through a pipe. Decode, whose local memory is a device region
// and a host region, reads about 160 ranges of random sizes (1 B to 460 KiB) tiling the source (alternately into the two local regions) with
// a notification; then writes another pattern from both local regions into prefill's destination with a
// notification, at whose arrival prefill copies its destination to the host and checks every byte.
// Decode checks every byte it read. The path is checked through the fake runtime's own counters: prefill
// opened decode's IPC handles exactly on the ipc path; on it decode's second local region is device memory
// too (every range is then copied by the target) and, after the write, decode deregisters its device
// regions and frees them: prefill must have closed every mapping by then (its liveIpcMappings is 0 at the
// "freed" notification, and decode's runtime saw no block freed while mapped).
// Prints "agent_device_check: OK ..." and exits 0, or names the first wrong byte. Every wait has a deadline
// (alarm: 120 s).
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fake_hip.h"
#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"

namespace {

using HipMalloc = int (*)(void**, size_t);
using HipMemcpy = int (*)(void*, const void*, size_t, int);
using HipFree = int (*)(void*);
constexpr int kHipMemcpyDefault = 4;
constexpr size_t kRegionBytes = (3u << 20) + 4097;
const char kSecret[] = "agent device check secret 012345";
const char* role = "decode";
bool ipcPath() {
  const char* p = std::getenv("AGENT_CHECK_PATH");
  return p && std::strcmp(p, "ipc") == 0;
}

int fail(const char* what) {
  std::printf("agent_device_check: %s: FAIL: %s: %s\n", role, what, hetcclGetLastError(nullptr));
  std::fflush(stdout);
  return 1;
}

unsigned char pattern(size_t i) { return static_cast<unsigned char>(i * 13 + (i >> 9) + 1); }
unsigned char pattern2(size_t i) { return static_cast<unsigned char>(i * 7 + (i >> 11) + 5); }

struct Hip {
  HipMalloc malloc = nullptr;
  HipMemcpy memcpy = nullptr;
  HipFree free = nullptr;
  decltype(&fakehipStats) stats = nullptr;
  decltype(&fakehipCallCount) callCount = nullptr;
  bool load() {
    void* h = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return false;
    malloc = reinterpret_cast<HipMalloc>(dlsym(h, "hipMalloc"));
    memcpy = reinterpret_cast<HipMemcpy>(dlsym(h, "hipMemcpy"));
    free = reinterpret_cast<HipFree>(dlsym(h, "hipFree"));
    stats = reinterpret_cast<decltype(stats)>(dlsym(h, "fakehipStats"));
    callCount = reinterpret_cast<decltype(callCount)>(dlsym(h, "fakehipCallCount"));
    return malloc && memcpy && free && stats && callCount;
  }
  fakehipStats_t counters() const {
    fakehipStats_t s{};
    stats(&s);
    return s;
  }
};

hetcclAgent_t makeAgent(const char* name) {
  hetcclAgentOptions_t o;
  hetcclAgentOptionsInit(&o);
  o.secret = kSecret;
  o.secretBytes = sizeof kSecret - 1;
  o.listenAddress = "127.0.0.1:0";
  o.device = 0;
  o.timeoutSeconds = 60;
  hetcclAgent_t a = nullptr;
  return hetcclAgentCreate(name, &o, &a) == hetcclSuccess ? a : nullptr;
}

/// Waits (at most 60 s) for one notification; true when its message is `want`.
bool awaitNotif(hetcclAgent_t a, const char* want) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char from[HETCCL_AGENT_NAME_MAX + 1], msg[64];
  size_t n = 0;
  int got = 0;
  while (std::chrono::steady_clock::now() < end) {
    if (hetcclAgentGetNotif(a, from, msg, sizeof msg, &n, &got) != hetcclSuccess) return false;
    if (got) return n == std::strlen(want) && std::memcmp(msg, want, n) == 0;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

int prefill(int blobFd) {
  role = "prefill";
  Hip hip;
  if (!hip.load()) return fail("dlopen libamdhip64.so.7");
  void *source = nullptr, *dest = nullptr;
  if (hip.malloc(&source, kRegionBytes) || hip.malloc(&dest, kRegionBytes)) return fail("hipMalloc");
  std::vector<unsigned char> host(kRegionBytes);
  for (size_t i = 0; i < kRegionBytes; ++i) host[i] = pattern(i);
  if (hip.memcpy(source, host.data(), kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy");
  hetcclAgent_t a = makeAgent("prefill");
  if (!a) return fail("create");
  hetcclAgentMem_t m1, m2;
  uint32_t id1, id2;
  int kind = -1;
  if (hetcclAgentRegister(a, source, kRegionBytes, &m1, &id1) || hetcclAgentRegister(a, dest, kRegionBytes, &m2, &id2))
    return fail("register");
  if (hetcclAgentMemQuery(m1, &id1, &kind, nullptr) || kind != 2) return fail("the source is not HIP memory");
  size_t n = 4096;
  std::vector<unsigned char> blob(n);
  if (hetcclAgentGetMetadata(a, blob.data(), &n)) return fail("metadata");
  const uint32_t ids[2] = {id1, id2};
  const uint64_t len = n;
  if (write(blobFd, ids, sizeof ids) != sizeof ids || write(blobFd, &len, sizeof len) != sizeof len ||
      write(blobFd, blob.data(), n) != static_cast<ssize_t>(n))
    return fail("pipe");
  if (!awaitNotif(a, "read")) return fail("the read's notification");
  // The path taken, as the runtime saw it: the target opens the initiator's handles only on the ipc path.
  const uint64_t opened = hip.callCount("hipIpcOpenMemHandle");
  if (ipcPath() != (opened > 0)) {
    std::printf("agent_device_check: prefill: FAIL: %llu IPC handles opened on the %s path\n",
                static_cast<unsigned long long>(opened), ipcPath() ? "ipc" : "window/tcp");
    return 1;
  }
  if (!awaitNotif(a, "written")) return fail("the write's notification");
  // The write's data must be in place the moment its notification is seen.
  if (hip.memcpy(host.data(), dest, kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy back");
  for (size_t i = 0; i < kRegionBytes; ++i)
    if (host[i] != pattern2(i)) {
      std::printf("agent_device_check: prefill: FAIL: byte %zu of the written region is %u, expected %u\n", i, host[i],
                  pattern2(i));
      return 1;
    }
  if (ipcPath()) {
    // Decode deregistered and freed its device memory before this notification: every mapping of it is closed.
    if (!awaitNotif(a, "freed")) return fail("the notification that decode freed its memory");
    if (const uint64_t left = hip.counters().liveIpcMappings; left != 0) {
      std::printf("agent_device_check: prefill: FAIL: %llu mapping(s) of decode's memory still open after it deregistered it\n",
                  static_cast<unsigned long long>(left));
      return 1;
    }
  }
  hetcclAgentDestroy(a);
  std::printf("agent_device_check: prefill: OK (%zu written bytes checked at the notification%s)\n", kRegionBytes,
              ipcPath() ? "; copied by the target through IPC, every mapping closed at deregistration" : "");
  return 0;
}

int decode(int blobFd) {
  Hip hip;
  if (!hip.load()) return fail("dlopen libamdhip64.so.7");
  uint32_t ids[2];
  uint64_t len = 0;
  if (read(blobFd, ids, sizeof ids) != sizeof ids || read(blobFd, &len, sizeof len) != sizeof len || len > 4096)
    return fail("pipe");
  std::vector<unsigned char> blob(len);
  if (read(blobFd, blob.data(), len) != static_cast<ssize_t>(len)) return fail("pipe");
  void *dev = nullptr, *dev2 = nullptr;
  if (hip.malloc(&dev, kRegionBytes)) return fail("hipMalloc");
  // The second local region: host memory, or on the ipc path another device allocation (so that the target
  // copies every range, from two allocations).
  std::vector<unsigned char> host(kRegionBytes, 0);
  if (ipcPath() && hip.malloc(&dev2, kRegionBytes)) return fail("hipMalloc");
  hetcclAgent_t a = makeAgent("decode");
  if (!a) return fail("create");
  hetcclAgentMem_t md, mh;
  uint32_t idDev, idHost;
  if (hetcclAgentRegister(a, dev, kRegionBytes, &md, &idDev) ||
      hetcclAgentRegister(a, dev2 ? dev2 : host.data(), kRegionBytes, &mh, &idHost))
    return fail("register");
  char peer[HETCCL_AGENT_NAME_MAX + 1];
  if (hetcclAgentLoadRemote(a, blob.data(), blob.size(), peer)) return fail("load");

  // Ranges tiling the source in random sizes (about 160), alternately into the device and the host region at the
  // same offsets (so each local byte is written once).
  std::mt19937_64 rng(20261129);
  std::vector<hetcclAgentRange_t> ranges;
  for (size_t at = 0; at < kRegionBytes;) {
    // Mostly short; about one in 24 of 64 KiB or more (long ranges move in place or in pieces of their own).
    const uint64_t kind = rng() % 24;
    const size_t n = std::min<size_t>(kRegionBytes - at, kind == 0 ? 65536 + rng() % 400000 : 1 + rng() % (kind < 4 ? 60000 : 1500));
    ranges.push_back({ranges.size() % 2 ? idHost : idDev, ids[0], at, at, n});
    at += n;
  }
  hetcclAgentXfer_t x;
  if (hetcclAgentPrepXfer(a, hetcclAgentRead, peer, ranges.data(), ranges.size(), "read", 4, &x) || hetcclAgentPostXfer(x) ||
      hetcclAgentWaitXfer(x))
    return fail("read");
  std::vector<unsigned char> fromDev(kRegionBytes);
  if (hip.memcpy(fromDev.data(), dev, kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy back");
  if (dev2 && hip.memcpy(host.data(), dev2, kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy back");
  for (size_t r = 0; r < ranges.size(); ++r) {
    const auto& g = ranges[r];
    const unsigned char* got = (g.localRegion == idDev ? fromDev.data() : host.data()) + g.localOffset;
    for (size_t k = 0; k < g.bytes; ++k)
      if (got[k] != pattern(g.remoteOffset + k)) {
        std::printf("agent_device_check: decode: FAIL: range %zu byte %zu read %u, expected %u\n", r, k, got[k],
                    pattern(g.remoteOffset + k));
        return 1;
      }
  }
  // The write: the second pattern, from both local regions, into prefill's destination.
  for (size_t i = 0; i < kRegionBytes; ++i) fromDev[i] = pattern2(i);
  if (hip.memcpy(dev, fromDev.data(), kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy");
  std::memcpy(host.data(), fromDev.data(), kRegionBytes);
  if (dev2 && hip.memcpy(dev2, fromDev.data(), kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy");
  for (auto& g : ranges) g.remoteRegion = ids[1];
  hetcclAgentXfer_t w;
  if (hetcclAgentPrepXfer(a, hetcclAgentWrite, peer, ranges.data(), ranges.size(), "written", 7, &w) ||
      hetcclAgentPostXfer(w) || hetcclAgentWaitXfer(w))
    return fail("write");
  hetcclAgentReleaseXfer(x);
  hetcclAgentReleaseXfer(w);
  if (dev2) {
    // Deregistration closes the target's mappings: the memory may be freed as soon as it returns.
    if (hetcclAgentDeregister(md) || hetcclAgentDeregister(mh)) return fail("deregister");
    if (hip.free(dev) || hip.free(dev2)) return fail("hipFree");
    if (const uint64_t n = hip.counters().freedWhileMapped; n != 0) {
      std::printf("agent_device_check: decode: FAIL: %llu block(s) freed while prefill still mapped them\n",
                  static_cast<unsigned long long>(n));
      return 1;
    }
    if (hetcclAgentGenNotif(a, peer, "freed", 5)) return fail("notification");
  }
  std::printf("agent_device_check: decode: OK (%zu ranges read into device and %s memory, every byte checked)\n",
              ranges.size(), dev2 ? "device" : "host");
  std::fflush(stdout);
  int status = 0;
  const int rc = wait(&status) > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
  hetcclAgentDestroy(a);
  return rc;
}

}  // namespace

int main() {
  alarm(120);
  int p[2];
  if (pipe(p)) return 2;
  // AGENT_CHECK_PATH=ucx: the two processes on "hosts" of their own (their payload then crosses UCX).
  const char* path = std::getenv("AGENT_CHECK_PATH");
  const bool hosts = path && std::strcmp(path, "ucx") == 0;
  const pid_t child = fork();  // before any HIP call: each process loads the runtime itself
  if (child == 0) {
    close(p[0]);
    if (hosts) setenv("HETCCL_HOST_ID", "agent-check-prefill", 1);
    return prefill(p[1]);
  }
  close(p[1]);
  if (hosts) setenv("HETCCL_HOST_ID", "agent-check-decode", 1);
  return decode(p[0]);
}

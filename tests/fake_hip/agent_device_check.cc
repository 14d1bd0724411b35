// agent_device_check: agents (hetccl_agent.h) on HIP device memory, on the fake HIP runtime -- the device
// paths of src/agent: chunks pipelined through the shared-memory windows by the copy engine (events per
// chunk; HETCCL_RMA_WINDOW_SLOTS/BYTES made small so that every transfer wraps the window many times) and,
// with HETCCL_AGENT_WINDOW=off, device memory staged through pinned memory over tcp.
// A forked "prefill" process registers two device regions (a source with a pattern, a destination) and
// hands its blob to the parent "decode" through a pipe. Decode, whose local memory is a device region
// and a host region, reads about 670 ranges of random sizes tiling the source (alternately into the two local regions) with
// a notification; then writes another pattern from both local regions into prefill's destination with a
// notification, at whose arrival prefill copies its destination to the host and checks every byte.
// Decode checks every byte it read. Prints "agent_device_check: OK ..." and exits 0, or names the first
// wrong byte. Every wait has a deadline (alarm: 120 s).
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

#include "hetccl/hetccl.h"
#include "hetccl/hetccl_agent.h"

namespace {

using HipMalloc = int (*)(void**, size_t);
using HipMemcpy = int (*)(void*, const void*, size_t, int);
constexpr int kHipMemcpyDefault = 4;
constexpr size_t kRegionBytes = (3u << 20) + 4097;
const char kSecret[] = "agent device check secret 012345";
const char* role = "decode";

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
  bool load() {
    void* h = dlopen("libamdhip64.so.7", RTLD_NOW | RTLD_GLOBAL);
    if (!h) return false;
    malloc = reinterpret_cast<HipMalloc>(dlsym(h, "hipMalloc"));
    memcpy = reinterpret_cast<HipMemcpy>(dlsym(h, "hipMemcpy"));
    return malloc && memcpy;
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
  if (!awaitNotif(a, "written")) return fail("the write's notification");
  // The write's data must be in place the moment its notification is seen.
  if (hip.memcpy(host.data(), dest, kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy back");
  for (size_t i = 0; i < kRegionBytes; ++i)
    if (host[i] != pattern2(i)) {
      std::printf("agent_device_check: prefill: FAIL: byte %zu of the written region is %u, expected %u\n", i, host[i],
                  pattern2(i));
      return 1;
    }
  hetcclAgentDestroy(a);
  std::printf("agent_device_check: prefill: OK (%zu written bytes checked at the notification)\n", kRegionBytes);
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
  void* dev = nullptr;
  if (hip.malloc(&dev, kRegionBytes)) return fail("hipMalloc");
  std::vector<unsigned char> host(kRegionBytes, 0);
  hetcclAgent_t a = makeAgent("decode");
  if (!a) return fail("create");
  hetcclAgentMem_t md, mh;
  uint32_t idDev, idHost;
  if (hetcclAgentRegister(a, dev, kRegionBytes, &md, &idDev) || hetcclAgentRegister(a, host.data(), kRegionBytes, &mh, &idHost))
    return fail("register");
  char peer[HETCCL_AGENT_NAME_MAX + 1];
  if (hetcclAgentLoadRemote(a, blob.data(), blob.size(), peer)) return fail("load");

  // Ranges tiling the source in random sizes (about 670), alternately into the device and the host region at the
  // same offsets (so each local byte is written once).
  std::mt19937_64 rng(20261129);
  std::vector<hetcclAgentRange_t> ranges;
  for (size_t at = 0; at < kRegionBytes;) {
    const size_t n = std::min<size_t>(kRegionBytes - at, 1 + rng() % (rng() % 8 == 0 ? 60000 : 1500));
    ranges.push_back({ranges.size() % 2 ? idHost : idDev, ids[0], at, at, n});
    at += n;
  }
  hetcclAgentXfer_t x;
  if (hetcclAgentPrepXfer(a, hetcclAgentRead, peer, ranges.data(), ranges.size(), "read", 4, &x) || hetcclAgentPostXfer(x) ||
      hetcclAgentWaitXfer(x))
    return fail("read");
  std::vector<unsigned char> fromDev(kRegionBytes);
  if (hip.memcpy(fromDev.data(), dev, kRegionBytes, kHipMemcpyDefault)) return fail("hipMemcpy back");
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
  for (auto& g : ranges) g.remoteRegion = ids[1];
  hetcclAgentXfer_t w;
  if (hetcclAgentPrepXfer(a, hetcclAgentWrite, peer, ranges.data(), ranges.size(), "written", 7, &w) ||
      hetcclAgentPostXfer(w) || hetcclAgentWaitXfer(w))
    return fail("write");
  hetcclAgentReleaseXfer(x);
  hetcclAgentReleaseXfer(w);
  std::printf("agent_device_check: decode: OK (%zu ranges read into device and host memory, every byte checked)\n",
              ranges.size());
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
  const pid_t child = fork();  // before any HIP call: each process loads the runtime itself
  if (child == 0) {
    close(p[0]);
    return prefill(p[1]);
  }
  close(p[1]);
  return decode(p[0]);
}
